"""Writes for imported judges: verdicts computed elsewhere, stored as the units of a judge of kind IMPORTED.

Two importers feed it: judge rows of a labels file (`interchange`)
and the results files of the Wiki Live Challenge script (`judges.wlc_results`).
Each works out, per unit (judge, pair, order, category or criterion), the
verdicts and the errors its source gives; storing them is done here, once.

Re-importing the same verdicts changes nothing and is counted as "unchanged".
Callers hold the transaction. Many units at once (`imported_units_save`) take a
fixed number of queries per few thousand units, whatever their number: a labels
file of a hundred thousand judge rows is stored in seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from annotate.bulk import rows_insert
from annotate.models import Campaign, Pair
from common.batches import batches
from judges.models import Judge, JudgeUnit, JudgeVerdict
from protocols import order as orders

NEW, UPDATED, UNCHANGED = "new", "updated", "unchanged"
# Which judge an imported rater name is: the campaign's own (the default), or the global judge of that name.
SCOPE_CAMPAIGN, SCOPE_GLOBAL = "campaign", "global"
JUDGE_SCOPES = (SCOPE_CAMPAIGN, SCOPE_GLOBAL)
# Ids per `IN (...)` list: far below SQLite's limit of 32,766 variables in one statement.
CHUNK = 5000


def unit_tally() -> dict[str, int]:
    """Zero counts of stored units, in the order reports print them."""
    return {NEW: 0, UPDATED: 0, UNCHANGED: 0}


def imported_judge_create(*, name: str, model: str, mode: str = Judge.Mode.CATEGORY, campaign: Campaign | None = None) -> Judge:
    """An imported judge, scoped to `campaign` (None: a global judge). A labels file's judges are made in
    criterion mode (`mode`): each answer is then a unit of its own, and an error in place of one answer
    marks that criterion alone, never the others of its category (which a unit in error would leave out
    of every figure)."""
    return Judge.objects.create(name=name, kind=Judge.Kind.IMPORTED, model=model, mode=mode, campaign=campaign)


class JudgeScopeError(ValueError):
    """An import's judge names cannot be resolved under the scope asked for; the message says why."""


def imported_judges_resolve(
    *, campaign: Campaign, names: Iterable[str], models: Mapping[str, str], scope: str = SCOPE_CAMPAIGN, mode: str = Judge.Mode.CRITERION
) -> tuple[dict[str, Judge], int]:
    """({name: judge}, judges created) for the judges an import into `campaign` names.

    Scope `campaign` (the default): each name is the campaign's own judge: the judge scoped to it, a
    global judge that already works in it (a round trip of its export), or a judge configured on this
    server (an LLM or a baseline: one name, one judge, which the importers then check the kind of);
    otherwise a judge is created for this campaign alone, even when another campaign, or an earlier
    import of global scope, has an imported judge of that name, so that two studies' "gpt-4o" never
    share one judge by accident. Scope `global`: each name is the
    global judge of that name, created when there is none; refused (JudgeScopeError) where the
    campaign already has a judge of its own by that name, which would make two judges of one name in
    its report. `models`: the model to record on a judge created for a name."""
    names = sorted(set(names))
    found = imported_judges_find(campaign=campaign, names=names, scope=scope)
    created = 0
    for name in names:
        if name not in found:
            found[name] = imported_judge_create(name=name, model=models.get(name, ""), mode=mode, campaign=scope_owner(campaign, scope))
            created += 1
    return found, created


def scope_owner(campaign: Campaign, scope: str) -> Campaign | None:
    """The campaign a judge created under `scope` belongs to (None: global)."""
    return campaign if scope == SCOPE_CAMPAIGN else None


