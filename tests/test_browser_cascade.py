"""In a real browser: the calibration dashboard loads the cascade panel through htmx, its form
recalibrates in place (the per-judge table changes with α), a bad δ shows its message there (422
is swapped in), and "Send abstained pairs to humans" opens the new campaign."""

import pytest
from django.contrib.auth.models import User

from annotate.models import Campaign
from annotate.services.answers import label_save, overall_save, position_from_winner
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit
from judges.models import JudgeVerdict
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.test_browser import CHROMIUM, browser, live_demo, log_in, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
IDLE = "() => window.__inflight === 0"


@pytest.fixture
def judged(live_demo, llm_server, monkeypatch):
    """The demo campaign with a logprobs judge, sure except on criteria ending in 3, where the one
    annotator who labels every pair disagrees with it."""
    monkeypatch.setenv("FAKE_JUDGE_API_KEY", "sk-test")
    campaign = Campaign.objects.get(name="Demo campaign")
    judge, _ = judge_create(
        name="lp", model="fake-judge", base_url=llm_server.base_url, api_key_env="FAKE_JUDGE_API_KEY", confidence="logprobs"
    )
    llm_server.confidence = lambda key, message: 0.55 if key.endswith("3") else 0.97
    assert judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, concurrency=2)).status == "finished"
    flip = {"a": "b", "b": "a", "tie": "a"}
    winners: dict = {}
    # The demo's gold pairs are judged too, but never handed to its annotators (its gold rate is 0).
    for v in JudgeVerdict.objects.filter(unit__judge=judge, unit__pair__gold__isnull=True).select_related("unit__pair", "criterion"):
        winners.setdefault(v.unit.pair, {})[v.criterion.key] = flip[v.winner] if v.criterion.key.endswith("3") else v.winner
    annotator = User.objects.get(username="annotator1")
    for _ in winners:  # label_pairs, with the overall answer the demo asks for before each submission
        assignment = assignment_claim_next(campaign=campaign, user=annotator)
        for key, side in winners[assignment.pair].items():
            criterion = campaign.criterion_set.criteria.get(key=key)
            label_save(
                assignment=assignment, criterion=criterion, user=annotator, position=position_from_winner(assignment, side),
                rationale="Clearer and better sourced.",
            )  # fmt: skip
        overall_save(assignment=assignment, user=annotator, value="1")
        assignment_submit(assignment=assignment, user=annotator)
    return campaign


def test_it_recalibrates_the_cascade_in_place_and_sends_the_rest_to_humans(page, judged):  # noqa: F811
    log_in(page, "researcher", "demo-researcher")
    page.goto(f"/calibration/campaign/{judged.pk}/")
    panel = page.locator("#cascade")
    table = panel.locator("#cascade-judges")
    table.wait_for()
    page.wait_for_function(IDLE)
    assert panel.get_by_label("Judges, in cascade order").input_value() == "lp"
    assert "lp" in table.inner_text() and "at least 85% of the items it accepts" in panel.inner_text()
    url = page.url

    panel.get_by_label("α").fill("0.3")
    panel.get_by_role("button", name="Calibrate").click()
    page.wait_for_function(IDLE)
    panel.get_by_text("at least 70% of the items it accepts").wait_for()
    assert "beside 1 − α = 0.7" in table.inner_text()
    assert page.url == url  # recalibrated in place, the dashboard stays
    assert page.locator("h1").count() == 1 and page.locator("#cascade").count() == 1  # the fragment, not a page in the page

    panel.get_by_label("δ").fill("1.5")
    panel.get_by_role("button", name="Calibrate").click()
    page.wait_for_function(IDLE)
    page.locator("#cascade [role=alert]").get_by_text("delta must be a number between 0 and 1").wait_for()
    assert page.get_by_label("δ").input_value() == "1.5"

    panel.get_by_label("α").fill("0.15")  # at 0.3 the judge accepts every item, and the send is refused
    panel.get_by_label("δ").fill("0.1")
    panel.get_by_role("button", name="Calibrate").click()
    page.wait_for_function(IDLE)
    panel.get_by_label("New campaign").fill("Demo, abstained")
    panel.get_by_role("button", name="Send abstained pairs to humans").click()
    page.get_by_text("Campaign 'Demo, abstained' created with").wait_for()
    created = Campaign.objects.get(name="Demo, abstained")
    assert page.url.endswith(f"/campaigns/{created.pk}/") and created.pairs.count() > 0
