"""Importing the label files into a campaign: every row checked first, then all written in one transaction.

Human rows become submitted assignments with their labels; the overall, spans and
steps files are handled by `companions`, judges' rows by `judge_rows`. See the
package's docstring for the rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotate.answers import CANNOT_JUDGE
from annotate.models import Campaign, Criterion
from annotate.services.answers import ImportedWork, answers_import
from annotate.services.campaign_locks import answers_share_lock
from annotate.services.guesses import guess_side
from annotate.services.placeholders import Placeholders, PlaceholdersSaved
from annotate.sources import Problem
from interchange.companions import (
    overall_check,
    overall_write,
    spans_check,
    spans_write,
    steps_check,
    steps_write,
)
from interchange.formats import (
    ACCEPTABLE_COLUMN,
    GUESS_COLUMN,
    GUESSES,
    JUDGE,
    ORDER_COLUMN,
    SET_SEPARATOR,
    RowsFile,
    time_field,
)
from interchange.judge_rows import (
    JudgeAnswersTally,
    JudgePlan,
    answers_tally,
    judge_row_check,
    judge_rows_write,
)
from interchange.responses import pairwise_criterion_check
from interchange.targets import (
    Context,
    Target,
    canonical,
    pair_ensure,
    pairs_ensure,
    verdict_check,
)
from interchange.value_rows import (
    reading_articles,
    reading_criteria,
    reading_row_check,
    readings_write,
)
from judges.imports import SCOPE_CAMPAIGN
from protocols import order as orders
from protocols.pairwise import TIE, side_for_system

# Accounts per INSERT.
BATCH = 2000


def _tally() -> dict[str, int]:
    return {"new": 0, "updated": 0, "unchanged": 0}


@dataclass
class ImportReport:
    problems: list[Problem] = field(default_factory=list)
    bad_rows: int = 0
    imported: bool = False
    raters_created: int = 0
    pairs_created: int = 0
    assignments: dict[str, int] = field(default_factory=_tally)
    labels: dict[str, int] = field(default_factory=_tally)
    overall: dict[str, int] | None = None
    spans: dict[str, int] | None = None
    step_votes: dict[str, int] | None = None
    judge_step_votes: dict[str, int] | None = None
    judges_created: int = 0
    judge_units: dict[str, int] | None = None
    criteria_created: int = 0
    # One-article rows (None when the file has none): answers, reading assignments, judges' reading units.
    answers: dict[str, int] | None = None
    reading_assignments: dict[str, int] | None = None
    reading_judge_units: dict[str, int] | None = None
    readings_created: int = 0
    # What a labels-only campaign's import added to the catalogue (None for any other campaign).
    placeholders: PlaceholdersSaved | None = None
    # Per judge named in the file: answers stored, rows stored as errors (and why), rows refused as bad.
    judge_answers: dict[str, JudgeAnswersTally] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        tallies = [
            self.assignments,
            self.labels,
            self.overall or {},
            self.spans or {},
            self.step_votes or {},
            self.judge_step_votes or {},
            self.judge_units or {},
            self.answers or {},
            self.reading_assignments or {},
            self.reading_judge_units or {},
        ]
        placeholders = self.placeholders or PlaceholdersSaved()
        return bool(
            self.raters_created
            or self.criteria_created
            or self.pairs_created
            or self.judges_created
            or self.readings_created
            or placeholders.topics
            or placeholders.systems
            or placeholders.articles
            or any(t.get("new") or t.get("updated") for t in tallies)
        )

    def lines(self) -> list[str]:
        def tally(name: str, counts: dict[str, int]) -> str:
            return f"{name}: " + ", ".join(f"{n} {what}" for what, n in counts.items())

        lines = [tally("labels", self.labels)]
        if self.overall is not None:
            lines.append(tally("overall", self.overall))
        if self.spans is not None:
            lines.append(tally("spans", self.spans))
        if self.step_votes is not None:
            lines.append(tally("votes on steps", self.step_votes))
        if self.judge_step_votes is not None and any(self.judge_step_votes.values()):
            lines.append(tally("judges' votes on steps", self.judge_step_votes))
        lines.append(tally("assignments", self.assignments))
        if self.judge_units is not None:
            lines.append(
                tally("judge units (pair, order, category or criterion)", self.judge_units) + f"; judges created: {self.judges_created}"
            )
        if self.answers is not None:
            lines.append(tally("one-article answers", self.answers))
            lines.append(tally("reading assignments", self.reading_assignments) + f"; readings created: {self.readings_created}")
        if self.reading_judge_units is not None:
            created = "" if self.judge_units is not None else f"; judges created: {self.judges_created}"
            lines.append(tally("judge units (reading, category or criterion)", self.reading_judge_units) + created)
        for name in sorted(self.judge_answers):
            lines.append(self.judge_answers[name].line(name))
        lines.append(f"pairs created: {self.pairs_created}; rater accounts created: {self.raters_created}")
        if self.criteria_created:
            lines.append(f"criteria created from the labels: {self.criteria_created}")
        if self.placeholders is not None:
            saved = self.placeholders
            lines.append(
                f"labels only, no texts: {saved.topics} topics, {saved.systems} systems and {saved.articles} text-less articles created"
            )
        if not self.changed:
            lines.append("unchanged: everything in the file(s) was already stored")
        return lines


def acceptable_check(campaign: Campaign, values: dict[str, str], errors: list[str]) -> list[str]:
    """The verdicts a human row found acceptable (`acceptable_systems`), as given; [] when empty."""
    given = values.get(ACCEPTABLE_COLUMN, "").strip()
    if not given:
        return []
    also = [v.strip() for v in given.split(SET_SEPARATOR)]
    shown = (values["left_system"], values["right_system"], TIE)
    if not campaign.accept_sets:
        errors.append(f"{ACCEPTABLE_COLUMN} is given, but this campaign does not ask for every acceptable verdict")
    elif any(v not in shown for v in also):
        errors.append(f"{ACCEPTABLE_COLUMN} may hold only left_system, right_system and tie, joined by '{SET_SEPARATOR}'")
    elif values["winner_system"] not in also:
        errors.append(f"{ACCEPTABLE_COLUMN} must hold winner_system '{values['winner_system']}'")
    elif TIE in also and not campaign.allow_tie:
        errors.append(f"{ACCEPTABLE_COLUMN} holds a tie, which this campaign does not allow")
    return also


@dataclass
class _AssignmentRows:
    """An assignment to create or update from the labels file."""

    target: Target
    line: int
    started_at: datetime | None
    order_known: bool = True
    guess: str = ""  # "first", "second", "unknown", or "" (none given)
    # (criterion, side, rationale, saved_at or None)
    labels: list[tuple[Criterion, str, str, datetime | None]] = field(default_factory=list)
    acceptable: dict[int, list[str]] = field(default_factory=dict)  # criterion id -> sides also acceptable


def labels_import(
    *,
    campaign: Campaign,
    labels: RowsFile,
    overall: RowsFile | None = None,
    spans: RowsFile | None = None,
    steps: RowsFile | None = None,
    skip_bad: bool = False,
    order_unknown: bool = False,
    judge_scope: str = SCOPE_CAMPAIGN,
    now: datetime | None = None,
) -> ImportReport:
    """Checks every row of the files (labels, and the overall, spans and steps files given), then writes them in one transaction.

    Missing pairs and rater accounts are created (raters as inactive users who
    cannot log in); each (pair, rater) becomes a submitted assignment. With a bad
    row nothing is written unless `skip_bad`, which writes the good rows. In a
    labels-only campaign the topics, systems and (text-less) articles the good
    rows name are created too, and so are the criteria when its rubric was made
    to grow from its labels. `order_unknown` takes human rows with an empty
    `order_known` as of unknown display order. `judge_scope`: whose judges the judge rows' names are,
    the campaign's own (the default: a judge of that name elsewhere is not this one) or the global
    judges of those names (`judges.imports.imported_judges_resolve`, whose JudgeScopeError it raises).
    """
    now = now or timezone.now()
    report = ImportReport()
    context = Context(campaign, [f for f in (labels, overall, spans, steps) if f is not None], judge_scope=judge_scope)
    plans, judge_plans, readings = _check_labels(context, labels, report, order_unknown=order_unknown)
    reading_plans, reading_judge_plans = readings
    if judge_plans:
        report.judge_units = _tally()
    if reading_plans or reading_judge_plans:
        report.answers, report.reading_assignments = _tally(), _tally()
    if reading_judge_plans:
        report.reading_judge_units = _tally()
    wanted_overall, wanted_spans = {}, []
    if overall is not None:
        wanted_overall, bad = overall_check(context, overall, plans)
        _record(report, overall, bad)
        report.overall = _tally()
    if spans is not None:
        wanted_spans, bad = spans_check(context, spans, plans)
        _record(report, spans, bad)
        report.spans = {"new": 0, "unchanged": 0}
    wanted_steps = {}
    if steps is not None:
        wanted_steps, bad = steps_check(context, steps, plans)
        _record(report, steps, bad)
        report.step_votes, report.judge_step_votes = _tally(), _tally()
    if report.problems and not skip_bad:
        return report
    with transaction.atomic():
        answers_share_lock(campaign.pk)  # a study plan's freeze lands before these answers or sees them
        if context.placeholders is not None:
            report.placeholders = Placeholders.save(
                [
                    *(article for target in _targets(plans, judge_plans, wanted_overall) for article in (target.left, target.right)),
                    *reading_articles(reading_plans, reading_judge_plans),
                ]
            )
            # Keyed again: the placeholders' provisional ids are now real ones.
            plans = {plan.target.key: plan for plan in plans.values()}
        if context.new_criteria is not None:
            report.criteria_created = context.new_criteria.save(
                [
                    *(
                        criterion
                        for rows in (*(plan.labels for plan in plans.values()), *(plan.rows for plan in judge_plans.values()))
                        for criterion, *_ in rows
                    ),
                    *reading_criteria(reading_plans, reading_judge_plans),
                ]
            )
        report.pairs_created += pairs_ensure(context, _targets(plans, judge_plans, {}))
        assignments = _write_answers(context, plans, report, now)
        if wanted_overall:
            overall_write(
                context=context,
                wanted=wanted_overall,
                assignments=assignments,
                tally=report.overall,
                now=now,
            )
        if wanted_spans:
            spans_write(
                context=context,
                wanted=wanted_spans,
                assignments=assignments,
                tally=report.spans,
            )
        if wanted_steps:
            report.judges_created += steps_write(
                context=context, wanted=wanted_steps, assignments=assignments, tally=report.step_votes,
                judge_tally=report.judge_step_votes, now=now,
            )  # fmt: skip
        if judge_plans:
            written = judge_rows_write(context=context, plans=judge_plans, now=now)
            report.judges_created += written.judges_created
            report.pairs_created += written.pairs_created
            report.judge_units = written.units
            _answers_merge(report, written.answers)
        if reading_plans or reading_judge_plans:
            done = readings_write(context=context, plans=reading_plans, judge_plans=reading_judge_plans, now=now)
            report.readings_created, report.raters_created = done.readings_created, report.raters_created + done.raters_created
            report.judges_created += done.judges_created
            report.answers, report.reading_assignments = done.answers, done.assignments
            if reading_judge_plans:
                report.reading_judge_units = done.judge_units
                _answers_merge(report, done.judge_answers)
    report.imported = True
    return report


def _answers_merge(report: ImportReport, tallies: dict[str, JudgeAnswersTally]) -> None:
    for name, found in tallies.items():
        tally = answers_tally(report.judge_answers, name)
        tally.imported += found.imported
        for reason, n in found.errors.items():
            tally.errors[reason] = tally.errors.get(reason, 0) + n


def _targets(plans: dict, judge_plans: dict, wanted_overall: dict):
    yield from (plan.target for plan in plans.values())
    yield from (plan.target for plan in judge_plans.values())
    yield from (target for target, _ in wanted_overall.values())


# --- checking ------------------------------------------------------------------


def _record(report: ImportReport, rows_file: RowsFile, bad: list[tuple[int, str]]) -> None:
    bad.sort(key=lambda item: item[0])
    report.problems += [Problem(f"{rows_file.name}:{line}", message) for line, message in bad]
    report.bad_rows += len({line for line, _ in bad})


def order_known_value(values: dict[str, str], errors: list[str]) -> bool:
    """The row's `order_known` (empty: true)."""
    raw = values.get(ORDER_COLUMN, "").lower()
    if raw in ("", "true", "1", "yes"):
        return True
    if raw in ("false", "0", "no"):
        return False
    errors.append(f"{ORDER_COLUMN} must be true or false, not '{values[ORDER_COLUMN]}'")
    return True


