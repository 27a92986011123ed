"""Writes for imported judges: verdicts computed elsewhere, stored as the units of a judge of kind IMPORTED.

Two importers feed it: judge rows of a labels file (`calibration.interchange`)
and the results files of the Wiki Live Challenge script (`judges.wlc_results`).
Each works out, per unit (judge, pair, order, category or criterion), the
verdicts and the errors its source gives; storing them is done here, once.

Re-importing the same verdicts changes nothing and is counted as "unchanged".
Callers hold the transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.utils import timezone

from annotate.models import Pair
from judges.models import Judge, JudgeUnit, JudgeVerdict

NEW, UPDATED, UNCHANGED = "new", "updated", "unchanged"


def unit_tally() -> dict[str, int]:
    """Zero counts of stored units, in the order reports print them."""
    return {NEW: 0, UPDATED: 0, UNCHANGED: 0}


def imported_judge_create(*, name: str, model: str) -> Judge:
    return Judge.objects.create(name=name, kind=Judge.Kind.IMPORTED, model=model)


def imported_unit_save(
    *,
    judge: Judge,
    pair: Pair,
    category_id: int,
    criterion_id: int | None,
    a_first: bool,
    verdicts: Iterable[tuple[int, str, str]],
    errors: list[str],
    now: datetime | None = None,
) -> str:
    """Stores one unit's imported verdicts; returns NEW, UPDATED or UNCHANGED.

    `verdicts` are (criterion id, side "a"/"b"/tie, reason); `errors` the lines
    saying what the source could not give, which put the unit in ERROR. A unit
    already stored with the same verdicts, status and error is left alone; any
    other is rewritten whole, stamped `now` (default: the current time).
    """
    status = JudgeUnit.Status.ERROR if errors else JudgeUnit.Status.DONE
    error = "\n".join(errors)
    fresh = list(dict.fromkeys(verdicts))
    unit, created = JudgeUnit.objects.get_or_create(
        judge=judge,
        pair=pair,
        category_id=category_id,
        criterion_id=criterion_id,
        a_first=a_first,
        defaults={"status": status},
    )
    if not created:
        stored = {(v.criterion_id, v.winner, v.rationale) for v in unit.verdicts.all()}
        if stored == set(fresh) and (unit.status, unit.error) == (status, error):
            return UNCHANGED
        unit.verdicts.all().delete()
    JudgeVerdict.objects.bulk_create(
        [
            JudgeVerdict(unit=unit, criterion_id=cid, winner=side, rationale=reason)
            for cid, side, reason in fresh
        ]
    )
    JudgeUnit.objects.filter(pk=unit.pk).update(
        status=status, error=error, updated_at=now or timezone.now()
    )
    return NEW if created else UPDATED