def imported_judges_find(*, campaign: Campaign, names: Iterable[str], scope: str = SCOPE_CAMPAIGN) -> dict[str, Judge]:
    """The judges that `names` already are under `scope` (:func:`imported_judges_resolve`'s rule), creating
    none; a name missing from the result gets a new judge. JudgeScopeError as there."""
    if scope not in JUDGE_SCOPES:
        raise JudgeScopeError(f"unknown judge scope '{scope}' (choose {', '.join(JUDGE_SCOPES)})")
    names = sorted(set(names))
    found = {j.name: j for j in Judge.objects.filter(name__in=names, campaign=campaign)}
    if scope == SCOPE_GLOBAL and found:
        raise JudgeScopeError(
            f"campaign '{campaign.name}' has its own judge named {', '.join(repr(n) for n in sorted(found))}; "
            "import its rows without --judge-scope global, or under another name"
        )
    if scope == SCOPE_GLOBAL:
        found = {j.name: j for j in Judge.objects.filter(name__in=names, campaign__isnull=True)}
    else:
        working = (
            Judge.objects.filter(name__in=[n for n in names if n not in found], campaign__isnull=True)
            .filter(
                ~Q(kind=Judge.Kind.IMPORTED)
                | Q(units__pair__campaign=campaign)  # a pair's or a reading's
                | Q(runs__campaign=campaign)
            )
            .distinct()
        )
        found.update({j.name: j for j in working})
    return found


@dataclass(frozen=True)
class ImportedUnit:
    """One unit's imported answers on an item of any kind, shown in `order` (the slots in the order
    shown: "ab" or "ba" for a pair, "a" for one article): (criterion id, stored answer, reason[,
    confidence]) each, and the lines saying what the source could not give, which put the unit in
    ERROR. An answer without a confidence has none (None). A pair's answer is its side ("a"/"b") or a
    tie, kept as the verdict's `winner`; an answer about any other number of articles is kept in the
    protocol's stored form, as its `answer`."""

    judge: Judge
    pair_id: int
    category_id: int
    criterion_id: int | None
    order: str
    verdicts: Sequence[tuple]
    errors: Sequence[str]

    @property
    def key(self) -> tuple:
        return (self.judge.pk, self.pair_id, self.category_id, self.criterion_id, self.order)

    @property
    def column(self) -> str:
        """The verdict's field its answers go in: `winner` for the two articles of a pair, else `answer`."""
        return "winner" if len(self.order) == 2 else "answer"


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
    """Stores one pair unit's imported verdicts; returns NEW, UPDATED or UNCHANGED (see `imported_units_save`)."""
    unit = ImportedUnit(judge, pair.pk, category_id, criterion_id, orders.of_a_first(a_first), tuple(verdicts), tuple(errors))
    return imported_units_save(units=[unit], now=now)[0]


def imported_units_save(*, units: Sequence[ImportedUnit], now: datetime | None = None) -> list[str]:
    """Stores imported units, each NEW, UPDATED or UNCHANGED (returned in order), in a few queries per CHUNK units.

    A unit already stored with the same answers, status and error is left
    alone; any other is rewritten whole, stamped `now` (default: the current
    time). The units must be distinct units (judge, item, order, category or criterion).
    """
    now = now or timezone.now()
    if len({unit.key for unit in units}) != len(units):
        raise ValueError("imported_units_save: the same unit twice")
    stored: dict[tuple, JudgeUnit] = {}
    judge_ids = sorted({unit.judge.pk for unit in units})
    for item_ids in batches(sorted({unit.pair_id for unit in units})):
        for row in JudgeUnit.objects.filter(judge_id__in=judge_ids, pair_id__in=item_ids, question=JudgeUnit.Question.VERDICTS):
            stored[row.judge_id, row.pair_id, row.category_id, row.criterion_id, row.order] = row
    columns = {unit.column for unit in units}
    stored_answers = {column: stored_verdict_sets(stored.values(), column) for column in columns}
    outcomes, created, rewritten, fresh_verdicts = [], [], [], []
    for unit in units:
        status = JudgeUnit.Status.ERROR if unit.errors else JudgeUnit.Status.DONE
        error = "\n".join(unit.errors)
        fresh = list(dict.fromkeys(tuple(v) if len(v) == 4 else (*v, None) for v in unit.verdicts))
        row = stored.get(unit.key)
        if row is None:
            row = JudgeUnit(
                judge=unit.judge,
                pair_id=unit.pair_id,
                category_id=unit.category_id,
                criterion_id=unit.criterion_id,
                a_first=orders.a_first(unit.order),
                order=unit.order,
                status=status,
                error=error,
            )
            created.append(row)
            outcomes.append(NEW)
        elif stored_answers[unit.column].get(row.pk, set()) == set(fresh) and (row.status, row.error) == (status, error):
            outcomes.append(UNCHANGED)
            continue
        else:
            row.status, row.error, row.updated_at = status, error, now
            rewritten.append(row)
            outcomes.append(UPDATED)
        pairwise = unit.column == "winner"
        fresh_verdicts += [
            (row, cid, answer if pairwise else "", "" if pairwise else answer, reason, sure) for cid, answer, reason, sure in fresh
        ]
    units_write(created=created, rewritten=rewritten, now=now)
    # Plain rows, not model instances: a labels file of a hundred thousand verdicts spent most of its time building them.
    fields = ("unit", "criterion", "winner", "answer", "rationale", "confidence")
    for start in range(0, len(fresh_verdicts), CHUNK):
        rows_insert(JudgeVerdict, fields, [(row.pk, *rest) for row, *rest in fresh_verdicts[start : start + CHUNK]])
    return outcomes


