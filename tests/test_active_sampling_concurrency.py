"""40 claimers at once under active sampling, with real threads, on SQLite or PostgreSQL (issue 27's done-when test)."""

from collections import Counter

import pytest
from django.contrib.auth import get_user_model

from annotate.models import Assignment, Campaign, PairAdmission
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from calibration.sampling import sample_pairs
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sampled(catalogue):
    """4 topics x 3 systems, every pair of systems (12 pairs), K = 3; the draw admits some of them."""
    campaign = campaign_create(
        name="Sampled",
        criterion_set=catalogue,
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        pair_mode="all",
        overlap=3,
        sampling="active",
        sampling_burn_in=12,
        sampling_budget=6,
    )
    sample_pairs(campaign=campaign, seed=2027)
    admitted = set(PairAdmission.objects.filter(pair__campaign=campaign, admitted=True).values_list("pair_id", flat=True))
    assert 0 < len(admitted) < campaign.pairs.count()
    return campaign, admitted


def test_it_keeps_40_simultaneous_claimers_within_k_and_inside_the_sampled_queue(sampled):
    campaign, admitted = sampled
    users = [get_user_model().objects.create_user(f"active{i}") for i in range(40)]
    results, errors = fire([lambda u=u: assignment_claim_next(campaign=campaign, user=u) for u in users])
    assert not errors
    per_pair = Counter(Assignment.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True))
    assert set(per_pair) <= admitted, f"pairs outside the sampled queue were handed out: {set(per_pair) - admitted}"
    assert max(per_pair.values()) <= campaign.overlap
    # Every admitted slot is taken and nobody else got anything: 40 claimers outnumber the slots.
    assert sum(r is not None for r in results) == campaign.overlap * len(admitted) == sum(per_pair.values())


def test_it_keeps_k_and_the_queue_while_claimers_work_through_a_sampled_campaign(sampled):
    campaign, admitted = sampled
    Campaign.objects.filter(pk=campaign.pk).update(overlap=2)
    campaign.refresh_from_db()
    users = [get_user_model().objects.create_user(f"worker{i}") for i in range(40)]

    def work_through(user):
        while (a := assignment_claim_next(campaign=campaign, user=user)) is not None:
            Assignment.objects.filter(pk=a.pk).update(status=Assignment.Status.SUBMITTED)

    _, errors = fire([lambda u=u: work_through(u) for u in users])
    assert not errors
    per_pair = Counter(Assignment.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True))
    assert set(per_pair) == admitted
    assert set(per_pair.values()) == {2}
