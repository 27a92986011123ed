"""The sections of the calibration report: estimates as JSON objects, a judge's figures, the humans'
figures, system scores and win rates (`calibration.report.build` puts them together).

Every estimate carries its n and its pairs (the bootstrap's units). An estimate resting on fewer
than `metrics.MIN_PAIRS_FOR_CI` pairs shows no interval: its CI is null and its `ci_note` says
"too few pairs for an interval".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from calibration import metrics as M
from calibration import selectors


def rounded(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(float(x), digits)


def _ci(est: M.Estimate) -> list[float] | None:
    ci = est.shown_ci
    return None if ci is None or est.value is None else [rounded(ci[0]), rounded(ci[1])]


def ci_note(est: M.Estimate) -> str | None:
    return M.TOO_FEW_PAIRS if est.too_few_pairs else None


def estimate(est: M.Estimate, value_key: str = "value") -> dict:
    """An estimate as a nested object: {value, ci, n, small_n, n_pairs, ci_note}."""
    return {
        value_key: rounded(est.value),
        "ci": _ci(est),
        "n": est.n,
        "small_n": est.small_n,
        "n_pairs": est.n_pairs,
        "ci_note": ci_note(est),
    }


@dataclass
class Flat:
    """Flat `<name>`, `<name>_ci`, `<name>_n`, `<name>_n_pairs`, `<name>_ci_note` fields, remembering which rest on fewer than 30."""

    fields: dict = field(default_factory=dict)
    small: list[str] = field(default_factory=list)

    def add(self, name: str, est: M.Estimate, *, n_key: str | None = None) -> None:
        self.fields[name] = rounded(est.value)
        self.fields[f"{name}_ci"] = _ci(est)
        self.fields[n_key or f"{name}_n"] = est.n
        self.fields[f"{name}_n_pairs"] = est.n_pairs
        self.fields[f"{name}_ci_note"] = ci_note(est)
        if est.small_n:
            self.small.append(name)


def _end(x: float) -> float | None:
    """A CI end of a score: None when unbounded (JSON has no infinity)."""
    return None if math.isinf(x) else rounded(x, 2)


def scores(bt: M.BTResult | None, withheld: str | None = None) -> list[dict] | None:
    """The system scores of a fit; `withheld`: why the intervals were not computed (the note every
    estimable score then carries)."""
    if bt is None:
        return None
    out = []
    for s in bt.scores.values():
        too_few = s.estimable and s.n_pairs is not None and s.n_pairs < M.MIN_PAIRS_FOR_CI
        out.append(
            {
                "system": s.system,
                "score": rounded(s.score, 2),
                "ci": None if too_few or s.ci_low is None or s.ci_high is None else [_end(s.ci_low), _end(s.ci_high)],
                "n": s.n,
                "small_n": s.small_n,
                "estimable": s.estimable,
                "side": s.side,
                "reason": s.reason,
                "wins": rounded(s.wins, 1),
                "losses": rounded(s.losses, 1),
                "n_pairs": s.n_pairs,
                "ci_note": M.TOO_FEW_PAIRS if too_few else withheld if s.estimable else None,
                "rank": s.rank,
            }
        )
    return out


def bt_meta(bt: M.BTResult | None) -> dict | None:
    if bt is None:
        return None
    return {
        "n_comparisons": bt.n_comparisons,
        "degenerate": bt.degenerate,
        "not_estimable": bt.not_estimable,
        "rounds_degenerate": bt.rounds_degenerate,
        "anchor_systems": list(bt.anchor_systems),
    }


def win_rates(rates: M.WinRates) -> dict:
    out: dict[str, dict] = {}
    for system, est in sorted(rates.overall.items()):
        out[system] = {"overall": estimate(est, "rate")}
    for category, per_system in sorted(rates.by_category.items()):
        for system, est in per_system.items():
            out.setdefault(system, {})[category] = estimate(est, "rate")
    return out


def display(rater: str) -> str:
    return rater.removeprefix(selectors.HUMAN_PREFIX)


def rater_pairs(table: M.LabelTable, rounds: int, seed: int) -> list[dict]:
    return [
        {"a": display(p.rater_a), "b": display(p.rater_b), "kappa": estimate(p.kappa), "agreement": estimate(p.agreement)}
        for p in M.rater_pairs(table, rounds, seed)
    ]


def _spread(values: list[float]) -> dict:
    """Median and quartiles of an annotator's own times (a description, not an estimate: no CI)."""
    if not values:
        return {"median": None, "q1": None, "q3": None, "n": 0}
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return {"median": rounded(median, 1), "q1": rounded(q1, 1), "q3": rounded(q3, 1), "n": len(values)}


