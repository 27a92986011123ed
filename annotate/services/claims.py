"""Handing out work: claiming an annotator's next item (a pair or a reading), expiring idle claims,
opening an assignment.

A claim is what holds an item's slot for one annotator; `labelling` and `answers` write
the answers under it. A campaign's rubric says which kinds of item it hands out
(`kinds.campaign_kinds`, by each criterion's arity): pairs for its pairwise criteria, readings (one
article alone) for its one-article criteria, groups (three to six articles) for its rankings. Pairs have rules of their own (a calibration set,
known-answer pairs, swapped repeats, active sampling); every other kind is ranked by one query
(`_item_candidates`), of the kind asked.
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta
from typing import NamedTuple

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotate.kinds import ARTICLES, campaign_kinds
from annotate.models import ORIGINAL, Assignment, Campaign, Item, Pair
from annotate.selectors import calibration_pair_ids, campaign_annotator_count, can_annotate, not_annotator_reason
from annotate.services.gold import gold_draw
from annotate.services.repeats import claim_take_back, due_repeats, repeat_claim
from annotate.services.sampling import admitted_pair_ids
from common.hooks import hooks
from protocols import order as orders

# What a member asking a closed campaign for work is told (page and API alike).
CAMPAIGN_CLOSED = "This campaign is closed: it hands out no more work, and its labels can no longer be changed."
# What anybody asking a labels-only campaign for work is told: it holds imported verdicts, no texts to read.
LABELS_ONLY = "This campaign holds imported labels only: its articles have no texts, so it has nothing to annotate."
# Claims that no longer hold a slot: the pair is free for somebody else.
RELEASED = (Assignment.Status.EXPIRED, Assignment.Status.REVOKED)
# How long a claimer keeps trying while other claimers hold the candidate rows.
CLAIM_PATIENCE_SECONDS = 10.0


class ClaimsPaused(PermissionDenied):
    """New claims refused by a rule of the campaign (hook ``claim_gates``), with the message saying why."""


def assignments_expire(*, campaign: Campaign, now: datetime | None = None) -> int:
    """Returns claims left untouched longer than the campaign allows to the pool."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=campaign.claim_timeout_minutes)
    stale = Assignment.every.filter(pair__campaign=campaign, status=Assignment.Status.ACTIVE, last_activity_at__lt=cutoff)
    return stale.update(status=Assignment.Status.EXPIRED)  # pairs and readings


def claim_candidates(*, campaign: Campaign, user: User) -> list[int]:
    """Pairs with a free slot for the user, best first.

    A campaign with a calibration set (its first `calibration_pairs` pairs in
    the campaign's order) gives each member those pairs before anything else,
    in that order: until the user holds or has submitted every one of them, the
    candidates are the calibration pairs they still need (their own released
    claim first). A calibration pair has a slot for every member, whatever the
    overlap: each member labels it once.

    After that, best means: the user's own released claim (their work is kept),
    then a pair on a topic the user has not met (the reference article stays
    unseen), then the pair others have gone furthest with (most live claims,
    submitted or in progress: overlap sets fill before new pairs open, so
    agreement between annotators can be measured from the first days), then
    the topic under the most pressure (free slots per annotator who has not met
    it), then the campaign's random order. With `forbid_repeats`, pairs on a
    topic already met are left out.

    A repeat is given only when every pair with a free slot is on a topic the
    user has met. Claims arrive one at a time, so this cannot promise zero
    repeats where a perfect schedule exists: in a simulation of 15 annotators,
    K=2, 20 topics x 4 agents (160 slots, a schedule without repeats exists) and
    12 random arrival orders, ranking by pressure gave 9 repeats in all against
    17 when ranking by free slots alone (tests/test_schedule.py checks the rule).
    Filling open overlap sets first costs a few more: `bench/schedule.py`, on
    the same 40 arrival orders and pair orders, gave 69 repeats in 6,400
    assignments against 36 with pressure alone, all among the last 25 claims
    of a campaign; with 4 annotators working at once it took the share of
    submitted work whose overlap set is complete, at a quarter of the work,
    from 0% to 91%.

    It only reads, but it belongs to the claim: `assignment_claim_next` calls it
    while holding the user's lock, and counts each candidate again under the
    pair's lock before taking it. A labels-only campaign has no candidates: its
    articles have no texts.

    Under active sampling (`Campaign.sampling`) the other pairs are only those whose stored admission
    admitted them (`sampling.admitted_pair_ids`): the claim reads the admissions, never draws them,
    and ranks the admitted pairs exactly as above. Calibration and known-answer pairs are not sampled.
    """
    owed, ranked = _candidates(campaign=campaign, user=user)
    # Before anything else: the calibration pairs still owed, the user's own released claim first.
    return owed or [row.item for row in ranked]


