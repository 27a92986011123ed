"""Imported judges' answers about one article alone: units of a reading (`JudgeUnit.pair` a reading item, order "a").

The readings' side of `judges.imports`: each unit is (judge, reading, category or criterion),
shown as is (`a_first` True), its verdicts hold the protocol's stored answer in `answer` (no
winner). A unit stored with the same answers, status and error is left alone ("unchanged"); any
other is rewritten whole, stamped `now`. A fixed number of queries per few thousand units.
Callers hold the transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from annotate.bulk import rows_insert
from common.batches import batches
from judges.imports import CHUNK, NEW, UNCHANGED, UPDATED, stored_verdict_sets, units_write
from judges.models import Judge, JudgeUnit, JudgeVerdict


@dataclass(frozen=True)
class ImportedReadingUnit:
    """One reading unit's imported answers: (criterion id, stored answer, reason, confidence or None)
    each, and the lines saying what the source could not give (the unit is then in ERROR)."""

    judge: Judge
    reading_id: int
    category_id: int
    criterion_id: int | None
    answers: Sequence[tuple]
    errors: Sequence[str]

    @property
    def key(self) -> tuple:
        return (self.judge.pk, self.reading_id, self.category_id, self.criterion_id)


def imported_reading_units_save(*, units: Sequence[ImportedReadingUnit], now: datetime) -> list[str]:
    """Stores imported reading units, each NEW, UPDATED or UNCHANGED (returned in order)."""
    if len({unit.key for unit in units}) != len(units):
        raise ValueError("imported_reading_units_save: the same unit twice")
    judge_ids = sorted({unit.judge.pk for unit in units})
    stored: dict[tuple, JudgeUnit] = {}
    for reading_ids in batches(sorted({unit.reading_id for unit in units})):
        for row in JudgeUnit.objects.filter(judge_id__in=judge_ids, pair_id__in=reading_ids, order="a"):
            stored[row.judge_id, row.reading_id, row.category_id, row.criterion_id] = row
    stored_answers = stored_verdict_sets(stored.values(), "answer")
    outcomes, created, rewritten, fresh_rows = [], [], [], []
    for unit in units:
        status = JudgeUnit.Status.ERROR if unit.errors else JudgeUnit.Status.DONE
        error = "\n".join(unit.errors)
        fresh = list(dict.fromkeys(tuple(a) for a in unit.answers))
        row = stored.get(unit.key)
        if row is None:
            row = JudgeUnit(
                judge=unit.judge,
                pair_id=unit.reading_id,
                category_id=unit.category_id,
                criterion_id=unit.criterion_id,
                a_first=True,
                order="a",
                status=status,
                error=error,
            )
            created.append(row)
            outcomes.append(NEW)
        elif stored_answers.get(row.pk, set()) == set(fresh) and (row.status, row.error) == (status, error):
            outcomes.append(UNCHANGED)
            continue
        else:
            row.status, row.error, row.updated_at = status, error, now
            rewritten.append(row)
            outcomes.append(UPDATED)
        fresh_rows += [(row, *answer) for answer in fresh]
    units_write(created=created, rewritten=rewritten, now=now)
    for start in range(0, len(fresh_rows), CHUNK):
        rows_insert(
            JudgeVerdict,
            ("unit", "criterion", "winner", "answer", "rationale", "confidence"),
            [(row.pk, cid, "", answer, reason, sure) for row, cid, answer, reason, sure in fresh_rows[start : start + CHUNK]],
        )
    return outcomes