def _annotators(humans: M.LabelTable, times: list[selectors.AnnotatorTime], rounds: int, seed: int) -> list[dict]:
    vs_others = {display(r.rater): r for r in M.raters_vs_others(humans, rounds, seed)} if len(humans) else {}
    n_labels = dict(zip(*np.unique(humans.rater, return_counts=True))) if len(humans) else {}
    labels_of = {display(humans.vocab.raters[code]): int(n) for code, n in n_labels.items()}
    timed = {t.annotator: t for t in times}
    out = []
    for name in sorted(set(labels_of) | set(timed)):
        r, t = vs_others.get(name), timed.get(name)
        out.append(
            {
                "name": name,
                "n_labels": labels_of.get(name, 0),
                "n_pairs": t.n_pairs if t else 0,
                "agreement_with_others": estimate(r.agreement) if r else estimate(M.Estimate(None, 0, n_pairs=0)),
                "outlier": bool(r and r.outlier),
                "seconds_per_pair": _spread(t.seconds_per_pair if t else []),
                "seconds_per_criterion": _spread(t.seconds_per_criterion if t else []),
            }
        )
    return out


def humans_section(humans: M.LabelTable, times: list[selectors.AnnotatorTime], rounds: int, seed: int) -> dict:
    n_items = int(np.unique(humans.item).size) if len(humans) else 0
    flat = Flat()
    ceiling = M.human_ceiling(humans, rounds, seed)
    flat.add("par_leave_one_out", ceiling.loo_par)
    flat.add("par_all_pairs", ceiling.all_pairs_par)
    flat.add("krippendorff_alpha", ceiling.alpha)
    flat.add("prefers_longer", M.prefers_longer(humans, rounds, seed))
    flat.add("first_position_rate", M.first_position_rate(humans, rounds, seed))
    by_category = {}
    for code in np.unique(humans.category):
        sub = humans.select(humans.category == code)
        by_category[humans.vocab.categories[code]] = estimate(M.human_ceiling(sub, rounds, seed).loo_par, "par_leave_one_out")
    fleiss = M.fleiss_kappa(humans, rounds, seed)
    return {
        "n_labels": len(humans),
        "n_annotators": len(humans.rater_names()),
        "n_items": n_items,
        "n_items_multi": ceiling.n_items_multi,
        "n_pairs": int(np.unique(humans.pair).size),
        **flat.fields,
        "n_loo_excluded": ceiling.n_loo_excluded,
        # Imported without the order they were shown in: left out of first_position_rate.
        "n_labels_order_unknown": int((humans.first == M.UNKNOWN).sum()) if len(humans) else 0,
        "small_n": n_items < M.SMALL_N,
        "small_n_figures": flat.small,
        "by_category": by_category,
        "fleiss_kappa": {
            **estimate(fleiss.kappa),
            "raters_per_item": fleiss.raters_per_item,
            "n_items_left_out": fleiss.n_items_left_out,
        },
        "annotator_pairs": rater_pairs(humans, rounds, seed) if len(humans) else [],
        "annotators": _annotators(humans, times, rounds, seed),
        "outlier_rule": "an annotator whose agreement with the strict majority of the others has a 95% CI entirely below the median annotator's agreement",
        "time_rule": "wall time from first opening a pair to submitting it (pairs never opened here, e.g. imported without started_at, "
        "are not timed); per criterion: that time over the criteria labelled in the pair",
    }


def human_likeness(table: M.LabelTable, judges: list[str], rounds: int, seed: int) -> dict:
    """The `human_likeness` section: each judge's kappa with each annotator as a z-score against the
    annotators' kappas with each other (`metrics.humanlike`)."""
    h = M.human_likeness(table, judges, rounds, seed)
    return {
        "rule": h.rule,
        "n_annotators": h.n_annotators,
        "n_annotator_pairs": h.n_annotator_pairs,
        "human_kappa_mean": rounded(h.human_kappa_mean),
        "human_kappa_sd": rounded(h.human_kappa_sd),
        "judges": [
            {
                "judge": j.judge,
                "mean_kappa": rounded(j.mean_kappa),
                "z": estimate(j.z),
                "class": j.klass,
                "note": j.note,
                "kappas": {name: estimate(e) for name, e in j.kappas.items()},
            }
            for j in h.judges
        ],
    }


