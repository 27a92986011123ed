"""Scheduling keeps the reference unseen: no second pair of a topic while another topic has a free slot."""

import random

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotate.design import Design
from annotate.models import Assignment, Campaign, Pair
from annotate.selectors import campaign_design
from annotate.services import articles_import, criterion_set_import
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next, claim_candidates
from annotate.sources import ArticleRecord, Batch, SystemRecord, read_rubric
from tests.conftest import FIXTURES
from tests.helpers import run

pytestmark = pytest.mark.django_db

AGENTS = ["atlas_agent", "quill_researcher", "ember.v2", "north-star"]


@pytest.fixture
def wide_catalogue():
    """20 topics, each written by the reference and 4 agents."""
    rubric, problems = read_rubric(FIXTURES / "criteria" / "wiki_writing.json", key="wiki_writing")
    assert not problems
    criterion_set, _ = criterion_set_import(rubric=rubric)
    batch = Batch(benchmark="wide")
    batch.systems = {key: SystemRecord(key=key, name=key, is_reference=key == "wikipedia") for key in ["wikipedia", *AGENTS]}
    batch.articles = [
        ArticleRecord(topic=f"Topic {t:02d}", system=system, markdown=f"# Topic {t:02d}\n\nA text on topic {t} by {system}.\n")
        for t in range(20)
        for system in ["wikipedia", *AGENTS]
    ]
    articles_import(batch=batch)
    return criterion_set


def annotators(n):
    User = get_user_model()
    return [User.objects.create_user(f"ann{i:02d}") for i in range(n)]


def free_unmet_pairs(campaign, user, met_topics):
    """Pairs on a topic the user has not met that still have a free slot for them."""
    live = Assignment.objects.exclude(status__in=["expired", "revoked"])
    return [
        pair
        for pair in Pair.objects.filter(campaign=campaign).exclude(topic_id__in=met_topics)
        if live.filter(pair=pair).count() < campaign.overlap and not pair.assignments.filter(annotator=user).exists()
    ]


def test_it_gives_nobody_a_repeated_topic_while_another_topic_is_free(wide_catalogue):
    people = annotators(15)
    campaign = campaign_create(name="Wide", criterion_set=wide_catalogue, systems=["wikipedia", *AGENTS], overlap=2, annotators=people)
    assert campaign.pairs.count() == 80
    met = {user.pk: set() for user in people}
    waiting, draw = list(people), random.Random(7)
    while waiting:
        user = draw.choice(waiting)
        work = assignment_claim_next(campaign=campaign, user=user)
        if work is None:
            waiting.remove(user)
            continue
        if work.pair.topic_id in met[user.pk]:
            assert not free_unmet_pairs(campaign, user, met[user.pk]), f"{user} got a repeat while an unmet topic had a free slot"
        met[user.pk].add(work.pair.topic_id)
        Assignment.objects.filter(pk=work.pk).update(status=Assignment.Status.SUBMITTED)
    assert Assignment.objects.filter(pair__campaign=campaign).count() == 160
    # 15 annotators could cover 20 topics x 8 slots without anybody meeting a topic twice. Claims come one at a
    # time, so a few late repeats may still happen (checked above: only when no unmet topic had a free slot).
    assert campaign_design(campaign=campaign).forced_repeats == 0


def test_it_leaves_slots_empty_rather_than_repeat_when_repeats_are_forbidden(catalogue):
    people = annotators(3)
    campaign = campaign_create(
        name="Strictly blind",
        criterion_set=catalogue,
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        topics=2,
        overlap=2,
        annotators=people,
        forbid_repeats=True,
    )
    design = campaign_design(campaign=campaign)
    assert (design.slots, design.forced_repeats) == (8, 2)
    for user in people:
        topics = []
        while (work := assignment_claim_next(campaign=campaign, user=user)) is not None:
            topics.append(work.pair.topic_id)
            Assignment.objects.filter(pk=work.pk).update(status=Assignment.Status.SUBMITTED)
        assert len(topics) == len(set(topics)) == 2
    assert Assignment.objects.filter(pair__campaign=campaign).count() == 6


def test_it_repeats_a_topic_only_once_every_topic_is_met(catalogue):
    people = annotators(3)
    campaign = campaign_create(
        name="Crowded",
        criterion_set=catalogue,
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        topics=2,
        overlap=2,
        annotators=people,
    )
    met = {user.pk: set() for user in people}
    repeats, waiting = 0, list(people)
    while waiting:
        for user in list(waiting):
            work = assignment_claim_next(campaign=campaign, user=user)
            if work is None:
                waiting.remove(user)
                continue
            if work.pair.topic_id in met[user.pk]:
                repeats += 1
                assert not free_unmet_pairs(campaign, user, met[user.pk])
            met[user.pk].add(work.pair.topic_id)
            Assignment.objects.filter(pk=work.pk).update(status=Assignment.Status.SUBMITTED)
    assert Assignment.objects.filter(pair__campaign=campaign).count() == 8
    # 8 slots, but 3 people meeting each of the 2 topics once fill 6: 2 repeats are forced, and no more happen.
    assert repeats == campaign_design(campaign=campaign).forced_repeats == 2


