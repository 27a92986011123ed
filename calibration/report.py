"""The calibration report of a campaign: one dict, the versioned JSON contract of
docs/calibration-report.md (its renderings are in `calibration.report_formats`).

`build_report` reads the campaign through `calibration.selectors` and computes
every figure with `calibration.metrics`; nothing here touches the ORM directly.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import combinations

import numpy as np
from django.conf import settings
from django.core.cache import cache

from annotate.models import Campaign
from annotate.vocabulary import REFERENCE_SYSTEM
from calibration import charts, report_ppi, selectors
from calibration import metrics as M

SCHEMA = "pairwise-calibration-report"
VERSION = 2
HUMANS = "humans"
CACHE_SECONDS = 3600
ANCHOR = 1000.0
ENSEMBLE_PREFIX = "ensemble:"


# --- building -----------------------------------------------------------------------------


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(float(x), digits)


def _ci(est: M.Estimate) -> list[float] | None:
    return None if est.ci is None or est.value is None else [_r(est.ci_low), _r(est.ci_high)]


def _estimate(est: M.Estimate, value_key: str = "value") -> dict:
    """An estimate as a nested object: {value, ci, n, small_n}."""
    return {value_key: _r(est.value), "ci": _ci(est), "n": est.n, "small_n": est.small_n}


@dataclass
class _Flat:
    """Flat `<name>`, `<name>_ci`, `<name>_n` fields, remembering which rest on fewer than 30."""

    fields: dict = field(default_factory=dict)
    small: list[str] = field(default_factory=list)

    def add(self, name: str, est: M.Estimate, *, n_key: str | None = None) -> None:
        self.fields[name] = _r(est.value)
        self.fields[f"{name}_ci"] = _ci(est)
        self.fields[n_key or f"{name}_n"] = est.n
        if est.small_n:
            self.small.append(name)


def _end(x: float) -> float | None:
    """A CI end of a score: None when unbounded (JSON has no infinity)."""
    return None if math.isinf(x) else _r(x, 2)


def _scores(bt: M.BTResult | None) -> list[dict] | None:
    if bt is None:
        return None
    return [
        {
            "system": s.system,
            "score": _r(s.score, 2),
            "ci": None if s.ci_low is None or s.ci_high is None else [_end(s.ci_low), _end(s.ci_high)],
            "n": s.n,
            "small_n": s.small_n,
            "estimable": s.estimable,
            "side": s.side,
            "reason": s.reason,
            "wins": _r(s.wins, 1),
            "losses": _r(s.losses, 1),
        }
        for s in bt.scores.values()
    ]


def _bt_meta(bt: M.BTResult | None) -> dict | None:
    if bt is None:
        return None
    return {
        "n_comparisons": bt.n_comparisons,
        "degenerate": bt.degenerate,
        "not_estimable": bt.not_estimable,
        "rounds_degenerate": bt.rounds_degenerate,
        "anchor_systems": list(bt.anchor_systems),
    }


def _win_rates(rates: M.WinRates) -> dict:
    out: dict[str, dict] = {}
    for system, est in sorted(rates.overall.items()):
        out[system] = {"overall": _estimate(est, "rate")}
    for category, per_system in sorted(rates.by_category.items()):
        for system, est in per_system.items():
            out.setdefault(system, {})[category] = _estimate(est, "rate")
    return out


def resolve_reference(campaign: Campaign, systems: list[str], reference: str | None) -> str | None:
    """The system every score is anchored to: the one asked for (it must be compared in the
    campaign), else the campaign's reference, else `wikipedia` when compared, else None (the
    scores are then anchored on their mean and win rates are against the field)."""
    if reference is not None:
        if reference not in systems:
            raise ValueError(f"reference system '{reference}' is not compared in campaign '{campaign.name}' (systems: {', '.join(systems) or 'none'})")
        return reference
    if campaign.reference_system_id:
        return campaign.reference_system.key
    return REFERENCE_SYSTEM if REFERENCE_SYSTEM in systems else None


def anchor_description(reference: str | None, anchor: float = ANCHOR) -> dict:
    """How the scores are placed on their scale, for the report's parameters."""
    if reference is None:
        return {
            "kind": M.MEAN_ANCHOR,
            "system": None,
            "score": anchor,
            "text": f"no reference system: the mean score is {anchor:g} (over the systems estimable in every bootstrap round, "
            "bradley_terry_meta.anchor_systems); win rates are against the field",
        }
    return {"kind": "reference", "system": reference, "score": anchor, "text": f"{reference} = {anchor:g}; win rates are against {reference}"}


