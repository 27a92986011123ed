"""The report's tie sections (issue 40): `tie_accuracy` (judges with confidences, a tie threshold
calibrated on one split and the accuracy with ties on the other: `metrics.ties`), `davidson` (each
rater's Bradley-Terry fit with Davidson's tie parameter beside today's scores, `metrics.davidson`)
and `soft_labels` (the annotators' distribution per item, and each judge with confidences scored
against it: `metrics.soft_labels`). docs/calibration-report.md describes them.

The judges' confidences come as one table (`calibration.cascade.confidence_table`: one row per judge and
item, its orders merged) and the confidence of each row.
"""

from __future__ import annotations

import numpy as np

from calibration import metrics as M
from calibration.metrics.davidson import davidson
from calibration.metrics.labels import align_tables
from calibration.metrics.soft_labels import RULE as SOFT_RULE
from calibration.metrics.soft_labels import human_distributions, soft_label_rows, soft_score
from calibration.metrics.ties import (
    CITATION,
    DISTRIBUTION_RULE,
    SPLIT_RULE,
    THRESHOLD_RULE,
    answer_distribution,
    held_out,
    preference,
    tie_accuracy,
)
from calibration.report.sections import estimate, rounded

NO_TIES = "no ties: nu = 0, and the fit is today's Bradley-Terry"
NO_CONFIDENCES = (
    "no judge gave confidences on this campaign (run one with --confidence logprobs or samples:N, or import a confidence column)"
)


def _by_judge(humans: M.LabelTable, confidences: tuple[M.LabelTable, np.ndarray] | None):
    """(humans on the common vocabulary, [(judge, its rows, their confidences)])."""
    if confidences is None or not len(confidences[0]) or not len(humans):
        return humans, []
    table, sure = confidences
    humans, table = align_tables(humans, table)
    out = []
    for name in table.rater_names():
        mine = table.rater == table.vocab.raters.index(name)
        out.append((name, table.select(mine), sure[mine]))
    return humans, out


def tie_accuracy_section(humans: M.LabelTable, confidences, rounds: int, seed: int) -> dict:
    humans, judges = _by_judge(humans, confidences)
    head = {"rule": THRESHOLD_RULE, "distribution_rule": DISTRIBUTION_RULE, "split_rule": SPLIT_RULE, "citation": CITATION}
    if not judges:
        return {**head, "judges": [], "note": NO_CONFIDENCES}
    pair_held = held_out(humans.vocab.pairs)
    rows = []
    for name, table, sure in judges:
        keys, order = np.unique(table.item, return_index=True)
        pref = preference(answer_distribution(table.outcome[order], np.nan_to_num(sure[order], nan=0.0)))
        pref = np.where(np.isfinite(sure[order]), pref, np.nan)
        found = np.isin(humans.item, keys)
        h = humans.select(found)
        r = tie_accuracy(name, h.pair, pref[np.searchsorted(keys, h.item)], h.outcome, pair_held[h.pair], rounds, seed)
        rows.append(
            {
                "judge": name,
                "epsilon": rounded(r.epsilon),
                "n_candidates": r.n_candidates,
                "calibration": estimate(r.calibration),
                "held_out": estimate(r.held_out),
                "held_out_own_verdicts": estimate(r.held_out_own),
                "predicted_tie_share": rounded(r.predicted_tie_share),
                "human_tie_share": rounded(r.human_tie_share),
                "note": r.note,
            }
        )
    return {**head, "judges": rows, "note": None}


def soft_labels_section(humans: M.LabelTable, confidences, rounds: int, seed: int) -> dict | None:
    """None without human labels. `items`: the export (one row per item and criterion)."""
    if not len(humans):
        return None
    aligned, judges = _by_judge(humans, confidences)
    distributions = human_distributions(aligned)
    scores = []
    for name, table, sure in judges:
        keys, order = np.unique(table.item, return_index=True)
        outcome = table.outcome[order]
        dist = answer_distribution(outcome, np.nan_to_num(sure[order], nan=0.0))
        dist[~np.isfinite(sure[order])] = np.nan
        s = soft_score(name, keys, dist, outcome, distributions, rounds, seed)
        scores.append({"judge": name, "tv": estimate(s.tv), "tv_whole_verdicts": estimate(s.tv_hard)})
    return {
        "rule": SOFT_RULE,
        "distribution_rule": DISTRIBUTION_RULE,
        "judges": scores,
        "note": None if judges else NO_CONFIDENCES,
        "items": soft_label_rows(aligned),
    }


def davidson_section(fit_tables: list[tuple[str, M.LabelTable]], reference: str | None, seed: int, rounds_of) -> dict:
    """Per rater (the humans, then each judge): its Davidson fit. `rounds_of(name)`: the rounds of
    that rater's intervals (the judges' follow their per-category intervals at scale)."""
    out = {}
    for name, table in fit_tables:
        f = davidson(table, reference=reference, rounds=rounds_of(name), seed=seed)
        no_ties = f.tie_share == 0
        note = "; ".join(filter(None, [NO_TIES if no_ties else None, f.note])) or None
        out[name] = {
            "nu": rounded(f.nu),
            "nu_ci": None if f.nu_ci[0] is None or no_ties else [rounded(f.nu_ci[0]), rounded(f.nu_ci[1])],
            "tie_share": rounded(f.tie_share),
            "n": f.n_comparisons,
            "n_pairs": f.n_pairs,
            "reference": f.reference,
            "rounds": f.rounds,
            "rounds_dropped": f.rounds_dropped,
            "note": note,
            "scores": [
                {
                    "system": s.system,
                    "score": rounded(s.score, 3),
                    "ci": None if s.ci_low is None else [rounded(s.ci_low, 3), rounded(s.ci_high, 3)],
                    "n": s.n,
                    "rank": s.rank,
                }
                for s in f.scores.values()
            ],
        }
    return out


def davidson_report(fits: dict, bradley_terry: dict, weighted: bool) -> dict:
    """The `davidson` section: each rater's fit and its ranking beside today's."""
    return {
        "model": "P(i beats j) = pi_i / D, P(tie) = nu sqrt(pi_i pi_j) / D, D = pi_i + pi_j + nu sqrt(pi_i pi_j) (Davidson 1970)",
        "raters": fits,
        "rankings": ranking_change(fits, bradley_terry),
        "note": "unweighted: every label counts once, whatever its pair's inclusion probability" if weighted else None,
    }


def ranking_change(davidson_fits: dict, bradley_terry: dict) -> dict:
    """Per rater: its ranks with ties as half wins (today's) and with Davidson's tie parameter, and
    whether the order differs."""
    out = {}
    for name, fit in davidson_fits.items():
        today = {s["system"]: s.get("rank") for s in (bradley_terry.get(name) or [])}
        with_ties = {s["system"]: s["rank"] for s in fit["scores"]}
        out[name] = {"half_wins": today, "davidson": with_ties, "changed": any(today.get(k) != v for k, v in with_ties.items())}
    return out