def test_it_draws_the_pair_order_from_no_public_input(wide_catalogue):
    def orders():
        campaign = campaign_create(name="Same name", criterion_set=wide_catalogue, systems=["wikipedia", *AGENTS], overlap=1)
        drawn = [(p.topic.title, p.article_b.system.key, p.order) for p in campaign.pairs.select_related("topic", "article_b__system")]
        Campaign.objects.filter(pk=campaign.pk).delete()
        return sorted(drawn)

    first, second = orders(), orders()
    # Two campaigns of one name and design get different orders (equal by chance with probability 1/80!).
    assert [o for *_, o in first] != [o for *_, o in second]
    by_name = list(range(80))
    random.Random("Same name").shuffle(by_name)
    assert sorted(by_name) == sorted(o for *_, o in first)
    assert by_name != [o for *_, o in first]


def test_it_puts_the_own_released_claim_first(catalogue, alice, bob):
    campaign = campaign_create(name="Resume", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=2, overlap=1)
    work = assignment_claim_next(campaign=campaign, user=alice)
    Assignment.objects.filter(pk=work.pk).update(status=Assignment.Status.EXPIRED)
    assert claim_candidates(campaign=campaign, user=alice)[0] == work.pair_id
    assert claim_candidates(campaign=campaign, user=bob)[0] != work.pair_id or len(claim_candidates(campaign=campaign, user=bob)) == 2


def test_it_frees_the_slot_of_a_revoked_claim(catalogue, alice, bob):
    campaign = campaign_create(name="Revoked", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=1, overlap=1)
    work = assignment_claim_next(campaign=campaign, user=alice)
    assert assignment_claim_next(campaign=campaign, user=bob) is None
    Assignment.objects.filter(pk=work.pk).update(status=Assignment.Status.REVOKED)
    taken = assignment_claim_next(campaign=campaign, user=bob)
    assert taken is not None and taken.pair_id == work.pair_id


def test_it_counts_forced_repeats_per_topic():
    # One topic of 4 pairs with overlap 2 has 8 slots; 3 annotators meeting it once fill 3.
    assert Design(pairs_by_topic=(4,), overlap=2, annotators=3).forced_repeats == 5
    assert Design(pairs_by_topic=(4, 4), overlap=2, annotators=8).forced_repeats == 0
    assert "stay empty" in Design(pairs_by_topic=(4,), overlap=2, annotators=3).warning(forbid_repeats=True)
    assert Design(pairs_by_topic=(1, 1), overlap=1, annotators=1).warning(forbid_repeats=False) == ""


def test_it_warns_on_the_command_line_when_the_design_forces_repeats(catalogue, alice, bob):
    result = run(
        "create_campaign",
        "--name",
        "Forced",
        "--criteria",
        "wiki_writing",
        "--systems",
        "wikipedia,atlas_agent,quill_researcher",
        "--topics",
        "1",
        "--overlap",
        "2",
        "--annotators",
        "alice,bob",
    )
    assert result.code == 0, result.err
    assert "warning: 2 pairs on 1 topics" in result.err and "2 assignment(s) will show an annotator a topic" in result.err
    quiet = run(
        "create_campaign",
        "--name",
        "Fine",
        "--criteria",
        "wiki_writing",
        "--systems",
        "wikipedia,atlas_agent",
        "--topics",
        "2",
        "--overlap",
        "2",
        "--annotators",
        "alice,bob",
        "--no-repeats",
    )
    assert quiet.code == 0 and "warning" not in quiet.err
    assert Campaign.objects.get(name="Fine").forbid_repeats


def test_it_warns_on_the_web_form_and_the_campaign_page(client, catalogue, rachel, alice):
    from annotate.models import System

    client.force_login(rachel)
    response = client.post(
        reverse("campaign-new"),
        {
            "name": "Web forced",
            "criterion_set": catalogue.pk,
            "systems": [s.pk for s in System.objects.filter(key__in=["wikipedia", "atlas_agent", "quill_researcher"])],
            "topics": 1,
            "overlap": 1,
            "pair_mode": "reference",
            "rationale_min_length": 10,
            "annotators": [alice.pk],
            "claim_timeout_minutes": 120,
            "forbid_repeats": "on",
        },
        follow=True,
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "Repeats are forbidden, so 1 slot(s) will stay empty" in html
    assert Campaign.objects.get(name="Web forced").forbid_repeats
