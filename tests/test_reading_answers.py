"""The answer service for readings: answers checked by their criterion's protocol, rationale rules, audit, submit, import."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from annotate.models import Answer, Assignment, Criterion, LabelChange, ReadingAssignment
from annotate.services.answers import ImportedWork, answer_save, answers_import, label_save, value_save
from annotate.services.campaigns import campaign_annotator_remove, campaign_set_open
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import Incomplete, assignment_missing, assignment_submit
from tests.reading_campaigns import COUNT, ONE_ARTICLE, STRICT, mixed_campaign, rubric

pytestmark = pytest.mark.django_db


@pytest.fixture
def reading_campaign(catalogue, alice, bob):
    return mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE, COUNT, STRICT), topics=1, annotators=[alice, bob])


@pytest.fixture
def work(reading_campaign, alice):
    return assignment_claim_next(campaign=reading_campaign, user=alice)


def criterion(key):
    return Criterion.objects.get(key=key, criterion_set__key__in=["alone", "mixed"])


def test_it_stores_each_protocols_answer_and_audits_each_change(work, alice):
    value_save(assignment=work, criterion=criterion("ck_summary"), user=alice, value="na", rationale="No summary is needed.")
    value_save(assignment=work, criterion=criterion("rt_style"), user=alice, value="4")
    value_save(assignment=work, criterion=criterion("ct_typos"), user=alice, value="007")
    stored = dict(Answer.objects.filter(assignment=work).values_list("criterion__key", "value"))
    assert stored == {"ck_summary": "na", "rt_style": "4", "ct_typos": "7"}
    changes = list(LabelChange.objects.filter(assignment=work).values_list("criterion__key", "field", "old_value", "new_value", "source"))
    assert changes == [
        ("ck_summary", "value", "", "na", "page"),
        ("ck_summary", "rationale", "", "No summary is needed.", "page"),
        ("rt_style", "value", "", "4", "page"),
        ("ct_typos", "value", "", "7", "page"),
    ]


def test_it_records_nothing_for_an_answer_saved_again_unchanged(work, alice):
    first = value_save(assignment=work, criterion=criterion("rt_style"), user=alice, value="4", source="api")
    again = value_save(assignment=work, criterion=criterion("rt_style"), user=alice, value="4", source="api")
    assert (first.changed, again.changed) == (True, False)
    assert list(LabelChange.objects.filter(assignment=work).values_list("source", flat=True)) == ["api"]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("ck_strict", "na", "Answer Yes or No."),
        ("ck_summary", "maybe", "Answer Yes, No or N/A."),
        ("rt_style", "6", "Choose a point from 1 to 5."),
        ("rt_style", "three", "Choose a point from 1 to 5."),
        ("ct_typos", "-1", "Give a whole number from 0 to 500."),
        ("ct_typos", "501", "Give a whole number from 0 to 500."),
    ],
)
def test_it_refuses_an_answer_its_protocol_does_not_allow(work, alice, key, value, message):
    with pytest.raises(ValidationError) as caught:
        value_save(assignment=work, criterion=criterion(key), user=alice, value=value)
    assert caught.value.messages == [message]
    assert not Answer.objects.exists() and not LabelChange.objects.exists()


def reading_and_pair(alice):
    """Alice's reading and pair of one topic of a mixed campaign, the first claimed of them submitted."""
    campaign = mixed_campaign(topics=1, topic_back_to_back=True)
    first = assignment_claim_next(campaign=campaign, user=alice)
    first.status = Assignment.Status.SUBMITTED
    first.save()
    second = assignment_claim_next(campaign=campaign, user=alice)
    reading, pair = (first, second) if first.pair.kind == "reading" else (second, first)
    return reading, pair


def test_it_refuses_a_pairwise_criterion_on_a_reading_and_a_one_article_criterion_on_a_pair(catalogue, alice):
    reading, pair = reading_and_pair(alice)
    with pytest.raises(ValidationError) as caught:
        value_save(assignment=reading, criterion=Criterion.objects.get(key="pw_clear"), user=alice, value="1")
    assert caught.value.messages == ["This criterion is answered on a pair, not on one article alone."]
    with pytest.raises(ValidationError) as caught:
        label_save(assignment=pair, criterion=Criterion.objects.get(key="ck_summary"), user=alice, position="1")
    assert caught.value.messages == ["This criterion is answered on one article alone, not on a pair."]
    # The pair asks only its pairwise criterion.
    assert assignment_missing(assignment=pair) == [
        "pw_clear: choose a winner",
        "pw_clear: write a rationale of at least 5 characters (0 so far)",
    ]