class Ranked(NamedTuple):
    """A candidate item and its rank, best first when sorted: the user's released claim first
    (`fresh` False), then no repeat, then most live claims (`taken` negated), then the most
    pressure (negated), then the campaign's order, then the id."""

    fresh: bool
    repeat: bool
    taken: int
    pressure: float
    order: int
    item: int
    kind: str
    topic: int


def _candidates(*, campaign: Campaign, user: User) -> tuple[list[int], list[Ranked]]:
    """The calibration pairs the user still owes, and the other pairs with a free slot for them, best
    first, each with its rank (`work_candidates` merges them with the readings'). None when the rubric has no pairwise criterion: its pairs are a record only."""
    if campaign.labels_only or PAIR not in campaign_kinds(campaign):
        return [], []
    rows = list(
        Pair.objects.filter(campaign=campaign, gold__isnull=True, voided_at__isnull=True)
        .annotate(taken=Count("assignments", filter=~Q(assignments__status__in=RELEASED) & Q(assignments__repeat_of__isnull=True)))
        .order_by("order", "id")
        .values_list("id", "topic_id", "taken", "order")
    )
    mine = {
        pair_id: (topic_id, status)
        for pair_id, topic_id, status in Assignment.objects.filter(ORIGINAL, annotator=user, pair__campaign=campaign).values_list(
            "pair_id", "pair__topic_id", "status"
        )
    }
    calibration = [pair_id for pair_id, *_ in rows[: campaign.calibration_pairs]]
    owed = [pair_id for pair_id in calibration if pair_id not in mine or mine[pair_id][1] in RELEASED]
    owed.sort(key=lambda pair_id: pair_id not in mine)
    annotators = max(1, campaign_annotator_count(campaign=campaign))
    calibrating = set(calibration)
    admitted = admitted_pair_ids(campaign=campaign)
    if admitted is not None:
        # Active sampling: the human queue is the calibration set and the admitted pairs, nothing else.
        rows = [row for row in rows if row[0] in calibrating or row[0] in admitted]
    free_by_topic: dict[int, int] = {}
    for pair_id, topic_id, taken, _ in rows:
        slots = annotators if pair_id in calibrating else campaign.overlap
        free_by_topic[topic_id] = free_by_topic.get(topic_id, 0) + max(0, slots - taken)
    # How many annotators have met each topic (a released claim still showed them its reference).
    seen_by = dict(
        Assignment.objects.filter(ORIGINAL, pair__campaign=campaign)
        .values("pair__topic_id")
        .annotate(n=Count("annotator", distinct=True))
        .values_list("pair__topic_id", "n")
    )
    others = [row for row in rows if row[0] not in calibrating]
    return owed, _ranked(others, PAIR, campaign=campaign, mine=mine, free_by_topic=free_by_topic, seen_by=seen_by, annotators=annotators)


