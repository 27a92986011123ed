"""Adjudication's writes, apart from the final answer itself (`answers.adjudication_save`): who
adjudicates a campaign, and opening a queue of items whose annotators disagree.

An item is a pair and a criterion. Its annotators disagree when their submitted answers differ:
`split` when some chose article A and others B (a tie among them or not), `tie-vs-win` when some
chose a tie and the others one same winner. Gold pairs are left out: their answer is known.
"""

from __future__ import annotations

from collections import defaultdict

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotate.models import Adjudication, Assignment, Campaign, Criterion, Label
from annotate.services.campaign_locks import roles_lock
from protocols import order as orders

KINDS = ("all", Adjudication.Kind.SPLIT.value, Adjudication.Kind.TIE_VS_WIN.value)


def disagreement_kind(winners: set[str]) -> str | None:
    """The kind of disagreement among an item's answers (sides or tie), or None when they agree."""
    if {"a", "b"} <= winners:
        return Adjudication.Kind.SPLIT
    if "tie" in winners and len(winners) > 1:
        return Adjudication.Kind.TIE_VS_WIN
    return None


def disagreements(*, campaign: Campaign, criteria: list[Criterion] | None = None, kind: str = "all") -> dict[tuple[int, int], str]:
    """{(pair id, criterion id): kind} for every item of the campaign whose submitted answers disagree."""
    if kind not in KINDS:
        raise ValidationError([f"Unknown disagreement kind {kind!r}: choose one of {', '.join(KINDS)}."])
    labels = Label.objects.filter(
        assignment__pair__campaign=campaign,
        assignment__status=Assignment.Status.SUBMITTED,
        assignment__pair__gold__isnull=True,
        assignment__repeat_of__isnull=True,  # a swapped repeat is a position check, not a second annotator
    ).exclude(winner="")
    if criteria is not None:
        labels = labels.filter(criterion__in=criteria)
    winners: dict[tuple[int, int], set[str]] = defaultdict(set)
    for pair_id, criterion_id, winner in labels.values_list("assignment__pair_id", "criterion_id", "winner"):
        winners[(pair_id, criterion_id)].add(winner)
    found = {item: disagreement_kind(answers) for item, answers in winners.items()}
    return {item: found_kind for item, found_kind in found.items() if found_kind and kind in ("all", found_kind)}


def criteria_named(*, campaign: Campaign, keys: list[str]) -> list[Criterion]:
    """The campaign's criteria by key; a ValidationError names the keys its rubric lacks."""
    found = {c.key: c for c in Criterion.objects.filter(criterion_set_id=campaign.criterion_set_id, key__in=keys)}
    unknown = [key for key in keys if key not in found]
    if unknown:
        raise ValidationError([f"Not a criterion of this campaign's rubric: {', '.join(unknown)}."])
    return [found[key] for key in keys]


def adjudication_open(*, campaign: Campaign, by: User, criteria: list[Criterion] | None = None, kind: str = "all") -> tuple[int, int]:
    """Opens an adjudication item for each disagreement selected that has none yet; (opened, already there)."""
    if campaign.labels_only:
        raise ValidationError(["This campaign holds imported labels only: there are no texts to adjudicate on."])
    found = disagreements(campaign=campaign, criteria=criteria, kind=kind)
    now = timezone.now()
    with transaction.atomic():
        there = set(Adjudication.objects.filter(campaign=campaign).values_list("pair_id", "criterion_id"))
        new = [
            Adjudication(
                campaign=campaign,
                pair_id=pair_id,
                criterion_id=criterion_id,
                kind=found_kind,
                a_first=orders.a_first(order),
                order=order,
                opened_by=by,
                opened_at=now,
            )
            for (pair_id, criterion_id), found_kind in sorted(found.items())
            for order in [orders.drawn(2)]
            if (pair_id, criterion_id) not in there
        ]
        # Two staff opening at once: the unique item constraint keeps one row per item.
        Adjudication.objects.bulk_create(new, ignore_conflicts=True)
    return len(new), len(found) - len(new)


def is_annotator(campaign: Campaign, user: User) -> bool:
    """On the campaign's annotator list, or holding work in it."""
    return campaign.annotators.filter(pk=user.pk).exists() or Assignment.objects.filter(pair__campaign=campaign, annotator=user).exists()


def campaign_adjudicators_add(*, campaign: Campaign, users: list[User]) -> list[User]:
    """Makes the users adjudicators of the campaign; refuses annotators of it. Returns those newly added.

    The check and the write hold the campaign's roles lock, as adding annotators does: one account
    added to both lists at once ends on one of them, the other request is refused."""
    with transaction.atomic():
        roles_lock(campaign.pk)
        annotators = sorted(user.username for user in users if is_annotator(campaign, user))
        inactive = sorted(user.username for user in users if not user.is_active)
        problems = []
        if annotators:
            problems.append(f"Annotators of this campaign cannot adjudicate it: {', '.join(annotators)}.")
        if inactive:
            problems.append(f"Deactivated account(s): {', '.join(inactive)}.")
        if problems:
            raise ValidationError(problems)
        there = set(campaign.adjudicators.values_list("pk", flat=True))
        added = [user for user in users if user.pk not in there]
        campaign.adjudicators.add(*added)
    return added


def campaign_adjudicator_remove(*, campaign: Campaign, user: User) -> bool:
    """Takes the user off the campaign's adjudicators (answers they recorded stay); whether they were one."""
    was = campaign.adjudicators.filter(pk=user.pk).exists()
    campaign.adjudicators.remove(user)
    return was


def campaign_set_adjudication_by_topic(*, campaign: Campaign, by_topic: bool) -> None:
    """Splits the campaign's adjudication by topic among its adjudicators, or shares every item again."""
    Campaign.objects.filter(pk=campaign.pk).update(adjudication_by_topic=by_topic)
    campaign.adjudication_by_topic = by_topic
