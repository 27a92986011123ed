"""The calibration set: a campaign's first N pairs, labelled by every member before any other pair."""

import random
from collections import Counter
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from annotate.design import Design
from annotate.models import Assignment, Campaign, Pair, System
from annotate.selectors import calibration_pair_ids, campaign_design
from annotate.services.campaigns import campaign_annotator_remove, campaign_create
from annotate.services.claims import assignment_claim_next, pairs_left
from calibration.report.build import build_report
from tests.helpers import run
from tests.schedule_builders import AGENTS, label_and_submit, wide_tiny_catalogue, work_in_parallel

SYSTEMS = ["wikipedia", "atlas_agent", "quill_researcher"]


def submit(assignment):
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SUBMITTED)


def claims_of(campaign, user, n):
    """The pairs of the user's next `n` claims, each submitted at once."""
    pairs = []
    for _ in range(n):
        work = assignment_claim_next(campaign=campaign, user=user)
        assert work is not None
        pairs.append(work.pair_id)
        submit(work)
    return pairs


@pytest.mark.django_db(transaction=True)
def test_it_shows_the_human_ceiling_after_three_pairs_per_annotator_with_a_calibration_set_of_three():
    people = [get_user_model().objects.create_user(f"cal{i}") for i in range(4)]
    wide_tiny_catalogue()
    created = run(
        "create_campaign",
        "--name",
        "Calibrated",
        "--criteria",
        "calib_tiny",
        "--systems",
        ",".join(["wikipedia", *AGENTS]),
        "--overlap",
        "2",
        "--annotators",
        ",".join(u.username for u in people),
        "--rationale-min-length",
        "5",
        "--calibration-pairs",
        "3",
    )
    assert created.code == 0, created.err
    assert "80 pairs, overlap 2, the first 3 for every one of the 4 annotator(s) (166 assignments)" in created.out
    campaign = Campaign.objects.get(name="Calibrated")
    calibration = calibration_pair_ids(campaign=campaign)
    assert campaign.calibration_pairs == 3 and len(calibration) == 3

    submitted = work_in_parallel(campaign, people, pairs_each=3)

    # Every annotator did the calibration set and nothing else; each calibration pair has all 4, not the overlap of 2.
    assert sorted(Counter(submitted).items()) == sorted((pair, 4) for pair in calibration)
    assert len(set(Pair.objects.filter(pk__in=calibration).values_list("topic_id", flat=True))) == 3
    humans = build_report(campaign, rounds=50)["humans"]
    assert (humans["n_annotators"], humans["n_pairs"], humans["n_items_multi"]) == (4, 3, 9)
    assert humans["par_leave_one_out"] is not None and humans["par_leave_one_out_n"] == 36
    assert humans["krippendorff_alpha"] is not None
    assert humans["fleiss_kappa"]["value"] is not None and humans["fleiss_kappa"]["raters_per_item"] == 4
    # Then the rest of the campaign, with the overlap of 2.
    after = assignment_claim_next(campaign=campaign, user=people[0])
    assert after.pair_id not in calibration
    label_and_submit(after, people[0], random.Random(0))
    assert assignment_claim_next(campaign=campaign, user=people[1]).pair_id == after.pair_id
    assert Assignment.objects.filter(pair_id=after.pair_id).count() == 2


@pytest.mark.django_db
def test_it_gives_every_member_the_calibration_set_first_in_order_whatever_the_overlap(catalogue, django_user_model):
    people = [django_user_model.objects.create_user(f"m{i}") for i in range(3)]
    campaign = campaign_create(name="Cal", criterion_set=catalogue, systems=SYSTEMS, overlap=1, annotators=people, calibration_pairs=2)
    calibration = calibration_pair_ids(campaign=campaign)
    assert calibration == list(campaign.pairs.order_by("order", "id").values_list("pk", flat=True)[:2])
    for user in people:
        assert claims_of(campaign, user, 2) == calibration
    # Overlap 1 holds for the other pairs: 6 left, one person each.
    rest = [pair for user in people for pair in claims_of(campaign, user, 2)]
    assert len(set(rest)) == 6 and not set(rest) & set(calibration)
    assert Counter(Assignment.objects.filter(pair_id__in=calibration).values_list("pair_id", flat=True)) == dict.fromkeys(calibration, 3)


@pytest.mark.django_db
def test_it_draws_the_calibration_set_on_different_topics(catalogue):
    # 4 topics x 2 pairs: a random order puts the first 4 pairs on 4 topics only 23% of the time.
    for i in range(10):
        campaign = campaign_create(name=f"Spread {i}", criterion_set=catalogue, systems=SYSTEMS, calibration_pairs=4)
        topics = Pair.objects.filter(pk__in=calibration_pair_ids(campaign=campaign)).values_list("topic_id", flat=True)
        assert len(set(topics)) == 4
    # More calibration pairs than topics: the set then holds two pairs of a topic, and the design says so.
    crowded = campaign_create(name="Crowded", criterion_set=catalogue, systems=SYSTEMS, calibration_pairs=5, overlap=1)
    assert len(set(Pair.objects.filter(pk__in=calibration_pair_ids(campaign=crowded)).values_list("topic_id", flat=True))) == 4


