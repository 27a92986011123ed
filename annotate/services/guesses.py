"""The guess question: after submitting a pair, which article the annotator thinks is the reference.

Asked only when the campaign has `guess_question`, always after the labels are in (it cannot change
them), never required. The answer is stored by side (`Assignment.guess`), like every other answer;
the page and the export speak of it by position (`GUESS_POSITIONS`). It may be changed until the
annotator claims their next item; a missing answer stays missing, never "don't know".
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotate.models import Assignment
from protocols.pairwise import FIRST, SECOND, position_of, side_of

# What the page posts and the export writes, relative to the display order; "unknown": "Don't know".
GUESS_FIRST, GUESS_SECOND, GUESS_UNKNOWN = "first", "second", "unknown"
GUESS_POSITIONS = (GUESS_FIRST, GUESS_SECOND, GUESS_UNKNOWN)
_POSITION = {GUESS_FIRST: FIRST, GUESS_SECOND: SECOND}

NOT_ASKED = "This campaign does not ask which article is the reference."
NOT_SUBMITTED = "The guess is asked once the pair is submitted."
LOCKED = "The guess can no longer be changed: you have claimed another item since."


def guess_side(answer: str, a_first: bool) -> str:
    """The stored value of an answer given by position ("first", "second", "unknown"): "a", "b" or "unknown"."""
    if answer == GUESS_UNKNOWN:
        return Assignment.Guess.UNKNOWN
    return side_of(_POSITION[answer], a_first)


def guess_position(stored: str, a_first: bool) -> str:
    """The answer by position ("first", "second", "unknown"), or "" when not answered."""
    if stored in ("", Assignment.Guess.UNKNOWN):
        return stored
    return GUESS_FIRST if position_of(stored, a_first) == FIRST else GUESS_SECOND


def guess_locked(assignment: Assignment) -> bool:
    """Whether the annotator has claimed another item (pair or reading) of the campaign since submitting this one."""
    if assignment.submitted_at is None:
        return False
    later = {"annotator_id": assignment.annotator_id, "claimed_at__gt": assignment.submitted_at}
    campaign_id = assignment.pair.campaign_id
    return Assignment.every.filter(pair__campaign_id=campaign_id, **later).exclude(pk=assignment.pk).exists()  # pairs and readings


def assignment_guess_save(*, assignment: Assignment, user: User, answer: str, now: datetime | None = None) -> Assignment:
    """Stores the annotator's guess (`answer`: "first", "second" or "unknown") with its time."""
    now = now or timezone.now()
    if not assignment.pair.campaign.guess_question:
        raise ValidationError(NOT_ASKED)
    if answer not in GUESS_POSITIONS:
        raise ValidationError(f"Choose Article 1, Article 2 or Don't know (one of {', '.join(GUESS_POSITIONS)}), not '{answer}'.")
    with transaction.atomic():
        locked = Assignment.every.select_for_update().get(pk=assignment.pk)
        if locked.annotator_id != user.pk:
            raise ValidationError("This is not your assignment.")
        if locked.status != Assignment.Status.SUBMITTED:
            raise ValidationError(NOT_SUBMITTED)
        if guess_locked(assignment):
            raise ValidationError(LOCKED)
        assignment.guess = guess_side(answer, locked.a_first)
        assignment.guessed_at = now
        assignment.save(update_fields=["guess", "guessed_at"])
    return assignment
