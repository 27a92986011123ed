"""Judges' rows of a labels file (`rater_kind` judge): checking them, and storing them as imported judge units.

Each row is a verdict, or an error in place of one, of a judge on one criterion
of a pair in the order the judge saw it. The rows of one (judge, pair, order,
category) make one unit (one per criterion for a judge in criterion mode),
stored by `judges.imports.imported_units_save`. Judges missing from the database
are created as imported judges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from annotate.answers import CANNOT_JUDGE
from annotate.models import Criterion
from interchange.formats import CONFIDENCE_COLUMN, JUDGE, ORDER_COLUMN, time_field
from interchange.responses import pairwise_criterion_check
from interchange.targets import (
    Context,
    Target,
    canonical,
    pair_ensure,
    verdict_check,
)
from judges.imports import (
    ImportedUnit,
    imported_judges_resolve,
    imported_units_save,
    unit_tally,
)
from judges.models import Judge
from protocols import order as orders
from protocols.pairwise import side_for_system


@dataclass
class JudgePlan:
    """A judge's verdicts (or errors) on one pair in one order, from the labels file."""

    target: Target
    a_first: bool
    model: str
    # (criterion, side "a"/"b"/tie or None for an error, rationale, error, confidence or None)
    rows: list[tuple[Criterion, str | None, str, str, float | None]] = field(default_factory=list)


@dataclass
class JudgeRowsWritten:
    judges_created: int = 0
    pairs_created: int = 0
    units: dict[str, int] = field(default_factory=unit_tally)
    answers: dict[str, JudgeAnswersTally] = field(default_factory=dict)


REASON_CHARS = 80


@dataclass
class JudgeAnswersTally:
    """One judge's rows of an import: the answers stored, the rows that hold an error in place of an answer
    (by reason: the error's first line), and the rows refused as bad (written only with --skip-bad)."""

    imported: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    refused: int = 0

    def error_add(self, text: str) -> None:
        reason = (text.strip().splitlines() or [""])[0][:REASON_CHARS] or "(no reason given)"
        self.errors[reason] = self.errors.get(reason, 0) + 1

    def line(self, name: str) -> str:
        dropped = sum(self.errors.values())
        text = f"judge {name}: {self.imported:,} answer{'s' if self.imported != 1 else ''} imported, {dropped:,} stored as errors"
        if dropped:
            ranked = sorted(self.errors.items(), key=lambda item: (-item[1], item[0]))
            shown = [f"{n:,} '{reason}'" for reason, n in ranked[:3]]
            if len(ranked) > 3:
                shown.append(f"{sum(n for _, n in ranked[3:]):,} for {len(ranked) - 3} other reasons")
            text += " (" + ", ".join(shown) + ")"
        if self.refused:
            text += f", {self.refused:,} row{'s' if self.refused != 1 else ''} refused as bad (listed above)"
        return text


def answers_tally(tallies: dict[str, JudgeAnswersTally], name: str) -> JudgeAnswersTally:
    return tallies.setdefault(name, JudgeAnswersTally())


def judge_row_check(
    context: Context,
    line: int,
    values: dict[str, str],
    plans: dict,
    seen: dict,
    bad: list,
) -> None:
    """Adds the row to its plan in `plans`, or its problems to `bad` as (line, message)."""
    errors: list[str] = []
    target = context.resolve(values, errors, judges=True)
    criterion = context.criterion(values["criterion"], errors)
    pairwise_criterion_check(context, criterion, errors)
    if values.get(ORDER_COLUMN, "").lower() in ("false", "0", "no"):
        errors.append(f"a judge row needs the order its judge was shown ({ORDER_COLUMN} false is for human rows)")
    winner, error = values["winner_system"], values["error"].strip()
    if winner == "":
        if not error:
            errors.append("winner_system is empty and error is empty (a judge row has one or the other)")
    elif error:
        errors.append("a judge row has either a winner_system or an error, not both")
    if winner == CANNOT_JUDGE:
        errors.append(f"a judge row cannot be {CANNOT_JUDGE} (a judge names a winner, a tie, or an error)")
    verdict_check(context.campaign, values, errors, check_winner=not error and winner != CANNOT_JUDGE)
    time_field(values, "saved_at", errors, required=False)
    confidence = confidence_value(values.get(CONFIDENCE_COLUMN, ""), errors)
    identity = None
    if target is not None and criterion is not None:
        identity = (JUDGE, target.key, target.left.id, criterion.key)
        if identity in seen:
            errors.append(f"repeats line {seen[identity]} (same pair, order, criterion and judge)")
    if errors:
        bad += [(line, message) for message in errors]
        return
    seen[identity] = line
    article_a, article_b = canonical(context, target)
    a_first = target.left.id == article_a.id
    plan = plans.get((target.key, a_first))
    if plan is None:
        plan = plans[target.key, a_first] = JudgePlan(target=target, a_first=a_first, model=values["model"])
    side = side_for_system(winner, article_a.system.key, article_b.system.key) if winner else None
    plan.rows.append((criterion, side, values["rationale"], error, confidence))


def confidence_value(text: str, errors: list[str]) -> float | None:
    """A judge row's confidence: empty is unknown; anything else must be a number in [0, 1]."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:  # NaN fails too
        errors.append(f"confidence must be a number from 0 to 1 (or empty), got '{text}'")
        return None
    return value


def judge_rows_write(*, context: Context, plans: dict, now: datetime) -> JudgeRowsWritten:
    """Each judge row becomes a verdict (or the error) of an imported unit; missing judges are created as imported."""
    written = JudgeRowsWritten()
    models = {}
    for plan in plans.values():
        if plan.model:
            models.setdefault(plan.target.rater, plan.model)
    judges, written.judges_created = imported_judges_resolve(
        campaign=context.campaign, names={plan.target.rater for plan in plans.values()}, models=models, scope=context.judge_scope
    )
    units: list[ImportedUnit] = []
    for plan in plans.values():
        judge = judges[plan.target.rater]
        tally = answers_tally(written.answers, judge.name)
        for _, side, _, error, _ in plan.rows:
            if side is None:
                tally.error_add(error)
            else:
                tally.imported += 1
        pair, created = pair_ensure(context, plan.target)
        written.pairs_created += created
        grouped: dict[tuple, list] = {}
        for row in plan.rows:
            one = row[0].id if judge.mode == Judge.Mode.CRITERION else None
            grouped.setdefault((row[0].category_id, one), []).append(row)
        for (category_id, criterion_id), rows in grouped.items():
            units.append(
                ImportedUnit(
                    judge=judge,
                    pair_id=pair.pk,
                    category_id=category_id,
                    criterion_id=criterion_id,
                    order=orders.of_a_first(plan.a_first),
                    verdicts=[(c.id, side, rationale, sure) for c, side, rationale, _, sure in rows if side is not None],
                    errors=list(dict.fromkeys(error for _, side, _, error, _ in rows if side is None)),
                )
            )
    for outcome in imported_units_save(units=units, now=now):
        written.units[outcome] += 1
    return written
