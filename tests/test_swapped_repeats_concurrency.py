"""Swapped repeats under claims fired at once with real threads, on whichever database the suite runs on
(SQLite, or PostgreSQL with DATABASE_URL): one annotator's tabs never make two repeats of one original
nor two active claims, and other annotators' claims at the same moment never count a repeat as a slot."""

from collections import Counter

import pytest
from django.contrib.auth import get_user_model

from annotate.models import Assignment, Campaign
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)


def _campaign(catalogue, overlap: int) -> Campaign:
    return campaign_create(
        name=f"Repeats{overlap}",
        criterion_set=catalogue,
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        overlap=overlap,
        repeat_rate=1.0,
        repeat_gap=0,
    )


def _submit(assignment: Assignment) -> None:
    # Straight to submitted, with its time: the gap counts submissions in order.
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SUBMITTED, submitted_at=assignment.claimed_at)


def test_it_makes_one_repeat_per_original_when_one_annotator_claims_from_many_tabs_at_once(catalogue):
    campaign = _campaign(catalogue, overlap=1)
    user = get_user_model().objects.create_user("tabs")
    first = assignment_claim_next(campaign=campaign, user=user)
    _submit(first)
    results, errors = fire([lambda: assignment_claim_next(campaign=campaign, user=user) for _ in range(6)])
    assert not errors
    # Every tab got the same claim: the repeat of the first pair, in the other order.
    assert len({r.pk for r in results}) == 1
    repeat = Assignment.objects.get(pk=results[0].pk)
    assert repeat.repeat_of_id == first.pk and repeat.a_first is (not first.a_first)
    assert Assignment.objects.filter(repeat_of=first).count() == 1
    assert Assignment.objects.filter(annotator=user, status=Assignment.Status.ACTIVE).count() == 1


def test_it_keeps_the_overlap_and_one_repeat_per_original_while_many_work_through_at_once(catalogue):
    campaign = _campaign(catalogue, overlap=2)
    users = [get_user_model().objects.create_user(f"worker{i}") for i in range(5)]

    def work_through(user):
        while (a := assignment_claim_next(campaign=campaign, user=user)) is not None:
            _submit(a)

    def tabs(user):
        # Two tabs of one annotator working at once.
        _, errors = fire([lambda: work_through(user), lambda: work_through(user)])
        assert not errors

    _, errors = fire([lambda u=u: tabs(u) for u in users])
    assert not errors
    originals = Assignment.objects.filter(pair__campaign=campaign, repeat_of__isnull=True)
    repeats = Assignment.objects.filter(pair__campaign=campaign, repeat_of__isnull=False)
    # Every pair filled to exactly the overlap by originals; repeats on top, one per original at most.
    assert set(Counter(originals.values_list("pair_id", flat=True)).values()) == {2} and originals.count() == 16
    assert set(Counter(repeats.values_list("repeat_of_id", flat=True)).values()) == {1}
    assert all(r.annotator_id == r.repeat_of.annotator_id and r.a_first is (not r.repeat_of.a_first) for r in repeats)
    # Gap 0: every original is repeated.
    assert repeats.count() == originals.count()
