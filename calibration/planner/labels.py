"""The label planner: how many more human-labelled pairs a campaign needs, from the labels so far.

`plan_labels` reads the campaign through `calibration.selectors` (as the report does) and computes
with `calibration.metrics.planning`, whose docstring holds the formulas. It answers three questions,
each with its assumptions in words: (a) pairs for each judge's PAR CI to reach a half-width, (b) pairs
to tell the two leading judges apart at their observed difference with a given power, (c) pairs for
the judge's prediction-powered win rates to reach the half-width, and (d) items per annotator for the
alt-test (`calibration.planner.alttest`), and (e) compares the uniform and the active design for (c)'s
target in pairs and in money (`calibration.planner.designs`). One JSON-serialisable dict, read by
the `plan_labels` command and the dashboard.
"""

from __future__ import annotations

import numpy as np

from annotate.models import Campaign
from calibration import cache as report_cache
from calibration import metrics as M
from calibration import sampling, selectors
from calibration.metrics import planning, powered
from calibration.planner import alttest as planner_alttest
from calibration.planner import designs as planner_designs
from calibration.report import alttest as report_alttest
from calibration.report.build import resolve_reference

CONFIDENCE = 0.95
ASSUMPTIONS = {
    "par": (
        "Future pairs resemble the labelled ones: the same criteria and as many annotators per pair, and the judge "
        "agrees with the humans as often as so far; the judge will have judged every pair labelled next. "
        "Normal approximation with a per-pair (cluster) variance; the report's CIs are bootstrap percentile "
        "intervals over pairs and may differ slightly."
    ),
    "leading_pair": (
        "The two judges with the highest PAR keep the difference observed on the human labels of items both "
        "judged; a two-sided test at the 5% level; future pairs resemble the labelled ones and both judges will "
        "have judged them. Normal approximation with a per-pair variance."
    ),
    "scores": (
        "Prediction-powered win rates (PPI++, the judge's weight chosen for each system); labelled pairs are a "
        "random sample of the campaign's pairs, and so are the next ones, shared among the systems as so far; "
        "the judge has judged every pair; future pairs resemble the labelled ones. Normal approximation "
        "(1.96 standard errors); the report's win-rate CIs are Wilson intervals inside [0, 1], close to it away from "
        "0 and 1 and wider near them; the figure is the widest system's half-width."
    ),
}


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(float(x), digits)


