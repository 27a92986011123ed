"""Claims fired at once, with real threads, on whichever database the suite runs on (SQLite or PostgreSQL)."""

import threading
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.db import connections

from annotate.models import Assignment
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next

pytestmark = pytest.mark.django_db(transaction=True)


def fire(calls):
    """Runs each callable in its own thread, all released together; returns results and exceptions."""
    barrier = threading.Barrier(len(calls))
    results, errors = [None] * len(calls), []

    def worker(i, call):
        try:
            barrier.wait()
            results[i] = call()
        except Exception as exc:  # a thread's exception would otherwise vanish
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


@pytest.fixture
def roomy_campaign(catalogue):
    """4 topics x 3 systems, every pair of systems, 10 annotators a pair: 12 pairs, 120 free slots."""
    return campaign_create(
        name="Roomy", criterion_set=catalogue, systems=["wikipedia", "atlas_agent", "quill_researcher"], pair_mode="all", overlap=10
    )


def test_it_gives_each_of_40_simultaneous_claimers_a_pair(roomy_campaign):
    User = get_user_model()
    users = [User.objects.create_user(f"claimer{i}") for i in range(40)]
    results, errors = fire([lambda u=u: assignment_claim_next(campaign=roomy_campaign, user=u) for u in users])
    assert not errors
    assert all(r is not None for r in results), f"{sum(r is None for r in results)} of 40 were told nothing was left"
    per_pair = Counter(Assignment.objects.filter(pair__campaign=roomy_campaign).values_list("pair_id", flat=True))
    assert max(per_pair.values()) <= roomy_campaign.overlap
    per_user = Counter(Assignment.objects.filter(pair__campaign=roomy_campaign, status="active").values_list("annotator_id", flat=True))
    assert sorted(per_user.values()) == [1] * 40


def test_it_never_exceeds_the_overlap_when_claimers_outnumber_the_slots(catalogue):
    User = get_user_model()
    campaign = campaign_create(name="Tight", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=2, overlap=3)
    users = [User.objects.create_user(f"tight{i}") for i in range(10)]
    results, errors = fire([lambda u=u: assignment_claim_next(campaign=campaign, user=u) for u in users])
    assert not errors
    # 2 pairs x 3 slots: exactly 6 claimers get one, 4 are told nothing is left.
    assert sum(r is not None for r in results) == 6
    per_pair = Counter(Assignment.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True))
    assert sorted(per_pair.values()) == [3, 3]


def test_it_gives_one_user_sending_four_claims_at_once_a_single_assignment(roomy_campaign, alice):
    results, errors = fire([lambda: assignment_claim_next(campaign=roomy_campaign, user=alice) for _ in range(4)])
    assert not errors
    assert len({r.pk for r in results}) == 1
    assert Assignment.objects.filter(annotator=alice, pair__campaign=roomy_campaign).count() == 1


def test_it_keeps_overlap_while_claimers_work_through_a_campaign(catalogue):
    User = get_user_model()
    users = [User.objects.create_user(f"racer{i}") for i in range(8)]
    campaign = campaign_create(
        name="Race", criterion_set=catalogue, systems=["wikipedia", "atlas_agent", "quill_researcher"], topics=2, overlap=2
    )

    def work_through(user):
        while (a := assignment_claim_next(campaign=campaign, user=user)) is not None:
            Assignment.objects.filter(pk=a.pk).update(status=Assignment.Status.SUBMITTED)

    _, errors = fire([lambda u=u: work_through(u) for u in users])
    assert not errors
    per_pair = Counter(Assignment.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True))
    assert set(per_pair.values()) == {2}
    assert len(per_pair) == campaign.pairs.count() == 4
