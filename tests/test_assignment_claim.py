from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from annotate.models import Assignment
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next

pytestmark = pytest.mark.django_db


def test_it_gives_back_unfinished_work_first(campaign, alice):
    first = assignment_claim_next(campaign=campaign, user=alice)
    again = assignment_claim_next(campaign=campaign, user=alice)
    assert first == again
    assert Assignment.objects.filter(annotator=alice).count() == 1


def test_it_never_gives_a_pair_twice_to_one_annotator(campaign, alice):
    seen = set()
    while (assignment := assignment_claim_next(campaign=campaign, user=alice)) is not None:
        assert assignment.pair_id not in seen
        seen.add(assignment.pair_id)
        assignment.status = Assignment.Status.SUBMITTED
        assignment.save()
    assert len(seen) == campaign.pairs.count()


def test_it_stops_at_overlap_distinct_annotators(catalogue, django_user_model):
    users = [django_user_model.objects.create_user(f"ann{i}") for i in range(3)]
    campaign = campaign_create(name="K1", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=1, overlap=2)
    assert assignment_claim_next(campaign=campaign, user=users[0]) is not None
    assert assignment_claim_next(campaign=campaign, user=users[1]) is not None
    assert assignment_claim_next(campaign=campaign, user=users[2]) is None


def test_it_returns_an_untouched_claim_to_the_pool(catalogue, django_user_model):
    first, second, third = (django_user_model.objects.create_user(n) for n in ("u1", "u2", "u3"))
    campaign = campaign_create(
        name="Timeout", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=1, overlap=2, claim_timeout_minutes=30
    )
    now = timezone.now()
    stale = assignment_claim_next(campaign=campaign, user=first, now=now)
    assignment_claim_next(campaign=campaign, user=second, now=now)
    assert assignment_claim_next(campaign=campaign, user=third, now=now + timedelta(minutes=29)) is None
    fresh = assignment_claim_next(campaign=campaign, user=third, now=now + timedelta(minutes=31))
    assert fresh is not None and fresh.pair_id == stale.pair_id
    stale.refresh_from_db()
    assert stale.status == Assignment.Status.EXPIRED


def test_it_refuses_people_outside_the_campaign(campaign, oscar, rachel):
    for user in (oscar, rachel):
        with pytest.raises(PermissionDenied):
            assignment_claim_next(campaign=campaign, user=user)


def test_it_gives_nothing_from_a_closed_campaign(campaign, alice):
    campaign.is_open = False
    campaign.save()
    assert assignment_claim_next(campaign=campaign, user=alice) is None


def test_it_draws_both_orders(catalogue, django_user_model):
    campaign = campaign_create(
        name="Orders", criterion_set=catalogue, systems=["wikipedia", "atlas_agent", "quill_researcher"], pair_mode="all", overlap=5
    )
    orders = []
    for i in range(5):
        user = django_user_model.objects.create_user(f"o{i}")
        while (a := assignment_claim_next(campaign=campaign, user=user)) is not None:
            orders.append(a.a_first)
            a.status = Assignment.Status.SUBMITTED
            a.save()
    # 60 fair coin flips all landing one way would happen with probability 2^-59.
    assert len(orders) == 60 and 0 < sum(orders) < 60


def test_it_resumes_an_expired_claim_with_its_work_when_the_annotator_comes_back(catalogue, alice):
    from annotate.models import Criterion, Label, LabelChange
    from annotate.rendering import plain_text
    from annotate.services.answers import label_save
    from annotate.services.labelling import span_add

    campaign = campaign_create(
        name="Come back", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=2, overlap=1, claim_timeout_minutes=30
    )
    now = timezone.now()
    work = assignment_claim_next(campaign=campaign, user=alice, now=now)
    criterion = Criterion.objects.filter(criterion_set=catalogue).order_by("order").first()
    label_save(assignment=work, criterion=criterion, user=alice, position="1", rationale="clearer lead", now=now)
    left = work.pair.article_a if work.a_first else work.pair.article_b
    span_add(assignment=work, position="1", start=0, end=8, quote=plain_text(left.html)[:8], polarity=-1, comment="vague")

    back = assignment_claim_next(campaign=campaign, user=alice, now=now + timedelta(minutes=31))

    assert back.pk == work.pk  # the same assignment, not a new claim on the other topic
    back.refresh_from_db()
    assert back.status == Assignment.Status.ACTIVE and back.a_first == work.a_first
    assert back.claimed_at == now + timedelta(minutes=31)
    assert Label.objects.get(assignment=back).rationale == "clearer lead"
    assert back.spans.get().comment == "vague"
    assert Assignment.objects.filter(annotator=alice).count() == 1
    assert list(LabelChange.objects.filter(assignment=back, field="status").values_list("old_value", "new_value")) == [
        ("expired", "active")
    ]
