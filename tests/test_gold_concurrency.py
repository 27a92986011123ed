"""Claims under gold mixing, fired at once with real threads, on whichever database the suite runs on
(SQLite or PostgreSQL): normal pairs never exceed the overlap, gold pairs are labelled once per member,
and every member holds one active claim."""

from collections import Counter

import pytest
from django.contrib.auth import get_user_model

from annotate.models import Assignment, Campaign, GoldPair
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from annotate.services.gold import gold_pairs_make
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)


def _campaign(catalogue, name: str, overlap: int) -> Campaign:
    campaign = campaign_create(
        name=name, criterion_set=catalogue, systems=["wikipedia", "atlas_agent", "quill_researcher"], overlap=overlap, gold_rate=0.5
    )
    assert gold_pairs_make(campaign=campaign, per_degradation=2).total == 10
    return campaign


def _per_pair(campaign: Campaign) -> tuple[Counter, Counter]:
    golds = set(GoldPair.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True))
    live = Assignment.objects.filter(pair__campaign=campaign).exclude(status__in=["expired", "revoked"])
    per_pair = Counter(live.values_list("pair_id", flat=True))
    return Counter({p: n for p, n in per_pair.items() if p not in golds}), Counter({p: n for p, n in per_pair.items() if p in golds})


def test_it_never_exceeds_the_overlap_when_many_claim_at_once_under_gold_mixing(catalogue):
    # 8 pairs x 3 = 24 normal slots: room for all 20 whatever their draws.
    campaign = _campaign(catalogue, "GoldRush", overlap=3)
    users = [get_user_model().objects.create_user(f"rush{i}") for i in range(20)]
    results, errors = fire([lambda u=u: assignment_claim_next(campaign=campaign, user=u) for u in users])
    assert not errors
    normal, gold = _per_pair(campaign)
    assert max(normal.values()) <= 3
    assert sum(r is not None for r in results) == 20
    assert sum(normal.values()) + sum(gold.values()) == 20
    per_user = Counter(Assignment.objects.filter(pair__campaign=campaign, status="active").values_list("annotator_id", flat=True))
    assert set(per_user.values()) == {1}


def test_it_keeps_overlap_while_claimers_work_through_a_campaign_with_gold_pairs(catalogue):
    campaign = _campaign(catalogue, "GoldRace", overlap=2)
    users = [get_user_model().objects.create_user(f"racer{i}") for i in range(6)]

    def work_through(user):
        while (a := assignment_claim_next(campaign=campaign, user=user)) is not None:
            Assignment.objects.filter(pk=a.pk).update(status=Assignment.Status.SUBMITTED)

    _, errors = fire([lambda u=u: work_through(u) for u in users])
    assert not errors
    normal, gold = _per_pair(campaign)
    # Every normal pair filled to exactly the overlap; no gold pair given twice to anyone.
    assert set(normal.values()) == {2} and len(normal) == 8
    assert gold and max(gold.values()) <= len(users)
    pairs_per_user = Counter(Assignment.objects.filter(pair__campaign=campaign).values_list("pair_id", "annotator_id"))
    assert set(pairs_per_user.values()) == {1}