@pytest.mark.django_db
def test_it_gives_back_an_expired_calibration_claim_and_keeps_the_set_first(catalogue, alice, bob):
    campaign = campaign_create(
        name="Expire",
        criterion_set=catalogue,
        systems=SYSTEMS,
        overlap=1,
        annotators=[alice, bob],
        calibration_pairs=2,
        claim_timeout_minutes=30,
    )
    now = timezone.now()
    first = assignment_claim_next(campaign=campaign, user=alice, now=now)
    assert first.pair_id == calibration_pair_ids(campaign=campaign)[0]
    back = assignment_claim_next(campaign=campaign, user=alice, now=now + timedelta(minutes=31))
    assert back.pk == first.pk and back.status == Assignment.Status.ACTIVE


@pytest.mark.django_db
def test_it_counts_the_members_of_the_day_for_a_campaign_open_to_everybody(catalogue, alice, bob, rachel):
    campaign = campaign_create(name="Open", criterion_set=catalogue, systems=SYSTEMS, overlap=1, calibration_pairs=2)
    calibration = calibration_pair_ids(campaign=campaign)
    assert claims_of(campaign, alice, 2) == calibration
    campaign_annotator_remove(campaign=campaign, user=alice, by=rachel)
    # Somebody whose account is created later starts with the set too.
    late = get_user_model().objects.create_user("late")
    assert claims_of(campaign, bob, 1) == calibration[:1]
    progress = run_page(campaign, rachel)
    # bob and late are the members now; alice's submitted work stays but she no longer counts.
    assert "<strong>0 / 2</strong> members have submitted all of them" in progress
    assert "<strong>0 / 2</strong> pairs are labelled by every member" in progress
    assert claims_of(campaign, bob, 1) == calibration[1:]
    assert claims_of(campaign, late, 2) == calibration
    progress = run_page(campaign, rachel)
    assert "<strong>2 / 2</strong> members have submitted all of them" in progress
    assert "<strong>2 / 2</strong> pairs are labelled by every member" in progress
    assert Assignment.objects.filter(pair_id=calibration[0], status=Assignment.Status.SUBMITTED).count() == 3


def run_page(campaign, rachel):
    from django.test import Client

    client = Client()
    client.force_login(rachel)
    response = client.get(reverse("campaign-detail", args=[campaign.pk]))
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.django_db
def test_it_shows_the_calibration_set_and_its_progress_on_the_campaign_page(client, catalogue, rachel, alice, bob):
    campaign = campaign_create(
        name="Shown", criterion_set=catalogue, systems=SYSTEMS, overlap=1, annotators=[alice, bob], calibration_pairs=2
    )
    claims_of(campaign, alice, 2)
    html = run_page(campaign, rachel)
    assert "calibration set of 2 pairs" in html
    assert "<strong>1 / 2</strong> members have submitted all of them" in html
    assert html.count('<span class="badge">calibration</span>') == 2
    # 2 calibration pairs for both members and 6 others for one: 10 assignments; alice submitted 2.
    assert "<strong>2 / 10</strong> assignments submitted" in html
    assert html.count('<td class="num">1 / 2</td>') == 2
    client.force_login(rachel)
    data = client.get(reverse("api:campaign-detail", args=[campaign.pk])).json()
    assert data["calibration_pairs"] == 2
    assert data["progress"]["calibration"] == {"size": 2, "members": 2, "members_done": 1, "pairs_complete": 0}
    assert sorted(p["needed"] for p in data["progress"]["pairs"]) == [1] * 6 + [2, 2]
    assert data["counts"]["needed"] == data["progress"]["needed"] == 10


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"calibration_pairs": -1}, "The calibration set is a number of pairs, 0 for none; not -1."),
        ({"calibration_pairs": 9}, "The calibration set (9 pairs) cannot be larger than the campaign (8 pairs)."),
        ({"calibration_pairs": 40000}, "The calibration set can hold at most 32767 pairs; 40000 asked."),
        (
            {"calibration_pairs": 5, "forbid_repeats": True},
            "with repeats forbidden a calibration set of 5 pairs needs 5 topics; this campaign has 4.",
        ),
    ],
)
def test_it_refuses_a_bad_calibration_set_and_creates_nothing(catalogue, options, message):
    with pytest.raises(ValidationError) as caught:
        campaign_create(name="Bad", criterion_set=catalogue, systems=SYSTEMS, **options)
    assert any(message in text for text in caught.value.messages), caught.value.messages
    assert not Campaign.objects.exists() and not Pair.objects.exists()


@pytest.mark.django_db
def test_it_refuses_a_calibration_set_for_a_labels_only_campaign(catalogue):
    with pytest.raises(ValidationError) as caught:
        campaign_create(name="Votes", criterion_set=catalogue, labels_only=True, calibration_pairs=3)
    assert "calibration set does not apply to it" in caught.value.messages[0]
    result = run("create_campaign", "--name", "Votes", "--criteria", "wiki_writing", "--labels-only", "--calibration-pairs", "3")
    assert result.code != 0 and "calibration set does not apply to it" in result.err
    assert not Campaign.objects.exists()