def _ranked(rows, kind: str, *, campaign: Campaign, mine: dict, free_by_topic: dict, seen_by: dict, annotators: int) -> list[Ranked]:
    """The rows (id, topic, others' live claims, order) of one kind with a free slot for the user, best
    first (`Ranked`); `mine` gives the user's own claims by id as (topic, status)."""
    met = {topic_id for topic_id, _ in mine.values()}
    ranked = []
    for item_id, topic_id, taken, order in rows:
        if taken >= campaign.overlap:
            continue
        own = mine.get(item_id)
        if own is not None and own[1] not in RELEASED:
            continue
        resume = own is not None
        repeat = topic_id in met and not resume
        if repeat and campaign.forbid_repeats:
            continue
        # Free slots per annotator who can still fill them without a repeat: the topic that most
        # needs this user goes first, so that the end of a campaign does not leave slots only
        # people who met the topic could take.
        pressure = free_by_topic[topic_id] / max(1, annotators - seen_by.get(topic_id, 0))
        # `taken` counts other people's live claims (the user's own claim here is released).
        ranked.append(Ranked(not resume, repeat, -taken, -pressure, order, item_id, kind, topic_id))
    ranked.sort()
    return ranked


PAIR, READING = Item.Kind.PAIR, Item.Kind.READING


def _item_candidates(*, campaign: Campaign, user: User, kind: str) -> list[Ranked]:
    """The items of `kind` (any kind but pairs: a reading...) with a free slot for the user, ranked
    by the pairs' rule (`claim_candidates`): the user's released claim first, then a topic they have
    not met in this kind, then the items others have gone furthest with (overlap sets fill first),
    then the topic under the most pressure, then the campaign's order. With `forbid_repeats`, at most
    one item of the kind per topic."""
    if campaign.labels_only or kind not in campaign_kinds(campaign):
        return []
    rows = list(
        Item.objects.filter(campaign=campaign, kind=kind, voided_at__isnull=True)
        .annotate(taken=Count("assignments", filter=~Q(assignments__status__in=RELEASED)))
        .order_by("order", "id")
        .values_list("id", "topic_id", "taken", "order")
    )
    if not rows:
        return []
    work = Assignment.every.filter(pair__campaign=campaign, pair__kind=kind)
    mine = {
        item_id: (topic_id, status)
        for item_id, topic_id, status in work.filter(annotator=user).values_list("pair_id", "pair__topic_id", "status")
    }
    annotators = max(1, campaign_annotator_count(campaign=campaign))
    free_by_topic: dict[int, int] = {}
    for _, topic_id, taken, _ in rows:
        free_by_topic[topic_id] = free_by_topic.get(topic_id, 0) + max(0, campaign.overlap - taken)
    seen_by = dict(work.values("pair__topic_id").annotate(n=Count("annotator", distinct=True)).values_list("pair__topic_id", "n"))
    return _ranked(rows, kind, campaign=campaign, mine=mine, free_by_topic=free_by_topic, seen_by=seen_by, annotators=annotators)


def _other_candidates(*, campaign: Campaign, user: User) -> list[Ranked]:
    """`_item_candidates` of every kind the campaign hands out but pairs, ranked together."""
    kinds = sorted(campaign_kinds(campaign) - {PAIR})
    return sorted(row for kind in kinds for row in _item_candidates(campaign=campaign, user=user, kind=kind))


def _last_claim(campaign: Campaign, user: User) -> tuple[str, int] | None:
    """(kind, topic) of the user's latest claim in the campaign, of any kind; None before the first."""
    return (
        Assignment.every.filter(pair__campaign=campaign, annotator=user, claimed_at__isnull=False)
        .order_by("-claimed_at", "-id")
        .values_list("pair__kind", "pair__topic_id")
        .first()
    )


