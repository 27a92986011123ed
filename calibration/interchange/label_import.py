"""Importing the three label files into a campaign: every row checked first, then all written in one transaction.

Human rows become submitted assignments with their labels; the overall and
spans files are handled by `companions`, judges' rows by `judge_rows`. See the
package's docstring for the rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotate.models import Assignment, Campaign, Criterion, Label, LabelChange
from annotate.services.placeholders import Placeholders, PlaceholdersSaved
from annotate.sources import Problem
from annotate.vocabulary import side_for_system, swapped
from calibration.interchange.companions import (
    overall_check,
    overall_write,
    spans_check,
    spans_write,
)
from calibration.interchange.formats import JUDGE, RowsFile, time_field
from calibration.interchange.judge_rows import (
    JudgePlan,
    judge_row_check,
    judge_rows_write,
)
from calibration.interchange.targets import (
    Context,
    Target,
    canonical,
    pair_ensure,
    pairs_ensure,
    verdict_check,
)


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
    judges_created: int = 0
    judge_units: dict[str, int] | None = None
    # What a labels-only campaign's import added to the catalogue (None for any other campaign).
    placeholders: PlaceholdersSaved | None = None

    @property
    def changed(self) -> bool:
        tallies = [
            self.assignments,
            self.labels,
            self.overall or {},
            self.spans or {},
            self.judge_units or {},
        ]
        placeholders = self.placeholders or PlaceholdersSaved()
        return bool(
            self.raters_created
            or self.pairs_created
            or self.judges_created
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
        lines.append(tally("assignments", self.assignments))
        if self.judge_units is not None:
            lines.append(
                tally("judge units (pair, order, category)", self.judge_units)
                + f"; judges created: {self.judges_created}"
            )
        lines.append(
            f"pairs created: {self.pairs_created}; rater accounts created: {self.raters_created}"
        )
        if self.placeholders is not None:
            saved = self.placeholders
            lines.append(
                f"labels only, no texts: {saved.topics} topics, {saved.systems} systems "
                f"and {saved.articles} text-less articles created"
            )
        if not self.changed:
            lines.append("unchanged: everything in the file(s) was already stored")
        return lines


@dataclass
class _AssignmentRows:
    """An assignment to create or update from the labels file."""

    target: Target
    line: int
    started_at: datetime | None
    labels: list[tuple[Criterion, str, str, datetime]] = field(default_factory=list)


def labels_import(
    *,
    campaign: Campaign,
    labels: RowsFile,
    overall: RowsFile | None = None,
    spans: RowsFile | None = None,
    skip_bad: bool = False,
    now: datetime | None = None,
) -> ImportReport:
    """Checks every row of the three files, then writes them in one transaction.

    Missing pairs and rater accounts are created (raters as inactive users who
    cannot log in); each (pair, rater) becomes a submitted assignment. With a bad
    row nothing is written unless `skip_bad`, which writes the good rows. In a
    labels-only campaign the topics, systems and (text-less) articles the good
    rows name are created too.
    """
    now = now or timezone.now()
    report = ImportReport()
    context = Context(campaign, [f for f in (labels, overall, spans) if f is not None])
    plans, judge_plans = _check_labels(context, labels, report)
    if judge_plans:
        report.judge_units = _tally()
    wanted_overall, wanted_spans = {}, []
    if overall is not None:
        wanted_overall, bad = overall_check(context, overall, plans)
        _record(report, overall, bad)
        report.overall = _tally()
    if spans is not None:
        wanted_spans, bad = spans_check(context, spans, plans)
        _record(report, spans, bad)
        report.spans = {"new": 0, "unchanged": 0}
    if report.problems and not skip_bad:
        return report
    with transaction.atomic():
        if context.placeholders is not None:
            report.placeholders = Placeholders.save(
                article
                for target in _targets(plans, judge_plans, wanted_overall)
                for article in (target.left, target.right)
            )
            # Keyed again: the placeholders' provisional ids are now real ones.
            plans = {plan.target.key: plan for plan in plans.values()}
        report.pairs_created += pairs_ensure(context, _targets(plans, judge_plans, {}))
        assignments = _write_assignments(context, plans, report, now)
        _write_labels(plans, assignments, report, now)
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
        if judge_plans:
            written = judge_rows_write(context=context, plans=judge_plans, now=now)
            report.judges_created += written.judges_created
            report.pairs_created += written.pairs_created
            report.judge_units = written.units
    report.imported = True
    return report


def _targets(plans: dict, judge_plans: dict, wanted_overall: dict):
    yield from (plan.target for plan in plans.values())
    yield from (plan.target for plan in judge_plans.values())
    yield from (target for target, _ in wanted_overall.values())


# --- checking ------------------------------------------------------------------


def _record(
    report: ImportReport, rows_file: RowsFile, bad: list[tuple[int, str]]
) -> None:
    bad.sort(key=lambda item: item[0])
    report.problems += [
        Problem(f"{rows_file.name}:{line}", message) for line, message in bad
    ]
    report.bad_rows += len({line for line, _ in bad})


def _check_labels(
    context: Context, rows_file: RowsFile, report: ImportReport
) -> tuple[dict, dict]:
    campaign = context.campaign
    plans: dict[tuple, _AssignmentRows] = {}
    judge_plans: dict[tuple, JudgePlan] = {}
    seen: dict[tuple, int] = {}
    bad = list(rows_file.problems)
    for line, values in rows_file.rows:
        if values.get("rater_kind") == JUDGE:
            judge_row_check(context, line, values, judge_plans, seen, bad)
            continue
        errors: list[str] = []
        target = context.resolve(values, errors)
        criterion = context.criteria.get(values["criterion"])
        if criterion is None:
            errors.append(
                f"unknown criterion '{values['criterion']}' (not in {campaign.criterion_set})"
            )
        winner = values["winner_system"]
        if winner == "":
            errors.append(
                "winner_system is empty (leave out criteria without a verdict)"
            )
        verdict_check(campaign, values, errors)
        saved_at = time_field(values, "saved_at", errors, required=True)
        started_at = time_field(values, "started_at", errors, required=False)
        plan = plans.get(target.key) if target else None
        if (
            target is not None
            and criterion is not None
            and (target.key, criterion.key) in seen
        ):
            errors.append(
                f"repeats line {seen[target.key, criterion.key]} (same pair, criterion and rater)"
            )
        if plan is not None:
            if plan.target.left != target.left:
                errors.append(
                    f"left_system and right_system are swapped compared with line {plan.line} (same pair and rater)"
                )
            if values["started_at"] and plan.started_at != started_at:
                errors.append(
                    f"started_at differs from line {plan.line} (same pair and rater)"
                )
        if errors:
            bad += [(line, message) for message in errors]
            continue
        seen[target.key, criterion.key] = line
        if plan is None:
            plan = plans[target.key] = _AssignmentRows(
                target=target, line=line, started_at=started_at
            )
        article_a, article_b = canonical(context, target)
        side = side_for_system(winner, article_a.system.key, article_b.system.key)
        plan.labels.append((criterion, side, values["rationale"], saved_at))
    _record(report, rows_file, bad)
    return plans, judge_plans


# --- writing -------------------------------------------------------------------


def _write_assignments(
    context: Context, plans: dict, report: ImportReport, now: datetime
) -> dict:
    raters = sorted({plan.target.rater for plan in plans.values()} - set(context.users))
    # As create_user(password=None, is_active=False) makes them, in bulk: inactive, no usable password.
    users = [User(username=User.normalize_username(rater), is_active=False) for rater in raters]
    for user in users:
        user.set_unusable_password()
    User.objects.bulk_create(users, batch_size=2000)
    context.users.update(zip(raters, users))
    report.raters_created += len(users)
    assignments: dict[tuple, Assignment] = {}
    new_assignments: list[Assignment] = []
    changes: list[LabelChange] = []
    for key, plan in plans.items():
        target, user = plan.target, context.users[plan.target.rater]
        pair, created = pair_ensure(context, target)
        report.pairs_created += created
        a_first = target.left.id == pair.article_a_id
        last_saved = max(saved_at for *_, saved_at in plan.labels)
        assignment = context.assignments.get((pair.id, user.id))
        if assignment is None:
            assignment = Assignment(
                pair=pair,
                annotator=user,
                a_first=a_first,
                status=Assignment.Status.SUBMITTED,
                claimed_at=plan.started_at
                or min(saved_at for *_, saved_at in plan.labels),
                first_opened_at=plan.started_at,
                last_activity_at=last_saved,
                submitted_at=last_saved,
            )
            new_assignments.append(assignment)
            changes.append(
                LabelChange(
                    assignment=assignment,
                    field="status",
                    old_value="",
                    new_value=assignment.status,
                    changed_by=user,
                    changed_at=now,
                )
            )
            report.assignments["new"] += 1
        else:
            updated = []
            if assignment.a_first != a_first:
                assignment.a_first = a_first
                # The overall answer is stored by position: keep it naming the same article.
                assignment.overall = swapped(assignment.overall)
                updated += ["a_first", "overall"]
            if assignment.status != Assignment.Status.SUBMITTED:
                changes.append(
                    LabelChange(
                        assignment=assignment,
                        field="status",
                        old_value=assignment.status,
                        new_value=Assignment.Status.SUBMITTED,
                        changed_by=user,
                        changed_at=now,
                    )
                )
                assignment.status = Assignment.Status.SUBMITTED
                updated.append("status")
            if (
                plan.started_at is not None
                and assignment.first_opened_at != plan.started_at
            ):
                assignment.first_opened_at = plan.started_at
                updated.append("first_opened_at")
            if assignment.submitted_at is None or assignment.submitted_at < last_saved:
                assignment.submitted_at = last_saved
                updated.append("submitted_at")
            if assignment.last_activity_at < last_saved:
                assignment.last_activity_at = last_saved
                updated.append("last_activity_at")
            if updated:
                assignment.save(update_fields=updated)
                report.assignments["updated"] += 1
            else:
                report.assignments["unchanged"] += 1
        assignments[key] = assignment
        context.assignments[pair.id, user.id] = assignment
    Assignment.objects.bulk_create(new_assignments, batch_size=2000)
    LabelChange.objects.bulk_create(changes, batch_size=2000)
    return assignments


def _write_labels(
    plans: dict, assignments: dict, report: ImportReport, now: datetime
) -> None:
    ids = sorted(a.id for a in assignments.values() if a.id is not None)
    stored = {
        (label.assignment_id, label.criterion_id): label
        # In slices: SQLite takes at most 32,766 values in one statement.
        for start in range(0, len(ids), 5000)
        for label in Label.objects.filter(assignment_id__in=ids[start : start + 5000])
    }
    new, changed, changes = [], [], []
    for key, plan in plans.items():
        assignment = assignments[key]
        for criterion, winner, rationale, saved_at in plan.labels:
            label = stored.get((assignment.id, criterion.id))
            if label is None:
                label = Label(
                    assignment=assignment,
                    criterion=criterion,
                    winner="",
                    rationale="",
                    created_at=saved_at,
                    saved_at=saved_at,
                )
                new.append(label)
            elif (label.winner, label.rationale, label.saved_at) == (
                winner,
                rationale,
                saved_at,
            ):
                report.labels["unchanged"] += 1
                continue
            else:
                changed.append(label)
            for name, value in (("winner", winner), ("rationale", rationale)):
                old = getattr(label, name)
                if old != value:
                    changes.append(
                        LabelChange(
                            assignment=assignment,
                            criterion=criterion,
                            field=name,
                            old_value=old,
                            new_value=value,
                            changed_by=assignment.annotator,
                            changed_at=now,
                        )
                    )
                    setattr(label, name, value)
            label.saved_at = saved_at
    Label.objects.bulk_create(new, batch_size=2000)
    Label.objects.bulk_update(changed, ["winner", "rationale", "saved_at"], batch_size=2000)
    LabelChange.objects.bulk_create(changes, batch_size=2000)
    report.labels["new"] += len(new)
    report.labels["updated"] += len(changed)
