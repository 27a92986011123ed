"""Voiding a pair while annotators claim it, with real threads, on SQLite or PostgreSQL (issue 37):
no claim lands on the pair after the void, and no assignment of it is left active."""

import pytest
from django.contrib.auth import get_user_model

from annotate.models import Assignment, Pair
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from annotate.services.flags import pair_void
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_leaves_no_active_assignment_on_a_pair_voided_while_12_annotators_claim(catalogue):
    User = get_user_model()
    staff = User.objects.create_user("staff", is_staff=True)
    users = [User.objects.create_user(f"claimer{i}") for i in range(12)]
    # One topic, one pair, room for everybody: every claim wants this very pair.
    campaign = campaign_create(name="One pair", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=1, overlap=20)
    pair = Pair.objects.get(campaign=campaign)
    calls = [lambda u=u: assignment_claim_next(campaign=campaign, user=u) for u in users]
    calls.insert(6, lambda: pair_void(pair=Pair.objects.get(pk=pair.pk), by=staff, reason="broken"))
    results, errors = fire(calls)
    assert not errors
    voided_count = results[6]
    statuses = list(Assignment.objects.filter(pair=pair).values_list("status", flat=True))
    assert "active" not in statuses  # claimed before the void: voided; after it: never made
    assert statuses.count("voided") == voided_count
    claimed = [r for i, r in enumerate(results) if i != 6 and r is not None]
    assert len(claimed) == voided_count  # every assignment made was voided, none slipped past
    assert Pair.objects.get(pk=pair.pk).voided_at is not None
    assert assignment_claim_next(campaign=campaign, user=User.objects.create_user("late")) is None
