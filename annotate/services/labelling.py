"""Finishing an assignment: what still blocks submission, submitting, and marked passages.

The answers themselves (each criterion's label and the overall answer) are written by the
answer service, `annotate.services.answers`, which also holds the assignment's row lock.
The annotator speaks of the articles by position ("1" shown first, "2" second); passages
are stored on the article, found with the assignment's `a_first` (A shown first).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotate.answers import CHOOSE_OVERALL, Rules, criterion_problems, on_pair, reading_problems
from annotate.models import Assignment, Campaign, Criterion, Item, Label, Span
from annotate.reading_selectors import item_criteria
from annotate.services.answers import MAX_COMMENT, AuditTrail, assignment_check_editable, assignment_lock_for_change
from annotate.services.campaign_locks import answers_share_lock
from annotate.services.step_votes import step_of, steps_unvoted
from common.hooks import hooks_run_logged
from protocols.pairwise import POSITIONS, SIDE_A, side_of


class Incomplete(ValidationError):
    """A submission refused because answers are missing; its messages are `assignment_missing`'s lines."""

    body_key = "missing"  # the API answers {"missing": [...]} (common/api_errors.py)


STEPS_UNVOTED = "vote up or down on every step of the agents ({n} step{s} without a vote)"


def assignment_missing(*, assignment: Assignment) -> list[str]:
    """What still blocks submission, one line per problem, in rubric order: "<criterion key>: <problem>".

    The page shows the same problems by criterion text (`annotate.selectors.annotation_page`, and
    `annotate.reading_selectors.reading_page` for one article alone).
    """
    if assignment.pair.kind != Item.Kind.PAIR:
        return _reading_missing(assignment)
    campaign = assignment.pair.campaign
    rules = Rules.of(campaign)
    labels = {label.criterion_id: label for label in assignment.labels.all()}
    evidence = Counter(assignment.spans.exclude(criterion=None).values_list("criterion_id", flat=True))
    missing = []
    for criterion in campaign.criterion_set.criteria.order_by("order"):
        if not on_pair(criterion.response):
            continue  # answered on a reading or a group, not on the pair
        label = labels.get(criterion.pk)
        problems = criterion_problems(
            rules,
            winner=label.winner if label else "",
            rationale=label.rationale if label else "",
            evidence=evidence[criterion.pk],
            cannot_judge=bool(label and label.cannot_judge),
        )
        missing += [f"{criterion.key}: {problem}" for problem in problems]
    if campaign.ask_overall and not assignment.overall:
        missing.append(f"overall: {CHOOSE_OVERALL}")
    if campaign.show_steps and campaign.step_votes == Campaign.StepVotes.EVERY and (left := steps_unvoted(assignment)):
        missing.append(f"steps: {STEPS_UNVOTED.format(n=left, s='' if left == 1 else 's')}")
    return missing


def _reading_missing(assignment: Assignment) -> list[str]:
    """`assignment_missing` of a reading or a group: each answer (and rationale) of the criteria asked on it."""
    rules = Rules.of(assignment.pair.campaign)
    answers = {answer.criterion_id: answer for answer in Label.every.filter(assignment=assignment)}  # by id: no kind join
    missing = []
    for criterion in item_criteria(assignment.pair.campaign, assignment.pair.kind):
        answer = answers.get(criterion.pk)
        problems = reading_problems(rules, value=answer.value if answer else "", rationale=answer.rationale if answer else "")
        missing += [f"{criterion.key}: {problem}" for problem in problems]
    return missing