def work_candidates(*, campaign: Campaign, user: User) -> list[tuple[str, int]]:
    """The items a claim may give the user, best first, as (PAIR or READING, id).

    The calibration pairs still owed come first (`claim_candidates`). The other pairs and the
    readings are ranked together by one rule, the pairs' (each kind counting its own topics met,
    repeats and pressure), and their shuffled orders interleave them.

    Then the topic rule: the pairwise view and the one-article view of one topic are not given back
    to back. After a pair on topic T, the readings of T go last, and after a reading of T, the pairs
    of T go last, while anything else is left; so the judgement of one view is not primed by the
    other a minute before. A campaign with `topic_back_to_back` asks for the opposite: the other
    view of the topic just done comes first (while it has a free slot), for studies of exactly that
    priming or of speed.
    """
    owed, pairs = _candidates(campaign=campaign, user=user)
    if owed:
        return [(PAIR, pair_id) for pair_id in owed]
    ranked = sorted(pairs + _other_candidates(campaign=campaign, user=user))
    # Only a campaign handing out two kinds or more has two views of a topic.
    last = _last_claim(campaign, user) if len(campaign_kinds(campaign)) > 1 else None
    if last is not None:
        kind, topic_id = last

        def other_view(row: Ranked) -> bool:
            return row.kind != kind and row.topic == topic_id

        if campaign.topic_back_to_back:
            ranked.sort(key=lambda row: not other_view(row))
        else:
            ranked.sort(key=other_view)
    return [(row.kind, row.item) for row in ranked]


def gold_candidates(*, campaign: Campaign, user: User) -> list[int]:
    """The campaign's known-answer pairs the user has not had (or whose claim was released), in the
    campaign's order, those on topics the user has not met first; with `forbid_repeats`, only those.
    A gold pair has a slot for every member, whatever the overlap: each member labels it once."""
    if not campaign.gold_rate or campaign.labels_only or PAIR not in campaign_kinds(campaign):
        return []
    mine = dict(Assignment.objects.filter(ORIGINAL, annotator=user, pair__campaign=campaign).values_list("pair_id", "status"))
    met = set(Assignment.objects.filter(annotator=user, pair__campaign=campaign).values_list("pair__topic_id", flat=True))
    rows = []
    for pair_id, topic_id, order in (
        Pair.objects.filter(campaign=campaign, gold__isnull=False, voided_at__isnull=True)
        .order_by("order", "id")
        .values_list("id", "topic_id", "order")
    ):
        if pair_id in mine and mine[pair_id] not in RELEASED:
            continue
        repeat = topic_id in met and pair_id not in mine
        if repeat and campaign.forbid_repeats:
            continue
        rows.append((pair_id not in mine, repeat, order, pair_id))
    rows.sort()
    return [row[-1] for row in rows]


def _claims_made(campaign: Campaign, user: User) -> int:
    """The index of the user's next new claim: the pairs they have claimed in the campaign so far
    (swapped repeats left out: they come on top of the mix)."""
    return Assignment.objects.filter(ORIGINAL, annotator=user, pair__campaign=campaign).count()


def _gold_turn(campaign: Campaign, user: User, index: int) -> bool:
    return bool(campaign.gold_rate) and gold_draw(campaign_id=campaign.pk, user_id=user.pk, index=index) < campaign.gold_rate


def items_left(*, campaign: Campaign, user: User, active: Assignment | None = None) -> tuple[int, int]:
    """`pairs_left` split by kind: (pairs, items of the other kinds: single articles). Known-answer
    pairs and swapped repeats are pairs."""
    total = pairs_left(campaign=campaign, user=user, active=active)
    single = _other_left(campaign, user) + (active is not None and active.pair.kind != PAIR)
    return total - single, single


def _other_left(campaign: Campaign, user: User) -> int:
    """How many items of the kinds other than pairs a claim could still give the user: at most one per
    topic and kind where the campaign forbids repeats."""
    rows = _other_candidates(campaign=campaign, user=user)
    return len({(row.kind, row.topic) for row in rows}) if campaign.forbid_repeats else len(rows)