class _Rater:
    """The labels of one rater (merged to one verdict per item for judges) and its ranking figures."""

    def __init__(self, name: str, table: M.LabelTable, reference: str | None, rounds: int, seed: int, notes: list[str]) -> None:
        self.name, self.table = name, table
        self.bt = self.bt_by_category = None
        self.win_rates = None
        if not len(table):
            return
        present = {table.vocab.systems[c] for c in np.unique(np.concatenate([table.sys_a, table.sys_b]))}
        if reference is not None and reference not in present:
            notes.append(f"{name}: the reference system '{reference}' is not among its compared systems, so it has no Bradley-Terry scores or win rates.")
            return
        self.bt = M.bradley_terry(table, reference=reference, anchor=ANCHOR, rounds=rounds, seed=seed)
        self.bt_by_category = M.bradley_terry_by_category(table, reference=reference, anchor=ANCHOR, rounds=rounds, seed=seed)
        if reference is None:
            self.win_rates = M.win_rate_vs_field(table, rounds=rounds, seed=seed)
        else:
            self.win_rates = M.win_rate_vs_reference(table, reference=reference, rounds=rounds, seed=seed)
        if self.bt.not_estimable:
            reasons = "; ".join(f"{s} ({self.bt.scores[s].reason.removeprefix('not estimable: ')})" for s in self.bt.not_estimable)
            notes.append(f"{name}: no finite Bradley-Terry score for {reasons}.")


def _display(rater: str) -> str:
    return rater.removeprefix(selectors.HUMAN_PREFIX)


def _rater_pairs(table: M.LabelTable, rounds: int, seed: int) -> list[dict]:
    return [
        {"a": _display(p.rater_a), "b": _display(p.rater_b), "kappa": _estimate(p.kappa), "agreement": _estimate(p.agreement)}
        for p in M.rater_pairs(table, rounds, seed)
    ]


def _spread(values: list[float]) -> dict:
    """Median and quartiles of an annotator's own times (a description, not an estimate: no CI)."""
    if not values:
        return {"median": None, "q1": None, "q3": None, "n": 0}
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return {"median": _r(median, 1), "q1": _r(q1, 1), "q3": _r(q3, 1), "n": len(values)}


def _annotators(humans: M.LabelTable, times: list[selectors.AnnotatorTime], rounds: int, seed: int) -> list[dict]:
    vs_others = {_display(r.rater): r for r in M.raters_vs_others(humans, rounds, seed)} if len(humans) else {}
    n_labels = dict(zip(*np.unique(humans.rater, return_counts=True))) if len(humans) else {}
    labels_of = {_display(humans.vocab.raters[code]): int(n) for code, n in n_labels.items()}
    timed = {t.annotator: t for t in times}
    out = []
    for name in sorted(set(labels_of) | set(timed)):
        r, t = vs_others.get(name), timed.get(name)
        out.append({
            "name": name,
            "n_labels": labels_of.get(name, 0),
            "n_pairs": t.n_pairs if t else 0,
            "agreement_with_others": _estimate(r.agreement) if r else _estimate(M.Estimate(None, 0)),
            "outlier": bool(r and r.outlier),
            "seconds_per_pair": _spread(t.seconds_per_pair if t else []),
            "seconds_per_criterion": _spread(t.seconds_per_criterion if t else []),
        })
    return out