def assignment_submit(*, assignment: Assignment, user: User, now: datetime | None = None, source: str = "page") -> None:
    now = now or timezone.now()
    assignment_check_editable(assignment)
    with transaction.atomic():
        assignment_lock_for_change(assignment, now)
        if assignment.status == Assignment.Status.SUBMITTED:
            return
        missing = assignment_missing(assignment=assignment)
        if missing:
            raise Incomplete(missing)
        old = assignment.status
        assignment.status = Assignment.Status.SUBMITTED
        assignment.submitted_at = now
        assignment.last_activity_at = now
        assignment.save(update_fields=["status", "submitted_at", "last_activity_at"])
        audit = AuditTrail(source=source)
        audit.record(assignment_id=assignment.pk, criterion_id=None, name="status", before=old, after=assignment.status, by=user.pk, at=now)
        audit.flush()
        pair_id, assignment_id = assignment.pair_id, assignment.pk
        # settings.HOOKS "after_submit" (calibration: the active sampler, the report computed ahead), after the
        # commit; a hook's failure is logged, never the annotator's error.
        transaction.on_commit(lambda: hooks_run_logged("after_submit", pair_id=pair_id, assignment_id=assignment_id))


def span_add(
    *,
    assignment: Assignment,
    position: str,
    start: int,
    end: int,
    quote: str,
    polarity: int,
    comment: str = "",
    criterion: str = "",
    step: int | None = None,
    now: datetime | None = None,
) -> Span:
    """Stores feedback on a passage; offsets count characters of the article's displayed text, or
    of the displayed text of one of its agent's steps (`step`, its id, where the campaign shows them).

    `criterion` (a key of the campaign's rubric, asked on the pair) makes the passage that
    criterion's evidence; empty, it is a free mark."""
    from annotate.rendering import plain_text

    now = now or timezone.now()
    assignment_check_editable(assignment)
    supports = None
    if criterion:
        supports = Criterion.objects.filter(criterion_set_id=assignment.pair.campaign.criterion_set_id, key=criterion).first()
        if supports is None or not on_pair(supports.response):
            raise ValidationError([f"No criterion '{criterion}' is asked on this pair: the passage was not marked."])
    if position not in POSITIONS:
        raise ValidationError(["Say which article the passage is in (1 or 2)."])
    if polarity not in (1, -1):
        raise ValidationError(["Mark the passage up or down."])
    if len(comment) > MAX_COMMENT:
        raise ValidationError([f"A comment may be at most {MAX_COMMENT} characters."])
    side = side_of(position, assignment.a_first)
    article = assignment.pair.article_a if side == SIDE_A else assignment.pair.article_b
    shown = None
    if step is not None:
        shown = step_of(assignment, step)
        if shown.article_id != article.pk:
            raise ValidationError(["That step is not one of this article's steps."])
    what = "step" if shown else "article"
    text = plain_text(shown.html if shown else article.html)
    if not (0 <= start < end <= len(text)):
        raise ValidationError([f"The selection is outside the {what}."])
    if text[start:end] != quote:
        raise ValidationError([f"The selected text does not match the {what} at those offsets; select it again."])
    with transaction.atomic():
        answers_share_lock(assignment.pair.campaign_id)
        assignment_lock_for_change(assignment, now)
        return Span.objects.create(
            assignment=assignment,
            article=article,
            criterion=supports,
            step=shown,
            start=start,
            end=end,
            quote=quote,
            polarity=polarity,
            comment=comment,
            created_at=now,
        )


def span_delete(*, assignment: Assignment, span_id: int, now: datetime | None = None) -> None:
    assignment_check_editable(assignment)
    with transaction.atomic():
        assignment_lock_for_change(assignment, now or timezone.now())
        span = Span.objects.filter(assignment=assignment, pk=span_id).first()
        if span is None:
            raise ValidationError(["No such passage."])
        if span.criterion_id and assignment.status == Assignment.Status.SUBMITTED:
            # A submitted pair stays complete: its last required evidence may be replaced, not removed.
            label = Label.objects.filter(assignment=assignment, criterion_id=span.criterion_id).first()
            left = Span.objects.filter(assignment=assignment, criterion_id=span.criterion_id).exclude(pk=span.pk).count()
            rules = Rules.of(assignment.pair.campaign)
            if label is not None and not left and rules.needs_evidence(label.winner):
                raise ValidationError(
                    ["This pair is submitted and its campaign asks for evidence: mark another passage for this criterion first."]
                )
        span.delete()