def test_it_saves_by_the_kind_of_item_and_refuses_the_other_kinds_answer_shape(catalogue, alice):
    reading, pair = reading_and_pair(alice)
    reading.status = Assignment.Status.ACTIVE
    reading.save()
    with pytest.raises(ValidationError) as caught:
        answer_save(assignment=reading, criterion=criterion("ck_summary"), user=alice, position="1")
    assert caught.value.messages == ["This work is on one article alone: give `value`, not `position`."]
    with pytest.raises(ValidationError) as caught:
        answer_save(assignment=pair, criterion=Criterion.objects.get(key="pw_clear"), user=alice, value="yes", acceptable=None)
    assert caught.value.messages == ["This work is on a pair: give `position`, not `value`."]
    assert not LabelChange.objects.filter(criterion__isnull=False).exists()
    assert answer_save(assignment=reading, criterion=criterion("ck_summary"), user=alice, value="yes").label.value == "yes"
    assert answer_save(assignment=pair, criterion=Criterion.objects.get(key="pw_clear"), user=alice, position="1").label.winner in (
        "a",
        "b",
    )


def test_it_refuses_submission_until_every_criterion_has_its_answer_and_rationale(work, alice):
    value_save(assignment=work, criterion=criterion("ck_summary"), user=alice, value="yes", rationale="It opens with one.")
    with pytest.raises(Incomplete) as caught:
        assignment_submit(assignment=work, user=alice)
    assert (
        caught.value.messages
        == assignment_missing(assignment=work)
        == [
            "rt_style: give an answer",
            "rt_style: write a rationale of at least 5 characters (0 so far)",
            "ct_typos: give an answer",
            "ct_typos: write a rationale of at least 5 characters (0 so far)",
            "ck_strict: give an answer",
            "ck_strict: write a rationale of at least 5 characters (0 so far)",
        ]
    )
    for key, value in (("rt_style", "3"), ("ct_typos", "0"), ("ck_strict", "no")):
        value_save(assignment=work, criterion=criterion(key), user=alice, value=value, rationale="Read it all.")
    assignment_submit(assignment=work, user=alice)
    work.refresh_from_db()
    assert work.status == "submitted" and work.submitted_at is not None
    assert LabelChange.objects.filter(assignment=work, field="status").values_list("old_value", "new_value").get() == (
        "active",
        "submitted",
    )


def test_it_keeps_a_submitted_reading_complete(work, alice):
    for key, value in (("ck_summary", "yes"), ("rt_style", "3"), ("ct_typos", "0"), ("ck_strict", "no")):
        value_save(assignment=work, criterion=criterion(key), user=alice, value=value, rationale="Read it all.")
    assignment_submit(assignment=work, user=alice)
    value_save(assignment=work, criterion=criterion("rt_style"), user=alice, value="5")
    with pytest.raises(ValidationError) as caught:
        value_save(assignment=work, criterion=criterion("rt_style"), user=alice, value="")
    assert caught.value.messages[0] == "This article is submitted, so each answer must stay complete; the change was not saved."
    assert Answer.objects.get(assignment=work, criterion=criterion("rt_style")).value == "5"


def test_it_refuses_changes_once_the_campaign_is_closed_or_the_annotator_removed(reading_campaign, work, alice, rachel):
    campaign_set_open(campaign=reading_campaign, is_open=False)
    work.pair.campaign.is_open = False
    with pytest.raises(ValidationError):
        value_save(assignment=work, criterion=criterion("rt_style"), user=alice, value="3")
    campaign_set_open(campaign=reading_campaign, is_open=True)
    work.pair.campaign.is_open = True
    campaign_annotator_remove(campaign=reading_campaign, user=alice, by=rachel)
    with pytest.raises(PermissionDenied):
        value_save(assignment=work, criterion=criterion("rt_style"), user=alice, value="3")
    assert not Answer.objects.exists()


def test_it_imports_submitted_readings_with_their_answers_and_audits_them(reading_campaign, alice, bob):
    reading = reading_campaign.readings.order_by("pk").first()
    now = timezone.now()

    def work(stored=None) -> ImportedWork:
        answers = [(criterion("rt_style").pk, "2", "Flat prose.", None)]
        return ImportedWork(
            key="bob", pair_id=reading.pk, annotator_id=bob.pk, order="a", order_known=True, started_at=None, stored=stored, values=answers
        )

    assert answers_import(work=[work()], now=now).label_tally == {"new": 1, "updated": 0, "unchanged": 0}
    again = answers_import(work=[work(ReadingAssignment.objects.get(pair=reading, annotator=bob))], now=now)
    assert (again.assignment_tally, again.label_tally) == (
        {"new": 0, "updated": 0, "unchanged": 1},
        {"new": 0, "updated": 0, "unchanged": 1},
    )
    imported = ReadingAssignment.objects.get(pair=reading, annotator=bob)
    assert imported.status == "submitted"
    assert Answer.objects.get(assignment=imported).value == "2"
    sources = set(LabelChange.objects.filter(assignment=imported).values_list("field", "source"))
    assert sources == {("status", "import"), ("value", "import"), ("rationale", "import")}
