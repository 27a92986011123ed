"""A campaign's readings: each article of its pairs as the item of the rubric's one-article criteria.

A rubric may mix pairwise criteria (answered on pairs, as always) with one-article criteria
(checklist, rating, count: `Criterion.response`, answered on one article alone). The campaign's
rubric decides which items its annotators get: pairs when it has pairwise criteria, readings
when it has one-article criteria, both when it has both. Its pairs are made either way: they
record which articles the campaign holds, and the readings are made from them.
"""

from __future__ import annotations

import random

from annotate.answers import one_article
from annotate.models import Campaign, Criterion, Pair, Reading
from annotate.services.items import readings_save


def rubric_kinds(*, criterion_set_id: int | None) -> tuple[bool, bool]:
    """(has pairwise criteria, has one-article criteria) of a rubric."""
    responses = list(Criterion.objects.filter(criterion_set_id=criterion_set_id).values_list("response", flat=True))
    single = [one_article(response) for response in responses]
    return (not all(single), any(single))


def campaign_kinds(campaign: Campaign) -> tuple[bool, bool]:
    """`rubric_kinds` of the campaign's rubric, read once per campaign object: a rubric's rows are
    never edited, and a claim asks several times (it must stay as quick as a pairwise claim)."""
    if not hasattr(campaign, "_rubric_kinds"):
        campaign._rubric_kinds = rubric_kinds(criterion_set_id=campaign.criterion_set_id)
    return campaign._rubric_kinds


def readings_create(*, campaign: Campaign) -> int:
    """Makes a reading per distinct article of the campaign's pairs (known-answer pairs aside) when
    its rubric has one-article criteria; returns how many. Called in the campaign's creating
    transaction. The order is drawn like the pairs' (from the operating system's random source),
    so early work covers many topics."""
    _, single = rubric_kinds(criterion_set_id=campaign.criterion_set_id)
    if not single:
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
