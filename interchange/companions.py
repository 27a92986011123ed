"""The overall, spans and steps files of an import: checking their rows against the labels, and storing them.

An overall answer, a span or a vote on a step belongs to a rater's work on a pair: an
assignment from the labels file, or one already stored, seen in the same order. A step is
named by its number among its article's steps (1 for the first).
"""

from __future__ import annotations

import re
from datetime import datetime

from annotate.answers import on_pair
from annotate.models import Assignment, Span
from annotate.services.answers import (
    imported_comment_problems,
    imported_overall_problems,
    imported_spans_problems,
    overall_import,
    spans_import,
)
from annotate.services.step_votes import step_votes_import
from interchange.formats import JUDGE, POLARITIES, SPAN_STEP_COLUMN, RowsFile, time_field
from interchange.targets import Context, Target, canonical
from judges.imports import imported_judges_resolve, imported_step_votes_save
from protocols.pairwise import BOTH_BAD, TIE, side_for_system

# Offsets: 18 digits are far beyond any article, and int() of thousands of digits raises.
DIGITS = re.compile(r"[0-9]{1,18}")


def _order_matches(context: Context, plans: dict, target: Target, errors: list[str], what: str) -> None:
    """Overall answers and spans belong to an assignment from the labels file or already stored."""
    plan = plans.get(target.key)
    if plan is not None:
        if plan.target.left != target.left:
            errors.append(f"left_system and right_system are swapped compared with the labels (labels file line {plan.line})")
        return
    stored = context.stored(target)
    if stored is None:
        errors.append(f"no labels for this rater and pair, in the labels file or stored: {what} needs them")
        return
    pair = context.pairs[target.pair_key]
    if (pair.article_a_id if stored.a_first else pair.article_b_id) != target.left.id:
        errors.append("left_system and right_system are swapped compared with the stored assignment")


def overall_check(context: Context, rows_file: RowsFile, plans: dict) -> tuple[dict, list[tuple[int, str]]]:
    """The overall answers to store, by (pair, rater), and the file's problems as (line, message)."""
    wanted: dict[tuple, tuple[Target, str]] = {}
    seen: dict[tuple, int] = {}
    bad = list(rows_file.problems)
    for line, values in rows_file.rows:
        errors: list[str] = []
        target = context.resolve(values, errors)
        errors += imported_overall_problems(campaign=context.campaign)
        value = values["overall"]
        known = value in (values["left_system"], values["right_system"], TIE, BOTH_BAD)
        if not known or value == "":
            errors.append(f"overall '{value}' must be left_system, right_system, {TIE} or {BOTH_BAD}")
        if target is not None:
            _order_matches(context, plans, target, errors, "an overall answer")
            if target.key in seen:
                errors.append(f"repeats line {seen[target.key]} (same pair and rater)")
        if errors:
            bad += [(line, message) for message in errors]
            continue
        seen[target.key] = line
        # Stored by side, as labels are: the same article whatever the order it was shown in.
        article_a, article_b = canonical(context, target)
        side = value if value in (TIE, BOTH_BAD) else side_for_system(value, article_a.system.key, article_b.system.key)
        wanted[target.key] = (target, side)
    return wanted, bad


def spans_check(context: Context, rows_file: RowsFile, plans: dict) -> tuple[list, list[tuple[int, str]]]:
    """The spans to store, with their target, and the file's problems as (line, message)."""
    wanted: list[tuple[Target, Span]] = []
    seen: dict[tuple, int] = {}
    bad = list(rows_file.problems)
    for line, values in rows_file.rows:
        errors: list[str] = []
        target = context.resolve(values, errors)
        article = None
        if target is not None:
            article = {
                target.left.system.key: target.left,
                target.right.system.key: target.right,
            }.get(values["system"])
            if article is None:
                errors.append(f"system '{values['system']}' is neither left_system nor right_system")
            _order_matches(context, plans, target, errors, "a span")
        if problems := imported_spans_problems(campaign=context.campaign):
            errors += problems
            article = None
        start = end = None
        if DIGITS.fullmatch(values["start"]) and DIGITS.fullmatch(values["end"]):
            start, end = int(values["start"]), int(values["end"])
        else:
            errors.append("start and end must be whole numbers")
        step = None
        if values[SPAN_STEP_COLUMN] and article is not None:
            step = _step(context, article, values[SPAN_STEP_COLUMN], errors)
            if step is None:
                article = None
        if article is not None and start is not None:
            what = f"step {step.order + 1}'s text" if step else "the article's text"
            text = context.step_text(step) if step else context.text(article)
            if not (start < end <= len(text)):
                errors.append(f"offsets {start}..{end} are outside {what} ({len(text)} characters)")
            elif text[start:end] != values["quote"]:
                errors.append(f"quote does not match {what} at {start}..{end}")
        polarity = POLARITIES.get(values["polarity"])
        if polarity is None:
            errors.append(f"polarity must be up or down, not '{values['polarity']}'")
        errors += imported_comment_problems(comment=values["comment"])
        # Evidence names a criterion of the campaign's rubric asked on the pair; empty is a free mark.
        criterion = None
        if values["criterion"]:
            criterion = context.criteria.get(values["criterion"])
            if criterion is None or not on_pair(criterion.response):
                errors.append(f"criterion '{values['criterion']}' is not a criterion of {context.campaign.criterion_set} asked on a pair")
                criterion = None
        created_at = time_field(values, "created_at", errors, required=True)
        identity = None
        if not errors:
            identity = (
                target.key,
                article.id,
                step.pk if step else None,
                start,
                end,
                polarity,
                values["comment"],
                created_at,
                criterion.pk if criterion else None,
            )
            if identity in seen:
                errors.append(f"repeats line {seen[identity]}")
        if errors:
            bad += [(line, message) for message in errors]
            continue
        seen[identity] = line
        span = Span(
            article=article,
            step=step,
            start=start,
            end=end,
            quote=values["quote"],
            polarity=polarity,
            comment=values["comment"],
            created_at=created_at,
            criterion=criterion,
        )
        wanted.append((target, span))
    return wanted, bad