def judge_section(
    summary: selectors.JudgeSummary,
    raw: M.LabelTable,
    merged: M.LabelTable,
    votes: M.Votes,
    humans: M.LabelTable,
    rounds: int,
    seed: int,
    members: list[dict] | None = None,
    inclusion: dict[str, float] | None = None,
    majority_ties: str = M.DEFAULT_MAJORITY_TIES,
) -> dict:
    """One judge's figures; for an ensemble, `members` are the sections of its judges; `inclusion`
    (active sampling, unequal probabilities): PAR weighted by 1 / pi (`metrics.agreement`).

    `raw`: its verdicts in both orders (the position figures); `merged`: one verdict per item
    (`metrics.merge_swapped`: the length figure and the counts); `votes`: its verdicts as the
    report's convention counts them against the humans (`metrics.judge_votes`).
    """
    flat = Flat()
    n_pairs_judged = int(np.unique(raw.pair).size)
    n_items = n_no_majority = 0
    share_kept = None
    by_category: dict = {}
    by_criterion: dict = {}
    if len(votes.items) and len(humans):
        ag = M.agreement(votes.items, humans, rounds, seed, share=votes.share, inclusion=inclusion, majority_ties=majority_ties)
        n_items, n_no_majority, share_kept = ag.n_items, ag.n_no_majority, ag.share_kept
        by_category = {k: estimate(v, "par") for k, v in ag.by_category.items()}
        by_criterion = {k: estimate(v, "par") for k, v in ag.by_criterion.items()}
        par, par_majority, par_no_ties, kappa = ag.par, ag.par_majority, ag.par_no_ties, ag.kappa
    else:
        par = par_majority = par_no_ties = kappa = M.Estimate(None, 0, n_pairs=0)
    flat.add("par", par, n_key="n_labels")
    flat.add("par_majority", par_majority)
    flat.add("par_no_ties", par_no_ties)
    flat.add("cohen_kappa", kappa)
    flat.add("position_consistency", M.position_consistency(raw, rounds, seed))
    flat.add("first_position_rate", M.first_position_rate(raw, rounds, seed))
    flat.add("prefers_longer", M.prefers_longer(merged, rounds, seed))
    cost = summary.cost_usd  # None: unknown (a judge without prices)
    per_pair = rounded(cost / n_pairs_judged, 8) if n_pairs_judged and cost is not None else None
    per_1000 = rounded(cost * 1000 / len(raw), 8) if len(raw) and cost is not None else None
    if members:  # what one judged pair costs when each member judges it as it did here
        shares = [m["cost_per_pair_usd"] for m in members]
        per_pair = None if None in shares else rounded(sum(shares), 8)
        per_1000 = None
    return {
        "name": summary.name,
        "model": summary.model,
        "kind": summary.kind,
        "members": [m["name"] for m in members] if members else None,
        "tie_rule": M.TIE_RULE if members else None,
        "n_verdicts": len(raw),
        "n_items_judged": int(np.unique(merged.item).size) if len(merged) else 0,
        "n_pairs_judged": n_pairs_judged,
        "n_swapped_items": flat.fields["position_consistency_n"],
        "n_items": n_items,
        **flat.fields,
        "n_no_majority": n_no_majority,
        "share_kept_no_ties": rounded(share_kept),
        "cost_usd": rounded(cost, 8),
        "possibly_billed_usd": rounded(summary.possibly_billed_usd, 8),
        "n_possibly_billed_calls": summary.n_possibly_billed,
        "cost_per_pair_usd": per_pair,
        "cost_per_1000_verdicts_usd": per_1000,
        "tokens": {"prompt": summary.prompt_tokens, "cached": summary.cached_tokens, "completion": summary.completion_tokens},
        "n_calls": summary.n_calls,
        "n_invalid_calls": summary.n_invalid_calls,
        "mean_latency_ms": rounded(summary.mean_latency_ms, 1),
        "n_units": summary.n_units,
        "errors": summary.errors,
        "small_n": n_items < M.SMALL_N,
        "small_n_figures": flat.small,
        "by_category": by_category,
        "by_criterion": by_criterion,
        "n_unparsable": votes.n_unparsable,
    }


def comparison(a: str, b: str, d: M.PairedDifference) -> dict:
    est = d.difference
    return {
        "a": a,
        "b": b,
        "difference": rounded(est.value),
        "ci": _ci(est),
        "significant": d.significant and not est.too_few_pairs,
        "n": est.n,
        "n_pairs": d.n_pairs,
        "par_a": rounded(d.par_a),
        "par_b": rounded(d.par_b),
        "small_n": est.small_n,
        "ci_note": ci_note(est),
    }