def _humans_section(humans: M.LabelTable, times: list[selectors.AnnotatorTime], rounds: int, seed: int) -> dict:
    n_items = int(np.unique(humans.item).size) if len(humans) else 0
    flat = _Flat()
    ceiling = M.human_ceiling(humans, rounds, seed)
    flat.add("par_leave_one_out", ceiling.loo_par)
    flat.add("par_all_pairs", ceiling.all_pairs_par)
    flat.add("krippendorff_alpha", ceiling.alpha)
    flat.add("prefers_longer", M.prefers_longer(humans, rounds, seed))
    flat.add("first_position_rate", M.first_position_rate(humans, rounds, seed))
    by_category = {}
    for code in np.unique(humans.category):
        sub = humans.select(humans.category == code)
        by_category[humans.vocab.categories[code]] = _estimate(M.human_ceiling(sub, rounds, seed).loo_par, "par_leave_one_out")
    fleiss = M.fleiss_kappa(humans, rounds, seed)
    return {
        "n_labels": len(humans),
        "n_annotators": len(humans.rater_names()),
        "n_items": n_items,
        "n_items_multi": ceiling.n_items_multi,
        "n_pairs": int(np.unique(humans.pair).size),
        **flat.fields,
        "n_loo_excluded": ceiling.n_loo_excluded,
        "small_n": n_items < M.SMALL_N,
        "small_n_figures": flat.small,
        "by_category": by_category,
        "fleiss_kappa": {
            **_estimate(fleiss.kappa),
            "raters_per_item": fleiss.raters_per_item,
            "n_items_left_out": fleiss.n_items_left_out,
        },
        "annotator_pairs": _rater_pairs(humans, rounds, seed) if len(humans) else [],
        "annotators": _annotators(humans, times, rounds, seed),
        "outlier_rule": "an annotator whose agreement with the strict majority of the others has a 95% CI entirely below the median annotator's agreement",
        "time_rule": "wall time from first opening a pair to submitting it (pairs never opened here, e.g. imported without started_at, "
        "are not timed); per criterion: that time over the criteria labelled in the pair",
    }


def _judge_section(
    summary: selectors.JudgeSummary,
    raw: M.LabelTable,
    merged: M.LabelTable,
    humans: M.LabelTable,
    rounds: int,
    seed: int,
    members: list[dict] | None = None,
) -> dict:
    """One judge's figures; for an ensemble, `members` are the sections of its judges."""
    flat = _Flat()
    n_pairs_judged = int(np.unique(raw.pair).size)
    n_items = n_no_majority = 0
    share_kept = None
    by_category: dict = {}
    by_criterion: dict = {}
    if len(merged) and len(humans):
        ag = M.agreement(merged, humans, rounds, seed)
        n_items, n_no_majority, share_kept = ag.n_items, ag.n_no_majority, ag.share_kept
        by_category = {k: _estimate(v, "par") for k, v in ag.by_category.items()}
        by_criterion = {k: _estimate(v, "par") for k, v in ag.by_criterion.items()}
        par, par_majority, par_no_ties, kappa = ag.par, ag.par_majority, ag.par_no_ties, ag.kappa
    else:
        par = par_majority = par_no_ties = kappa = M.Estimate(None, 0)
    flat.add("par", par, n_key="n_labels")
    flat.add("par_majority", par_majority)
    flat.add("par_no_ties", par_no_ties)
    flat.add("cohen_kappa", kappa)
    flat.add("position_consistency", M.position_consistency(raw, rounds, seed))
    flat.add("first_position_rate", M.first_position_rate(raw, rounds, seed))
    flat.add("prefers_longer", M.prefers_longer(merged, rounds, seed))
    cost = summary.cost_usd
    per_pair = _r(cost / n_pairs_judged, 8) if n_pairs_judged else None
    per_1000 = _r(cost * 1000 / len(raw), 8) if len(raw) else None
    if members:  # what one judged pair costs when each member judges it as it did here
        shares = [m["cost_per_pair_usd"] for m in members]
        per_pair = None if None in shares else _r(sum(shares), 8)
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
        "share_kept_no_ties": _r(share_kept),
        "cost_usd": _r(cost, 8),
        "possibly_billed_usd": _r(summary.possibly_billed_usd, 8),
        "n_possibly_billed_calls": summary.n_possibly_billed,
        "cost_per_pair_usd": per_pair,
        "cost_per_1000_verdicts_usd": per_1000,
        "tokens": {"prompt": summary.prompt_tokens, "cached": summary.cached_tokens, "completion": summary.completion_tokens},
        "n_calls": summary.n_calls,
        "n_invalid_calls": summary.n_invalid_calls,
        "mean_latency_ms": _r(summary.mean_latency_ms, 1),
        "n_units": summary.n_units,
        "errors": summary.errors,
        "small_n": n_items < M.SMALL_N,
        "small_n_figures": flat.small,
        "by_category": by_category,
        "by_criterion": by_criterion,
    }


