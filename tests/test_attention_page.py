"""The staff page of speed and attention flags (/calibration/campaign/<id>/attention/): its figures are
`calibration.metrics.attention`'s on the same answers, timed by hand here; flags, never a rejection."""

from datetime import datetime, timedelta, timezone

import pytest
from django.test import Client

from annotate.models import Assignment, Criterion, Label
from annotate.services.claims import assignment_claim_next
from calibration.metrics.attention import Rationale, Timing, repeated_rationales, speed_flags
from tests.test_adjudication import submit_all

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
PASTED = "Fine on this point."


def work(campaign, user, pairs: int, *, seconds_per_criterion: float, rationale=None, position="1"):
    """`user` submits `pairs` pairs, spending `seconds_per_criterion` on each criterion in order (the
    first two at twice that), then 30 s before submitting, always choosing `position`; returns the timings and rationales `metrics.attention`
    should read, built here from the times set."""
    timings, rationales = [], []
    for number in range(pairs):
        assignment = assignment_claim_next(campaign=campaign, user=user)
        submit_all(assignment, dict.fromkeys(keys_of(campaign), position))
        opened = START + timedelta(days=number, hours=user.pk)
        clock = opened
        for index, key in enumerate(keys_of(campaign)):
            spent = seconds_per_criterion * (2 if index < 2 else 1)
            clock += timedelta(seconds=spent)
            text = rationale if rationale is not None else f"{user.username} reasons on {key} of pair {assignment.pair_id}"
            Label.objects.filter(assignment=assignment, criterion__key=key).update(created_at=clock, rationale=text)
            timings.append(Timing(user.username, str(assignment.pair_id), spent, key))
            rationales.append(Rationale(user.username, str(assignment.pair_id), key, text))
        submitted = clock + timedelta(seconds=30)
        Assignment.objects.filter(pk=assignment.pk).update(first_opened_at=opened, submitted_at=submitted)
        words = assignment.pair.article_a.word_count + assignment.pair.article_b.word_count
        timings.append(Timing(user.username, str(assignment.pair_id), (submitted - opened).total_seconds(), words=words))
    return timings, rationales


def keys_of(campaign) -> list[str]:
    return list(Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").values_list("key", flat=True))


@pytest.fixture
def worked(campaign, alice, bob):
    """alice reads carefully (60 s a criterion); bob rushes (2 s) and pastes one rationale everywhere."""
    careful = work(campaign, alice, 3, seconds_per_criterion=60)
    rushed = work(campaign, bob, 3, seconds_per_criterion=2, rationale=PASTED, position="2")
    return careful[0] + rushed[0], careful[1] + rushed[1]


def test_it_shows_attention_s_figures_on_the_same_answers(worked, campaign, rachel):
    timings, rationales = worked
    client = Client()
    client.force_login(rachel)
    response = client.get(f"/calibration/campaign/{campaign.pk}/attention/")
    assert response.status_code == 200
    flags = response.context["flags"]
    assert flags.speed == speed_flags(timings)
    assert flags.rationales == repeated_rationales(rationales)
    assert flags.n_pairs == 6 and flags.n_answers == len(rationales)
    assert set(flags.speed.flagged()) == {"bob"}
    assert [r.rater for r in flags.rationales if r.flagged] == ["bob"]

    page = response.content.decode()
    bob_criteria = next(r for r in flags.speed.raters if (r.rater, r.level) == ("bob", "criterion"))
    assert bob_criteria.fast.n == len(rationales) // 2 and bob_criteria.fast.value == 1.0
    assert 'class="flagged" id="speed-bob-criterion"' in page and 'id="speed-alice-criterion"' in page
    assert 'class="flagged" id="speed-alice' not in page
    assert 'class="flagged" id="repeated-bob"' in page and f"“fine on this point” ×{len(rationales) // 2}" in page
    assert "never a rejection" in page


def test_it_shows_each_annotator_s_first_position_rate(worked, campaign, rachel):
    """alice always picked the article shown first, bob always the second: rates 1 and 0 on every answer;
    no pair was met twice, so consistency has n 0."""
    _, rationales = worked
    client = Client()
    client.force_login(rachel)
    response = client.get(f"/calibration/campaign/{campaign.pk}/attention/")
    figures = {p.rater: p for p in response.context["flags"].position}
    per_annotator = len(rationales) // 2
    assert figures["human:alice"].first_position_rate.value == 1.0 and figures["human:alice"].first_position_rate.n == per_annotator
    assert figures["human:bob"].first_position_rate.value == 0.0 and figures["human:bob"].first_position_rate.n == per_annotator
    assert (figures["human:alice"].lean, figures["human:bob"].lean) == ("first", "second")
    assert figures["human:alice"].consistency.n == 0 and figures["human:alice"].consistency.value is None
    page = response.content.decode()
    assert 'class="flagged" id="position-alice"' in page and 'class="flagged" id="position-bob"' in page


def test_it_counts_work_without_times_as_untimed(worked, campaign, rachel, alice):
    """Opened before times were kept: the pairs, and the first answer of each, have no time."""
    Assignment.objects.filter(annotator=alice).update(first_opened_at=None)
    criteria = Criterion.objects.filter(criterion_set=campaign.criterion_set).count()
    client = Client()
    client.force_login(rachel)
    flags = client.get(f"/calibration/campaign/{campaign.pk}/attention/").context["flags"]
    alice_rows = {r.level: r for r in flags.speed.raters if r.rater == "alice"}
    assert (alice_rows["pair"].n_untimed, alice_rows["pair"].fast.n) == (3, 0)
    assert (alice_rows["criterion"].n_untimed, alice_rows["criterion"].fast.n) == (3, 3 * (criteria - 1))


def test_it_says_so_when_nothing_is_submitted(campaign, rachel):
    client = Client()
    client.force_login(rachel)
    response = client.get(f"/calibration/campaign/{campaign.pk}/attention/")
    assert response.status_code == 200
    assert "No submitted work yet." in response.content.decode() and "No rationale submitted yet." in response.content.decode()


def test_it_is_linked_from_the_campaign_page(campaign, rachel):
    client = Client()
    client.force_login(rachel)
    assert f'href="/calibration/campaign/{campaign.pk}/attention/"' in client.get(f"/campaigns/{campaign.pk}/").content.decode()
