"""Campaigns with one-article criteria: their readings, and claims that hand out pairs and readings."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from annotate.models import Assignment, LabelChange, Reading, ReadingAssignment
from annotate.services.campaigns import campaign_annotator_remove, campaign_create, campaign_create_from_pairs
from annotate.services.claims import assignment_claim_next, pairs_left, work_candidates
from tests.reading_campaigns import ONE_ARTICLE, mixed_campaign, rubric

pytestmark = pytest.mark.django_db


def submit(item):
    item.status = Assignment.Status.SUBMITTED
    item.save()


def drain(campaign, user, *, now=None):
    """Claims and submits until nothing is left; the items in the order given."""
    items = []
    while (item := assignment_claim_next(campaign=campaign, user=user, now=now)) is not None:
        items.append(item)
        submit(item)
        assert len(items) < 100
    return items


def kind(item):
    return item.pair.kind


def topic(item):
    return item.pair.topic_id


def test_it_makes_a_reading_per_distinct_article_of_the_pairs(catalogue):
    campaign = mixed_campaign(criterion_set=None, topics=3)
    # Reference against two agents would share the reference; here: 3 topics x (reference + agent).
    pairs = list(campaign.pairs.values_list("article_a_id", "article_b_id"))
    articles = {a for pair in pairs for a in pair}
    readings = Reading.objects.filter(campaign=campaign)
    assert sorted(readings.values_list("article_a_id", flat=True)) == sorted(articles)
    assert len(articles) == 6
    assert sorted(readings.values_list("order", flat=True)) == list(range(6))
    for reading in readings.select_related("article_a"):
        assert reading.topic_id == reading.article_a.topic_id


def test_it_makes_each_shared_reference_article_one_reading(catalogue):
    campaign = campaign_create(
        name="Three",
        criterion_set=rubric("mixed3", ONE_ARTICLE, {"id": "p", "name": "P", "criteria": [{"id": "pw", "text": "Which?"}]}),
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        topics=2,
    )
    assert campaign.pairs.count() == 4  # reference against two agents on 2 topics
    assert campaign.readings.count() == 6  # the reference once per topic, each agent once


def test_it_makes_no_readings_for_a_pairwise_rubric(campaign):
    assert campaign.readings.count() == 0


def test_it_copies_the_readings_with_the_pairs(catalogue):
    source = mixed_campaign(criterion_set=None, topics=2)
    copy = campaign_create_from_pairs(name="Copy", source=source, pair_ids=[source.pairs.order_by("pk").first().pk])
    assert copy.readings.count() == 2


def test_it_hands_out_only_readings_when_the_rubric_has_no_pairwise_criterion(catalogue, alice):
    campaign = mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), topics=2)
    assert campaign.pairs.count() == 2  # kept as the record of which articles
    items = drain(campaign, alice)
    assert [kind(item) for item in items] == ["reading"] * 4
    assert not Assignment.objects.filter(pair__campaign=campaign).exists()


def test_it_refuses_pair_options_for_a_rubric_without_pairwise_criteria(catalogue):
    with pytest.raises(ValidationError) as caught:
        mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), ask_overall=True, calibration_pairs=1)
    assert caught.value.messages == [
        "This rubric has no pairwise criterion: the overall question applies to pairs only.",
        "This rubric has no pairwise criterion: a calibration set applies to pairs only.",
    ]


def test_it_hands_out_every_pair_and_reading_of_a_mixed_campaign_once(catalogue, alice):
    campaign = mixed_campaign(topics=3)
    items = drain(campaign, alice)
    assert sorted(kind(item) for item in items) == ["pair"] * 3 + ["reading"] * 6
    assert len({(kind(item), item.pk) for item in items}) == 9


def test_it_never_gives_a_topics_other_view_back_to_back_while_other_work_is_left(catalogue, alice, bob):
    for attempt in range(5):
        campaign = mixed_campaign(name=f"Views {attempt}", topics=3)
        items = drain(campaign, alice)
        steps = list(zip(items, items[1:]))
        clashes = [(a, b) for a, b in steps if topic(a) == topic(b) and kind(a) != kind(b)]
        # Possible only where nothing else was left: the last items of the campaign.
        for a, b in clashes:
            later = items[items.index(b) :]
            assert {topic(item) for item in later} == {topic(b)}, [(kind(i), topic(i)) for i in items]


def test_it_gives_the_other_view_next_when_the_campaign_asks_for_it(catalogue, alice):
    campaign = mixed_campaign(topics=3, topic_back_to_back=True)
    first = assignment_claim_next(campaign=campaign, user=alice)
    submit(first)
    second = assignment_claim_next(campaign=campaign, user=alice)
    assert topic(second) == topic(first) and kind(second) != kind(first)


def test_it_ranks_the_other_view_last_by_default(catalogue, alice):
    campaign = mixed_campaign(topics=3)
    first = assignment_claim_next(campaign=campaign, user=alice)
    submit(first)
    ranked = work_candidates(campaign=campaign, user=alice)
    other = "reading" if kind(first) == "pair" else "pair"
    model = Reading if other == "reading" else campaign.pairs.model
    tail = [item_id for k, item_id in ranked if k == other and model.objects.get(pk=item_id).topic_id == topic(first)]
    assert tail and [item_id for _, item_id in ranked[-len(tail) :]] == tail


def test_it_stops_a_reading_at_overlap_distinct_annotators(catalogue, django_user_model):
    users = [django_user_model.objects.create_user(f"reader{i}") for i in range(3)]
    campaign = mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), topics=1, overlap=2)
    for user in users:
        drain(campaign, user)
    taken = ReadingAssignment.objects.filter(pair__campaign=campaign)
    assert taken.count() == 4  # 2 readings x 2 annotators; the third gets nothing
    assert not taken.filter(annotator=users[2]).exists()


def test_it_counts_readings_in_what_is_left(catalogue, alice):
    campaign = mixed_campaign(topics=2)
    assert pairs_left(campaign=campaign, user=alice) == 6
    item = assignment_claim_next(campaign=campaign, user=alice)
    assert pairs_left(campaign=campaign, user=alice, active=item) == 6
    submit(item)
    assert pairs_left(campaign=campaign, user=alice) == 5


def test_it_counts_one_reading_per_topic_when_repeats_are_forbidden(catalogue, alice):
    campaign = mixed_campaign(topics=2, forbid_repeats=True)
    assert pairs_left(campaign=campaign, user=alice) == 4  # a pair and a reading per topic
    kinds = [kind(item) for item in drain(campaign, alice)]
    assert sorted(kinds) == ["pair", "pair", "reading", "reading"]


def test_it_gives_back_an_unfinished_reading_first(catalogue, alice):
    campaign = mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), topics=1)
    first = assignment_claim_next(campaign=campaign, user=alice)
    assert assignment_claim_next(campaign=campaign, user=alice) == first


def test_it_returns_an_untouched_reading_to_the_pool_and_keeps_its_work_for_its_annotator(catalogue, alice, bob):
    campaign = mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), topics=1, overlap=1, claim_timeout_minutes=30)
    now = timezone.now()
    stale = assignment_claim_next(campaign=campaign, user=alice, now=now)
    other = assignment_claim_next(campaign=campaign, user=bob, now=now)
    assert other.pair_id != stale.pair_id
    submit(other)
    later = now + timedelta(minutes=31)
    fresh = assignment_claim_next(campaign=campaign, user=bob, now=later)
    assert fresh is not None and fresh.pair_id == stale.pair_id
    stale.refresh_from_db()
    assert stale.status == Assignment.Status.EXPIRED


def test_it_gives_an_expired_reading_back_to_its_annotator_with_its_work_and_an_audit_row(catalogue, alice):
    campaign = mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), topics=1, overlap=1, claim_timeout_minutes=30)
    now = timezone.now()
    stale = assignment_claim_next(campaign=campaign, user=alice, now=now)
    later = now + timedelta(minutes=31)
    back = assignment_claim_next(campaign=campaign, user=alice, now=later)
    assert back.pk == stale.pk and back.pair.kind == "reading"
    back.refresh_from_db()
    assert (back.status, back.claimed_at, back.last_activity_at) == (Assignment.Status.ACTIVE, later, later)
    change = LabelChange.objects.get(assignment=back, new_value="active")
    assert (change.field, change.old_value, change.changed_by, change.changed_at) == ("status", "expired", alice, later)


def test_it_revokes_readings_in_progress_when_an_annotator_is_removed(catalogue, alice, bob, rachel):
    campaign = mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), topics=1, annotators=[alice, bob])
    work = assignment_claim_next(campaign=campaign, user=alice)
    assert campaign_annotator_remove(campaign=campaign, user=alice, by=rachel) == 1
    work.refresh_from_db()
    assert work.status == Assignment.Status.REVOKED
    change = LabelChange.objects.get(assignment=work)
    assert (change.field, change.old_value, change.new_value) == ("status", "active", "revoked")
    with pytest.raises(PermissionDenied):
        assignment_claim_next(campaign=campaign, user=alice)


def test_it_says_how_many_readings_create_campaign_made(catalogue):
    import io

    from django.core.management import call_command

    from annotate.models import Campaign

    rubric("alone", ONE_ARTICLE)
    out = io.StringIO()
    call_command(
        "create_campaign",
        "--name=cmd",
        "--criteria=alone",
        "--systems=wikipedia,atlas_agent",
        "--topics=1",
        "--overlap=2",
        "--topic-back-to-back",
        stdout=out,
        stderr=io.StringIO(),
    )
    assert ", 2 one-article readings (overlap 2)" in out.getvalue()
    assert Campaign.objects.get(name="cmd").topic_back_to_back