def _comparison(a: str, b: str, d: M.PairedDifference) -> dict:
    return {
        "a": a,
        "b": b,
        "difference": _r(d.difference.value),
        "ci": _ci(d.difference),
        "significant": d.significant,
        "n": d.difference.n,
        "n_pairs": d.n_pairs,
        "par_a": _r(d.par_a),
        "par_b": _r(d.par_b),
        "small_n": d.difference.small_n,
    }


def ensemble_name(members: list[str] | tuple[str, ...]) -> str:
    """`ensemble:a+b+c` (judge names hold neither ':' nor '+')."""
    return ENSEMBLE_PREFIX + "+".join(members)


def parse_ensembles(values: list[str] | None) -> list[tuple[str, ...]]:
    """`["a,b,c", ...]` (a command line's or a query string's) as member tuples, checked for form only."""
    out: list[tuple[str, ...]] = []
    for value in values or []:
        members = tuple(dict.fromkeys(m.strip() for m in value.split(",") if m.strip()))
        if len(members) < 2:
            raise ValueError(f"an ensemble needs at least two different judges, comma-separated, not '{value}'")
        if set(members) not in [set(o) for o in out]:  # a,b and b,a vote alike
            out.append(members)
    return out


def _ensemble(members: tuple[str, ...], by_name: dict, merged_by_judge: dict, campaign: Campaign) -> tuple[selectors.JudgeSummary, M.LabelTable]:
    for m in members:
        if m not in by_name or not len(merged_by_judge[m]):
            known = ", ".join(sorted(n for n in by_name if len(merged_by_judge[n]))) or "none"
            raise ValueError(f"ensemble member '{m}' has no verdicts in campaign '{campaign.name}' (judges with verdicts: {known})")
    name = ensemble_name(members)
    table = M.ensemble_verdicts([merged_by_judge[m] for m in members], name)
    parts = [by_name[m] for m in members]
    summary = selectors.JudgeSummary(
        name=name,
        model=" + ".join(p.model or p.name for p in parts),
        kind="ensemble",
        n_units=sum(p.n_units for p in parts),
        errors=sum(p.errors for p in parts),
        n_calls=sum(p.n_calls for p in parts),
        n_invalid_calls=sum(p.n_invalid_calls for p in parts),
        cost_usd=sum(p.cost_usd for p in parts),
        prompt_tokens=sum(p.prompt_tokens for p in parts),
        cached_tokens=sum(p.cached_tokens for p in parts),
        completion_tokens=sum(p.completion_tokens for p in parts),
        mean_latency_ms=None,
        possibly_billed_usd=sum(p.possibly_billed_usd for p in parts),
        n_possibly_billed=sum(p.n_possibly_billed for p in parts),
    )
    return summary, table


