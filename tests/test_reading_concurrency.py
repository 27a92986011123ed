"""Claims of readings fired at once, with real threads, on whichever database the suite runs on (SQLite or PostgreSQL)."""

from collections import Counter

import pytest
from django.contrib.auth import get_user_model

from annotate.models import Assignment, ReadingAssignment
from annotate.services.claims import assignment_claim_next
from tests.reading_campaigns import ONE_ARTICLE, mixed_campaign, rubric
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_never_exceeds_the_overlap_on_a_reading_when_claimers_outnumber_the_slots(catalogue):
    User = get_user_model()
    campaign = mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), topics=1, overlap=3)
    users = [User.objects.create_user(f"tight{i}") for i in range(10)]
    results, errors = fire([lambda u=u: assignment_claim_next(campaign=campaign, user=u) for u in users])
    assert not errors
    # 2 readings x 3 slots: exactly 6 claimers get one, 4 are told nothing is left.
    assert sum(r is not None for r in results) == 6
    per_reading = Counter(ReadingAssignment.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True))
    assert sorted(per_reading.values()) == [3, 3]


def test_it_keeps_the_overlap_on_pairs_and_readings_while_claimers_work_through_a_mixed_campaign(catalogue):
    User = get_user_model()
    users = [User.objects.create_user(f"racer{i}") for i in range(6)]
    campaign = mixed_campaign(topics=2, overlap=2)

    def work_through(user):
        while (item := assignment_claim_next(campaign=campaign, user=user)) is not None:
            Assignment.every.filter(pk=item.pk).update(status=Assignment.Status.SUBMITTED)

    _, errors = fire([lambda u=u: work_through(u) for u in users])
    assert not errors
    per_reading = Counter(ReadingAssignment.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True))
    per_pair = Counter(Assignment.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True))
    assert set(per_reading.values()) == {2} and len(per_reading) == campaign.readings.count() == 4
    assert set(per_pair.values()) == {2} and len(per_pair) == campaign.pairs.count() == 2
    # Nobody ever held two items at once, nor the same item twice (the unique constraints say the second).
    assert not ReadingAssignment.objects.filter(status=Assignment.Status.ACTIVE).exists()
