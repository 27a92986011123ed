"""Gold pairs that can be spotted (issue 35): per kind, how well word 5-gram overlap sets gold pairs
apart from the others (AUC equal to sklearn's, leave-one-out accuracy, n), on the gold page and from
`make_gold`; a separable kind drives the pause rule only when the campaign accepts it explicitly."""

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
