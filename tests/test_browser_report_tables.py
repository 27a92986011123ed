"""In a real browser: a long table of the calibration dashboard pages in place through htmx."""

import pytest

from tests.test_browser import CHROMIUM, browser, log_in, page  # noqa: F401 (fixtures)
from tests.test_report_big_tables import crowded  # noqa: F401 (fixture: 12 judges, 66 paired comparisons)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
IDLE = "() => window.__inflight === 0"


def test_it_pages_through_the_paired_comparisons_in_place(page, crowded, rachel, settings):  # noqa: F811
    settings.CALIBRATION_ROUNDS = 20
    log_in(page, "rachel", "rachel-password")
    page.goto(f"/calibration/campaign/{crowded.pk}/")
    # Its section starts closed: the table of contents' link opens it.
    assert not page.locator("#section-agreement").evaluate("details => details.open")
    page.locator('#toc a[href="#table-comparisons"]').click()
    table = page.locator("#table-comparisons")
    table.get_by_text("Rows 1–50 of 66").wait_for()
    assert table.locator("tbody tr").count() == 50
    url = page.url

    table.get_by_role("link", name="next →").click()
    page.wait_for_function(IDLE)
    table.get_by_text("Rows 51–66 of 66").wait_for()
    assert table.locator("tbody tr").count() == 16 and page.url == url  # swapped in place, the dashboard stays

    table.get_by_role("link", name="← previous").click()
    page.wait_for_function(IDLE)
    table.get_by_text("Rows 1–50 of 66").wait_for()
    assert table.locator("tbody tr").count() == 50


@pytest.mark.parametrize("width", [1280, 390])
def test_it_keeps_wide_tables_from_scrolling_the_whole_page(page, crowded, rachel, settings, width):  # noqa: F811
    settings.CALIBRATION_ROUNDS = 20
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, "rachel", "rachel-password")
    page.goto(f"/calibration/campaign/{crowded.pk}/")
    page.locator("#table-judges").wait_for()
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], f"the page scrolls sideways at {width} px: {widths}"
    # At a phone's width the wide tables are wider than their box and scroll inside it.
    overflowing = page.evaluate(
        "() => [...document.querySelectorAll('.table-scroll, main table')].filter(box => box.scrollWidth > box.clientWidth).length"
    )
    assert overflowing >= (1 if width < 600 else 0)
