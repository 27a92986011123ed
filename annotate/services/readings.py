"""A campaign's readings and groups: the items of the rubric's criteria that are not pairwise, made from
the articles of its pairs. A reading is each article alone, for the one-article criteria; a group is k
articles of one topic seen together, for the criteria of k articles (a ranking's, k from 3 to 6).

A rubric may mix pairwise criteria (answered on pairs, as always) with one-article criteria
(checklist, rating, count: `Criterion.response`, answered on one article alone). The campaign's
rubric decides which items its annotators get: pairs when it has pairwise criteria, readings
when it has one-article criteria, groups when it has rankings, and each kind it has. Its pairs are made
either way: they record which articles the campaign holds, and the other items are made from them.
"""

from __future__ import annotations

import math
import random

from django.core.exceptions import ValidationError

from annotate.kinds import rubric_group_size, rubric_kinds
from annotate.models import Campaign, Item, Pair, Reading
from annotate.services.items import groups_save, readings_save


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


def _topic_articles(campaign: Campaign) -> dict[int, list[int]]:
    """Each topic's distinct articles among the campaign's pairs (known-answer pairs aside), by topic in
    the pairs' order."""
    articles: dict[int, list[int]] = {}
    for topic_id, a, b in (
        Pair.objects.filter(campaign=campaign, gold__isnull=True)
        .order_by("order", "id")
        .values_list("topic_id", "article_a_id", "article_b_id")
    ):
        held = articles.setdefault(topic_id, [])
        held += [article for article in (a, b) if article not in held]
    return articles


def groups_of(articles: list[int], k: int, draw: random.Random) -> list[list[int]]:
    """One topic's groups of `k` articles: the articles shuffled and cut into ceil(n / k) groups, the
    last one topped up with articles drawn from the others, so that every article is in a group and
    as few articles as possible are in two; [] when the topic has fewer than `k`."""
    if len(articles) < k:
        return []
    shuffled = list(articles)
    draw.shuffle(shuffled)
    groups = [shuffled[i : i + k] for i in range(0, len(shuffled), k)]
    if len(last := groups[-1]) < k:
        others = [article for article in shuffled if article not in last]
        last += draw.sample(others, k - len(last))
    assert len(groups) == math.ceil(len(articles) / k)
    return groups


def groups_create(*, campaign: Campaign) -> tuple[int, int]:
    """Makes the campaign's groups when its rubric has criteria of k articles (3 to 6): the groups of k
    articles of each topic (`groups_of`), in an order drawn from the operating system's random source;
    returns (groups made, topics left out for having fewer than k articles). A campaign in which no
    topic has k articles is refused (ValidationError: call it in the creating transaction), since its
    rankings could never be answered."""
    k = rubric_group_size(criterion_set_id=campaign.criterion_set_id)
    if k is None:
        return 0, 0
    draw = random.SystemRandom()
    by_topic = _topic_articles(campaign)
    made = [(topic_id, group) for topic_id, articles in by_topic.items() for group in groups_of(articles, k, draw)]
    if not made:
        most = max((len(articles) for articles in by_topic.values()), default=0)
        raise ValidationError(
            f"The rubric ranks {k} articles at a time, but no topic of this campaign has {k} articles "
            f"(the most is {most}): choose at least {k} systems."
        )
    order = list(range(len(made)))
    draw.shuffle(order)
    groups_save([(Item(campaign=campaign, topic_id=topic_id, order=order[i]), group) for i, (topic_id, group) in enumerate(made)])
    left_out = sum(1 for articles in by_topic.values() if len(articles) < k)
    return len(made), left_out