@pytest.mark.django_db
def test_it_explains_a_bad_calibration_set_on_the_command_line(catalogue, alice, bob):
    base = ["create_campaign", "--name", "Cmd", "--criteria", "wiki_writing", "--systems", ",".join(SYSTEMS), "--annotators", "alice,bob"]
    too_many = run(*base, "--calibration-pairs", "9")
    assert too_many.code != 0 and "The calibration set (9 pairs) cannot be larger than the campaign (8 pairs)." in too_many.err
    negative = run(*base, "--calibration-pairs", "-2")
    assert negative.code != 0 and "not -2" in negative.err
    assert not Campaign.objects.exists()
    fine = run(*base, "--calibration-pairs", "2", "--overlap", "1")
    assert fine.code == 0, fine.err
    assert "8 pairs, overlap 1, the first 2 for every one of the 2 annotator(s) (10 assignments)" in fine.out
    assert Campaign.objects.get(name="Cmd").calibration_pairs == 2


def form_data(catalogue, alice, **extra):
    return {
        "name": "Web calibration",
        "criterion_set": catalogue.pk,
        "systems": [s.pk for s in System.objects.filter(key__in=SYSTEMS)],
        "overlap": 1,
        "pair_mode": "reference",
        "rationale_min_length": 10,
        "annotators": [alice.pk],
        "claim_timeout_minutes": 120,
        **extra,
    }


@pytest.mark.django_db
def test_it_takes_the_calibration_set_on_the_web_form(client, catalogue, rachel, alice):
    client.force_login(rachel)
    page = client.get(reverse("campaign-new"))
    assert page.status_code == 200 and 'name="calibration_pairs"' in page.content.decode()
    for bad, message in ((-1, "greater than or equal to 0"), (9, "cannot be larger than the campaign (8 pairs)")):
        response = client.post(reverse("campaign-new"), form_data(catalogue, alice, calibration_pairs=bad))
        assert response.status_code == 422
        assert message in response.content.decode()
    assert not Campaign.objects.exists()
    response = client.post(reverse("campaign-new"), form_data(catalogue, alice, calibration_pairs=3))
    assert response.status_code == 302
    assert Campaign.objects.get(name="Web calibration").calibration_pairs == 3


@pytest.mark.django_db
def test_it_counts_calibration_slots_for_every_annotator_in_the_design():
    # One topic of 4 pairs, one of them for calibration, 3 annotators and overlap 2: 3 + 3 x 2 = 9 slots, 3 reachable.
    design = Design(pairs_by_topic=(4,), overlap=2, annotators=3, calibration_by_topic=(1,))
    assert (design.slots, design.forced_repeats, design.calibration_pairs) == (9, 6, 1)
    assert "4 pairs on 1 topics, each for 2 annotator(s) and the 1 calibration pair(s) for all 3, make 9 slots" in design.warning(
        forbid_repeats=False
    )
    assert Design(pairs_by_topic=(1, 1), overlap=1, annotators=4, calibration_by_topic=(1, 0)).forced_repeats == 0


@pytest.mark.django_db
def test_it_puts_the_calibration_set_in_the_design_of_a_campaign(catalogue, alice, bob):
    campaign = campaign_create(
        name="Designed", criterion_set=catalogue, systems=SYSTEMS, overlap=1, annotators=[alice, bob], calibration_pairs=4
    )
    design = campaign_design(campaign=campaign)
    # 4 topics x 2 pairs; one pair of each topic is for calibration (2 slots), the other for one person.
    assert (design.slots, design.forced_repeats) == (12, 4)


@pytest.mark.django_db
def test_it_gives_the_demo_annotators_the_same_first_pairs(demo_campaign):
    annotator1, annotator2 = (get_user_model().objects.get(username=name) for name in ("annotator1", "annotator2"))
    calibration = calibration_pair_ids(campaign=demo_campaign)
    assert (
        demo_campaign.calibration_pairs == 2 and len(set(Pair.objects.filter(pk__in=calibration).values_list("topic_id", flat=True))) == 2
    )
    assert claims_of(demo_campaign, annotator1, 2) == calibration == claims_of(demo_campaign, annotator2, 2)


@pytest.mark.django_db
def test_it_counts_the_pairs_after_the_calibration_set_in_the_pairs_left(catalogue, django_user_model):
    people = [django_user_model.objects.create_user(f"left{i}") for i in range(3)]
    campaign = campaign_create(name="Left", criterion_set=catalogue, systems=SYSTEMS, overlap=1, annotators=people, calibration_pairs=2)
    # 8 pairs: the 2 calibration pairs, then the 6 others, all still open to a newcomer.
    assert pairs_left(campaign=campaign, user=people[0]) == 8
    claims_of(campaign, people[0], 2)
    assert pairs_left(campaign=campaign, user=people[0]) == 6
    # Another member still owes the calibration set: 2 owed, and the 5 others nobody holds.
    claims_of(campaign, people[0], 1)
    assert pairs_left(campaign=campaign, user=people[1]) == 2 + 5
