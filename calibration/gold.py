"""Known-answer (gold) pairs, read for scoring: every rater's gold accuracy, annotators and judges
alike, by the one function of `calibration.metrics.quality`, and the optional pause rule.

The labels are the campaign's answers on its gold pairs only (`selectors.calibration_table` with
`gold=True`: the report leaves those pairs out of every judge-vs-human figure), and the expected
answers are the `GoldPair` records: per targeted criterion, the system that must win (the original's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.contrib.auth.models import User

from annotate.gold_selectors import pause_kinds
from annotate.models import Assignment, Campaign, GoldPair, GoldPauseLift
from calibration import selectors
from calibration.metrics import LabelTable
from calibration.metrics.quality import GoldAccuracy, gold_accuracy, gold_pause_due
from protocols.pairwise import system_of


@dataclass(frozen=True)
class GoldInputs:
    """What `quality.gold_accuracy` reads: the answers on gold pairs, the expected winners by
    (pair, criterion) and each pair's degradation."""

    table: LabelTable
    expected: dict[tuple[str, str], str]
    kinds: dict[str, str]
    n_pairs: int


def gold_inputs(*, campaign: Campaign, user: User | None = None) -> GoldInputs:
    """The campaign's gold answers (submitted work). `user`: that annotator's only, no judge, and only
    those submitted after staff last lifted their pause (`GoldPauseLift`)."""
    table = selectors.calibration_table(campaign=campaign, gold=True)
    if user is not None:
        table = table.for_rater(selectors.HUMAN_PREFIX + user.username)
        lift = GoldPauseLift.objects.filter(campaign=campaign, annotator=user).order_by("-lifted_at", "-id").first()
        if lift is not None:
            after = {
                str(pair_id)
                for pair_id in Assignment.objects.filter(
                    pair__campaign=campaign, annotator=user, submitted_at__gt=lift.lifted_at
                ).values_list("pair_id", flat=True)
            }
            names = np.array([name in after for name in table.vocab.pairs], dtype=bool)
            table = table.select(names[table.pair] if len(names) else np.zeros(len(table), dtype=bool))
    expected, kinds = {}, {}
    rows = GoldPair.objects.filter(pair__campaign=campaign).values_list(
        "pair_id", "degradation", "expected", "pair__article_a__system__key", "pair__article_b__system__key"
    )
    for pair_id, degradation, winners, key_a, key_b in rows:
        kinds[str(pair_id)] = degradation
        for criterion, side in winners.items():
            expected[(str(pair_id), criterion)] = system_of(side, key_a, key_b)
    return GoldInputs(table, expected, kinds, len(kinds))


def gold_scores(*, campaign: Campaign) -> list[GoldAccuracy]:
    """Every rater's accuracy on the campaign's gold pairs (humans as ``human:<username>``, judges by
    name), with the clustered 95% CI and n; raters without a scored answer are left out."""
    inputs = gold_inputs(campaign=campaign)
    return gold_accuracy(inputs.table, inputs.expected, kinds=inputs.kinds)


def gold_pause_reason(*, campaign: Campaign, user: User) -> str | None:
    """The campaign's pause rule for one annotator (`quality.gold_pause_due`), or None: off unless
    `gold_pause_below` is set; it needs `gold_pause_after` submitted gold pairs (after the last lift
    by staff, `annotate.services.gold.gold_pause_lift`). Applied at
    every claim through hook ``claim_gates`` (`calibration.hooks.gold_pause_gate`, settings.HOOKS)."""
    if campaign.gold_pause_below is None:
        return None
    inputs = gold_inputs(campaign=campaign, user=user)
    allowed = pause_kinds(campaign=campaign)
    if allowed is not None:
        # A kind an annotator can spot by its text says nothing of how they answer the rest.
        expected = {item: winner for item, winner in inputs.expected.items() if inputs.kinds.get(item[0]) in allowed}
        inputs = GoldInputs(inputs.table, expected, inputs.kinds, inputs.n_pairs)
        if not expected:
            return None
    scores = gold_accuracy(inputs.table, inputs.expected, kinds=inputs.kinds)
    if not scores:
        return None
    return gold_pause_due(scores[0], threshold=campaign.gold_pause_below, after_pairs=max(1, campaign.gold_pause_after))


def paused_usernames(*, campaign: Campaign) -> list[str]:
    """The annotators whose new claims the pause rule stops now (none when the rule is off)."""
    if campaign.gold_pause_below is None:
        return []
    users = User.objects.filter(pk__in=Assignment.objects.filter(pair__campaign=campaign, pair__gold__isnull=False).values("annotator_id"))
    return [u.username for u in users.order_by("username") if gold_pause_reason(campaign=campaign, user=u)]
