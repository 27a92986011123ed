"""Flagged pairs as staff see them on the campaign page (issue 37; `annotate.services.flags`)."""

from __future__ import annotations

from annotate.models import Campaign, PairFlag

VOIDED_PAIR = "Staff voided this pair (a problem with its articles); it no longer needs your answers. Open your queue for the next one."


def campaign_flags(*, campaign: Campaign, limit: int = 200) -> list[dict]:
    """The campaign's flagged pairs for staff, most recently flagged first: each pair (voided or
    not) with its flags, who flagged it, why and when; at most `limit` flags."""
    flags = list(
        PairFlag.objects.filter(pair__campaign=campaign)
        .select_related("pair__topic", "pair__article_a__system", "pair__article_b__system", "pair__voided_by", "assignment__annotator")
        .only(
            "reason",
            "note",
            "flagged_at",
            "pair__id",
            "pair__voided_at",
            "pair__void_reason",
            "pair__voided_by__username",
            "pair__topic__title",
            "pair__article_a__system__key",
            "pair__article_b__system__key",
            "assignment__annotator__username",
        )
        .order_by("-flagged_at")[:limit]
    )
    pairs: dict[int, dict] = {}
    for flag in flags:
        pairs.setdefault(flag.pair.pk, {"pair": flag.pair, "flags": []})["flags"].append(flag)
    return list(pairs.values())
