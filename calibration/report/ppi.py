"""The report's `prediction_powered` section: each judge's system scores estimated from all of its
verdicts plus the human-labelled items (calibration.metrics.powered), next to the human-only and
judge-only estimates, with rank-sets. Field by field in docs/calibration-report.md."""

from __future__ import annotations

import math

import numpy as np

from calibration import metrics as M
from calibration.metrics import powered

METHOD = (
    "PPI++ (prediction-powered inference with the power-tuning weight lam estimated from the data): "
    "the judge's estimate on every item it judged, corrected by its error on the items that have human labels; "
    "lam = 0 is the humans alone, 1 plain PPI; lam is set to 0 when the judge's values are not positively correlated "
    "with the humans' on the labelled pairs (one-sided t-test at 5% on pair sums), so that a useless judge cannot "
    "narrow a CI by chance. 95% CIs from a cluster-robust variance (clusters: pairs). "
    "Win rates and their CIs lie in [0, 1]: a rate the correction takes out of [0, 1] is moved to the nearest end, and "
    "its CI is a Wilson score interval with an effective number of votes, p(1 - p)/se^2 (the pairs when the labels show "
    "no spread; for the prediction-powered rate, the humans' number times the variance ratio human / prediction-powered, "
    "a ratio of at most the items labelled and unlabelled over the items labelled)."
)
ASSUMPTION = (
    "The human-labelled pairs are a random sample of the pairs the judge judged (labels missing at random); "
    "estimates target what the humans would say, the judge-only figures what the judge says."
)
RANK_SET_RULE = (
    "The ranks a system can hold at 95%: 1 + the systems surely above it to K - the systems surely below it, "
    "'surely' = the pairwise z-test of the difference at 5% / (K(K-1)/2) (Bonferroni), so that all rank-sets "
    "hold together."
)


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def _interval(iv: powered.Interval, key: str, digits: int) -> dict:
    """The report's rules for every interval hold here too: none below MIN_PAIRS_FOR_CI pairs
    (`ci_note` says so), and † below SMALL_N pairs."""
    lo, hi = iv.ci
    pairs = iv.n if iv.n_pairs is None else iv.n_pairs
    few = iv.value is not None and pairs < M.MIN_PAIRS_FOR_CI
    return {
        key: _r(iv.value, digits),
        "ci": None if few else [_r(lo, digits), _r(hi, digits)],
        "n": iv.n,
        "n_pairs": iv.n_pairs,
        "small_n": pairs < M.SMALL_N,
        "ci_note": M.TOO_FEW_PAIRS if few else None,
    }


def _rates(rates: dict[str, powered.PoweredRate]) -> dict:
    return {
        system: {
            "ppi": _interval(r.ppi, "rate", 6),
            "human": _interval(r.human, "rate", 6),
            "judge": _interval(r.judge, "rate", 6),
            "lam": _r(r.lam),
            "n_effective": _r(r.n_effective, 1),
        }
        for system, r in rates.items()
    }


def _bt(scores: powered.PoweredScores) -> dict | None:
    methods = {m: getattr(scores, m) for m in powered.METHODS}
    if methods[powered.PPI] is None:
        return {"lam": None, "scores": [], "left_out": scores.left_out}
    rows = []
    for i, system in enumerate(scores.systems):
        row: dict = {"system": system}
        for name, s in methods.items():
            if s is None:
                row[name] = None
                continue
            entry = _interval(s.interval(i), "score", 2)
            entry["rank_set"] = list(s.rank_sets[i])
            row[name] = entry
        row["n_effective"] = _r(scores.n_effective(i), 1)
        rows.append(row)
    rows.sort(key=lambda row: (-row["ppi"]["score"], row["system"]))
    return {"lam": _r(methods[powered.PPI].lam), "scores": rows, "left_out": scores.left_out}


def judge_figures(
    humans: M.LabelTable, merged: M.LabelTable, reference: str | None, anchor: float, inclusion: dict[str, float] | None = None
) -> dict:
    """One judge's prediction-powered figures (``merged``: one verdict per item). ``gain`` is the
    median over systems of the human-only variance of the win rate over the prediction-powered one;
    ``n_effective`` = ``n_human`` x ``gain``: how many human labels alone would give CIs as narrow.
    ``inclusion`` (active sampling with unequal probabilities): the pairs' inclusion probabilities;
    the win rates are then inverse-probability weighted and ``n_effective`` is the median over
    systems of how many uniformly drawn human labels each rate's CI is worth."""
    items = powered.build_items(humans, merged, inclusion) if len(merged) else None
    out = {
        "n_human": items.n_labelled if items else 0,
        "n_human_pairs": items.n_labelled_pairs if items else 0,
        "n_judge": items.n_judged if items else 0,
        "n_unlabelled": items.n_unlabelled if items else 0,
        "n_unlabelled_pairs": int(np.unique(items.cluster[items.unlabelled]).size) if items else 0,
        "win_rates": {},
        "win_rates_left_out": {},
        "bradley_terry": None,
        "gain": None,
        "n_effective": None,
        "note": None,
    }
    if items is None or out["n_human_pairs"] < 2:
        out["note"] = "needs human labels on at least two pairs this judge judged"
        return out
    if reference is not None and reference not in {items.systems[c] for c in np.concatenate([items.sys_lo, items.sys_hi])}:
        out["note"] = f"the reference system '{reference}' is not among the systems this judge compared"
        return out
    rates = powered.win_rates(items, reference)
    out["win_rates"] = _rates(rates)
    out["win_rates_left_out"] = powered.win_rates_left_out(items, reference)
    gains = [(r.human.se / r.ppi.se) ** 2 for r in rates.values() if r.ppi.se > 0 and math.isfinite(r.human.se)]
    if inclusion is not None:
        worth = [r.n_effective for r in rates.values() if r.n_effective is not None]
        if worth and out["n_human"]:
            out["n_effective"] = _r(float(np.median(worth)), 1)
            out["gain"] = _r(float(np.median(worth)) / out["n_human"], 3)
    elif gains:
        out["gain"] = _r(float(np.median(gains)), 3)
        out["n_effective"] = _r(out["n_human"] * float(np.median(gains)), 1)
    out["bradley_terry"] = _bt(powered.bt_scores(items, reference, anchor=anchor))
    if not out["n_unlabelled"]:
        out["note"] = "every pair this judge judged has human labels: the prediction-powered figures are the humans' own"
    return out


def section(
    humans: M.LabelTable,
    merged_by_judge: dict[str, M.LabelTable],
    reference: str | None,
    anchor: float,
    inclusion: dict[str, float] | None = None,
) -> dict:
    """The `prediction_powered` section for every judge (ensembles included); ``inclusion``: see
    :func:`judge_figures` (None: the uniform forms)."""
    return {
        "method": METHOD,
        "assumption": ASSUMPTION,
        "rank_set_rule": RANK_SET_RULE,
        "confidence_level": 0.95,
        "cluster": "pair",
        "judges": {name: judge_figures(humans, merged, reference, anchor, inclusion) for name, merged in merged_by_judge.items()},
    }


def in_order(section_: dict, names: list[str]) -> dict:
    """The section with its judges in the order of `names` (the report's: best PAR first)."""
    return {**section_, "judges": {name: section_["judges"][name] for name in names}}
