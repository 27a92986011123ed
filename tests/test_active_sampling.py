"""Active sampling (issue 27, item 1): admissions drawn once by calibration's `sample_pairs`, read by the claims."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction

from annotate.forms import CampaignForm
from annotate.models import Campaign, Pair, PairAdmission
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from calibration.report.build import build_report
from calibration.sampling import MIN_FIT, sample_pairs
from tests.calibration_builders import by_criterion, hand_campaign, label_pairs, order_flipping_judge

TOPICS = tuple(f"Topic {i}" for i in range(6))  # 6 topics x 2 pairs: 12 pairs


def active(campaign, **fields):
    fields = {"sampling": "active", "sampling_burn_in": 0, "sampling_budget": 6, **fields}
    Campaign.objects.filter(pk=campaign.pk).update(**fields)
    campaign.refresh_from_db()
    return campaign


def snapshot(campaign):
    return sorted(
        PairAdmission.objects.filter(pair__campaign=campaign).values_list(
            "pair_id", "probability", "draw", "admitted", "phase", "model_version"
        )
    )


@pytest.mark.django_db
def test_it_writes_each_admission_once_with_its_probability_and_draw(alice):
    campaign = active(hand_campaign([alice], topics=TOPICS), sampling_burn_in=4, sampling_budget=6)
    run = sample_pairs(campaign=campaign, seed=1)
    rows = PairAdmission.objects.filter(pair__campaign=campaign)
    # The first 4 pairs in the campaign's order, at the uniform rate budget / pairs = 6 / 12 (not pi = 1).
    first = list(Pair.objects.filter(campaign=campaign).order_by("order", "id").values_list("id", flat=True)[:4])
    assert sorted(rows.values_list("pair_id", flat=True)) == sorted(first)
    assert {(a.probability, a.phase) for a in rows} == {(0.5, "burn-in")}
    assert all(0 <= a.draw < 1 and a.admitted == (a.draw < a.probability) for a in rows)
    assert (run.burn_in, run.active, run.waiting) == (4, 0, 8)  # no verdicts yet: the others wait
    before = snapshot(campaign)
    again = sample_pairs(campaign=campaign, seed=2)
    assert (again.burn_in, again.active) == (0, 0)
    assert snapshot(campaign) == before
    # Never redrawn: neither through the model nor through the table's unique key.
    admission = rows.first()
    admission.draw = 0.0
    with pytest.raises(ValueError, match="never redrawn"):
        admission.save()
    with pytest.raises(IntegrityError), transaction.atomic():
        PairAdmission.objects.create(pair_id=admission.pair_id, probability=1, draw=0.1, admitted=True, phase="active", model_version="x")
    assert snapshot(campaign) == before


@pytest.mark.django_db
def test_it_gives_pairs_after_the_burn_in_probabilities_from_the_judges_predicted_error(alice):
    campaign = active(hand_campaign([alice], topics=TOPICS), sampling_burn_in=MIN_FIT, sampling_budget=12)
    pairs = list(Pair.objects.filter(campaign=campaign).order_by("order", "id"))
    # The judge is sure on half the pairs and flips with the order on the others.
    order_flipping_judge(campaign, pairs)
    sample_pairs(campaign=campaign, seed=5)  # burn-in at rate 12 / 12: every burn-in pair admitted
    admitted = set(PairAdmission.objects.filter(pair__campaign=campaign, admitted=True).values_list("pair_id", flat=True))
    burn_in = [p for p in pairs if p.pk in admitted]
    assert len(burn_in) == MIN_FIT
    label_pairs(campaign, alice, {p: by_criterion("a", "a", "a") if i % 2 else by_criterion("b", "b", "b") for i, p in enumerate(burn_in)})
    assert assignment_claim_next(campaign=campaign, user=alice) is None  # nothing else is admitted yet
    Campaign.objects.filter(pk=campaign.pk).update(sampling_budget=MIN_FIT + 2)
    campaign.refresh_from_db()
    run = sample_pairs(campaign=campaign, seed=6)
    assert (run.burn_in, run.active, run.fit_n) == (0, 4, MIN_FIT)
    later = PairAdmission.objects.filter(pair__campaign=campaign, phase="active")
    assert later.count() == 4
    # The 4 later pairs share what is left of the budget: 10 expected labels - 8 spent = 2.
    assert sum(later.values_list("probability", flat=True)) == pytest.approx(2.0, abs=1e-9)
    assert all(0 < a.probability <= 1 and a.admitted == (a.draw < a.probability) for a in later)
    assert all(a.model_version.startswith(f"ols n={MIN_FIT}") for a in later)
    assert sample_pairs(campaign=campaign, seed=7).active == 0


@pytest.mark.django_db
def test_it_hands_out_only_admitted_pairs(alice, bob):
    campaign = active(hand_campaign([alice, bob], topics=TOPICS), sampling_burn_in=12, sampling_budget=5)
    assert assignment_claim_next(campaign=campaign, user=alice) is None  # nothing drawn yet: nothing to label
    sample_pairs(campaign=campaign, seed=11)
    admitted = set(PairAdmission.objects.filter(pair__campaign=campaign, admitted=True).values_list("pair_id", flat=True))
    assert 0 < len(admitted) < 12
    for user in (alice, bob):
        got = set()
        while (a := assignment_claim_next(campaign=campaign, user=user)) is not None:
            got.add(a.pair_id)
            a.status = "submitted"
            a.save(update_fields=["status"])
        assert got == admitted


@pytest.mark.django_db
def test_it_refuses_bad_sampling_options(catalogue):
    base = {"name": "Bad", "criterion_set": catalogue, "systems": ["wikipedia", "atlas_agent"]}
    for options, message in (
        ({"sampling": "clever"}, "Sampling must be one of uniform, active"),
        ({"sampling": "active"}, "Active sampling needs a budget"),
        ({"sampling": "active", "sampling_budget": 0}, "at least 1"),
        ({"sampling": "active", "sampling_budget": 5, "sampling_uniform_share": 1.5}, "between 0 and 1"),
        ({"sampling": "active", "sampling_budget": 5, "sampling_uniform_share": 0}, "above 0"),
        ({"sampling": "active", "sampling_budget": 5, "sampling_burn_in": -1}, "0 or more"),
        ({"sampling": "active", "sampling_budget": 5, "human_cost_per_pair": -2}, "positive amount"),
        ({"sampling_budget": 5}, "active sampling only"),
    ):
        with pytest.raises(ValidationError) as caught:
            campaign_create(**base, **options)
        assert any(message in m for m in caught.value.messages), (options, caught.value.messages)
    assert not Campaign.objects.exists()
    with pytest.raises(CommandError, match="Sampling must be one of"):
        call_command(
            "create_campaign", "--name", "Bad", "--criteria", "wiki_writing", "--systems", "wikipedia,atlas_agent", "--sampling", "x"
        )
    with pytest.raises(CommandError, match="not an amount"):
        call_command(
            "create_campaign", "--name", "Bad", "--criteria", "wiki_writing", "--systems", "wikipedia,atlas_agent", "--human-cost", "cheap"
        )
    uniform = campaign_create(**base)
    with pytest.raises(CommandError, match="samples uniformly"):
        call_command("sample_pairs", "--campaign", uniform.name)


@pytest.mark.django_db
def test_it_creates_an_active_campaign_from_the_command_and_the_form(catalogue, capsys):
    call_command(
        "create_campaign", "--name", "Act", "--criteria", "wiki_writing", "--systems", "wikipedia,atlas_agent",
        "--sampling", "active", "--sampling-budget", "3", "--sampling-burn-in", "2", "--sampling-uniform-share", "0.5", "--human-cost", "1.25",
    )  # fmt: skip
    campaign = Campaign.objects.get(name="Act")
    assert (campaign.sampling, campaign.sampling_budget, campaign.sampling_burn_in, campaign.sampling_uniform_share) == (
        "active",
        3,
        2,
        0.5,
    )
    assert str(campaign.human_cost_per_pair) == "1.2500"
    call_command("sample_pairs", "--campaign", "Act", "--seed", "4")
    assert "2 burn-in and 0 active admissions written" in capsys.readouterr().out
    form = CampaignForm(data={"sampling": "active", "sampling_budget": "0", "sampling_uniform_share": "2"})
    assert not form.is_valid()
    assert {"sampling_budget", "sampling_uniform_share"} <= set(form.errors)


@pytest.mark.django_db
def test_it_states_the_design_of_an_active_campaign_and_only_of_one_in_the_report(alice, bob):
    campaign = hand_campaign([alice, bob], topics=TOPICS)
    said = "active sampling"
    uniform = build_report(campaign, rounds=20)
    assert "design" not in uniform and not any(said in note for note in uniform["notes"])
    report = build_report(active(campaign), rounds=20)
    assert any(said in note for note in report["notes"])
    assert report["design"]["sampling"] == "active" and report["design"]["n_pairs_drawn"] == 0
