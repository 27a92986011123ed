"""Selective judging and cascades on a campaign (`calibrate_selective`, the dashboard's cascade panel).

Reads the campaign's human labels and the named judges' verdicts with their confidences, and hands
them to `calibration.metrics.selective` (`cascade_calibrate`, `cascade_holdout`).

Items: (pair, criterion) with a strict majority of the human labels (the reference; items whose
humans are split are left out). A judge's verdict on an item merges its orders: when the item has
samples (judges with `--confidence samples:N`), every sample of both orders is pooled
(`sample_confidence`: the side most samples give, and the share giving it); otherwise the orders'
verdicts must agree, the confidence then being the lowest of theirs, and a judge whose orders
disagree gives a tie with confidence 0 (it contradicts itself). An item a judge did not judge, or
judged without a confidence, is never accepted by it (confidence NaN).

Split rule: the pairs are split in two by the first byte of SHA-256("selective:<pair id>"): even
calibrates the thresholds, odd is held out to check them; every criterion of a pair lands on the
same side, and the split depends on the pair alone, never on a label or a verdict. With
``holdout=0`` every labelled item calibrates (an imported calibration split is one): the guarantee
holds as before, but the agreement on fresh items is then not measured, and the output says so.

The fixed sequence starts at ``min_accepted`` accepted items (`metrics.selective.MIN_ACCEPTED`).

Sending to humans (`abstained_pair_ids`): the calibrated thresholds are applied to every item
(pair, criterion) of the campaign's pairs, known-answer pairs aside; a pair goes to humans when
at least one of its items is accepted by no judge of the cascade (never judged counts as not
accepted).

Costs: a judge's cost per item asked is what its calls for the campaign cost (USD) over the items it
judged; unknown when the judge has no prices or a call had none. The cascade is ordered cheapest
first when every cost is known, else in the order given, and its costs are then unknown.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from dataclasses import asdict

import numpy as np
from django.db.models import Q, Sum

from annotate.models import Campaign, Item, Pair
from calibration import cache as report_cache
from calibration.metrics.confidence import sample_confidence
from calibration.metrics.labels import LabelTable
from calibration.metrics.selective import MIN_ACCEPTED, CascadeJudge, cascade_calibrate, cascade_holdout
from calibration.selectors import calibration_stamp, human_label_rows, judge_verdict_rows
from judges.models import Judge, JudgeCall, JudgeVerdict
from judges.selectors import campaign_judges_named
from protocols.pairwise import system_of

SPLIT_RULE = (
    'pairs split by the first byte of SHA-256("selective:<pair id>"): even calibrates, odd is held out '
    "(every criterion of a pair on one side; the split ignores labels and verdicts)"
)
HOLDOUTS = (0.0, 0.5)  # the share of pairs held out: none, or half (SPLIT_RULE)
NO_HOLDOUT_RULE = "every labelled item calibrates (--holdout 0): nothing is held out"
NOT_MEASURED = (
    "not measured: nothing was held out, so the agreement on items the thresholds were not chosen on is unknown; "
    "the guarantee (probability ≥ 1 − δ over the draw of the calibration items) is the only statement about fresh items"
)


def sequence_rule(min_accepted: int) -> str:
    return (
        f"fixed sequence over the thresholds from the highest down, each accepting 1% more of the calibration items, "
        f"starting at the first that accepts at least {min_accepted} (a minimum set before any label is read), "
        "stopping before the first whose one-sided Clopper-Pearson bound on disagreement exceeds α"
    )


def holdout_value(value) -> float:
    """The held-out share, 0 or 0.5; ValueError with a one-line message otherwise."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if number not in HOLDOUTS:
        raise ValueError(f"the held-out share must be 0 (calibrate on every labelled item) or 0.5, got '{value}'")
    return number


def min_accepted_value(value) -> int:
    try:
        number = int(str(value))
    except ValueError:
        number = 0
    if number < 1:
        raise ValueError(f"the minimum of accepted items must be a whole number, 1 or more, got '{value}'")
    return number


