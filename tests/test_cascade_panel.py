"""The dashboard's cascade panel and "send abstained pairs to humans" (issue 24, item 3): the
figures `selective_cascade` computes, as a page and as the htmx fragment, 400/422 for bad values,
and the new campaign of the pairs no judge fully accepts (from the panel and from the command)."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils.html import escape

from annotate.models import Campaign
from calibration.cascade import heldout_pair, selective_cascade
from judges.models import JudgeVerdict
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.calibration_builders import label_pairs

pytestmark = pytest.mark.django_db
KEY_ENV = "FAKE_JUDGE_API_KEY"


def run_judge(campaign, llm_server, name, **options):
    judge, _ = judge_create(name=name, model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV, **options)
    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, concurrency=2))
    assert run.status == "finished", run.message
    return judge


@pytest.fixture
def labelled(campaign, alice, llm_server, monkeypatch):
    """A priced logprobs judge, sure (0.97) except on criteria ending in 3 (0.55), where alice, who
    labels every pair, disagrees with it; one held-out pair has every verdict made sure (0.99), so
    that it alone has no item left to humans (held-out pairs never move the thresholds)."""
    monkeypatch.setenv(KEY_ENV, "sk-test")
    # The calibration half is a hash of each pair's id, and ids follow the suite's order on PostgreSQL:
    # with all 8 pairs held out nothing calibrates. Give the last pair new ids until one pair calibrates.
    for _ in range(64):
        if not all(heldout_pair(pk) for pk in campaign.pairs.values_list("pk", flat=True)):
            break
        last = campaign.pairs.order_by("order").last()
        last.delete()
        last.pk = None
        last._state.adding = True
        last.save()
    llm_server.confidence = lambda key, message: 0.55 if key.endswith("3") else 0.97
    judge = run_judge(campaign, llm_server, "priced", confidence="logprobs", input_price="2.50", output_price="10")
    flip = {"a": "b", "b": "a", "tie": "a"}
    winners: dict = {}
    for v in JudgeVerdict.objects.filter(unit__judge=judge).select_related("unit__pair", "criterion"):
        winners.setdefault(v.unit.pair, {})[v.criterion.key] = flip[v.winner] if v.criterion.key.endswith("3") else v.winner
    label_pairs(campaign, alice, winners)
    sure = next(p for p in campaign.pairs.order_by("order") if heldout_pair(p.pk))
    JudgeVerdict.objects.filter(unit__pair=sure).update(confidence=0.99)
    return campaign, sure


def panel(client, campaign, **query):
    return client.get(
        reverse("calibration-cascade", args=[campaign.pk]), query, **({"HTTP_HX_REQUEST": "true"} if query.pop("_htmx", False) else {})
    )


def test_it_shows_each_judges_threshold_coverage_and_cost_on_the_page(client, rachel, labelled):
    campaign, _ = labelled
    client.force_login(rachel)

    response = panel(client, campaign, alpha="0.15", delta="0.1", human_cost="0.5")

    assert response.status_code == 200
    page = response.content.decode()
    out = selective_cascade(campaign=campaign, judge_names=["priced"], alpha=0.15, delta=0.1, human_cost=0.5)
    stage = out["stages"][0]
    assert stage["threshold"] is not None and stage["cost_per_accepted"] is not None
    assert "<html" in page and 'id="cascade-judges"' in page
    assert f'<td class="num">{stage["threshold"]:.4g}</td>' in page
    assert f"{stage['n_reaching']} / {stage['n_accepted']}" in page
    assert (
        f"{stage['coverage']['value']:.3f} [{stage['coverage']['ci_low']:.3f}, {stage['coverage']['ci_high']:.3f}] (n = {stage['coverage']['n']})"
        in page
    )
    assert f"${stage['cost_per_accepted']:.6f}" in page
    assert f"{stage['holdout']['agreement']['value']:.3f}" in page and "beside 1 − α = 0.85" in page
    assert escape(stage["guarantee"]) in page and escape(out["guarantee_words"]) in page
    assert f"priced accepts {stage['n_accepted'] / out['n_calibration']:.1%}; humans label {out['human_share']:.1%}" in page
    assert f"against ${out['all_human_cost']:.6f} all-human" in page and "assume every item humans label costs" in page


def test_it_returns_the_panel_alone_for_htmx_and_defaults_to_the_judges_with_confidences(client, rachel, labelled):
    campaign, _ = labelled
    client.force_login(rachel)

    response = panel(client, campaign, _htmx=True)

    assert response.status_code == 200
    page = response.content.decode()
    assert "<html" not in page and page.lstrip().startswith('<section id="cascade"')
    assert 'name="judges" size="40" value="priced"' in page and "Cost: cost unknown (give a human cost per item)" in page


def test_it_orders_the_default_judges_cheapest_first(client, rachel, labelled, llm_server):
    campaign, _ = labelled
    run_judge(campaign, llm_server, "cheap", confidence="logprobs", input_price="0.1", output_price="0.2")
    run_judge(campaign, llm_server, "plain")  # no confidences: not offered
    client.force_login(rachel)

    page = panel(client, campaign, _htmx=True).content.decode()

    assert 'name="judges" size="40" value="cheap,priced"' in page


@pytest.mark.parametrize(
    "query, message",
    [
        ({"alpha": "2"}, "alpha must be a number between 0 and 1"),
        ({"delta": "x"}, "delta must be"),
        ({"human_cost": "-1"}, "human cost per item"),
    ],
)
def test_it_refuses_bad_values_with_400_and_422_for_htmx(client, rachel, labelled, query, message):
    campaign, _ = labelled
    client.force_login(rachel)

    page = panel(client, campaign, **query)
    fragment = panel(client, campaign, _htmx=True, **query)

    assert page.status_code == 400 and message in page.content.decode()
    assert fragment.status_code == 422 and message in fragment.content.decode() and "<html" not in fragment.content.decode()


def test_it_says_when_no_judge_has_confidences(client, rachel, campaign):
    client.force_login(rachel)

    response = panel(client, campaign)

    assert response.status_code == 200
    assert "No judge has confidences on this campaign" in response.content.decode()


def test_it_puts_the_panel_on_the_dashboard(client, rachel, campaign):
    client.force_login(rachel)

    page = client.get(reverse("calibration-dashboard", args=[campaign.pk])).content.decode()

    assert f'hx-get="{reverse("calibration-cascade", args=[campaign.pk])}" hx-trigger="load"' in page


def test_it_sends_the_pairs_with_an_abstained_item_to_a_new_campaign(client, rachel, labelled):
    campaign, sure = labelled
    client.force_login(rachel)
    form = {"judges": "priced", "alpha": "0.15", "delta": "0.1", "human_cost": "", "name": "Pilot, abstained"}

    response = client.post(reverse("calibration-cascade-send", args=[campaign.pk]), form)

    created = Campaign.objects.get(name="Pilot, abstained")
    assert response.status_code == 302 and response.url == reverse("campaign-detail", args=[created.pk])
    sent = {(p.article_a_id, p.article_b_id) for p in created.pairs.all()}
    expected = {(p.article_a_id, p.article_b_id) for p in campaign.pairs.exclude(pk=sure.pk)}
    assert sent == expected and len(sent) == campaign.pairs.count() - 1
    assert created.criterion_set_id == campaign.criterion_set_id and created.overlap == campaign.overlap
    assert set(created.annotators.all()) == set(campaign.annotators.all()) != set()

    again = client.post(reverse("calibration-cascade-send", args=[campaign.pk]), form)
    assert again.status_code == 409 and "A campaign named &#x27;Pilot, abstained&#x27; already exists" in again.content.decode()
    assert Campaign.objects.filter(name__startswith="Pilot").count() == 2


def test_it_sends_to_humans_from_the_command_and_refuses_a_taken_name(labelled):
    campaign, sure = labelled
    args = ["--campaign", campaign.name, "--judges", "priced", "--alpha", "0.15", "--delta", "0.1", "--rounds", "0"]
    out = io.StringIO()

    call_command("calibrate_selective", *args, "--send-to-humans", "Pilot humans", stdout=out)

    created = Campaign.objects.get(name="Pilot humans")
    assert f"Campaign 'Pilot humans' created with {campaign.pairs.count() - 1} of {campaign.pairs.count()} pairs" in out.getvalue()
    assert not created.pairs.filter(article_a=sure.article_a, article_b=sure.article_b).exists()
    with pytest.raises(CommandError, match="A campaign named 'Pilot' already exists"):
        call_command("calibrate_selective", *args, "--send-to-humans", "Pilot", stdout=io.StringIO())
    assert Campaign.objects.count() == 2
