"""A campaign's readings: each article of its pairs as the item of the rubric's one-article criteria.

A rubric may mix pairwise criteria (answered on pairs, as always) with one-article criteria
(checklist, rating, count: `Criterion.response`, answered on one article alone). The campaign's
rubric decides which items its annotators get: pairs when it has pairwise criteria, readings
when it has one-article criteria, both when it has both. Its pairs are made either way: they
record which articles the campaign holds, and the readings are made from them.
"""

from __future__ import annotations

import random

from annotate.models import Campaign, Item, Pair, Reading
from annotate.services.items import readings_save, rubric_kinds


def readings_create(*, campaign: Campaign) -> int:
    """Makes a reading per distinct article of the campaign's pairs (known-answer pairs aside) when
    its rubric has one-article criteria; returns how many. Called in the campaign's creating
    transaction. The order is drawn like the pairs' (from the operating system's random source),
    so early work covers many topics."""
    if Item.Kind.READING not in rubric_kinds(criterion_set_id=campaign.criterion_set_id):
        return 0
    articles: dict[int, int] = {}  # article -> topic, in the pairs' order
    for topic_id, a, b in (
        Pair.objects.filter(campaign=campaign, gold__isnull=True)
        .order_by("order", "id")
        .values_list("topic_id", "article_a_id", "article_b_id")
    ):
        articles.setdefault(a, topic_id)
        articles.setdefault(b, topic_id)
    order = list(range(len(articles)))
    random.SystemRandom().shuffle(order)
    readings_save(
        [
            Reading(campaign=campaign, topic_id=topic_id, article_a_id=article_id, order=order[i])
            for i, (article_id, topic_id) in enumerate(articles.items())
        ]
    )
    return len(articles)
