"""Reads for the blindness audit: a campaign's displayed articles, each once, and the report on them."""

from __future__ import annotations

from django.db.models import Q

from annotate.blindness import BlindnessReport, Sample, blindness_report
from annotate.models import Article, Campaign, Pair


def campaign_blindness_samples(*, campaign: Campaign) -> list[Sample]:
    """Every article of the campaign's pairs, once however many pairs show it, in a fixed order.

    The reference is the campaign's reference system, or any system marked as a reference.
    """
    pairs = Pair.objects.filter(campaign=campaign)
    rows = (
        Article.objects.filter(
            Q(pk__in=pairs.values("article_a")) | Q(pk__in=pairs.values("article_b"))
        )
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


def campaign_blindness(*, campaign: Campaign, seed: int = 0) -> BlindnessReport:
    return blindness_report(campaign_blindness_samples(campaign=campaign), seed=seed)
