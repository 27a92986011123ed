"""Adjudication's reads: who may open an item, what its page shows, the queue, and the adjudicated answers.

The page shows both articles by position, as the annotation page does, and the annotators' answers
under pseudonyms ("Annotator 1", ... in the order they claimed the pair). Nothing here reads judges:
an adjudicator must decide from the texts and the humans' reasons alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, Q, QuerySet
from django.http import Http404

from annotate.models import Adjudication, Assignment, Campaign, Label
from annotate.selectors import article_columns, shown_articles
from protocols.pairwise import position_of

NOT_ADJUDICATOR = "You do not adjudicate this campaign."


def is_adjudicator(campaign: Campaign, user: User) -> bool:
    return user.is_active and campaign.adjudicators.filter(pk=user.pk).exists()


def adjudication_for_user(*, adjudication_id: int, user: User) -> Adjudication:
    """The item, for one of its campaign's adjudicators; 404 when it does not exist, 403 for anybody else, staff included."""
    adjudication = (
        Adjudication.objects.select_related("campaign", "criterion", "pair__topic", "pair__article_a", "pair__article_b")
        .filter(pk=adjudication_id)
        .first()
    )
    if adjudication is None:
        raise Http404("No such adjudication item.")
    if not is_adjudicator(adjudication.campaign, user):
        raise PermissionDenied(NOT_ADJUDICATOR)
    return adjudication


@dataclass(frozen=True)
class ShownAnswer:
    annotator: str  # a pseudonym
    position: str  # "1", "2" or "tie", in the adjudicator's order
    rationale: str


def adjudication_page(*, adjudication: Adjudication) -> dict:
    """Everything the adjudicator's page shows: the articles by position, the annotators' answers, the decision."""
    pair, campaign = adjudication.pair, adjudication.campaign
    labels = (
        Label.objects.filter(
            assignment__pair=pair,
            assignment__status=Assignment.Status.SUBMITTED,
            assignment__repeat_of__isnull=True,  # each annotator's answer once: a swapped repeat is not another annotator
            criterion=adjudication.criterion,
        )
        .exclude(winner="")
        .order_by("assignment__claimed_at", "assignment_id")
        .values_list("winner", "rationale")
    )
    answers = [
        ShownAnswer(f"Annotator {number}", position_of(winner, adjudication.a_first), rationale)
        for number, (winner, rationale) in enumerate(labels, start=1)
    ]
    return {
        "adjudication": adjudication,
        "campaign": campaign,
        "topic": pair.topic,
        "criterion": adjudication.criterion,
        "columns": article_columns(
            shown_articles(pair, adjudication.a_first),
            neutral_emphasis=campaign.neutral_emphasis,
            neutral_headings=campaign.neutral_headings,
        ),
        "answers": answers,
        "decided": position_of(adjudication.winner, adjudication.a_first) if adjudication.winner else "",
        "next_open": next_open(campaign=campaign, after=adjudication),
    }


def next_open(*, campaign: Campaign, after: Adjudication | None = None) -> Adjudication | None:
    """The next item of the campaign still without a final answer (after `after` when given, else the first)."""
    items = Adjudication.objects.filter(campaign=campaign, winner="").order_by("pk")
    if after is not None:
        items = items.exclude(pk=after.pk)
        later = items.filter(pk__gt=after.pk).first()
        if later is not None:
            return later
    return items.first()


def adjudication_queue(*, campaign: Campaign) -> QuerySet[Adjudication]:
    """The campaign's items, open ones first, with their topic and criterion (no judge, no annotator name)."""
    return (
        Adjudication.objects.filter(campaign=campaign)
        .select_related("pair__topic", "criterion")
        .order_by(F("decided_at").asc(nulls_first=True), "pk")
        .defer("reason")
    )


def adjudication_counts(*, campaign: Campaign) -> dict[str, int]:
    """{"open": n, "decided": n} for the campaign page."""
    counts = Adjudication.objects.filter(campaign=campaign).aggregate(total=Count("pk"), decided=Count("pk", filter=~Q(winner="")))
    return {"open": counts["total"] - counts["decided"], "decided": counts["decided"]}


def adjudicating(*, user: User) -> list[dict]:
    """The campaigns the user adjudicates, each with its next open item and the number open."""
    rows = []
    for campaign in Campaign.objects.filter(adjudicators=user).order_by("name"):
        counts = adjudication_counts(campaign=campaign)
        rows.append({"campaign": campaign, "next": next_open(campaign=campaign), **counts})
    return rows


@dataclass(frozen=True)
class AdjudicatedAnswers:
    """The final answers of a campaign's adjudicated items: {(pair id, criterion key): winner by side}."""

    answers: dict[tuple[int, str], str]

    @property
    def n(self) -> int:
        return len(self.answers)


def adjudicated_answers(campaign: Campaign) -> AdjudicatedAnswers:
    """Every adjudicated item of the campaign with its final answer, and how many there are (`n`)."""
    rows = Adjudication.objects.filter(campaign=campaign).exclude(winner="").values_list("pair_id", "criterion__key", "winner")
    return AdjudicatedAnswers({(pair_id, key): winner for pair_id, key, winner in rows})
