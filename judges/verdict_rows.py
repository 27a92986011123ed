"""The verdict rows of finished units, and their insert (the engine's hot path).

A pair's unit gives each criterion's winner by side (a/b/tie, the position the judge named undone
with the order it was shown); a reading's unit (one article) or a group's gives each criterion's answer
in its protocol's stored form (`JudgeVerdict.answer`; a ranking's by slot, undone with the order the
call showed), with no winner. Confidences and samples are
pairwise only (`judges.confidence`): a reading's verdicts carry none.
"""

from __future__ import annotations

from django.db import connection

import protocols
from judges.models import JudgeVerdict

COLUMNS = ("unit", "call", "criterion", "winner", "answer", "rationale", "confidence", "samples")


def verdict_rows(done: list, valid_calls: dict) -> list[tuple]:
    """One row (in `COLUMNS` order) per verdict of the `done` (job, outcome) pairs; `valid_calls`:
    unit id -> the call whose answer was read."""
    rows = []
    for job, outcome in done:
        unit = job.plan
        by_key = {c.key: c.pk for c in unit.criteria}
        call = valid_calls.get(job.unit_id)
        call_id = call.pk if call else None
        protocol = protocols.get(unit.protocol)
        if unit.reading is not None:
            rows += [
                (job.unit_id, call_id, by_key[key], "", protocol.stored_answer(answer, order=unit.order), reason, None, "")
                for key, (answer, reason) in outcome.verdicts.items()
            ]
            continue
        sure, said = outcome.confidences or {}, outcome.samples or {}
        rows += [
            (
                job.unit_id,
                call_id,
                by_key[key],
                protocol.stored_answer(position, order=unit.order),
                "",
                reason,
                sure.get(key),
                said.get(key, ""),
            )
            for key, (position, reason) in outcome.verdicts.items()
        ]
    return rows


def verdicts_insert(rows: list[tuple]) -> None:
    """`verdict_rows` in one statement run many times.

    Plain SQL on the hot path: a run writes a verdict per criterion, and building
    model instances for bulk_create cost several times the insert itself. Every
    value is an id or text already checked; the database constraints still apply.
    """
    if not rows:
        return
    table = connection.ops.quote_name(JudgeVerdict._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(JudgeVerdict._meta.get_field(name).column) for name in COLUMNS)
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(COLUMNS))})", rows)
