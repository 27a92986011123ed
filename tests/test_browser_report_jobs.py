"""In a real browser: the dashboard answers before its report is computed, then swaps the report in by
itself (htmx polls the job's status); after a new label it shows the earlier report, marked, until the
up-to-date one replaces it."""

import pytest

from tests.helpers import run
from tests.test_browser import CHROMIUM, browser, log_in, page  # noqa: F401 (fixtures)
from tests.test_import_any_group import votes, write
from tests.test_report_cache import labelled  # noqa: F401 (fixture: a labels-only campaign of 40 votes and a judge)
from tests.test_report_jobs import background  # noqa: F401 (fixture: jobs in background threads, as on the site)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")


def test_it_swaps_the_report_in_when_it_is_ready_and_marks_an_earlier_one(background, page, labelled, rachel, tmp_path):  # noqa: F811
    log_in(page, "rachel", "rachel-password")

    page.goto(f"/calibration/campaign/{labelled.pk}/")

    page.locator("#table-judges").wait_for(timeout=60_000)  # no reload by hand: htmx was told to
    assert page.locator("#stale-report").count() == 0
    extra = {**votes(1)[0], "rater": "crowd_3", "rater_kind": "human"}
    assert run("import_labels", "--campaign", "crowd", str(write(tmp_path / "more.csv", [extra]))).code == 0

    page.goto(f"/calibration/campaign/{labelled.pk}/")

    marked = page.locator("#stale-report")
    assert "from 40 human labels and 20 judge verdicts; the labels changed since" in marked.inner_text()
    assert page.locator("#table-judges").count() == 1  # the earlier report is shown meanwhile
    marked.wait_for(state="detached", timeout=60_000)
    page.locator("#table-judges").wait_for()