def report_from_inputs(
    campaign: Campaign,
    inputs: selectors.CalibrationInputs,
    *,
    rounds: int = 1000,
    seed: int = 0,
    reference: str | None = None,
    ensembles: list[tuple[str, ...]] | None = None,
) -> dict:
    reference = resolve_reference(campaign, inputs.systems, reference)
    ensembles = list(ensembles or [])
    table = inputs.table
    humans = table.humans()
    notes: list[str] = []
    if not len(humans):
        notes.append(
            "No human labels yet"
            + ("" if inputs.include_unsubmitted else " in submitted assignments")
            + ": agreement figures are null and there is no recommendation."
        )
    if not inputs.judges:
        notes.append("No judge has worked on this campaign yet.")

    judges, merged_by_judge = [], {}
    for summary in inputs.judges:
        raw = table.for_rater(summary.name)
        merged = M.merge_swapped(raw) if len(raw) else raw
        merged_by_judge[summary.name] = merged
        judges.append(_judge_section(summary, raw, merged, humans, rounds, seed))
    real = [j["name"] for j in judges if len(merged_by_judge[j["name"]])]
    judge_pairs = _rater_pairs(M.LabelTable.concat(*[merged_by_judge[n] for n in real]), rounds, seed) if len(real) > 1 else []
    by_name = {s.name: s for s in inputs.judges}
    sections = {j["name"]: j for j in judges}
    for members in ensembles:
        summary, merged = _ensemble(members, by_name, merged_by_judge, campaign)
        merged_by_judge[summary.name] = merged
        judges.append(_judge_section(summary, merged, merged, humans, rounds, seed, members=[sections[m] for m in members]))
    judges.sort(key=lambda j: (j["par"] is None, -(j["par"] or 0), j["name"]))

    rated = [j for j in judges if j["par"] is not None]
    comparisons, differences = [], []
    for ja, jb in combinations(rated, 2):
        d = M.paired_difference(merged_by_judge[ja["name"]], merged_by_judge[jb["name"]], humans, rounds, seed)
        differences.append(d)
        comparisons.append(_comparison(ja["name"], jb["name"], d))

    points = [M.JudgePoint(j["name"], j["cost_per_pair_usd"], j["par"], j["n_labels"]) for j in rated if j["cost_per_pair_usd"] is not None]
    frontier = [p.name for p in M.pareto_frontier(points)]
    recommended = None
    if points:
        rec = M.recommend(points, differences)
        recommended = rec.judge
        recommendation = rec.sentence + " Costs are USD per judged pair."
    elif not len(humans):
        recommendation = "No recommendation: there are no human labels to calibrate against."
    elif not judges:
        recommendation = "No recommendation: no judge has worked on this campaign yet."
    else:
        recommendation = "No recommendation: no judge has verdicts on the items the humans labelled."

    raters = [_Rater(HUMANS, humans, reference, rounds, seed, notes)] if len(humans) else []
    raters += [_Rater(j["name"], merged_by_judge[j["name"]], reference, rounds, seed, notes) for j in judges]
    human_bt = raters[0].bt if raters and raters[0].name == HUMANS else None
    kendall = {}
    for r in raters:
        if r.name == HUMANS:
            continue
        if human_bt is None or r.bt is None:
            kendall[r.name] = {"tau": None, "p_value": None, "n_systems": 0}
        else:
            tau = M.kendall_tau(human_bt, r.bt)
            kendall[r.name] = {"tau": _r(tau.tau), "p_value": _r(tau.p_value), "n_systems": tau.n}

    return {
        "schema": SCHEMA,
        "version": VERSION,
        "campaign": {
            "id": campaign.pk,
            "name": campaign.name,
            "criterion_set": str(campaign.criterion_set),
            "pair_mode": campaign.pair_mode,
            "systems": inputs.systems,
            "categories": sorted(set(table.vocab.categories[c] for c in np.unique(table.category))) if len(table) else [],
        },
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "parameters": {
            "rounds": rounds,
            "seed": seed,
            "reference": reference,
            "anchor": anchor_description(reference),
            "ensembles": [ensemble_name(m) for m in ensembles],
            "ensemble_tie_rule": M.TIE_RULE,
            "include_unsubmitted": inputs.include_unsubmitted,
            "confidence_level": 0.95,
            "small_n_threshold": M.SMALL_N,
            "bootstrap_unit": "pair",
        },
        "n_pairs": inputs.n_pairs,
        "judges": judges,
        "humans": _humans_section(humans, inputs.annotator_times, rounds, seed),
        "judge_pairs": judge_pairs,
        "comparisons": comparisons,
        "pareto_frontier": frontier,
        "recommendation": recommendation,
        "recommended_judge": recommended,
        "bradley_terry": {r.name: _scores(r.bt) for r in raters},
        "bradley_terry_meta": {r.name: _bt_meta(r.bt) for r in raters},
        "bradley_terry_by_category": {
            r.name: None if r.bt_by_category is None else {c: _scores(bt) for c, bt in r.bt_by_category.items()} for r in raters
        },
        "kendall_tau": kendall,
        "win_rates": {r.name: None if r.win_rates is None else _win_rates(r.win_rates) for r in raters},
        "prediction_powered": report_ppi.section(humans, {j["name"]: merged_by_judge[j["name"]] for j in judges}, reference, ANCHOR),
        "notes": notes,
    }


