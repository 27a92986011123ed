"""annotate.services.answers: one path, and one audit trail, for answers typed and imported."""

from datetime import datetime, timezone

import pytest
from django.core.exceptions import ValidationError

from annotate.models import Assignment, Criterion, Label, LabelChange
from annotate.services.answers import (
    ImportedWork,
    answers_import,
    imported_answer_problems,
    label_save,
    overall_import,
)

pytestmark = pytest.mark.django_db
AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def imported(campaign, user, *labels, a_first=True):
    pair = campaign.pairs.order_by("pk").first()
    stored = Assignment.objects.filter(pair=pair, annotator=user).first()
    work = ImportedWork("k", pair.id, user.id, "ab" if a_first else "ba", True, None, stored, list(labels))
    return answers_import(work=[work], now=AT)


def trail(assignment):
    return list(
        LabelChange.objects.filter(assignment=assignment)
        .order_by("pk")
        .values_list("field", "old_value", "new_value", "changed_by__username")
    )


def test_it_writes_typed_and_imported_answers_to_one_audit_trail(campaign, alice):
    campaign.allow_tie = True
    campaign.save()
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").first()

    first = imported(campaign, alice, (criterion.id, "a", "clearer", AT))
    assignment = first.assignments["k"]
    label_save(assignment=assignment, criterion=criterion, user=alice, position="tie")
    again = imported(campaign, alice, (criterion.id, "b", "clearer", AT), a_first=False)

    assert (first.assignment_tally, first.label_tally) == ({"new": 1, "updated": 0, "unchanged": 0},) * 2
    assert again.assignment_tally == again.label_tally == {"new": 0, "updated": 1, "unchanged": 0}
    assert Label.objects.get(assignment=assignment).winner == "b"
    assert trail(assignment) == [
        ("status", "", "submitted", "alice"),
        ("winner", "", "a", "alice"),
        ("rationale", "", "clearer", "alice"),
        ("winner", "a", "tie", "alice"),
        ("winner", "tie", "b", "alice"),
    ]


def test_it_leaves_an_imported_answer_already_stored_as_it_is(campaign, alice):
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").first()
    imported(campaign, alice, (criterion.id, "a", "clearer", AT))
    again = imported(campaign, alice, (criterion.id, "a", "clearer", AT))
    assert again.label_tally == again.assignment_tally == {"new": 0, "updated": 0, "unchanged": 1}
    assert len(trail(again.assignments["k"])) == 3


def test_it_records_imported_overall_answers_by_side(campaign, alice):
    assignment = imported(campaign, alice).assignments["k"]
    tally = {"new": 0, "updated": 0, "unchanged": 0}
    overall_import(answers=[(assignment, "b")], tally=tally, now=AT)
    overall_import(answers=[(assignment, "both_bad"), (assignment, "both_bad")], tally=tally, now=AT)
    assert tally == {"new": 1, "updated": 1, "unchanged": 1}
    assert Assignment.objects.get(pk=assignment.pk).overall == "both_bad"
    assert trail(assignment)[1:] == [("overall", "", "b", "alice"), ("overall", "b", "both_bad", "alice")]


def test_it_checks_imported_answers_by_the_campaigns_rules(campaign):
    assert imported_answer_problems(campaign=campaign, outcome="tie", rationale="x" * 5001) == [
        "this campaign does not allow ties",
        "rationale is longer than 5000 characters",
    ]
    campaign.allow_tie = True
    assert imported_answer_problems(campaign=campaign, outcome="tie", rationale="x" * 5000) == []


def test_it_refuses_a_typed_answer_the_protocol_refuses(campaign, alice):
    from annotate.services.claims import assignment_claim_next

    work = assignment_claim_next(campaign=campaign, user=alice)
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).first()
    with pytest.raises(ValidationError) as caught:
        label_save(assignment=work, criterion=criterion, user=alice, position="tie", rationale="y" * 5001)
    assert caught.value.messages == [
        "This campaign does not allow ties: choose Article 1 or Article 2.",
        "A rationale may be at most 5000 characters.",
    ]
    assert not LabelChange.objects.filter(assignment=work, field="winner").exists()
