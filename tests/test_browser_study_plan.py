"""In a real browser: a researcher freezes the study plan on the campaign page (warned that the demo's
8 pairs cannot give the 12 planned), the ε form then refuses a change naming the plan, and when ε
changes out of band (the admin, say) the calibration dashboard lists that deviation beside the plan's SHA-256."""

import io
import re

import pytest
from django.core.management import call_command

from annotate.models import Campaign
from annotate.services.alt_epsilon import campaign_set_alt_epsilon
from calibration.models import StudyPlan
from tests.test_browser import CHROMIUM, browser, log_in, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")


@pytest.fixture
def demo_without_answers(live_server):
    """The demo before anyone answers: without its study (`--no-study`), whose gold answers on the demo
    campaign would make its plan too late to freeze."""
    call_command("load_demo", "--no-study", stdout=io.StringIO())


def test_it_freezes_the_plan_and_shows_a_deviation_on_the_dashboard(page, demo_without_answers):  # noqa: F811
    campaign = Campaign.objects.get(name="Demo campaign")
    log_in(page, "researcher", "demo-researcher")
    page.goto(f"/campaigns/{campaign.pk}/")
    form = page.locator("#freeze-plan")
    form.get_by_label("Planned pairs").fill("12")
    form.get_by_label("alt-test").check()
    form.get_by_role("button", name="Freeze the study plan").click()
    page.wait_for_url(re.compile(rf"/calibration/campaign/{campaign.pk}/study-plan/$"))
    plan = StudyPlan.objects.get(campaign=campaign)
    assert page.locator("#study-plan-sha256").inner_text() == plan.sha256
    assert plan.record["planned_pairs"] == 12 and plan.record["statistics"] == ["par", "kappa", "alt-test"]
    assert "counts on 12 pairs, but this campaign has 8 pairs" in page.locator("#planned-pairs-warning").inner_text()

    page.goto(f"/campaigns/{campaign.pk}/")
    epsilon = page.locator("#alt-epsilon")
    epsilon.get_by_label("ε").fill("0.15")
    epsilon.get_by_label("Why").fill("skilled annotators")
    epsilon.get_by_role("button", name="Save ε").click()
    page.wait_for_load_state()
    refusal = page.get_by_role("alert")
    assert f"the study plan of 'Demo campaign' frozen {plan.frozen_at:%Y-%m-%d %H:%M} UTC by researcher" in refusal.inner_text()
    assert page.locator("header.topbar").get_by_role("link", name="Campaigns").is_visible()  # a whole page, with the navigation
    campaign.refresh_from_db()
    assert campaign.alt_epsilon is None
    campaign_set_alt_epsilon(campaign=campaign, epsilon=0.15, reason="skilled annotators")

    page.goto(f"/calibration/campaign/{campaign.pk}/")
    section = page.locator("#study-plan")
    section.get_by_text("alt-test ε: planned none, now 0.15").wait_for()
    assert plan.sha256 in section.inner_text()