def selective_parameters(alpha, delta, human_cost=None) -> dict:
    """Checked α, δ and human cost per item (None: unknown); ValueError with a one-line message."""
    values = {}
    for name, value in (("alpha", alpha), ("delta", delta)):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a number between 0 and 1 (exclusive), got '{value}'") from None
        if not 0.0 < number < 1.0:
            raise ValueError(f"{name} must be a number between 0 and 1 (exclusive), got '{value}'")
        values[name] = number
    values["human_cost"] = None
    if human_cost not in (None, ""):
        try:
            values["human_cost"] = float(human_cost)
        except (TypeError, ValueError):
            values["human_cost"] = -1.0
        if not math.isfinite(values["human_cost"]) or values["human_cost"] < 0:
            raise ValueError(f"the human cost per item must be a number of USD, zero or more, got '{human_cost}'")
    return values


def heldout_pair(pair_id: int) -> bool:
    return hashlib.sha256(f"selective:{pair_id}".encode()).digest()[0] % 2 == 1


def _human_reference(campaign: Campaign) -> dict[tuple[int, str], str]:
    sides: dict[tuple[int, str], list[str]] = defaultdict(list)
    for pair_id, criterion, side in human_label_rows(campaign=campaign).values_list("assignment__pair_id", "criterion__key", "winner"):
        sides[pair_id, criterion].append(side)
    reference = {}
    for item, given in sides.items():
        top = max(set(given), key=given.count)
        if given.count(top) * 2 > len(given):
            reference[item] = top
    return reference


def judge_item_confidences(campaign: Campaign, judge: Judge) -> dict[tuple[int, str], tuple[str, float]]:
    """(pair, criterion) -> (merged side, confidence; NaN when unknown), by the module's rule."""
    orders: dict[tuple[int, str], list[tuple]] = defaultdict(list)
    rows = judge_verdict_rows(campaign=campaign).filter(unit__judge=judge)
    for pair_id, criterion, a_first, side, sure, samples in rows.values_list(
        "unit__pair_id", "criterion__key", "unit__a_first", "winner", "confidence", "samples"
    ):
        orders[pair_id, criterion].append((a_first, side, sure, samples))
    out = {}
    for item, given in orders.items():
        if any(samples for *_, samples in given):
            answers, swapped = [], []
            for a_first, _, _, samples in given:
                for answer in filter(None, samples.split(",")):
                    answers.append(answer)
                    swapped.append(not a_first)
            pooled = sample_confidence(answers, swapped)
            out[item] = (pooled.verdict, pooled.confidence)
            continue
        sides = {side for _, side, _, _ in given}
        known = [sure for *_, sure, _ in given if sure is not None]
        if len(sides) > 1:
            out[item] = ("tie", 0.0)
        else:
            out[item] = (sides.pop(), min(known) if len(known) == len(given) else math.nan)
    return out


def _cost_per_item(campaign: Campaign, judge: Judge, n_items: int) -> float | None:
    if not judge.costs_known or n_items == 0:
        return None
    calls = JudgeCall.objects.filter(unit__judge=judge, unit__pair__campaign=campaign, unit__pair__kind=Item.Kind.PAIR)
    if calls.filter(cost_usd__isnull=True).exists():
        return None
    total = calls.aggregate(total=Sum("cost_usd"))["total"] or 0
    return float(total) / n_items


def selective_inputs(*, campaign: Campaign, judge_names: list[str]) -> dict:
    """The aligned arrays `cascade_calibrate` takes: items, pair ids, held-out mask, and per judge
    its confidence, agreement and cost per item. ValueError (one line) for an unknown judge or one
    without confidences on the campaign's human-labelled items."""
    if not judge_names:
        raise ValueError("give at least one judge (--judges a,b,c)")
    judges = campaign_judges_named(campaign=campaign, names=judge_names)
    missing = [name for name in judge_names if name not in judges]
    if missing:
        raise ValueError(f"no judge named {', '.join(repr(m) for m in missing)}")
    reference = _human_reference(campaign)
    items = sorted(reference)
    if not items:
        raise ValueError(f"campaign '{campaign.name}' has no item with a human majority to calibrate on")
    pair_ids = np.array([pair for pair, _ in items])
    out = {"items": items, "pair": pair_ids, "heldout": np.array([heldout_pair(int(p)) for p in pair_ids], bool), "judges": {}}
    for name in judge_names:
        merged = judge_item_confidences(campaign, judges[name])
        confidence = np.array([merged.get(item, ("", math.nan))[1] for item in items], float)
        if not np.isfinite(confidence).any():
            raise ValueError(
                f"judge '{name}' has no confidences on this campaign's labelled items "
                "(add it with --confidence logprobs or samples:N and run it, or import a confidence column)"
            )
        agree = np.array([merged.get(item, ("", 0))[0] == reference[item] for item in items], bool)
        out["judges"][name] = {"confidence": confidence, "agree": agree, "cost": _cost_per_item(campaign, judges[name], len(merged))}
    return out