def _check_labels(context: Context, rows_file: RowsFile, report: ImportReport, *, order_unknown: bool = False) -> tuple[dict, dict, tuple]:
    plans: dict[tuple, _AssignmentRows] = {}
    judge_plans: dict[tuple, JudgePlan] = {}
    reading_plans: dict[tuple, object] = {}
    reading_judge_plans: dict[tuple, object] = {}
    seen: dict[tuple, int] = {}
    bad = list(rows_file.problems)
    for line, values in rows_file.rows:
        if values.get("response"):
            reading_row_check(context, line, values, reading_plans, reading_judge_plans, seen, bad)
            continue
        if values.get("rater_kind") == JUDGE:
            judge_row_check(context, line, values, judge_plans, seen, bad)
            continue
        errors: list[str] = []
        target = context.resolve(values, errors)
        criterion = context.criterion(values["criterion"], errors)
        pairwise_criterion_check(context, criterion, errors)
        winner = values["winner_system"]
        if winner == "":
            errors.append("winner_system is empty (leave out criteria without a verdict)")
        verdict_check(context.campaign, values, errors)
        also = acceptable_check(context.campaign, values, errors)
        saved_at = time_field(values, "saved_at", errors, required=False)
        started_at = time_field(values, "started_at", errors, required=False)
        order_known = order_known_value(values, errors) and not (order_unknown and not values.get(ORDER_COLUMN))
        guess = values.get(GUESS_COLUMN, "").strip().lower()
        if guess and guess not in GUESSES:
            errors.append(f"{GUESS_COLUMN} must be one of {', '.join(GUESSES)} or empty, not '{values[GUESS_COLUMN]}'")
        plan = plans.get(target.key) if target else None
        if target is not None and criterion is not None and (target.key, criterion.key) in seen:
            errors.append(f"repeats line {seen[target.key, criterion.key]} (same pair, criterion and rater)")
        if plan is not None:
            if plan.target.left != target.left:
                errors.append(f"left_system and right_system are swapped compared with line {plan.line} (same pair and rater)")
            if values["started_at"] and plan.started_at != started_at:
                errors.append(f"started_at differs from line {plan.line} (same pair and rater)")
            if plan.order_known != order_known:
                errors.append(f"{ORDER_COLUMN} differs from line {plan.line} (same pair and rater)")
            if plan.guess != guess:
                errors.append(f"{GUESS_COLUMN} differs from line {plan.line} (same pair and rater: one guess per assignment)")
        if errors:
            bad += [(line, message) for message in errors]
            continue
        seen[target.key, criterion.key] = line
        if plan is None:
            plan = plans[target.key] = _AssignmentRows(
                target=target, line=line, started_at=started_at, order_known=order_known, guess=guess
            )
        article_a, article_b = canonical(context, target)
        side = CANNOT_JUDGE if winner == CANNOT_JUDGE else side_for_system(winner, article_a.system.key, article_b.system.key)
        plan.labels.append((criterion, side, values["rationale"], saved_at))
        if also:
            plan.acceptable[criterion.id] = [side_for_system(v, article_a.system.key, article_b.system.key) for v in also if v != winner]
    _record(report, rows_file, bad)
    refused = {line for line, _ in bad}
    for line, values in rows_file.rows:
        if line in refused and values.get("rater_kind") == JUDGE and values.get("rater"):
            answers_tally(report.judge_answers, values["rater"]).refused += 1
    return plans, judge_plans, (reading_plans, reading_judge_plans)


