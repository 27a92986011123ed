"""Reads for the blindness audit: a campaign's displayed articles, each once, and the report on them."""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from django.db.models import Q

from annotate.blindness import BlindnessReport, Sample, blindness_report, launch_warning
from annotate.models import Article, Assignment, Campaign, Pair

# The launch warning is kept while the campaign's articles and its emphasis option stay the same.
WARNING_CACHE_SECONDS = 3600


def _campaign_articles(campaign: Campaign):
    pairs = Pair.objects.filter(campaign=campaign)
    return Article.objects.filter(Q(pk__in=pairs.values("article_a")) | Q(pk__in=pairs.values("article_b")))


def campaign_blindness_samples(*, campaign: Campaign) -> list[Sample]:
    """Every article of the campaign's pairs, once however many pairs show it, in a fixed order.

    The reference is the campaign's reference system, or any system marked as a reference.
    """
    rows = (
        _campaign_articles(campaign)
        .order_by("topic_id", "system__key")
        .values_list(
            "topic_id",
            "system_id",
            "system__key",
            "system__is_reference",
            "display_markdown",
        )
    )
    return [
        Sample(
            topic=str(topic_id),
            system=key,
            is_reference=is_reference or system_id == campaign.reference_system_id,
            markdown=markdown,
        )
        for topic_id, system_id, key, is_reference, markdown in rows
    ]


def campaign_blindness(*, campaign: Campaign, seed: int = 0, per_system: bool = True) -> BlindnessReport:
    """The audit as the campaign shows its articles (its neutral emphasis and headings options), with guessability
    under each presentation."""
    return blindness_report(
        campaign_blindness_samples(campaign=campaign),
        seed=seed,
        neutral_emphasis=campaign.neutral_emphasis,
        neutral_headings=campaign.neutral_headings,
        per_system=per_system,
    )


def campaign_launch_warning(*, campaign: Campaign, launched: bool | None = None) -> str:
    """Before launch (no pair claimed yet), the warning when the reference can be told by its looks, or "".

    `launched`: whether a pair has been claimed, when the caller knows (else one query finds out).
    The overall audit takes about a second on the sample's 140 articles, so it is cached per
    campaign while its articles (by content) and its emphasis option stay the same.
    """
    if launched is None:
        launched = Assignment.objects.filter(pair__campaign=campaign).exists()
    if campaign.labels_only or launched:
        return ""
    stamp = sorted(_campaign_articles(campaign).values_list("pk", "content_hash"))
    raw = repr((campaign.pk, campaign.reference_system_id, campaign.neutral_emphasis, campaign.neutral_headings, stamp))
    key = "blindness-warning:" + hashlib.sha256(raw.encode()).hexdigest()
    warning = cache.get(key)
    if warning is None:
        warning = launch_warning(campaign_blindness(campaign=campaign, per_system=False))
        cache.set(key, warning, WARNING_CACHE_SECONDS)
    return warning