def _estimate(estimate) -> dict | None:
    return None if estimate is None else {k: v for k, v in asdict(estimate).items() if k in ("value", "n", "ci_low", "ci_high", "n_pairs")}


def selective_cascade(
    *,
    campaign: Campaign,
    judge_names: list[str],
    alpha,
    delta,
    human_cost=None,
    rounds: int = 1000,
    holdout=0.5,
    min_accepted=MIN_ACCEPTED,
) -> dict:
    """The cascade calibrated on the calibration half and checked on the held-out half (``holdout`` 0.5),
    or calibrated on every labelled item without a check (``holdout`` 0), as plain data."""
    params = selective_parameters(alpha, delta, human_cost)
    holdout, min_accepted = holdout_value(holdout), min_accepted_value(min_accepted)
    data = selective_inputs(campaign=campaign, judge_names=judge_names)
    if holdout == 0:
        data["heldout"] = np.zeros(len(data["items"]), bool)
    costs = {name: j["cost"] for name, j in data["judges"].items()}
    costs_known = all(c is not None for c in costs.values()) and params["human_cost"] is not None
    calib, held = ~data["heldout"], data["heldout"]
    judges = [
        CascadeJudge(name, j["confidence"][calib], j["agree"][calib], costs[name] if costs[name] is not None and costs_known else 0.0)
        for name, j in data["judges"].items()
    ]
    result = cascade_calibrate(
        judges, alpha=params["alpha"], delta=params["delta"], human_cost_per_item=params["human_cost"] or 0.0,
        pair=data["pair"][calib], rounds=rounds, min_accepted=min_accepted,
    )  # fmt: skip
    ordered = [s.selective.judge for s in result.stages]
    check = None
    if held.any():
        check = cascade_holdout(
            result, [data["judges"][n]["confidence"][held] for n in ordered], [data["judges"][n]["agree"][held] for n in ordered],
            pair=data["pair"][held], rounds=rounds,
        )  # fmt: skip
    stages = []
    for i, stage in enumerate(result.stages):
        sel = stage.selective
        hold = check["stages"][i] if check else None
        stages.append({
            "judge": sel.judge, "threshold": sel.threshold, "n_reaching": stage.n_reaching, "n_accepted": stage.n_accepted,
            "coverage": _estimate(sel.coverage), "agreement": _estimate(sel.agreement), "bound": sel.bound,
            "guarantee": sel.guarantee, "cost_per_item": costs[sel.judge],
            "cost_per_accepted": stage.cost_per_accepted if costs_known else None,
            "holdout": None if hold is None else {"n": hold.n, "n_accepted": hold.n_accepted, "agreement": _estimate(hold.agreement),
                                                  "target": hold.target, "meets": hold.meets},
        })  # fmt: skip
    overall = check["overall"] if check else None
    return {
        "campaign": campaign.name, "alpha": params["alpha"], "delta": params["delta"], "target": 1 - params["alpha"],
        "guarantee_words": f"with probability ≥ 1 − δ = {1 - params['delta']:g}, agreement with the humans on accepted items is ≥ 1 − α = {1 - params['alpha']:g}",
        "split_rule": SPLIT_RULE if holdout else NO_HOLDOUT_RULE, "holdout_share": holdout,
        "not_measured": None if holdout else NOT_MEASURED, "min_accepted": min_accepted,
        "sequence_rule": sequence_rule(min_accepted), "coverage": _coverage_of(result), "n_items": len(data["items"]), "n_calibration": int(calib.sum()), "n_heldout": int(held.sum()),
        "stages": stages, "n_to_humans": result.n_to_humans, "human_share": result.human_share,
        "agreement": _estimate(result.agreement), "cascade_guarantee": result.guarantee,
        "human_cost_per_item": params["human_cost"], "cost": result.cost if costs_known else None,
        "all_human_cost": result.all_human_cost if costs_known else None, "saving": result.saving if costs_known else None,
        "holdout": None if overall is None else {"n": overall.n, "n_accepted": overall.n_accepted, "agreement": _estimate(overall.agreement),
                                                 "target": overall.target, "meets": overall.meets, "n_to_humans": check["n_to_humans"]},
    }  # fmt: skip