# --- writing -------------------------------------------------------------------


def _write_answers(context: Context, plans: dict, report: ImportReport, now: datetime) -> dict:
    """Creates the raters' accounts and the pairs, then hands the work to the answer service."""
    raters = sorted({plan.target.rater for plan in plans.values()} - set(context.users))
    # As create_user(password=None, is_active=False) makes them, in bulk: inactive, no usable password.
    # The names are in normal form already (the rows were checked): they are stored as written.
    users = [User(username=rater, is_active=False) for rater in raters]
    for user in users:
        user.set_unusable_password()
    User.objects.bulk_create(users, batch_size=BATCH)
    context.users.update(zip(raters, users))
    report.raters_created += len(users)
    work = []
    for key, plan in plans.items():
        target, user = plan.target, context.users[plan.target.rater]
        pair, created = pair_ensure(context, target)
        report.pairs_created += created
        a_first = target.left.id == pair.article_a_id
        work.append(
            ImportedWork(
                key=key,
                pair_id=pair.id,
                annotator_id=user.id,
                order=orders.of_a_first(a_first),
                # Relative to the display order in the file; stored by side.
                guess=guess_side(plan.guess, a_first) if plan.guess else "",
                order_known=plan.order_known,
                started_at=plan.started_at,
                stored=context.assignments.get((pair.id, user.id)),
                labels=[(criterion.id, side, rationale, saved_at) for criterion, side, rationale, saved_at in plan.labels],
                acceptable=plan.acceptable,
            )
        )
    imported = answers_import(work=work, now=now)
    for what, counts in ((report.assignments, imported.assignment_tally), (report.labels, imported.label_tally)):
        for name, n in counts.items():
            what[name] += n
    for assignment in imported.assignments.values():
        context.assignments[assignment.pair_id, assignment.annotator_id] = assignment
    return imported.assignments
