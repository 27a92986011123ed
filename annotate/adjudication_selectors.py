"""Adjudication's reads: who may open an item, what its page shows, the queue, and the adjudicated answers.

The page shows both articles by position, as the annotation page does, and the annotators' answers
under pseudonyms ("Annotator 1", ... in the order they claimed the pair). Nothing here reads judges:
an adjudicator must decide from the texts and the humans' reasons alone.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, Q, QuerySet
from django.http import Http404

from annotate.models import Adjudication, Assignment, Campaign, Label
from annotate.selectors import article_columns, shown_articles
from protocols.pairwise import position_of

NOT_ADJUDICATOR = "You do not adjudicate this campaign."
NOT_YOUR_TOPIC = "This campaign splits adjudication by topic: this item is another adjudicator's."


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
    if (
        adjudication.campaign.adjudication_by_topic
        and not adjudicator_items(adjudication.campaign, user).filter(pk=adjudication.pk).exists()
    ):
        raise PermissionDenied(NOT_YOUR_TOPIC)
    return adjudication


@dataclass(frozen=True)
class ShownAnswer:
    annotator: str  # a pseudonym
    position: str  # "1", "2" or "tie", in the adjudicator's order
    rationale: str


def adjudication_page(*, adjudication: Adjudication, user: User) -> dict:
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
        "next_open": next_open(campaign=campaign, user=user, after=adjudication),
    }


# --- scheduling: which item an adjudicator gets next ----------------------------------------
#
# Adjudication is as blind as annotation (README "Adjudication"): an adjudicator who meets two pairs
# of one topic sees the article they share, and in a campaign against the reference that article is
# the reference. So, as for annotators, an item on a topic the adjudicator already met (decided an
# item of) comes only when nothing else is left; items come in an order drawn for each adjudicator,
# from a key the server holds (SECRET_KEY), never in pair order; and a campaign may split its topics
# a topic's pairs among its adjudicators (`Campaign.adjudication_by_topic`), so that no one meets two pairs of a topic.


def _draw(*parts: object) -> str:
    """A stable, secret draw: the same for one campaign and adjudicator, unknown without SECRET_KEY."""
    return hmac.new(settings.SECRET_KEY.encode(), ":".join(map(str, parts)).encode(), hashlib.sha256).hexdigest()


def pair_adjudicators(campaign: Campaign) -> dict[int, int]:
    """{pair id: adjudicator id} when the campaign splits adjudication by topic: each topic's pairs, in
    a drawn order, are dealt to its adjudicators (by id) from a drawn starting point, so that one
    adjudicator meets a topic once while the campaign has as many adjudicators as the topic has pairs.
    Every item of a pair goes to one adjudicator: its criteria show the same two articles."""
    people = sorted(campaign.adjudicators.filter(is_active=True).values_list("pk", flat=True))
    if not people:
        return {}
    by_topic: dict[int, set[int]] = {}
    for pair_id, topic_id in Adjudication.objects.filter(campaign=campaign).values_list("pair_id", "pair__topic_id"):
        by_topic.setdefault(topic_id, set()).add(pair_id)
    dealt = {}
    for topic_id, pairs in by_topic.items():
        start = int(_draw("topic", campaign.pk, topic_id), 16) % len(people)
        for rank, pair_id in enumerate(sorted(pairs, key=lambda pair: _draw("pair", campaign.pk, pair))):
            dealt[pair_id] = people[(start + rank) % len(people)]
    return dealt


def adjudicator_items(campaign: Campaign, user: User) -> QuerySet[Adjudication]:
    """The items this adjudicator may be given: all of the campaign's, or their share when it splits by topic."""
    items = Adjudication.objects.filter(campaign=campaign)
    if campaign.adjudication_by_topic:
        mine = [pair for pair, person in pair_adjudicators(campaign).items() if person == user.pk]
        items = items.filter(pair_id__in=mine)
    return items


def next_open(*, campaign: Campaign, user: User, after: Adjudication | None = None) -> Adjudication | None:
    """The next open item for this adjudicator: in their drawn order, on a topic they have not met
    (decided an item of, or `after`'s) while one is left; else the first in their order."""
    open_items = list(adjudicator_items(campaign, user).filter(winner="").values_list("pk", "pair__topic_id"))
    if after is not None:
        open_items = [(pk, topic) for pk, topic in open_items if pk != after.pk]
    if not open_items:
        return None
    met = set(Adjudication.objects.filter(campaign=campaign, decided_by=user).values_list("pair__topic_id", flat=True))
    if after is not None:
        met.add(after.pair.topic_id)
    ordered = sorted(open_items, key=lambda item: _draw("order", campaign.pk, user.pk, item[0]))
    fresh = [pk for pk, topic in ordered if topic not in met]
    return Adjudication.objects.get(pk=(fresh or [ordered[0][0]])[0])


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
        rows.append({"campaign": campaign, "next": next_open(campaign=campaign, user=user), **counts})
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