def pairs_left(*, campaign: Campaign, user: User, active: Assignment | None = None) -> int:
    """How many more items (pairs and readings) the user can do in the campaign now: their item in
    progress, if any, and the pairs and readings a claim could still give them (`claim_candidates`), at most one per topic where
    the campaign forbids repeats. Other annotators may take some of those first; a claim that
    expires frees its slot again. The calibration pairs still owed count with the pairs that
    follow them. Known-answer pairs count as the claims will give them (`gold_draw` is fixed per
    claim): each of the user's next claims gives one on its gold turn while any is left, so the
    count falls by one per pair, whatever its kind. Swapped repeats due now count too (`repeats`);
    those that fall due after later submissions join the count then."""
    owed, ranked = _candidates(campaign=campaign, user=user)
    candidates = owed + [row.item for row in ranked]
    if campaign.forbid_repeats:
        normal = Pair.objects.filter(pk__in=candidates).values("topic_id").distinct().count()
    else:
        normal = len(candidates)
    # Items of the other kinds count as pairs do (at most one per topic where repeats are forbidden).
    normal += _other_left(campaign, user)
    gold_left = len(gold_candidates(campaign=campaign, user=user))
    index, total = _claims_made(campaign, user), 0
    while normal > 0:
        if gold_left > 0 and _gold_turn(campaign, user, index + total):
            gold_left -= 1
        else:
            normal -= 1
        total += 1
    return total + len(due_repeats(campaign=campaign, user=user)) + (active is not None)


def _claim_item(*, item: Item, kind: str, user: User, overlap: int | None, now: datetime) -> Assignment | None:
    """Claims a locked item of any kind for the user if it still has a free slot (`overlap` None: a
    slot per member), in an order of its slots drawn at random (`kinds.ARTICLES` of its kind, or a
    group's number of slots); a
    released claim of theirs on it is taken back with its work."""
    if item.voided_at is not None:
        return None  # voided since the candidates were read (flags.pair_void locks the row too)
    originals = Assignment.every.filter(ORIGINAL, pair=item)
    if overlap is not None and originals.exclude(status__in=RELEASED).count() >= overlap:
        return None
    mine = originals.filter(annotator=user).first()
    if mine is not None:
        if mine.status not in RELEASED:
            return None
        # Coming back to an item whose earlier claim was released: keep that work.
        return claim_take_back(mine, user=user, now=now)
    order = orders.drawn(ARTICLES.get(kind) or item.slots.count())  # a group's size is its slots'
    return Assignment.objects.create(
        pair=item, annotator=user, a_first=orders.a_first(order), order=order, claimed_at=now, last_activity_at=now
    )


def _unfinished(campaign: Campaign, user: User) -> Assignment | None:
    """The user's item in progress (at most one per campaign, of any kind)."""
    active = Assignment.every.filter(pair__campaign=campaign, annotator=user, status=Assignment.Status.ACTIVE)
    return active.order_by("claimed_at", "id").first()


