"""Swapped repeats: an annotator meets again, later, a pair they submitted, with the order reversed.

Which submitted pairs come back is drawn once per original assignment (`repeat_draw`, keyed with the
server's secret like the gold mix, so nobody can predict it and the same original always gets the same
answer). A drawn original is *due* once the annotator has submitted at least `Campaign.repeat_gap`
other pairs of the campaign after it; the claim (`claims.assignment_claim_next`) then hands the oldest
due one out before any new pair. The repeat is an `Assignment` of the same pair and annotator with
`repeat_of` set and `a_first` the original's reversed; the page and the API show it like any pair.

Left out: known-answer pairs (they score the annotator once), imported work (its display order may be
unknown) and a repeat of a repeat. A repeat is never a second vote: every count of annotators, slots
and agreement reads originals only (`annotate.models.ORIGINAL`); the position figures read both.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import User

from annotate.models import Assignment, Campaign, LabelChange, ReadingAssignment

RELEASED = (Assignment.Status.EXPIRED, Assignment.Status.REVOKED)
REPEAT_GAP_MAX = 1000


def repeat_rate_problem(value: float | None) -> str | None:
    """Why a campaign's repeat rate cannot be used (None: it can): a share between 0 and 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or not 0.0 <= value <= 1.0:
        return f"The repeat rate is the share of submitted pairs met again in the other order, between 0 and 1 (0: none); not {value!r}."
    return None


def repeat_gap_problem(value: int) -> str | None:
    """Why a repeat gap cannot be used: a whole number of pairs from 0 to REPEAT_GAP_MAX."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= REPEAT_GAP_MAX:
        return f"The repeat gap is how many other pairs come between a pair and its repeat, 0 to {REPEAT_GAP_MAX}; not {value!r}."
    return None


def repeat_draw(*, campaign_id: int, user_id: int, assignment_id: int) -> float:
    """The number in [0, 1) that decides whether a submitted assignment is repeated (below the
    campaign's repeat rate: yes). Keyed with the server's secret; fixed per original."""
    key = settings.SECRET_KEY.encode("utf-8")
    digest = hmac.new(key, f"swap-repeat:{campaign_id}:{user_id}:{assignment_id}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def due_repeats(*, campaign: Campaign, user: User) -> list[int]:
    """The user's original assignments whose swapped repeat is due now, oldest submission first: drawn
    for a repeat, followed by at least `repeat_gap` other submitted pairs, and with no repeat yet or
    only a released one (the claim takes that one back, with its work)."""
    if not campaign.repeat_rate or campaign.labels_only:
        return []
    submitted = list(
        Assignment.objects.filter(pair__campaign=campaign, annotator=user, status=Assignment.Status.SUBMITTED, submitted_at__isnull=False)
        .order_by("submitted_at", "id")
        .values_list("id", "submitted_at", "repeat_of_id", "order_known", "pair__gold__pair_id")
    )
    repeats = dict(
        Assignment.objects.filter(pair__campaign=campaign, annotator=user, repeat_of__isnull=False).values_list("repeat_of_id", "status")
    )
    due = []
    for index, (pk, _submitted_at, repeat_of, order_known, gold) in enumerate(submitted):
        if repeat_of is not None or not order_known or gold is not None:
            continue
        if pk in repeats and repeats[pk] not in RELEASED:
            continue
        later = len(submitted) - index - 1  # submitted after it (originals and repeats alike)
        if later < campaign.repeat_gap:
            continue
        if repeat_draw(campaign_id=campaign.pk, user_id=user.pk, assignment_id=pk) < campaign.repeat_rate:
            due.append(pk)
    return due


def repeat_claim(*, original_id: int, user: User, now: datetime) -> Assignment:
    """Claims the swapped repeat of one of the user's originals (the caller holds the user's lock):
    a new assignment in the other order, or the released repeat taken back with its work."""
    original = Assignment.objects.get(pk=original_id)
    repeat = Assignment.objects.filter(repeat_of=original).first()
    if repeat is None:
        return Assignment.objects.create(
            pair_id=original.pair_id,
            annotator=user,
            a_first=not original.a_first,
            order=original.order[::-1],
            repeat_of=original,
            claimed_at=now,
            last_activity_at=now,
        )
    return claim_take_back(repeat, user=user, now=now)


def claim_take_back(work: Assignment | ReadingAssignment, *, user: User, now: datetime) -> Assignment | ReadingAssignment:
    """A released claim (an assignment, a repeat or a reading) made ACTIVE again for its annotator, its
    work kept, with an audit row; returns it. Claims and repeats both take released work back this way."""
    old = work.status
    work.status = Assignment.Status.ACTIVE
    work.claimed_at = work.last_activity_at = now
    work.save(update_fields=["status", "claimed_at", "last_activity_at"])
    LabelChange.objects.create(assignment=work, field="status", old_value=old, new_value=work.status, changed_by=user, changed_at=now)
    return work
