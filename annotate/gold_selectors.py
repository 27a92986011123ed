"""Reads about the campaign's known-answer (gold) pairs that the annotate app needs itself (`make_gold`
prints them) and the calibration app shows: how separable each kind is by its text, and so which
kinds may drive the pause rule (`annotate.gold_separability` computes; this module reads the texts)."""

from __future__ import annotations

from django.core.cache import cache
from django.db.models import Max

from annotate.gold_separability import Separability, overlap, separability, word_ngrams
from annotate.models import Article, Campaign, GoldPair, Pair

SEPARABILITY_CACHE_SECONDS = 3600


def gold_separability(*, campaign: Campaign) -> list[Separability]:
    """Per kind of gold pair (its degradation), how well word 5-gram overlap sets it apart from the
    campaign's other pairs (`annotate.gold_separability`), with n. Cached while the pairs stay the same."""
    pairs = Pair.objects.filter(campaign=campaign)
    stamp = (pairs.count(), pairs.aggregate(m=Max("pk"))["m"], GoldPair.objects.filter(pair__campaign=campaign).count())
    key = f"gold-separability:{campaign.pk}:{':'.join(map(str, stamp))}"
    found = cache.get(key)
    if found is not None:
        return found
    texts = dict(Article.objects.filter(pk__in=pairs.values("article_a")).values_list("pk", "display_markdown"))
    texts.update(Article.objects.filter(pk__in=pairs.values("article_b")).values_list("pk", "display_markdown"))
    grams = {pk: word_ngrams(text or "") for pk, text in texts.items()}
    gold_kind = dict(GoldPair.objects.filter(pair__campaign=campaign).values_list("pair_id", "degradation"))
    by_kind: dict[str, list[float]] = {}
    other: list[float] = []
    for pair_id, a, b in pairs.values_list("pk", "article_a_id", "article_b_id"):
        score = overlap(grams[a], grams[b])
        if pair_id in gold_kind:
            by_kind.setdefault(gold_kind[pair_id], []).append(score)
        else:
            other.append(score)
    found = [separability(kind, scores, other) for kind, scores in sorted(by_kind.items())]
    cache.set(key, found, SEPARABILITY_CACHE_SECONDS)
    return found


def pause_kinds(*, campaign: Campaign) -> set[str] | None:
    """The kinds of gold pair that may drive the pause rule: those the text does not set apart, or
    every kind (None) when the campaign accepts separable kinds explicitly."""
    if campaign.gold_accept_separable:
        return None
    return {s.kind for s in gold_separability(campaign=campaign) if not s.separable}