def assignment_claim_next(*, campaign: Campaign, user: User, now: datetime | None = None) -> Assignment | None:
    """The user's unfinished work first, else a new claim on an item of any kind the campaign hands out
    (a pair, a reading) that still needs annotators (`work_candidates` ranks them).

    None means that no item has a free slot for this user. What is said of pairs below holds
    for readings too (their overlap is the campaign's; no calibration or gold readings). Two rules hold
    whatever arrives at once:
    - one user holds at most one active assignment per campaign: the user's row
      is locked (`FOR NO KEY UPDATE`) for the whole claim, so a double click or
      a second tab waits and then gets the same assignment back;
    - a pair never has more than `overlap` live claims (a calibration pair: one
      per member, whatever the overlap): candidates are locked
      one at a time with `SKIP LOCKED` and counted again under the lock, so
      parallel claimers spread over the pairs instead of queueing on one.
    A pass that finds every candidate locked by others is repeated; past
    CLAIM_PATIENCE_SECONDS the claimer waits for the locks in id order instead
    of skipping them, so it never gives up while a slot may still be free.
    On SQLite the IMMEDIATE transaction serializes the whole claim.
    A labels-only campaign never hands out work (None): it has no texts.

    With a gold rate, a claim whose gold turn it is (`gold_draw` below the rate) gives a known-answer
    pair the user has not had, if any is left and other work is too; the claim, its display order
    and what it returns are the same as for any pair. A gate (hook ``claim_gates``) may refuse
    new claims with its message (`ClaimsPaused`, a 403); unfinished work is still given back.

    With a repeat rate, a swapped repeat that is due (`repeats.due_repeats`) is handed out first, even
    when no other work is left; the user's lock serializes it, and `repeat_of` being unique keeps it
    to one repeat per original whatever arrives at once.
    """
    now = now or timezone.now()
    if not can_annotate(campaign, user):
        raise PermissionDenied(not_annotator_reason(campaign, user))
    if not campaign.is_open or campaign.labels_only:
        return None
    assignments_expire(campaign=campaign, now=now)
    # A calibration pair takes every member: no overlap cap (one claim per member is the unique constraint).
    calibration = set(calibration_pair_ids(campaign=campaign))
    give_up_skipping = time.monotonic() + CLAIM_PATIENCE_SECONDS
    for _ in range(10_000):
        patient = time.monotonic() >= give_up_skipping
        with transaction.atomic():
            User.objects.select_for_update(no_key=True).filter(pk=user.pk).values_list("pk", flat=True).first()
            # Asked again under the lock: a removal from the campaign takes the same lock.
            if not can_annotate(campaign, user):
                raise PermissionDenied(not_annotator_reason(campaign, user))
            unfinished = _unfinished(campaign, user)
            if unfinished is not None:
                return unfinished
            # The rules that may pause new claims (settings.HOOKS "claim_gates": calibration's gold
            # accuracy pause); unfinished work, above, is always given back.
            for gate in hooks("claim_gates"):
                if reason := gate(campaign=campaign, user=user):
                    raise ClaimsPaused(reason)
            candidates = work_candidates(campaign=campaign, user=user)
            # A swapped repeat that is due comes before new work (once the calibration pairs are done):
            # it is the user's own pair, so the user's lock is the only one it needs.
            owed = bool(candidates) and candidates[0][0] == PAIR and candidates[0][1] in calibration
            due = [] if owed else due_repeats(campaign=campaign, user=user)
            if due:
                return repeat_claim(original_id=due[0], user=user, now=now)
            if not candidates:
                return None
            # A gold turn puts the known-answer pairs first; gold pairs are mixed in only while
            # other work is left, so the mix holds to the end of the campaign.
            # Read on every claim, gold turn or not, so that a gold claim takes no longer than another.
            gold = gold_candidates(campaign=campaign, user=user)
            if not _gold_turn(campaign, user, _claims_made(campaign, user)):
                gold = []
            uncapped = calibration | set(gold)
            candidates = [(PAIR, pair_id) for pair_id in gold] + candidates
            skipped = 0
            # Patient: locks waited for in one order (pairs, then readings, by id), so two claimers never deadlock.
            for kind, item_id in sorted(candidates) if patient else candidates:
                # The item's row only: its default ordering joins the campaign, whose row a lock of the
                # whole query would take too (other claimers hold it shared: a deadlock on PostgreSQL).
                item = Item.objects.select_for_update(skip_locked=not patient, of=("self",)).filter(pk=item_id).order_by().first()
                if item is None:
                    skipped += 1
                    continue
                cap = None if kind == PAIR and item.pk in uncapped else campaign.overlap
                claimed = _claim_item(item=item, kind=kind, user=user, overlap=cap, now=now)
                if claimed is not None:
                    return claimed
        # Every candidate was taken or held by another claimer: look again.
        time.sleep(random.uniform(0.005, 0.02) if skipped else 0)
    raise RuntimeError("A claim kept finding free slots it could not take; the pair counts disagree with the candidates.")


def assignment_open(*, assignment: Assignment, now: datetime | None = None) -> None:
    if assignment.first_opened_at is None:
        now = now or timezone.now()
        Assignment.every.filter(pk=assignment.pk, first_opened_at__isnull=True).update(first_opened_at=now, last_activity_at=now)
        assignment.first_opened_at = assignment.last_activity_at = now