def _coverage_of(result) -> dict:
    """The cascade's coverage on the calibration items: the share some judge accepts."""
    accepted = result.n - result.n_to_humans
    return {"value": accepted / result.n if result.n else None, "n": result.n, "n_accepted": accepted}


def selective_cascade_cached(*, campaign: Campaign, judge_names: list[str], alpha, delta, human_cost=None, rounds: int = 1000) -> dict:
    """`selective_cascade` from the shared report cache, keyed by the campaign's data stamp and these
    values (the dashboard's cascade panel: its bootstrap runs once per change of the data or the form)."""
    params = {"judges": list(judge_names), "alpha": alpha, "delta": delta, "human_cost": human_cost, "rounds": rounds}
    return report_cache.campaign_cached(
        campaign, "cascade", calibration_stamp(campaign=campaign), params,
        lambda: selective_cascade(campaign=campaign, judge_names=judge_names, alpha=alpha, delta=delta, human_cost=human_cost, rounds=rounds),
    )  # fmt: skip


def estimate_text(estimate: dict | None) -> str:
    """An estimate as `0.912 [0.880, 0.940] (n = 120)`; `-` when there is none."""
    if estimate is None or estimate["value"] is None:
        return "-"
    ci = "" if estimate["ci_low"] is None else f" [{estimate['ci_low']:.3f}, {estimate['ci_high']:.3f}]"
    return f"{estimate['value']:.3f}{ci} (n = {estimate['n']})"


def usd_text(value) -> str:
    return "unknown" if value is None else f"${value:.6f}"


def judges_with_confidences(*, campaign: Campaign) -> list[str]:
    """Names of the judges with at least one verdict carrying a confidence (or samples) on the
    campaign, cheapest first: by what their calls cost per verdict (unknown costs last), then name."""
    with_confidence = judge_verdict_rows(campaign=campaign).filter(Q(confidence__isnull=False) | ~Q(samples=""))
    names = sorted(set(with_confidence.values_list("unit__judge__name", flat=True)))
    keys = {}
    for judge in campaign_judges_named(campaign=campaign, names=names).values():
        n = JudgeVerdict.objects.filter(unit__judge=judge, unit__pair__campaign=campaign, unit__pair__kind=Item.Kind.PAIR).count()
        cost = _cost_per_item(campaign, judge, n)
        keys[judge.name] = (cost is None, cost or 0.0, judge.name)
    return sorted(names, key=keys.__getitem__)


def abstained_pair_ids(*, campaign: Campaign, out: dict) -> list[int]:
    """Pairs of the campaign (known-answer pairs aside) with at least one item that no judge of the
    calibrated cascade `out` (`selective_cascade`) accepts, in the campaign's order."""
    criteria = list(campaign.criterion_set.criteria.values_list("key", flat=True))
    pairs = list(campaign.pairs.filter(gold__isnull=True).values_list("pk", flat=True))
    judges = campaign_judges_named(campaign=campaign, names=[s["judge"] for s in out["stages"]])
    accepted: set[tuple[int, str]] = set()
    for stage in out["stages"]:
        if stage["threshold"] is None:
            continue
        for item, (_, sure) in judge_item_confidences(campaign, judges[stage["judge"]]).items():
            if sure >= stage["threshold"]:  # NaN (no confidence) compares False: never accepted
                accepted.add(item)
    return [pair for pair in pairs if any((pair, key) not in accepted for key in criteria)]


