"""Imported answers about one article alone (readings): a labels file's one-article rows, stored in bulk.

The readings' side of `answers.answers_import`: each (reading, rater) becomes a submitted
`ReadingAssignment`, each row an `Answer` (the protocol's stored form, checked by the importer),
and every change reaches the audit trail (`LabelChange.assignment`, fields "status",
"value" and "rationale") by the rater, at `now`, with the source "import". An answer equal to the
stored one (value, rationale and save time) is left alone, so importing a file twice changes
nothing. A fixed number of queries per few thousand answers: a file of a hundred thousand answers
is stored in seconds. Callers hold the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from annotate.bulk import rows_insert
from annotate.models import Answer, Assignment, LabelChange, ReadingAssignment
from annotate.services.answers import submitted_work_update
from common.batches import batches

SUBMITTED = Assignment.Status.SUBMITTED
IMPORT = LabelChange.Source.IMPORT
BATCH = 2000
# An answer is a label with a value and no winner (`annotate.models.Answer`).
ANSWER_FIELDS = ("assignment", "criterion", "value", "rationale", "created_at", "saved_at", "winner", "acceptable")
CHANGE_FIELDS = ("assignment", "criterion", "field", "old_value", "new_value", "changed_by", "changed_at", "source")


@dataclass
class ImportedReading:
    """One rater's submitted work on one reading, from a labels file; answers in their stored form."""

    reading_id: int
    annotator_id: int
    started_at: datetime | None
    # (criterion id, stored answer, rationale, saved_at or None)
    answers: list[tuple[int, str, str, datetime | None]] = field(default_factory=list)


@dataclass
class ReadingsImported:
    assignments: dict[str, int] = field(default_factory=lambda: {"new": 0, "updated": 0, "unchanged": 0})
    answers: dict[str, int] = field(default_factory=lambda: {"new": 0, "updated": 0, "unchanged": 0})


def _assignment(
    item: ImportedReading, stored: ReadingAssignment | None, now: datetime, tally: dict
) -> tuple[ReadingAssignment, str | None]:
    """The work's assignment (new and unsaved, or updated) and its status before when it becomes submitted."""
    times = [saved for *_, saved in item.answers if saved is not None]
    last = max(times) if times else None
    if stored is None:
        tally["new"] += 1
        assignment = ReadingAssignment(
            pair_id=item.reading_id,
            annotator_id=item.annotator_id,
            a_first=True,
            order="a",
            status=SUBMITTED,
            claimed_at=item.started_at,
            first_opened_at=item.started_at,
            last_activity_at=last or item.started_at or now,
            submitted_at=last,
        )
        return assignment, ""
    return stored, submitted_work_update(stored, started_at=item.started_at, last_saved=last, tally=tally, updated=[])


def reading_answers_import(*, work: list[ImportedReading], now: datetime) -> ReadingsImported:
    """Stores imported readings as submitted work with their answers, in the caller's transaction;
    returns the tallies of assignments and answers (new, updated, unchanged)."""
    done = ReadingsImported()
    reading_ids = sorted({item.reading_id for item in work})
    stored = {
        (row.pair_id, row.annotator_id): row for ids in batches(reading_ids) for row in ReadingAssignment.objects.filter(pair_id__in=ids)
    }
    assignments, submitted = [], []
    for item in work:
        assignment, before = _assignment(item, stored.get((item.reading_id, item.annotator_id)), now, done.assignments)
        assignments.append(assignment)
        if before is not None:
            submitted.append((assignment, before, item.annotator_id))
    ReadingAssignment.objects.bulk_create([a for a in assignments if a.pk is None], batch_size=BATCH)
    audit = []
    for assignment, before, rater in submitted:
        audit.append((assignment.pk, None, "status", before, SUBMITTED, rater, now, IMPORT))
    ids = sorted(a.pk for a in assignments)
    old = {
        (assignment_id, criterion_id): (answer_id, value, rationale, saved_at)
        for chunk in batches(ids)
        for answer_id, assignment_id, criterion_id, value, rationale, saved_at in Answer.objects.filter(
            assignment_id__in=chunk
        ).values_list("id", "assignment_id", "criterion_id", "value", "rationale", "saved_at")
    }
    new, changed = [], []
    for item, assignment in zip(work, assignments):
        for criterion_id, value, rationale, saved_at in item.answers:
            found = old.get((assignment.pk, criterion_id))
            if found is None:
                before = ("", "")
                new.append((assignment.pk, criterion_id, value, rationale, saved_at or now, saved_at, "", []))
            elif found[1:] == (value, rationale, saved_at):
                done.answers["unchanged"] += 1
                continue
            else:
                before = found[1:3]
                changed.append(Answer(id=found[0], value=value, rationale=rationale, saved_at=saved_at))
            for name, was, now_is in zip(("value", "rationale"), before, (value, rationale)):
                if was != now_is:
                    audit.append((assignment.pk, criterion_id, name, was, now_is, item.annotator_id, now, IMPORT))
    for chunk in batches(new, BATCH):
        rows_insert(Answer, ANSWER_FIELDS, chunk)
    Answer.objects.bulk_update(changed, ["value", "rationale", "saved_at"], batch_size=BATCH)
    for chunk in batches(audit, BATCH):
        rows_insert(LabelChange, CHANGE_FIELDS, chunk)
    done.answers["new"] += len(new)
    done.answers["updated"] += len(changed)
    return done
