"""The label planner's (e): uniform against active sampling for the target half-width, in pairs and in
money (issue 27 item 3).

The uniform design's pairs are (c)'s: the labelled pairs the judge's prediction-powered win rates
need. The active design draws pair i with a probability proportional to its share q_i
(`metrics.active.inclusion_probabilities`: sqrt of the predicted squared judge-human error e_i,
mixed with the campaign's uniform share). Its correction term's variance at n expected labels is
sum_i e_i / (n q_i) against N sum_i e_i / n for the uniform design, so it reaches the same
half-width with

    n_active = n_uniform * R,   R = sum_i (e_i / q_i) / (N sum_i e_i)  (<= 1 when u = 0; 1 when every e_i is equal)

pairs. Each active label is worth 1 / R uniform ones: the design's promise. Beside it stands the
ceiling 1 / (1 - rho^2) (`metrics.active.ess_ceiling`) for the judge's observed correlation rho with
the humans: the most its verdicts can multiply uniformly drawn human labels by. Money: the human
labels (pairs x the campaign's human cost per pair) plus the judge's verdicts on every pair of the
campaign (both designs need them all; `metrics.active.design_cost`). A cost nobody recorded is
unknown, never 0.

Pure: no Django.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from calibration import metrics as M
from calibration.metrics.active import design_cost, ess_ceiling, inclusion_probabilities, judge_human_correlation

COST_UNKNOWN = "cost unknown"
ASSUMPTION = (
    "The active design draws each pair with a probability growing with the judge's predicted squared error (the sampler's "
    "error model, fitted on the labelled pairs: position-swap disagreement, disagreement between judges, confidence, length "
    "difference), mixed with the campaign's uniform share; the predictions hold for the pairs not yet labelled, and the whole "
    "sample is drawn with the design (pairs already labelled count as drawn with it). It needs the pairs of (c) times the "
    "variance ratio R; the cap of a probability at 1 is ignored, which matters only when the pairs needed near the campaign's. "
    "Money: human labels at the campaign's human cost per pair, plus the judge's verdicts on every pair (its cost per judged "
    "pair so far), in both designs."
)
VALUES = {M.LO_WINS: 1.0, M.HI_WINS: -1.0, M.TIED: 0.0}


@dataclass(frozen=True)
class DesignInputs:
    """What (e) needs beyond the labels: the error model's prediction per pair (None: no model yet,
    `note` says why), the campaign's uniform share and human cost per pair, each judge's cost so far."""

    predicted_error: np.ndarray | None = None
    note: str = "No error model: the planner was given no prediction of the judges' error."
    uniform_share: float = 0.2
    human_cost: float | None = None
    judge_cost_usd: dict[str, float | None] = field(default_factory=dict)


def variance_ratio(predicted_error, uniform_share: float) -> float | None:
    """R of the module docstring; None when every predicted error is 0 (nothing to weigh by)."""
    e = np.asarray(predicted_error, dtype=np.float64).ravel()
    if len(e) < 2 or not e.sum() > 0:
        return None
    q = inclusion_probabilities(e, 1.0, uniform_share=uniform_share)  # one expected label: the shares, summing to 1
    return float((e / q).sum() / (len(e) * e.sum()))


def pair_values(table: M.LabelTable) -> dict[int, float]:
    """Per pair, the mean of a rater's answers over its items (first system of the pair winning 1, the second -1, tie 0)."""
    if not len(table):
        return {}
    values = np.vectorize(VALUES.get, otypes=[float])(table.outcome)
    pairs, codes = np.unique(table.pair, return_inverse=True)
    means = np.bincount(codes, weights=values) / np.bincount(codes)
    return {int(p): float(m) for p, m in zip(pairs, means)}


def judge_correlation(humans: M.LabelTable, merged: M.LabelTable) -> float | None:
    """rho: the correlation of the humans' and the judge's pair values on the pairs both labelled."""
    h, j = pair_values(humans), pair_values(merged)
    common = sorted(set(h) & set(j))
    if len(common) < 2:
        return None
    return judge_human_correlation([h[p] for p in common], [j[p] for p in common])


def _money(pairs: int | None, n_pairs: int, human_cost: float | None, judge_cost: float | None) -> float | None:
    if pairs is None or human_cost is None or judge_cost is None:
        return None
    share = min(pairs, n_pairs) / n_pairs if n_pairs else 0.0
    return round(design_cost(np.full(n_pairs, share), human_cost=human_cost, judge_cost=judge_cost), 2)


def _per_pair(cost: float | None, merged: M.LabelTable) -> float | None:
    """What one judged pair cost the judge so far (None: unknown, or nothing judged)."""
    judged = int(np.unique(merged.pair).size) if len(merged) else 0
    return None if cost is None or not judged else round(cost / judged, 8)


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def design_section(
    scores: list[dict],
    humans: M.LabelTable,
    merged: dict[str, M.LabelTable],
    given: DesignInputs,
    *,
    n_pairs: int,
    n_labelled_pairs: int,
) -> dict:
    """(e): one row per judge of (c): the pairs and money of each design, the promise and the ceiling.
    `merged`: each judge's verdicts (both orders merged), for rho and its cost per judged pair."""
    predicted_error, uniform_share, human_cost = given.predicted_error, given.uniform_share, given.human_cost
    ratio = None if predicted_error is None else variance_ratio(predicted_error, uniform_share)
    note = given.note
    if predicted_error is not None and ratio is None:
        note = "The error model predicts no judge error anywhere: nothing for the active design to weigh by."
    rows = []
    for entry in scores:
        name = entry["judge"]
        uniform = entry["pairs_needed"]
        active = None if uniform is None or ratio is None else max(math.ceil(uniform * ratio - 1e-9), 1)
        c = judge_correlation(humans, merged[name]) if len(humans) and len(merged[name]) else None
        judge_cost = _per_pair(given.judge_cost_usd.get(name), merged[name])
        money = {k: _money(v, n_pairs, human_cost, judge_cost) for k, v in (("uniform", uniform), ("active", active))}
        unknown = [w for w, v in (("the human cost per pair", human_cost), (f"{name}'s cost per pair", judge_cost)) if v is None]
        rows.append(
            {
                "judge": name,
                "uniform_pairs": uniform,
                "uniform_more_pairs": None if uniform is None else max(uniform - n_labelled_pairs, 0),
                "active_pairs": active,
                "active_more_pairs": None if active is None else max(active - n_labelled_pairs, 0),
                "uniform_cost_usd": money["uniform"],
                "active_cost_usd": money["active"],
                "cost_note": f"{COST_UNKNOWN}: {' and '.join(unknown)} not known" if unknown else None,
                "judge_cost_per_pair_usd": judge_cost,
                "promise": _r(1 / ratio) if ratio else None,
                "rho": _r(c),
                "ceiling": None if c is None else _r(ess_ceiling(c)),
                "reachable": entry["reachable"],
            }
        )
    return {
        "variance_ratio": _r(ratio, 4),
        "uniform_share": uniform_share,
        "human_cost_per_pair_usd": human_cost,
        "n_pairs_predicted": 0 if predicted_error is None else int(np.asarray(predicted_error).size),
        "note": note,
        "rows": rows,
    }
