"""Overlap first: a claim fills a pair others have started before it opens a new one, so agreement
between annotators (the human ceiling) can be measured from the first submissions.

The simulations run real threads on whichever database the suite runs on (SQLite or PostgreSQL).
"""

import random
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotate.models import Assignment, Pair
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next, claim_candidates
from calibration.report.build import build_report
from tests.schedule_builders import AGENTS, complete_share, label_and_submit, wide_tiny_catalogue, work_in_parallel


@pytest.mark.django_db(transaction=True)
def test_it_completes_overlap_sets_for_most_work_after_a_quarter_of_it():
    people = [get_user_model().objects.create_user(f"par{i}") for i in range(4)]
    campaign = campaign_create(
        name="Overlap first",
        criterion_set=wide_tiny_catalogue(),
        systems=["wikipedia", *AGENTS],
        overlap=2,
        annotators=people,
        rationale_min_length=5,
    )
    assert campaign.pairs.count() == 80  # 160 assignments
    submitted = work_in_parallel(campaign, people, stop_after=80)
    needed = dict.fromkeys(campaign.pairs.values_list("pk", flat=True), 2)
    quarter, half = complete_share(submitted, 40, needed), complete_share(submitted, 80, needed)
    # Before overlap first, no pair had two annotators at a quarter of the work (0%), and 9% had at half (bench/schedule.py).
    # At the cut, pairs whose second annotator is still at work count as incomplete: with four people
    # and the threads' timing that was 5-25% of the first 40 (12 runs on SQLite: 0.75-0.95), 80% at half.
    assert quarter >= 0.7, f"{quarter:.0%} of the first 40 submissions have a complete overlap set"
    assert half >= 0.8, f"{half:.0%} of the first 80 submissions have a complete overlap set"
    live = Counter(Assignment.objects.filter(pair__campaign=campaign).exclude(status="expired").values_list("pair_id", flat=True))
    assert max(live.values()) <= 2
    active = Counter(Assignment.objects.filter(pair__campaign=campaign, status="active").values_list("annotator_id", flat=True))
    assert set(active.values()) <= {1}


@pytest.mark.django_db
def test_it_fills_a_pair_somebody_started_before_opening_another(catalogue, alice, bob):
    # 2 topics, one pair each; both people meet each topic once whatever happens. Ranking by pressure alone
    # ties the two topics for bob and then opens the empty pair.
    campaign = campaign_create(
        name="Fill", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=2, overlap=2, annotators=[alice, bob]
    )
    started = assignment_claim_next(campaign=campaign, user=alice)
    joined = assignment_claim_next(campaign=campaign, user=bob)
    assert joined.pair_id == started.pair_id


@pytest.mark.django_db
def test_it_fills_the_fullest_overlap_set_first(catalogue, django_user_model):
    people = [django_user_model.objects.create_user(f"k3-{i}") for i in range(4)]
    campaign = campaign_create(
        name="K3", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=3, overlap=3, annotators=people
    )
    first = assignment_claim_next(campaign=campaign, user=people[0])
    assert assignment_claim_next(campaign=campaign, user=people[1]).pair_id == first.pair_id
    # Somebody else starts a second pair: the next claimer still goes to the pair with two people on it.
    other = Pair.objects.filter(campaign=campaign).exclude(pk=first.pair_id).first()
    Assignment.objects.create(
        pair=other, annotator=people[3], a_first=True, order="ab", claimed_at=first.claimed_at, last_activity_at=first.claimed_at
    )
    assert claim_candidates(campaign=campaign, user=people[2])[:2] == [first.pair_id, other.pk]


@pytest.mark.django_db
def test_it_still_prefers_an_unmet_topic_to_an_open_overlap_set(catalogue, alice, bob):
    # 2 topics x 2 pairs. Alice has met topic T; bob starts the other pair of T. Alice goes to the other topic.
    campaign = campaign_create(
        name="Unmet first",
        criterion_set=catalogue,
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        topics=2,
        overlap=2,
        annotators=[alice, bob],
    )
    mine = assignment_claim_next(campaign=campaign, user=alice)
    Assignment.objects.filter(pk=mine.pk).update(status=Assignment.Status.SUBMITTED)
    same_topic = Pair.objects.filter(campaign=campaign, topic=mine.pair.topic).exclude(pk=mine.pair_id).get()
    Assignment.objects.create(
        pair=same_topic, annotator=bob, a_first=True, order="ab", claimed_at=mine.claimed_at, last_activity_at=mine.claimed_at
    )
    following = assignment_claim_next(campaign=campaign, user=alice)
    assert following.pair.topic_id != mine.pair.topic_id


@pytest.mark.django_db
def test_it_shows_the_human_ceiling_as_soon_as_one_overlap_set_is_complete(client, settings, rachel, alice, bob):
    settings.CALIBRATION_ROUNDS = 50
    campaign = campaign_create(
        name="Ceiling",
        criterion_set=wide_tiny_catalogue(topics=4),
        systems=["wikipedia", *AGENTS],
        overlap=2,
        annotators=[alice, bob],
        rationale_min_length=5,
    )
    draw = random.Random(1)
    label_and_submit(assignment_claim_next(campaign=campaign, user=alice), alice, draw)
    humans = build_report(campaign, rounds=50)["humans"]
    assert humans["par_leave_one_out"] is None and humans["krippendorff_alpha"] is None

    label_and_submit(assignment_claim_next(campaign=campaign, user=bob), bob, draw)

    humans = build_report(campaign, rounds=50)["humans"]
    assert humans["n_pairs"] == 1 and humans["n_items_multi"] == 3  # one pair, its 3 criteria labelled twice
    assert humans["par_leave_one_out"] is not None and humans["par_leave_one_out_n"] == 6
    assert humans["krippendorff_alpha"] is not None and humans["fleiss_kappa"]["value"] is not None
    client.force_login(rachel)
    response = client.get(reverse("calibration-dashboard", args=[campaign.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    ceiling = html[html.index("PAR, leave one out") :]
    assert "(n=6, 1 pair)" in ceiling[: ceiling.index("</tr>")]