def _step(context: Context, article, number: str, errors: list[str]):
    """The step a row names by its number in `article`'s steps (1 for the first), shown by the campaign."""
    if not context.campaign.show_steps:
        errors.append("this campaign does not show the agents' steps: it has no votes or passages on steps")
        return None
    steps = context.steps(article)
    if not DIGITS.fullmatch(number) or not 1 <= int(number) <= len(steps):
        errors.append(f"step '{number}' is not a step of {article.system.key}'s article (it has {len(steps)}, numbered from 1)")
        return None
    return steps[int(number) - 1]


def steps_check(context: Context, rows_file: RowsFile, plans: dict) -> tuple[dict, list[tuple[int, str]]]:
    """The votes on steps to store, by (judge or not, (pair, rater), step), and the file's problems as (line,
    message). A judge's vote (`rater_kind` judge) is kept on a pair of the campaign: its left_system and right_system."""
    wanted: dict[tuple, tuple[Target, object, int, str, datetime | None]] = {}
    seen: dict[tuple, int] = {}
    bad = list(rows_file.problems)
    for line, values in rows_file.rows:
        errors: list[str] = []
        judge = values["rater_kind"] == JUDGE
        target = context.resolve(values, errors, judges=True)
        step = None
        if target is not None:
            article = {target.left.system.key: target.left, target.right.system.key: target.right}.get(values["system"])
            if article is None:
                errors.append(f"system '{values['system']}' is neither left_system nor right_system")
            else:
                step = _step(context, article, values["step"], errors)
            if not judge:
                _order_matches(context, plans, target, errors, "a vote on a step")
            elif target.pair_key not in context.pairs:
                errors.append("a judge's vote on a step is kept on a pair of the campaign: it has no pair of these two systems")
        if step is not None and values["kind"] and values["kind"] != step.kind:
            errors.append(f"kind '{values['kind']}' is not that step's ('{step.kind}'): the file is about other steps")
        vote = POLARITIES.get(values["vote"])
        if vote is None:
            errors.append(f"vote must be up or down, not '{values['vote']}'")
        errors += imported_comment_problems(comment=values["comment"])
        saved_at = time_field(values, "saved_at", errors, required=False)
        if step is not None and target is not None:
            key = (judge, target.key, step.pk)
            if key in seen:
                errors.append(f"repeats line {seen[key]} (same pair, rater and step)")
        if errors:
            bad += [(line, message) for message in errors]
            continue
        seen[key] = line
        wanted[key] = (target, step, vote, values["comment"], saved_at)
    return wanted, bad


def steps_write(
    *, context: Context, wanted: dict, assignments: dict, tally: dict[str, int], judge_tally: dict[str, int], now: datetime
) -> int:
    """Stores the annotators' votes on steps through the step-vote service and the judges' as their step
    units, counting them in `tally` and `judge_tally` (new, updated, unchanged); returns the judges created."""
    votes = [
        (_assignment_for(context, target, assignments), step, vote, comment, saved_at)
        for (judge, *_), (target, step, vote, comment, saved_at) in wanted.items()
        if not judge
    ]
    step_votes_import(votes=votes, tally=tally, now=now)
    judged = [(target, step, vote, reason, saved_at) for (judge, *_), (target, step, vote, reason, saved_at) in wanted.items() if judge]
    if not judged:
        return 0
    judges, created = imported_judges_resolve(
        campaign=context.campaign, names={target.rater for target, *_ in judged}, models={}, scope=context.judge_scope
    )
    rows = [
        (judges[target.rater], context.pairs[target.pair_key], step, vote, reason, saved_at)
        for target, step, vote, reason, saved_at in judged
    ]
    imported_step_votes_save(votes=rows, tally=judge_tally, now=now)
    return created


def _assignment_for(context: Context, target: Target, assignments: dict) -> Assignment:
    return assignments.get(target.key) or context.stored(target)


def overall_write(
    *,
    context: Context,
    wanted: dict,
    assignments: dict,
    tally: dict[str, int],
    now: datetime,
) -> None:
    """Stores the overall answers (by side) through the answer service, counting them in `tally` (new, updated, unchanged)."""
    answers = [(_assignment_for(context, target, assignments), value) for target, value in wanted.values()]
    overall_import(answers=answers, tally=tally, now=now)


def spans_write(*, context: Context, wanted: list, assignments: dict, tally: dict[str, int]) -> None:
    """Adds the spans not stored yet, through the answer service, counting them in `tally` (new, unchanged)."""
    if not wanted:
        return
    owners = {target.key: _assignment_for(context, target, assignments) for target, _ in wanted}
    for target, span in wanted:
        span.assignment = owners[target.key]
    spans_import(spans=[span for _, span in wanted], tally=tally)
