"""The blindness audit, the adjudicator's view: how many adjudication items could give the reference away.

An adjudicator who meets two pairs of one topic sees the article they share; against the reference,
that article is the reference. Kept apart from the annotators' audit (`blindness.py`, on the
articles' looks): this one reads who is given which item (`adjudication_selectors`).

Two figures, each with its n (items: a pair and a criterion):
- `scheduled`: the items whose adjudicator could meet another pair of the item's topic sharing one
  of its articles, as the campaign hands items out: when adjudication is shared, anyone may be given
  every pair of a topic; when it is split by topic, only the pairs dealt to the same adjudicator count;
- `decided`: the decided items whose adjudicator did decide an item of another pair of the topic
  sharing an article, and of those, how many shared the reference (`named_reference`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from annotate.adjudication_selectors import pair_adjudicators
from annotate.models import Adjudication, Campaign


@dataclass(frozen=True)
class AdjudicatorExposure:
    n_items: int  # items in the queue
    n_scheduled_exposed: int
    n_decided: int
    n_decided_exposed: int
    n_named_reference: int  # exposed decided items whose shared article is the reference
    by_topic: bool

    @staticmethod
    def share(part: int, whole: int) -> str:
        return f"{part / whole:.0%} ({part} of {whole})" if whole else "no item"

    @property
    def scheduled_text(self) -> str:
        return self.share(self.n_scheduled_exposed, self.n_items)

    @property
    def decided_text(self) -> str:
        return self.share(self.n_decided_exposed, self.n_decided)

    def as_dict(self) -> dict:
        return {
            "n_items": self.n_items,
            "n_scheduled_exposed": self.n_scheduled_exposed,
            "n_decided": self.n_decided,
            "n_decided_exposed": self.n_decided_exposed,
            "n_named_reference": self.n_named_reference,
            "split_by_topic": self.by_topic,
        }

    def markdown(self) -> str:
        return (
            "\n## The adjudicator's view\n\n"
            f"- Items whose adjudicator could infer the reference from shared text, as items are handed out: "
            f"{self.scheduled_text} (n = {self.n_items} items; split by topic: {'yes' if self.by_topic else 'no'})\n"
            f"- Decided items whose adjudicator met another pair of the topic sharing an article: {self.decided_text}, "
            f"the reference named on {self.n_named_reference} (n = {self.n_decided} decided items)\n"
        )


def _shares_an_article(pairs: dict[int, tuple[int, int]], pair_id: int, others: set[int]) -> set[int]:
    """The articles `pair_id` shares with the other pairs."""
    mine = set(pairs[pair_id])
    return {article for other in others if other != pair_id for article in mine & set(pairs[other])}


def adjudicator_exposure(*, campaign: Campaign) -> AdjudicatorExposure:
    found = Adjudication.objects.filter(campaign=campaign).values_list(
        "pair_id", "pair__topic_id", "pair__article_a_id", "pair__article_b_id", "decided_by_id",
        "pair__article_a__system_id", "pair__article_b__system_id",
    )  # fmt: skip
    rows, reference = [], set()
    for pair_id, topic, a, b, person, system_a, system_b in found:
        rows.append((pair_id, topic, a, b, person))
        reference |= {article for article, system in ((a, system_a), (b, system_b)) if system == campaign.reference_system_id}
    pairs = {pair_id: (a, b) for pair_id, _, a, b, _ in rows}
    topic_of = {pair_id: topic for pair_id, topic, *_ in rows}
    # Scheduled: who could be given which pairs of a topic.
    dealt = pair_adjudicators(campaign) if campaign.adjudication_by_topic else None
    reachable: dict[tuple[int | None, int], set[int]] = defaultdict(set)
    for pair_id in pairs:
        holder = dealt.get(pair_id) if dealt is not None else None
        reachable[(holder, topic_of[pair_id])].add(pair_id)
    scheduled = 0
    for pair_id, *_ in rows:
        holder = dealt.get(pair_id) if dealt is not None else None
        scheduled += bool(_shares_an_article(pairs, pair_id, reachable[(holder, topic_of[pair_id])]))
    # Decided: what each adjudicator actually met.
    met: dict[tuple[int, int], set[int]] = defaultdict(set)
    for pair_id, topic, _, _, person in rows:
        if person is not None:
            met[(person, topic)].add(pair_id)
    decided = exposed = named = 0
    for pair_id, topic, _, _, person in rows:
        if person is None:
            continue
        decided += 1
        shared = _shares_an_article(pairs, pair_id, met[(person, topic)])
        exposed += bool(shared)
        named += bool(shared & reference)
    return AdjudicatorExposure(len(rows), scheduled, decided, exposed, named, campaign.adjudication_by_topic)
