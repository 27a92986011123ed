"""The report's `design` section: how the human-labelled pairs were drawn, what the labels are worth,
and the most a judge could make them worth. Present only for actively sampled campaigns (a uniform
campaign's report is unchanged).

For each judge: the labelled pairs, the effective sample size (how many uniformly drawn human labels
its prediction-powered win rates are worth: the median over systems, from `report_ppi`), the
judge-human correlation rho on the labelled items (each weighted 1 / its pair's inclusion
probability), and the ceiling 1 / (1 - rho^2) that rho puts on the uniform design's gain. rho's 95%
CI is Fisher's, with the pairs counted as Kish's effective number (sum w)^2 / sum w^2 (pairs, not
items: the criteria of one pair are correlated); the ceiling's CI is the ceiling over that interval.
"""

from __future__ import annotations

import math

import numpy as np

from calibration import metrics as M
from calibration.metrics import powered
from calibration.metrics.active import ess_ceiling, judge_human_correlation, unequal_inclusion
from calibration.metrics.ppi import Z95

METHOD = (
    "Active sampling: each pair not in the burn-in got an inclusion probability pi from the judges' predicted "
    "disagreement with the humans (mixed with a uniform share), and one random draw admitted it to the human queue "
    "(both stored when it entered). Estimates weight each human label by 1 / pi (inverse-probability weighting; "
    "PPI++ with the power-tuned lam for the prediction-powered win rates), so that they stay unbiased for all the "
    "pairs; a pair labelled without a draw (a calibration pair) counts with pi = 1, a pair not drawn yet is left out. "
    "With every pi equal the estimates take their uniform forms."
)
WEIGHTED = (
    "weighted by 1 / pi: PAR (and its no-ties, majority and per-category and per-criterion forms), the prediction-powered "
    "win rates and Bradley-Terry scores, the humans' Bradley-Terry scores, the alt-test (its means of W_f, W_h and W_h - W_f, "
    "its t-tests and rho); not yet weighted: Cohen's kappa, the paired differences between judges, the humans' plain win rates "
    "and the sensitivity section's figures under other references"
)


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def correlation_interval(rho: float | None, pair_weights: np.ndarray) -> tuple[float | None, float | None]:
    """Fisher's 95% interval of a correlation from pairs weighted ``pair_weights`` (Kish's n)."""
    if rho is None or len(pair_weights) == 0:
        return None, None
    kish = float(pair_weights.sum()) ** 2 / float(pair_weights @ pair_weights)
    if kish <= 3 or abs(rho) >= 1:
        return None, None
    z, half = math.atanh(rho), Z95 / math.sqrt(kish - 3)
    return math.tanh(z - half), math.tanh(z + half)


def ceiling_interval(lo: float | None, hi: float | None) -> tuple[float | None, float | None]:
    """The ceiling 1 / (1 - rho^2) over a CI of rho: it grows with |rho|."""
    if lo is None or hi is None:
        return None, None
    smallest = 0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))
    return ess_ceiling(smallest), ess_ceiling(max(abs(lo), abs(hi)))


def judge_design(humans: M.LabelTable, merged: M.LabelTable, inclusion: dict[str, float] | None, n_effective) -> dict:
    out = {"n_labelled_pairs": 0, "n_labelled_items": 0, "n_effective": n_effective, "rho": None, "rho_ci": None}
    out.update(ceiling=None, ceiling_ci=None)
    if not len(merged) or not len(humans):
        return out
    items = powered.build_items(humans, merged, inclusion if inclusion is not None else {})
    lab = items.labelled
    out["n_labelled_pairs"], out["n_labelled_items"] = items.n_labelled_pairs, items.n_labelled
    if lab.sum() < 2:
        return out
    pi = items.pi[lab]
    rho = judge_human_correlation(items.y[lab], items.yhat[lab], pi)
    codes, first = np.unique(items.cluster[lab], return_index=True)
    lo, hi = correlation_interval(rho, 1.0 / pi[first])
    c_lo, c_hi = ceiling_interval(lo, hi)
    out["rho"] = _r(rho)
    out["rho_ci"] = None if lo is None else [_r(lo), _r(hi)]
    out["ceiling"] = None if rho is None else _r(ess_ceiling(rho), 3)
    out["ceiling_ci"] = None if c_lo is None else [_r(c_lo, 3), _r(c_hi, 3)]
    return out


def section(
    sampling: str, inclusion: dict[str, float] | None, humans: M.LabelTable, merged_by_judge: dict[str, M.LabelTable], ppi_section: dict
) -> dict | None:
    """The `design` section (None for a uniform campaign: its report has no such key)."""
    if sampling != "active":
        return None
    stored = np.fromiter((inclusion or {}).values(), dtype=np.float64)
    weighted = unequal_inclusion(inclusion) is not None
    judges = {
        name: judge_design(humans, merged, inclusion, ppi_section["judges"].get(name, {}).get("n_effective"))
        for name, merged in merged_by_judge.items()
    }
    return {
        "sampling": "active",
        "weighted": weighted,
        "method": METHOD,
        "weighted_figures": WEIGHTED if weighted else "none: every stored inclusion probability is equal (the uniform forms)",
        "n_pairs_drawn": int(stored.size),
        "probability_min": _r(float(stored.min())) if stored.size else None,
        "probability_max": _r(float(stored.max())) if stored.size else None,
        "n_labelled_pairs": int(np.unique(humans.pair).size) if len(humans) else 0,
        "ceiling_rule": "1 / (1 - rho^2): the most a judge with correlation rho can multiply the uniform design's human labels by",
        "confidence_level": 0.95,
        "judges": judges,
    }


def with_design(report: dict, sampling: str, inclusion, humans: M.LabelTable, merged_by_judge: dict[str, M.LabelTable]) -> dict:
    """The report with its `design` section when the campaign samples actively, else as it is."""
    design = section(sampling, inclusion, humans, merged_by_judge, report["prediction_powered"])
    return report if design is None else {**report, "design": design}


def notes(sampling: str, inclusion: dict[str, float] | None) -> list[str]:
    """The report's note on the design: none for a uniform campaign."""
    if sampling != "active":
        return []
    if unequal_inclusion(inclusion) is None:
        return [
            "This campaign draws pairs for human labels by active sampling, and every inclusion probability stored so far is "
            "equal (or none is stored yet): the estimates take their uniform forms (the design section states the design)."
        ]
    return [
        "This campaign admits pairs for human labels with unequal probabilities (active sampling): the estimates are "
        f"{WEIGHTED} (the design section states the design, the effective sample size and the ceiling)."
    ]
