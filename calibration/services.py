"""Writes the calibration app starts: sending the items a calibrated cascade of judges abstains on
to humans, as a new campaign (`calibrate_selective --send-to-humans`, the dashboard's cascade panel)."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError

from annotate.models import Campaign
from annotate.services.campaigns import NAME_TAKEN, NAME_TAKEN_CODE, campaign_create_from_pairs
from calibration.cascade import abstained_pair_ids, selective_cascade


@dataclass(frozen=True)
class SentToHumans:
    campaign: Campaign
    n_pairs: int  # pairs sent (at least one item no judge accepts)
    n_candidates: int  # the source campaign's pairs, known-answer pairs aside


def abstained_pairs_send(
    *, campaign: Campaign, name: str, judge_names: list[str], alpha, delta, human_cost=None, out: dict | None = None
) -> SentToHumans:
    """Calibrate the cascade (or take `out`, one `selective_cascade` already computed) and create
    campaign `name` of the pairs it leaves to humans (`calibration.cascade.abstained_pair_ids`).
    ValidationError with the reason: a taken name, bad α/δ, a judge without confidences, no pair."""
    if Campaign.objects.filter(name=name.strip()).exists():
        raise ValidationError(NAME_TAKEN.format(name=name.strip()), code=NAME_TAKEN_CODE)
    if out is None:
        try:
            out = selective_cascade(campaign=campaign, judge_names=judge_names, alpha=alpha, delta=delta, human_cost=human_cost, rounds=0)
        except ValueError as exc:
            raise ValidationError([str(exc)]) from exc
    pair_ids = abstained_pair_ids(campaign=campaign, out=out)
    if not pair_ids:
        raise ValidationError(["The judges accept every item of every pair: no pair to send to humans."])
    created = campaign_create_from_pairs(name=name, source=campaign, pair_ids=pair_ids)
    return SentToHumans(created, len(pair_ids), campaign.pairs.filter(gold__isnull=True).count())