def _check(target_halfwidth: float, power: float, batch: int, alt_margin: float = 0.05) -> None:
    if not 0 < target_halfwidth < 0.5:
        raise ValueError(f"the target half-width must lie between 0 and 0.5 (exclusive), not {target_halfwidth:g}")
    if not 0 < power < 1:
        raise ValueError(f"the power must lie between 0 and 1 (exclusive), not {power:g}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"the batch must be 1 pair or more, not {batch}")
    if not 0 <= alt_margin < 0.5:
        raise ValueError(f"the alt-test margin must lie in [0, 0.5), not {alt_margin:g}")


def _par_entry(name: str, moments: planning.RatioMoments | None, plan: planning.HalfwidthPlan | None) -> dict:
    return {
        "judge": name,
        "par": _r(moments.value) if moments else None,
        "n_labels": moments.n_labels if moments else 0,
        "n_pairs": moments.n_pairs if moments else 0,
        "halfwidth": _r(plan.halfwidth) if plan else None,
        "pairs_needed": plan.pairs_needed if plan else None,
        "more_pairs": plan.more_pairs if plan else None,
        "halfwidth_after_batch": _r(plan.halfwidth_after_batch) if plan else None,
        "reachable": plan.reachable if plan else None,
        "best_halfwidth": _r(plan.best_halfwidth) if plan else None,
    }


def _leading_pair(par: dict, merged: dict, humans: M.LabelTable, *, power: float, remaining: int, batch: int):
    """(the plan for telling the two judges with the highest PAR apart, or None; the reason when None)."""
    rated = sorted((-m.value, name) for name, m in par.items() if m is not None and m.plannable)
    if not len(humans):
        return None, "No human labels yet: there is no PAR to tell the judges apart by."
    if len(rated) < 2:
        return None, "Fewer than two judges have a PAR on two or more labelled pairs: there is no pair of judges to tell apart."
    a, b = rated[0][1], rated[1][1]
    moments = planning.difference_moments(merged[a], merged[b], humans)
    if moments is None or not moments.plannable:
        return None, f"{a} and {b} have human labels in common on fewer than two pairs: their difference cannot be planned for."
    plan = planning.plan_power(moments, power=power, remaining=remaining, batch=batch)
    if plan is None:
        return None, (
            f"{a} and {b} agree with the humans equally often on the items both judged (difference 0): "
            "no number of pairs tells them apart at the observed difference."
        )
    return {
        "a": a,
        "b": b,
        "difference": _r(plan.difference),
        "n_pairs": plan.n_pairs,
        "power_now": _r(plan.power_now, 3),
        "power_after_batch": _r(plan.power_after_batch, 3),
        "pairs_needed": plan.pairs_needed,
        "more_pairs": plan.more_pairs,
        "reachable": plan.reachable,
    }, None


def _scores_entry(name: str, reference: str | None, plan: planning.ScorePlan | None) -> dict:
    return {
        "judge": name,
        "reference": reference,
        "worst_system": plan.worst_system if plan else None,
        "halfwidth": _r(plan.halfwidth) if plan else None,
        "halfwidth_after_batch": _r(plan.halfwidth_after_batch) if plan else None,
        "pairs_needed": plan.pairs_needed if plan else None,
        "more_pairs": plan.more_pairs if plan else None,
        "reachable": plan.reachable if plan else None,
        "best_halfwidth": _r(plan.best_halfwidth) if plan else None,
        "systems": [
            {"system": s, "halfwidth": _r(now), "halfwidth_after_batch": _r(after)}
            for s, now, after in zip(plan.systems, plan.halfwidths, plan.halfwidths_after_batch)
        ]
        if plan
        else [],
    }


def _score_plan(merged: M.LabelTable, humans: M.LabelTable, reference: str | None, **kw) -> planning.ScorePlan | None:
    items = powered.build_items(humans, merged)
    if reference is not None and reference not in items.systems:
        return None
    return planning.plan_scores(planning.score_moments(items, reference), **kw)


def _judge_entries(name, moments, merged, humans, reference, systems, notes, *, labelled, remaining, target, batch) -> tuple[dict, dict]:
    """One judge's (a) and (c) entries; what stops a plan goes to `notes`."""
    plan = None
    if moments is not None and moments.plannable:
        plan = planning.plan_halfwidth(moments, target=target, remaining=remaining, batch=batch)
    elif len(humans) and len(merged):
        notes.append(f"{name}: human labels on fewer than two pairs it has judged, so no PAR plan.")
    scores = None
    if labelled and len(merged):
        scores = _score_plan(merged, humans, reference, n_labelled_pairs=labelled, remaining=remaining, target=target, batch=batch)
        if scores is None:
            notes.append(f"{name}: no system has human labels on two or more pairs it has judged, so no plan for its scores.")
        elif left_out := sorted(set(systems) - set(scores.systems) - {reference}):
            notes.append(f"{name}: {', '.join(left_out)} left out of the scores (fewer than two labelled pairs it has judged).")
    return _par_entry(name, moments, plan), _scores_entry(name, reference, scores)


def plan_labels(
    *,
    campaign: Campaign,
    judge: str | None = None,
    target_halfwidth: float = 0.03,
    power: float = 0.8,
    batch: int = 50,
    include_unsubmitted: bool = False,
    epsilon: float | None = None,
    epsilon_reason: str | None = None,
    alt_margin: float = 0.05,
) -> dict:
    """How many more human-labelled pairs `campaign` needs; `judge` restricts (a) and (c) to one judge.
    (d) uses the alt-test's epsilon given, else the campaign's."""
    _check(target_halfwidth, power, batch, alt_margin)
    alt_epsilon, alt_reason, _ = report_alttest.resolve_epsilon(campaign, epsilon, epsilon_reason)
    inputs = selectors.calibration_inputs(campaign=campaign, include_unsubmitted=include_unsubmitted)
    known = [s.name for s in inputs.judges]
    if judge is not None and judge not in known:
        raise ValueError(f"no judge named '{judge}' has worked on campaign '{campaign.name}' (judges: {', '.join(known) or 'none'})")
    return plan_from_table(
        inputs.table, known, name=campaign.name, n_pairs=inputs.n_pairs, systems=inputs.systems,
        reference=resolve_reference(campaign, inputs.systems, None), include_unsubmitted=include_unsubmitted,
        judge=judge, target_halfwidth=target_halfwidth, power=power, batch=batch,
        alt_epsilon=alt_epsilon, alt_epsilon_reason=alt_reason, alt_margin=alt_margin,
        designs=design_inputs(campaign, inputs.judges),
    )  # fmt: skip


def design_inputs(campaign: Campaign, judges: list[selectors.JudgeSummary]) -> planner_designs.DesignInputs:
    """(e)'s inputs from the database: the sampler's error model predicted on every pair, and the costs."""
    forecast = sampling.error_forecast(campaign=campaign)
    cost = campaign.human_cost_per_pair
    return planner_designs.DesignInputs(
        predicted_error=forecast.errors,
        note=forecast.note,
        uniform_share=campaign.sampling_uniform_share if campaign.sampling_uniform_share > 0 else 0.2,
        human_cost=None if cost is None else float(cost),
        judge_cost_usd={s.name: s.cost_usd for s in judges},
    )


def plan_from_table(
    table: M.LabelTable,
    known: list[str],
    *,
    name: str,
    n_pairs: int,
    systems: list[str],
    reference: str | None,
    include_unsubmitted: bool,
    judge: str | None = None,
    target_halfwidth: float = 0.03,
    power: float = 0.8,
    batch: int = 50,
    alt_epsilon: float | None = None,
    alt_epsilon_reason: str | None = None,
    alt_margin: float = 0.05,
    designs: planner_designs.DesignInputs | None = None,
) -> dict:
    """`plan_labels` without the database: `table` holds the human labels and the judges' raw
    verdicts, `known` the judges' names, `n_pairs` and `systems` the campaign's pairs and the systems
    they compare, `designs` what (e) needs beyond them (none: no error model, costs unknown)."""
    _check(target_halfwidth, power, batch, alt_margin)
    humans = table.humans()
    labelled = int(np.unique(humans.pair).size) if len(humans) else 0
    remaining = max(n_pairs - labelled, 0)
    notes: list[str] = []
    if not len(humans):
        notes.append(
            "No human labels yet"
            + ("" if include_unsubmitted else " in submitted assignments")
            + ": there is nothing to plan from; collect a first batch of labelled pairs."
        )
    if not known:
        notes.append("No judge has worked on this campaign yet: every question here needs a judge's verdicts.")
    if len(humans) and remaining == 0:
        notes.append("Every pair of the campaign has human labels: more annotators per pair are not modelled here.")
    elif len(humans) and remaining < batch:
        notes.append(f"Only {remaining} pairs have no human labels yet: the figures after the batch use {remaining}.")

    merged, par = {}, {}
    for rater in known:
        raw = table.for_rater(rater)
        merged[rater] = M.merge_swapped(raw) if len(raw) else raw
        par[rater] = planning.par_moments(merged[rater], humans) if len(raw) and len(humans) else None
    chosen = [judge] if judge is not None else known
    for rater in chosen:
        judged = int(np.unique(merged[rater].pair).size) if len(merged[rater]) else 0
        if len(humans) and judged < n_pairs:
            notes.append(f"{rater} has judged {judged} of the {n_pairs} pairs; the figures assume it will judge the pairs labelled next.")

    par_entries, score_entries = [], []
    for rater in chosen:
        par_entry, score_entry = _judge_entries(
            rater, par[rater], merged[rater], humans, reference, systems, notes,
            labelled=labelled, remaining=remaining, target=target_halfwidth, batch=batch,
        )  # fmt: skip
        par_entries.append(par_entry)
        score_entries.append(score_entry)
    order = sorted(range(len(chosen)), key=lambda i: (par_entries[i]["par"] is None, -(par_entries[i]["par"] or 0), chosen[i]))
    par_entries, score_entries = [par_entries[i] for i in order], [score_entries[i] for i in order]
    if reference is None and known:
        notes.append("No reference system: win rates are against the field.")

    leading, reason = _leading_pair(par, merged, humans, power=power, remaining=remaining, batch=batch)
    return {
        "campaign": name,
        "n_pairs": n_pairs,
        "n_labelled_pairs": labelled,
        "target_halfwidth": target_halfwidth,
        "power": power,
        "confidence_level": CONFIDENCE,
        "batch": batch,
        "par": par_entries,
        "leading_pair": leading,
        "leading_pair_reason": reason,
        "scores": score_entries,
        "alt_test": planner_alttest.alt_test_plan(humans, epsilon=alt_epsilon, reason=alt_epsilon_reason, margin=alt_margin),
        "designs": planner_designs.design_section(
            score_entries, humans, merged, designs or planner_designs.DesignInputs(), n_pairs=n_pairs, n_labelled_pairs=labelled
        ),
        "assumptions": {**ASSUMPTIONS, "designs": planner_designs.ASSUMPTION},
        "notes": notes,
    }


def plan_labels_cached(*, campaign: Campaign, **params) -> dict:
    """`plan_labels`, reused until a label, submission, verdict or call of the campaign changes (the
    dashboard's panel polls it)."""
    stamp = selectors.calibration_stamp(campaign=campaign)
    key = dict(params)
    if campaign.alt_epsilon is not None:  # (d) follows the epsilon recorded on the campaign
        key["campaign_alt_epsilon"] = (campaign.alt_epsilon, campaign.alt_epsilon_reason)
    return report_cache.campaign_cached(campaign, "plan", stamp, key, lambda: plan_labels(campaign=campaign, **params))


def plan_parameters(query) -> dict:
    """The planner's parameters from a query dict (the dashboard panel, the API): `target`, `power`,
    `batch`, `judge`; ValueError with a message for a value that is not a number."""
    params: dict = {}
    for key, name, kind in (
        ("target", "target_halfwidth", float),
        ("power", "power", float),
        ("batch", "batch", int),
        ("margin", "alt_margin", float),
    ):
        raw = (query.get(key) or "").strip()
        if not raw:
            continue
        try:
            value = kind(raw)
        except ValueError:
            raise ValueError(f"{key} must be {'a whole number' if kind is int else 'a number'}, not '{raw[:40]}'") from None
        if kind is float and value != value:
            raise ValueError(f"{key} must be a number, not '{raw[:40]}'")
        params[name] = value
    judge = (query.get("judge") or "").strip()
    if judge:
        params["judge"] = judge
    _check(params.get("target_halfwidth", 0.03), params.get("power", 0.8), params.get("batch", 50), params.get("alt_margin", 0.05))
    return params
