"""Gold pairs that can be spotted (issue 35): per kind, how well word 5-gram overlap sets gold pairs
apart from the others (AUC equal to sklearn's, leave-one-out accuracy, n), on the gold page and from
`make_gold`; a separable kind drives the pause rule only when the campaign accepts it explicitly."""

import json
import random

import pytest
from django.test import Client
from django.urls import reverse
from sklearn.metrics import roc_auc_score

from annotate.gold_selectors import gold_separability
from annotate.gold_separability import auc, loo_balanced_accuracy, overlap, separability, word_ngrams
from annotate.models import Campaign
from annotate.services.claims import assignment_claim_next
from calibration.gold import gold_pause_reason
from tests.helpers import run
from tests.test_gold_pairs import answer, is_gold, make_gold


def test_it_counts_shared_word_5_grams_of_the_smaller_text():
    a = word_ngrams("One two three four five six seven")
    b = word_ngrams("one two three four five; eight nine ten eleven twelve")
    assert len(a) == 3 and overlap(a, b) == pytest.approx(1 / 3) and overlap(a, set()) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_it_computes_the_auc_as_sklearn_does_ties_included(seed):
    rng = random.Random(seed)
    gold = [round(rng.random(), 1) for _ in range(rng.randint(1, 30))]
    other = [round(rng.random() * 0.8, 1) for _ in range(rng.randint(1, 40))]
    expected = roc_auc_score([1] * len(gold) + [0] * len(other), gold + other)
    assert auc(gold, other) == pytest.approx(expected)


def test_it_reads_a_clean_split_as_separable_and_equal_scores_as_chance():
    apart = separability("copy", [0.9, 0.85, 0.95, 0.8], [0.01, 0.0, 0.02, 0.05, 0.0])
    assert (apart.auc, apart.loo_accuracy, apart.separable) == (1.0, 1.0, True)
    assert "n = 4 gold, 5 other pairs" in apart.text
    alike = separability("settled", [0.0, 0.01, 0.02, 0.0], [0.01, 0.0, 0.02, 0.0, 0.01])
    assert not alike.separable and alike.loo_accuracy <= 0.6
    assert loo_balanced_accuracy([0.5], [0.1, 0.2]) is None  # too few to leave one out


@pytest.mark.django_db
def test_it_reports_each_kind_on_the_gold_page_and_from_make_gold(campaign, rachel):
    result = make_gold(campaign, "--per-degradation", "2")
    assert result.code == 0, result.err

    kinds = gold_separability(campaign=campaign)
    assert kinds and all(k.separable and k.n_other == 8 and k.auc == 1.0 for k in kinds)
    assert "AUC 1.00, leave-one-out balanced accuracy 100%: separable (n = 2 gold, 8 other pairs)" in result.out
    assert "does not drive the pause rule" in result.out
    client = Client()
    client.force_login(rachel)
    page = client.get(reverse("calibration-gold", args=[campaign.pk]))
    assert page.status_code == 200
    body = page.content.decode()
    assert "Can the text tell them apart?" in body and "n = 2 gold, 8 other pairs" in body

    # The blindness audit carries the same figure, with its n, in both formats.
    audit = run("blindness_report", "--campaign", campaign.name)
    assert audit.code == 0, audit.err
    assert "## Gold pairs against the other pairs" in audit.out
    assert audit.out.count("separable (n = 2 gold, 8 other pairs)") == len(kinds)
    data = json.loads(run("blindness_report", "--campaign", campaign.name, "--format", "json").out)
    assert [(k["kind"], k["n_gold"], k["n_other"], k["auc"], k["separable"]) for k in data["gold_separability"]] == [
        (k.kind, 2, 8, 1.0, True) for k in kinds
    ]


@pytest.mark.django_db
def test_it_lets_a_separable_kind_drive_the_pause_rule_only_when_accepted(campaign, alice, rachel):
    make_gold(campaign, "--per-degradation", "1")
    Campaign.objects.filter(pk=campaign.pk).update(gold_rate=1.0, gold_pause_below=0.8, gold_pause_after=2)
    campaign.refresh_from_db()
    for _ in range(2):
        work = assignment_claim_next(campaign=campaign, user=alice)
        assert is_gold(work)
        answer(work, alice, lambda key: "b")  # every gold answer wrong

    assert gold_pause_reason(campaign=campaign, user=alice) is None  # the copies are recognisable: no evidence of care

    client = Client()
    client.force_login(rachel)
    assert client.post(reverse("calibration-gold-accept", args=[campaign.pk]), {"accept": "on"}).status_code == 302
    campaign.refresh_from_db()
    assert campaign.gold_accept_separable
    assert "paused" in gold_pause_reason(campaign=campaign, user=alice)


# --- settled known-answer pairs: gold the text cannot set apart ------------------------------


def _settle_every_pair(campaign, raters) -> None:
    """Every rater submits every pair of the campaign, all naming article A on every criterion."""
    from django.utils import timezone

    from annotate.models import Assignment, Criterion, Label

    now = timezone.now()
    criteria = list(Criterion.objects.filter(criterion_set=campaign.criterion_set))
    for pair in campaign.pairs.all():
        for rater in raters:
            work = Assignment.objects.create(
                pair=pair,
                annotator=rater,
                a_first=True,
                order="ab",
                status="submitted",
                claimed_at=now,
                last_activity_at=now,
                submitted_at=now,
            )
            Label.objects.bulk_create(
                [Label(assignment=work, criterion=c, winner="a", rationale="A is better.", created_at=now, saved_at=now) for c in criteria]
            )


@pytest.mark.django_db
def test_it_makes_settled_gold_pairs_the_text_cannot_set_apart(campaign, alice, bob, catalogue):
    from annotate.models import GoldPair
    from annotate.services.campaigns import campaign_create
    from annotate.services.gold import settled_answers
    from tests.helpers import run

    _settle_every_pair(campaign, [alice, bob])
    settled = settled_answers(source=campaign)
    assert len(settled) == 8 and all(set(answers.values()) == {"a"} for answers in settled.values())
    second = campaign_create(name="Second", criterion_set=catalogue, systems=["atlas_agent", "quill_researcher"], pair_mode="all")

    result = run("make_gold", "--campaign", "Second", "--settled-from", "Pilot")

    assert result.code == 0, result.err
    gold = GoldPair.objects.filter(pair__campaign=second)
    assert gold.count() == 8 and set(gold.values_list("degradation", flat=True)) == {"settled"}
    assert all(set(g.expected.values()) == {"a"} for g in gold)
    (kind,) = gold_separability(campaign=second)
    assert kind.kind == "settled" and (kind.n_gold, kind.n_other) == (8, 4)
    assert not kind.separable, kind.text
    assert "settled: AUC" in result.out and "not separable" in result.out and "drives the pause rule" in result.out
    again = run("make_gold", "--campaign", "Pilot", "--settled-from", "Pilot")
    assert again.code != 0 and "from another campaign" in again.err
