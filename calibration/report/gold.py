"""The report's `gold` section: every rater's accuracy on the campaign's known-answer pairs.

Present only for a campaign with gold pairs (`make_gold`). The figures are the gold page's
(`calibration.gold.gold_scores`, scored by `calibration.metrics.quality.gold_accuracy`); the
judge-vs-human figures of the rest of the report still leave these pairs out.
"""

from __future__ import annotations

from annotate.models import Campaign, GoldPair
from calibration.gold import gold_scores

RULE = (
    "the share of a rater's answers on the criteria a gold pair's damage targets that name the original "
    "(a tie is wrong), with a 95% Wilson interval clustered by pair; n: answers, n_pairs: gold pairs; "
    "the other criteria of a gold pair are not scored"
)


def _estimate(estimate) -> dict:
    return {"value": estimate.value, "ci": [estimate.ci_low, estimate.ci_high], "n": estimate.n, "n_pairs": estimate.n_pairs}


def wanted(campaign: Campaign) -> bool:
    return GoldPair.objects.filter(pair__campaign=campaign).exists()


def section(campaign: Campaign) -> dict:
    """`{n_gold_pairs, rule, raters}`; each rater `{rater, rater_kind, accuracy, n_ties, by_kind}`
    (humans as `human:<username>`, judges by name), humans first, then by name."""
    scores = sorted(gold_scores(campaign=campaign), key=lambda s: (s.rater_kind != "human", s.rater))
    return {
        "n_gold_pairs": GoldPair.objects.filter(pair__campaign=campaign).count(),
        "rule": RULE,
        "raters": [
            {
                "rater": score.rater,
                "rater_kind": score.rater_kind,
                "accuracy": _estimate(score.accuracy),
                "n_ties": score.n_ties,
                "by_kind": {kind: _estimate(estimate) for kind, estimate in sorted(score.by_kind.items())},
            }
            for score in scores
        ],
    }
