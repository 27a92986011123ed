"""A way out of a broken pair (issue 37): annotators flag it, staff void it for everyone.

`pair_flag` records an annotator's flag (one per assignment; flagging again replaces it).
`pair_void` takes the pair out of the campaign: it is handed out no more (claims skip voided
pairs), and every assignment of it, in progress or submitted, becomes VOIDED with an audit row
each. Nothing is deleted: labels, flags and the audit trail stay, and since every statistic reads
submitted work only, the pair's labels leave them all. An annotator whose claim was voided is free
to claim the next pair at once.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from annotate.models import Assignment, LabelChange, Pair, PairFlag
from annotate.services.answers import assignment_check_editable

NOTE_MAX_LENGTH = 2000


def pair_flag(*, assignment: Assignment, user: User, reason: str, note: str = "", now: datetime | None = None) -> PairFlag:
    """Records (or replaces) the annotator's flag on their pair."""
    if assignment.annotator_id != user.pk:
        raise PermissionDenied("This is not your assignment.")
    assignment_check_editable(assignment)
    if reason not in PairFlag.Reason.values:
        raise ValidationError([f"Choose why you flag this pair: {', '.join(PairFlag.Reason.labels)}."])
    note = (note or "").strip()
    if len(note) > NOTE_MAX_LENGTH:
        raise ValidationError([f"The note is {len(note)} characters long; at most {NOTE_MAX_LENGTH}."])
    if "\x00" in note:
        raise ValidationError(["The note contains a NUL character (U+0000)."])
    if reason == PairFlag.Reason.OTHER and not note:
        raise ValidationError(["Say in the note what is wrong with this pair."])
    flag, _ = PairFlag.objects.update_or_create(
        assignment=assignment, defaults={"pair_id": assignment.pair_id, "reason": reason, "note": note, "flagged_at": now or timezone.now()}
    )
    return flag


def pair_void(*, pair: Pair, by: User, reason: str = "", now: datetime | None = None) -> int:
    """Voids the pair for everyone; returns how many assignments it voided (0 when it was void already)."""
    if not by.is_staff:
        raise PermissionDenied("Only staff can void a pair.")
    reason = (reason or "").strip()
    if len(reason) > NOTE_MAX_LENGTH or "\x00" in reason:
        raise ValidationError([f"The reason must be at most {NOTE_MAX_LENGTH} characters of text."])
    now = now or timezone.now()
    with transaction.atomic():
        # Claims lock the pair row while they hand it out: one under way finishes first and its
        # assignment is voided below; every later one sees the pair void and skips it.
        locked = Pair.objects.select_for_update().get(pk=pair.pk)
        if locked.voided_at is not None:
            return 0
        Pair.objects.filter(pk=pair.pk).update(voided_at=now, voided_by=by, void_reason=reason)
        work = list(
            Assignment.objects.select_for_update(of=("self",))
            .filter(pair_id=pair.pk, status__in=(Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED))
            .order_by("pk")
            .values_list("pk", "status")
        )
        Assignment.objects.filter(pk__in=[pk for pk, _ in work]).update(status=Assignment.Status.VOIDED)
        LabelChange.objects.bulk_create(
            [
                LabelChange(
                    assignment_id=pk, field="status", old_value=old, new_value=Assignment.Status.VOIDED, changed_by=by, changed_at=now
                )
                for pk, old in work
            ]
        )
    pair.voided_at, pair.voided_by, pair.void_reason = now, by, reason
    return len(work)
