"""Answering an assignment: saving each criterion's label, the overall answer and marked passages, and submitting.

The annotator speaks of the articles by position ("1" shown first, "2" second);
labels store the side ("a" or "b"). `protocols.pairwise` converts between them
with the assignment's `a_first` (A shown first).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

import protocols
from annotate.answers import CHOOSE_OVERALL, Rules, criterion_problems, sentence
from annotate.models import Assignment, Criterion, Label, LabelChange, Span
from annotate.selectors import REMOVED_FROM_CAMPAIGN, removed_from_campaign
from protocols.pairwise import POSITIONS, SIDE_A, TIE, position_of, side_of

MAX_RATIONALE = 5000
MAX_COMMENT = 2000


def _editable(assignment: Assignment) -> None:
    if assignment.status == Assignment.Status.REVOKED:
        raise PermissionDenied(REMOVED_FROM_CAMPAIGN)
    if not assignment.pair.campaign.is_open:
        raise ValidationError(["This campaign is closed; its labels can no longer be changed."])
    if assignment.status == Assignment.Status.EXPIRED:
        raise ValidationError(["This claim expired and went back to the pool; open your queue to continue."])


def _lock_for_change(assignment: Assignment, now: datetime) -> None:
    """Locks the assignment row until the transaction ends and checks, on its current state, that it may change.

    Every write to one assignment passes here, so two tabs saving at once are
    serialized: the last write wins and each change reaches the audit trail.
    The lock is taken by recording the activity (an UPDATE locks the row on
    both databases), which saves a save one round trip to the database.

    Whether the annotator was removed from the campaign is read under the lock
    too: `campaign_annotator_remove` locks every assignment of theirs, submitted
    ones included, so a save under way commits before the removal does, and a
    save that comes after finds them on the removed list.
    """
    if not Assignment.objects.filter(pk=assignment.pk).update(last_activity_at=now):
        raise PermissionDenied("This assignment no longer exists.")
    assignment.status, assignment.overall, removed = (
        Assignment.objects.filter(pk=assignment.pk)
        .annotate(removed=removed_from_campaign())
        .values_list("status", "overall", "removed")
        .get()
    )
    assignment.last_activity_at = now
    if removed:
        raise PermissionDenied(REMOVED_FROM_CAMPAIGN)
    _editable(assignment)


def winner_from_position(assignment: Assignment, position: str) -> str:
    """The side to store for the position the annotator chose; "" (no answer) stays ""."""
    if position == "":
        return ""
    return side_of(position, assignment.a_first)


def position_from_winner(assignment: Assignment, winner: str) -> str:
    """The position to show for a stored side; "" (no answer) stays ""."""
    if winner == "":
        return ""
    return position_of(winner, assignment.a_first)


@dataclass
class SaveResult:
    label: Label
    changed: bool


def label_save(
    *,
    assignment: Assignment,
    criterion: Criterion,
    user: User,
    position: str | None = None,
    rationale: str | None = None,
    now: datetime | None = None,
) -> SaveResult:
    """Saves one criterion: the choice (`1`, `2`, `tie`, or `` to clear) and/or the rationale."""
    campaign = assignment.pair.campaign
    _editable(assignment)
    errors = []
    if criterion.criterion_set_id != campaign.criterion_set_id:
        errors.append("This criterion does not belong to the campaign's rubric.")
    if position is not None and position not in (*POSITIONS, TIE, ""):
        errors.append("Choose Article 1, Article 2" + (" or Tie." if campaign.allow_tie else "."))
    if position == TIE and not campaign.allow_tie:
        errors.append("This campaign does not allow ties: choose Article 1 or Article 2.")
    if rationale is not None and len(rationale) > MAX_RATIONALE:
        errors.append(f"A rationale may be at most {MAX_RATIONALE} characters.")
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        _lock_for_change(assignment, now or timezone.now())
        # Read the clock once the lock is held, so that save times follow the order writes land in.
        now = now or timezone.now()
        label = Label.objects.filter(assignment=assignment, criterion=criterion).first()
        changes: list[LabelChange] = []
        if label is None:
            label = Label(assignment=assignment, criterion=criterion, created_at=now, saved_at=now)
        if position is not None:
            winner = winner_from_position(assignment, position)
            if winner != label.winner:
                changes.append(LabelChange(field="winner", old_value=label.winner, new_value=winner))
                label.winner = winner
        if rationale is not None and rationale != label.rationale:
            changes.append(LabelChange(field="rationale", old_value=label.rationale, new_value=rationale))
            label.rationale = rationale
        if not changes:
            return SaveResult(label, False)
        if assignment.status == Assignment.Status.SUBMITTED:
            # A submitted pair stays complete: an amendment may change an answer, never empty it.
            # The annotator reads this next to the criterion, so it does not name the criterion.
            problems = criterion_problems(Rules.of(campaign), winner=label.winner, rationale=label.rationale)
            if problems:
                raise ValidationError(
                    ["This pair is submitted, so each answer must stay complete; the change was not saved."]
                    + [sentence(p) for p in problems]
                )
        label.saved_at = now
        label.save()
        for change in changes:
            change.assignment = assignment
            change.criterion = criterion
            change.changed_by = user
            change.changed_at = now
        LabelChange.objects.bulk_create(changes)
    return SaveResult(label, True)


def overall_shown(assignment: Assignment) -> str:
    """The overall answer as the annotator sees it (by position); "" when there is none."""
    protocol = protocols.get(assignment.pair.campaign.protocol)
    return protocol.shown_overall(assignment.overall, a_first=assignment.a_first)


def overall_save(*, assignment: Assignment, user: User, value: str, now: datetime | None = None) -> None:
    now = now or timezone.now()
    _editable(assignment)
    if not assignment.pair.campaign.ask_overall:
        raise ValidationError(["This campaign does not ask for an overall preference."])
    protocol = protocols.get(assignment.pair.campaign.protocol)
    if problems := protocol.overall_problems(value):
        raise ValidationError(problems)
    with transaction.atomic():
        _lock_for_change(assignment, now)
        # Stored by side, so that it names the same article whatever the order shown.
        value = protocol.stored_overall(value, a_first=assignment.a_first)
        if value == assignment.overall:
            return
        if value == "" and assignment.status == Assignment.Status.SUBMITTED:
            raise ValidationError(
                ["This pair is submitted, so the overall answer must stay; choose another answer instead of clearing it."]
            )
        LabelChange.objects.create(
            assignment=assignment, field="overall", old_value=assignment.overall, new_value=value, changed_by=user, changed_at=now
        )
        Assignment.objects.filter(pk=assignment.pk).update(overall=value, last_activity_at=now)
        assignment.overall = value
        assignment.last_activity_at = now


class Incomplete(ValidationError):
    """A submission refused because answers are missing; its messages are `assignment_missing`'s lines."""

    body_key = "missing"  # the API answers {"missing": [...]} (common/api_errors.py)