def build_report(
    campaign: Campaign,
    *,
    rounds: int = 1000,
    seed: int = 0,
    reference: str | None = None,
    include_unsubmitted: bool = False,
    ensembles: list[tuple[str, ...]] | None = None,
) -> dict:
    """The calibration report of a campaign (see docs/calibration-report.md)."""
    inputs = selectors.calibration_inputs(campaign=campaign, include_unsubmitted=include_unsubmitted)
    return report_from_inputs(campaign, inputs, rounds=rounds, seed=seed, reference=reference, ensembles=ensembles)


def _cached(campaign: Campaign, what: str, stamp: tuple, params: dict, build):
    """`build()` memoized while the campaign's labels, verdicts and calls stay the same (`stamp`)."""
    raw = repr((campaign.pk, campaign.reference_system_id, what, sorted(params.items()), stamp))
    key = "calibration:" + hashlib.sha256(raw.encode()).hexdigest()
    value = cache.get(key)
    if value is None:
        value = build()
        cache.set(key, value, CACHE_SECONDS)
    return value


def default_rounds() -> int:
    """Bootstrap rounds of the dashboard, its downloads and the API (settings.CALIBRATION_ROUNDS, else 1000)."""
    return int(getattr(settings, "CALIBRATION_ROUNDS", 1000))


def report_cached(
    campaign: Campaign,
    *,
    rounds: int | None = None,
    seed: int = 0,
    reference: str | None = None,
    include_unsubmitted: bool = False,
    ensembles: list[tuple[str, ...]] | None = None,
    stamp: tuple | None = None,
) -> dict:
    """`build_report`, reused until a label, submission, verdict or call of the campaign changes."""
    rounds = default_rounds() if rounds is None else rounds
    params = dict(rounds=rounds, seed=seed, reference=reference, include_unsubmitted=include_unsubmitted, ensembles=list(ensembles or []))
    stamp = stamp if stamp is not None else selectors.calibration_stamp(campaign=campaign)
    return _cached(campaign, "report", stamp, params, lambda: build_report(campaign, **params))


def report_and_charts_cached(campaign: Campaign, ensembles: list[tuple[str, ...]] | None = None) -> tuple[dict, dict[str, str]]:
    """The default report (with these ensembles) and its SVG charts (rendering them takes as long as a warm report)."""
    stamp = selectors.calibration_stamp(campaign=campaign)
    report = report_cached(campaign, stamp=stamp, ensembles=ensembles)
    params = {"rounds": report["parameters"]["rounds"], "ensembles": report["parameters"]["ensembles"]}
    return report, _cached(campaign, "charts", stamp, params, lambda: charts.report_charts(report))
