"""Handing out work: claiming an annotator's next pair, expiring idle claims, opening an assignment.

A claim is what holds a pair's slot for one annotator; `labelling` writes the
answers under it.
"""

from __future__ import annotations

import random
import secrets
import time
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotate.models import Assignment, Campaign, LabelChange, Pair
from annotate.selectors import campaign_annotator_count, can_annotate

# What a member asking a closed campaign for work is told (page and API alike).
CAMPAIGN_CLOSED = "This campaign is closed: it hands out no more work, and its labels can no longer be changed."
# What anybody asking a labels-only campaign for work is told: it holds imported verdicts, no texts to read.
LABELS_ONLY = "This campaign holds imported labels only: its articles have no texts, so it has nothing to annotate."
# Claims that no longer hold a slot: the pair is free for somebody else.
RELEASED = (Assignment.Status.EXPIRED, Assignment.Status.REVOKED)
# How long a claimer keeps trying while other claimers hold the candidate rows.
CLAIM_PATIENCE_SECONDS = 10.0


def assignments_expire(*, campaign: Campaign, now: datetime | None = None) -> int:
    """Returns claims left untouched longer than the campaign allows to the pool."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=campaign.claim_timeout_minutes)
    return Assignment.objects.filter(
        pair__campaign=campaign, status=Assignment.Status.ACTIVE, last_activity_at__lt=cutoff
    ).update(status=Assignment.Status.EXPIRED)


def claim_candidates(*, campaign: Campaign, user: User) -> list[int]:
    """Pairs with a free slot for the user, best first.

    Best means: the user's own released claim (their work is kept), then a pair
    on a topic the user has not met (the reference article stays unseen), then
    the topic under the most pressure (free slots per annotator who has not met
    it), then the pair with the fewest annotators, then the campaign's random
    order. With `forbid_repeats`, pairs on a topic already met are left out.

    A repeat is given only when every pair with a free slot is on a topic the
    user has met. Claims arrive one at a time, so this cannot promise zero
    repeats where a perfect schedule exists: in a simulation of 15 annotators,
    K=2, 20 topics x 4 agents (160 slots, a schedule without repeats exists) and
    12 random arrival orders, ranking by pressure gave 9 repeats in all against
    17 when ranking by free slots alone (tests/test_schedule.py checks the rule).

    It only reads, but it belongs to the claim: `assignment_claim_next` calls it
    while holding the user's lock, and counts each candidate again under the
    pair's lock before taking it. A labels-only campaign has no candidates: its
    articles have no texts.
    """
    if campaign.labels_only:
        return []
    rows = list(
        Pair.objects.filter(campaign=campaign)
        .annotate(taken=Count("assignments", filter=~Q(assignments__status__in=RELEASED)))
        .values_list("id", "topic_id", "taken", "order")
    )
    mine = {
        pair_id: (topic_id, status)
        for pair_id, topic_id, status in Assignment.objects.filter(annotator=user, pair__campaign=campaign).values_list(
            "pair_id", "pair__topic_id", "status"
        )
    }
    met = {topic_id for topic_id, _ in mine.values()}
    free_by_topic: dict[int, int] = {}
    for _, topic_id, taken, _ in rows:
        free_by_topic[topic_id] = free_by_topic.get(topic_id, 0) + max(0, campaign.overlap - taken)
    # How many annotators have met each topic (a released claim still showed them its reference).
    seen_by = dict(
        Assignment.objects.filter(pair__campaign=campaign)
        .values("pair__topic_id")
        .annotate(n=Count("annotator", distinct=True))
        .values_list("pair__topic_id", "n")
    )
    annotators = max(1, campaign_annotator_count(campaign=campaign))

    def pressure(topic_id: int) -> float:
        # Free slots per annotator who can still fill them without a repeat:
        # the topic that most needs this user goes first, so that the end of a
        # campaign does not leave slots only people who met the topic could take.
        return free_by_topic[topic_id] / max(1, annotators - seen_by.get(topic_id, 0))
    ranked = []
    for pair_id, topic_id, taken, order in rows:
        if taken >= campaign.overlap:
            continue
        own = mine.get(pair_id)
        if own is not None and own[1] not in RELEASED:
            continue
        resume = own is not None
        repeat = topic_id in met and not resume
        if repeat and campaign.forbid_repeats:
            continue
        ranked.append((not resume, repeat, -pressure(topic_id), taken, order, pair_id))
    ranked.sort()
    return [row[-1] for row in ranked]


def _claim_pair(*, pair: Pair, user: User, overlap: int, now: datetime) -> Assignment | None:
    """Claims a locked pair for the user if it still has a free slot."""
    if pair.assignments.exclude(status__in=RELEASED).count() >= overlap:
        return None
    mine = pair.assignments.filter(annotator=user).first()
    if mine is not None:
        if mine.status not in RELEASED:
            return None
        # Coming back to a pair whose earlier claim was released: keep that work.
        old = mine.status
        mine.status = Assignment.Status.ACTIVE
        mine.claimed_at = mine.last_activity_at = now
        mine.save(update_fields=["status", "claimed_at", "last_activity_at"])
        LabelChange.objects.create(assignment=mine, field="status", old_value=old, new_value=mine.status, changed_by=user, changed_at=now)
        return mine
    return Assignment.objects.create(
        pair=pair, annotator=user, a_first=secrets.randbelow(2) == 1, claimed_at=now, last_activity_at=now
    )


def _unfinished(campaign: Campaign, user: User) -> Assignment | None:
    return (
        Assignment.objects.filter(pair__campaign=campaign, annotator=user, status=Assignment.Status.ACTIVE)
        .order_by("claimed_at", "id")
        .first()
    )


def assignment_claim_next(*, campaign: Campaign, user: User, now: datetime | None = None) -> Assignment | None:
    """The user's unfinished work first, else a new claim on a pair that still needs annotators.

    None means that no pair has a free slot for this user. Two rules hold
    whatever arrives at once:
    - one user holds at most one active assignment per campaign: the user's row
      is locked (`FOR NO KEY UPDATE`) for the whole claim, so a double click or
      a second tab waits and then gets the same assignment back;
    - a pair never has more than `overlap` live claims: candidates are locked
      one at a time with `SKIP LOCKED` and counted again under the lock, so
      parallel claimers spread over the pairs instead of queueing on one.
    A pass that finds every candidate locked by others is repeated; past
    CLAIM_PATIENCE_SECONDS the claimer waits for the locks in id order instead
    of skipping them, so it never gives up while a slot may still be free.
    On SQLite the IMMEDIATE transaction serializes the whole claim.
    A labels-only campaign never hands out work (None): it has no texts.
    """
    now = now or timezone.now()
    if not can_annotate(campaign, user):
        raise PermissionDenied("You are not an annotator of this campaign.")
    if not campaign.is_open or campaign.labels_only:
        return None
    assignments_expire(campaign=campaign, now=now)
    give_up_skipping = time.monotonic() + CLAIM_PATIENCE_SECONDS
    for _ in range(10_000):
        patient = time.monotonic() >= give_up_skipping
        with transaction.atomic():
            User.objects.select_for_update(no_key=True).filter(pk=user.pk).values_list("pk", flat=True).first()
            # Asked again under the lock: a removal from the campaign takes the same lock.
            if not can_annotate(campaign, user):
                raise PermissionDenied("You are not an annotator of this campaign.")
            unfinished = _unfinished(campaign, user)
            if unfinished is not None:
                return unfinished
            candidates = claim_candidates(campaign=campaign, user=user)
            if not candidates:
                return None
            skipped = 0
            for pair_id in sorted(candidates) if patient else candidates:
                locked = Pair.objects.select_for_update(skip_locked=not patient).filter(pk=pair_id)
                pair = locked.first()
                if pair is None:
                    skipped += 1
                    continue
                claimed = _claim_pair(pair=pair, user=user, overlap=campaign.overlap, now=now)
                if claimed is not None:
                    return claimed
        # Every candidate was taken or held by another claimer: look again.
        time.sleep(random.uniform(0.005, 0.02) if skipped else 0)
    raise RuntimeError("A claim kept finding free slots it could not take; the pair counts disagree with the candidates.")


def assignment_open(*, assignment: Assignment, now: datetime | None = None) -> None:
    if assignment.first_opened_at is None:
        now = now or timezone.now()
        Assignment.objects.filter(pk=assignment.pk, first_opened_at__isnull=True).update(first_opened_at=now, last_activity_at=now)
        assignment.first_opened_at = assignment.last_activity_at = now