def imported_step_votes_save(*, votes: Sequence[tuple], tally: dict[str, int], now: datetime) -> None:
    """Stores imported judges' votes on steps, (judge, pair, step, vote 1 or -1, reason, saved_at or None) each, as
    the judges' step units (done, on that pair), counting them in `tally` (new, updated, unchanged). A unit's time
    is the file's (`saved_at`), else `now`."""
    stored = {
        (u.judge_id, u.pair_id, u.step_id): u
        for u in JudgeUnit.objects.filter(
            question=JudgeUnit.Question.STEP, judge__in={v[0].pk for v in votes}, pair__in={v[1].pk for v in votes}
        )
    }
    fresh, changed = [], []
    for judge, pair, step, vote, reason, saved_at in votes:
        when = saved_at or now
        unit = stored.get((judge.pk, pair.pk, step.pk))
        if unit is not None and (unit.vote, unit.reason, unit.status, unit.updated_at) == (vote, reason, JudgeUnit.Status.DONE, when):
            tally["unchanged"] += 1
            continue
        tally["new" if unit is None else "updated"] += 1
        if unit is None:
            unit = JudgeUnit(judge=judge, pair=pair, step=step, question=JudgeUnit.Question.STEP, a_first=True, order="ab")
            fresh.append(unit)
        unit.vote, unit.reason, unit.status, unit.error, unit.updated_at = vote, reason, JudgeUnit.Status.DONE, "", when
        changed.append(unit)
    # Created, then every unit written with the file's time: bulk_create stamps auto_now (on the objects
    # too, so their times are set again), bulk_update does not.
    times = [unit.updated_at for unit in fresh]
    JudgeUnit.objects.bulk_create(fresh)
    for unit, when in zip(fresh, times):
        unit.updated_at = when
    JudgeUnit.objects.bulk_update(changed, ["vote", "reason", "status", "error", "updated_at"], batch_size=CHUNK)


def stored_verdict_sets(units: Iterable[JudgeUnit], answer: str) -> dict[int, set]:
    """Each stored unit's verdicts as a set of (criterion id, `answer` field, rationale, confidence):
    what an import compares with its fresh ones. `answer` is the field the answers are in (`ImportedUnit.column`)."""
    found: dict[int, set] = {}
    for unit_ids in batches(sorted(unit.pk for unit in units)):
        rows = JudgeVerdict.objects.filter(unit_id__in=unit_ids).values_list("unit_id", "criterion_id", answer, "rationale", "confidence")
        for unit_id, *verdict in rows:
            found.setdefault(unit_id, set()).add(tuple(verdict))
    return found


def units_write(*, created: list[JudgeUnit], rewritten: list[JudgeUnit], now: datetime) -> None:
    """Inserts the new units and saves the rewritten ones with their old verdicts deleted, all stamped `now`."""
    JudgeUnit.objects.bulk_create(created, batch_size=2000)
    for unit_ids in batches([row.pk for row in created]):
        # bulk_create stamps auto_now fields with the current time: stamp them `now`, as rewritten ones.
        JudgeUnit.objects.filter(pk__in=unit_ids).update(updated_at=now)
    for unit_ids in batches([row.pk for row in rewritten]):
        JudgeVerdict.objects.filter(unit_id__in=unit_ids).delete()
    JudgeUnit.objects.bulk_update(rewritten, ["status", "error", "updated_at"], batch_size=2000)
