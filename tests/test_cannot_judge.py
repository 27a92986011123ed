"""“Cannot judge” as an answer per criterion (issue 37): where the campaign allows it, a complete answer
without a winner, kept apart from ties in every statistic (none reads it), counted on its own, and
exported and imported as its own word."""

import pytest
from django.core.exceptions import ValidationError

from annotate.models import Campaign, Criterion, Label, LabelChange
from annotate.services.answers import label_save
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_missing, assignment_submit
from calibration import selectors as calibration_selectors
from calibration.report.methods import _design_sentence
from interchange import label_rows
from tests.test_import_labels import import_labels, label_row, write_csv

pytestmark = pytest.mark.django_db

WHY = "Both articles skip this part of the topic."


def test_it_refuses_cannot_judge_where_the_campaign_does_not_allow_it(campaign, alice):
    work = assignment_claim_next(campaign=campaign, user=alice)
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).first()
    with pytest.raises(ValidationError, match="does not allow “Cannot judge”"):
        label_save(assignment=work, criterion=criterion, user=alice, position="cannot_judge", rationale=WHY)
    assert not Label.objects.exists()


def test_it_stores_cannot_judge_as_a_complete_answer_without_a_winner_and_audits_it(campaign, alice):
    Campaign.objects.filter(pk=campaign.pk).update(allow_cannot_judge=True)
    campaign.refresh_from_db()
    work = assignment_claim_next(campaign=campaign, user=alice)
    first, *others = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order")
    label_save(assignment=work, criterion=first, user=alice, position="cannot_judge", rationale=WHY)
    for criterion in others:
        label_save(assignment=work, criterion=criterion, user=alice, position="1", rationale="fine prose")
    label = Label.objects.get(assignment=work, criterion=first)
    assert (label.winner, label.cannot_judge) == ("", True)
    assert assignment_missing(assignment=work) == []
    assert LabelChange.objects.filter(criterion=first, field="cannot_judge").values_list("old_value", "new_value").get() == (
        "false",
        "true",
    )
    assignment_submit(assignment=work, user=alice)
    # A winner chosen afterwards ends it.
    label_save(assignment=work, criterion=first, user=alice, position="2")
    label.refresh_from_db()
    assert (bool(label.winner), label.cannot_judge) == (True, False)


def test_it_leaves_cannot_judge_out_of_every_statistic_and_counts_it_apart(campaign, alice, bob):
    Campaign.objects.filter(pk=campaign.pk).update(allow_cannot_judge=True, allow_tie=True)
    campaign.refresh_from_db()
    criteria = list(Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order"))
    for user, first_answer in ((alice, "cannot_judge"), (bob, "tie")):
        work = assignment_claim_next(campaign=campaign, user=user)
        label_save(assignment=work, criterion=criteria[0], user=user, position=first_answer, rationale=WHY)
        for criterion in criteria[1:]:
            label_save(assignment=work, criterion=criterion, user=user, position="1", rationale="fine prose")
        assignment_submit(assignment=work, user=user)
    read = calibration_selectors.human_label_rows(campaign=campaign)
    first_rows = list(read.filter(criterion=criteria[0]).values_list("assignment__annotator__username", "winner"))
    assert first_rows == [("bob", "tie")]  # alice's "cannot judge" is no tie and no vote
    assert read.count() == 2 * len(criteria) - 1
    assert calibration_selectors.human_cannot_judge_count(campaign=campaign) == 1
    report = {
        "campaign": {"name": campaign.name, "criterion_set": str(campaign.criterion_set)},
        "n_pairs": 1,
        "humans": {"n_labels": read.count(), "n_annotators": 2, "n_items": len(criteria), "n_cannot_judge": 1},
    }
    assert "1 answer was “cannot judge”: left out of every figure, and never counted as a tie." in _design_sentence(report)


def test_it_exports_cannot_judge_as_its_own_word_and_imports_it_back(demo_campaign, tmp_path):
    Campaign.objects.filter(pk=demo_campaign.pk).update(allow_cannot_judge=True)
    path = write_csv(tmp_path / "labels.csv", [label_row(rater="r1", winner_system="cannot_judge"), label_row(rater="r2")])
    result = import_labels(path)
    assert result.code == 0, result.err
    label = Label.objects.get(assignment__annotator__username="r1")
    assert (label.winner, label.cannot_judge) == ("", True)
    rows = {row["rater"]: row["winner_system"] for row in label_rows(demo_campaign)}
    assert rows["r1"] == "cannot_judge"
    assert rows["r2"] == label_row()["winner_system"]
    assert "0 new, 0 updated, 2 unchanged" in import_labels(path).out  # the same again: nothing changes
