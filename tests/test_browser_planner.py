"""In a real browser: the calibration dashboard loads the label planner panel through htmx, the
panel's form re-plans in place, and a bad value shows its message there (422 is swapped in)."""

import pytest

from annotate.models import Campaign
from tests.test_browser import CHROMIUM, browser, live_demo, log_in, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
IDLE = "() => window.__inflight === 0"


def test_it_loads_the_planner_on_the_dashboard_and_replans_in_place(page, live_demo):  # noqa: F811
    log_in(page, "researcher", "demo-researcher")
    campaign = Campaign.objects.get(name="Demo campaign")
    page.goto(f"/calibration/campaign/{campaign.pk}/")
    panel = page.locator("#planner")
    panel.get_by_text("(a) Each judge's PAR").wait_for()
    page.wait_for_function(IDLE)
    assert "0 of 8 pairs have human labels" in panel.inner_text()
    assert "No human labels yet" in panel.inner_text()
    url = page.url

    panel.get_by_label("CI half-width").fill("0.05")
    panel.get_by_role("button", name="Plan").click()
    page.wait_for_function(IDLE)
    panel.get_by_text("half-width 0.05").wait_for()
    assert page.url == url  # replanned in place, the dashboard stays

    panel.get_by_label("Power").fill("2")
    panel.get_by_role("button", name="Plan").click()
    page.wait_for_function(IDLE)
    page.locator("#planner [role=alert]").get_by_text("power must lie between 0 and 1").wait_for()
    assert page.get_by_label("Power").input_value() == "2"  # the value stays for correcting