def assignment_missing(*, assignment: Assignment) -> list[str]:
    """What still blocks submission, one line per problem, in rubric order: "<criterion key>: <problem>".

    The page shows the same problems by criterion text (`annotate.selectors.annotation_page`).
    """
    campaign = assignment.pair.campaign
    rules = Rules.of(campaign)
    labels = {label.criterion_id: label for label in assignment.labels.all()}
    missing = []
    for criterion in campaign.criterion_set.criteria.order_by("order"):
        label = labels.get(criterion.pk)
        problems = criterion_problems(rules, winner=label.winner if label else "", rationale=label.rationale if label else "")
        missing += [f"{criterion.key}: {problem}" for problem in problems]
    if campaign.ask_overall and not assignment.overall:
        missing.append(f"overall: {CHOOSE_OVERALL}")
    return missing


def assignment_submit(*, assignment: Assignment, user: User, now: datetime | None = None) -> None:
    now = now or timezone.now()
    _editable(assignment)
    with transaction.atomic():
        _lock_for_change(assignment, now)
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
        LabelChange.objects.create(
            assignment=assignment, field="status", old_value=old, new_value=assignment.status, changed_by=user, changed_at=now
        )


def span_add(
    *,
    assignment: Assignment,
    position: str,
    start: int,
    end: int,
    quote: str,
    polarity: int,
    comment: str = "",
    now: datetime | None = None,
) -> Span:
    """Stores feedback on a passage; offsets count characters of the article's displayed text."""
    from annotate.rendering import plain_text

    now = now or timezone.now()
    _editable(assignment)
    if position not in POSITIONS:
        raise ValidationError(["Say which article the passage is in (1 or 2)."])
    if polarity not in (1, -1):
        raise ValidationError(["Mark the passage up or down."])
    if len(comment) > MAX_COMMENT:
        raise ValidationError([f"A comment may be at most {MAX_COMMENT} characters."])
    side = side_of(position, assignment.a_first)
    article = assignment.pair.article_a if side == SIDE_A else assignment.pair.article_b
    text = plain_text(article.html)
    if not (0 <= start < end <= len(text)):
        raise ValidationError(["The selection is outside the article."])
    if text[start:end] != quote:
        raise ValidationError(["The selected text does not match the article at those offsets; select it again."])
    with transaction.atomic():
        _lock_for_change(assignment, now)
        return Span.objects.create(
            assignment=assignment, article=article, start=start, end=end, quote=quote, polarity=polarity, comment=comment, created_at=now
        )


def span_delete(*, assignment: Assignment, span_id: int, now: datetime | None = None) -> None:
    _editable(assignment)
    with transaction.atomic():
        _lock_for_change(assignment, now or timezone.now())
        deleted, _ = Span.objects.filter(assignment=assignment, pk=span_id).delete()
        if not deleted:
            raise ValidationError(["No such passage."])