def selective_lines(out: dict) -> list[str]:
    """The cascade in words, one judge after another (cheapest first)."""
    lines = [
        f"Selective judging on '{out['campaign']}': α = {out['alpha']:g}, δ = {out['delta']:g}.",
        f"Guarantee sought: {out['guarantee_words']}.",
        f"Items (pair, criterion) with a human majority: {out['n_items']}; calibration {out['n_calibration']}, "
        f"held out {out['n_heldout']} ({out['split_rule']}).",
        f"Rule: {out['sequence_rule']}.",
    ]
    if out.get("not_measured"):
        lines.append(f"Held-out agreement: {out['not_measured']}.")
    for i, stage in enumerate(out["stages"], 1):
        lam = "none (abstains on every item)" if stage["threshold"] is None else f"{stage['threshold']:.4g}"
        lines += [
            f"{i}. {stage['judge']}: λ̂ = {lam}; asked about {stage['n_reaching']} calibration items, accepts {stage['n_accepted']}",
            f"   coverage {estimate_text(stage['coverage'])}; agreement on accepted items {estimate_text(stage['agreement'])}",
            f"   {stage['guarantee']}",
            f"   cost per accepted item: {usd_text(stage['cost_per_accepted'])} (per item asked: {usd_text(stage['cost_per_item'])})",
        ]
        hold = stage["holdout"]
        if hold is not None:
            lines.append(
                f"   held out: accepts {hold['n_accepted']} of {hold['n']}; agreement {estimate_text(hold['agreement'])} beside 1 − α = {hold['target']:g}"
            )
    lines.append(f"Humans: {out['n_to_humans']} calibration items no judge accepts ({out['human_share']:.1%}) go to humans.")
    lam = ", ".join(f"{s['judge']} {'none' if s['threshold'] is None else format(s['threshold'], '.4g')}" for s in out["stages"])
    cover = out["coverage"]
    share = "-" if cover["value"] is None else f"{cover['value']:.1%} ({cover['n_accepted']} of {cover['n']})"
    lines.append(
        f"Cascade: thresholds {lam}; coverage {share}; agreement on judge-accepted items {estimate_text(out['agreement'])}. "
        f"{out['cascade_guarantee']}"
    )
    if out["cost"] is None:
        lines.append("Cost: unknown (a judge has no prices, or no --human-cost was given).")
    else:
        lines.append(
            f"Cost on the calibration items: {usd_text(out['cost'])} against {usd_text(out['all_human_cost'])} all-human (saving {out['saving']:.1%})."
        )
    hold = out["holdout"]
    if hold is not None:
        lines.append(
            f"Held-out check: the cascade accepts {hold['n_accepted']} of {hold['n']} items, agreement {estimate_text(hold['agreement'])} "
            f"beside 1 − α = {hold['target']:g}; {hold['n_to_humans']} go to humans."
        )
    return lines


def confidence_table(*, campaign: Campaign) -> tuple[LabelTable, np.ndarray]:
    """Every judge with confidences: one row per item it judged (its orders merged by the module's
    rule: `judge_item_confidences`), and the confidence of each row (NaN: unknown). The report's
    tie-aware accuracy and soft-label distances read it (`calibration.report.ties`)."""
    names = sorted(
        set(
            judge_verdict_rows(campaign=campaign)
            .filter(Q(confidence__isnull=False) | ~Q(samples=""))
            .values_list("unit__judge__name", flat=True)
        )
    )
    if not names:
        return LabelTable.empty(), np.zeros(0)
    systems = {
        pk: (a, b)
        for pk, a, b in Pair.objects.filter(campaign=campaign).values_list("id", "article_a__system__key", "article_b__system__key")
    }
    columns: dict[str, list] = defaultdict(list)
    confidence = []
    for judge in Judge.objects.filter(name__in=names).order_by("name"):
        for (pair_id, criterion), (side, sure) in judge_item_confidences(campaign, judge).items():
            if side not in ("a", "b", "tie"):
                continue  # no verdict to score (an empty winner)
            a, b = systems[pair_id]
            for key, value in (
                ("pair", str(pair_id)), ("criterion", criterion), ("category", ""), ("rater", judge.name), ("rater_kind", "judge"),
                ("system_a", a), ("system_b", b), ("winner", system_of(side, a, b)),
            ):  # fmt: skip
                columns[key].append(value)
            confidence.append(sure)
    return LabelTable.from_columns(**columns), np.asarray(confidence, dtype=np.float64)
