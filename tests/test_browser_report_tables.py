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
