"""The report's `selective` section: the cascade of `calibrate_selective` inside the calibration report.

Asked for with `calibration_report --alpha A --delta D [--cascade j1,j2] [--human-cost X]`, else taken
from the campaign's frozen study plan when it states α and δ; otherwise the section only says it was
not requested. The figures are `calibration.cascade.selective_cascade`'s, unchanged (the
same JSON `calibrate_selective --format json` prints), plus the cascade's composition: the share of
the calibration items each judge accepts and the share left to humans.

The cascade is computed once per campaign stamp and options, in the shared cache (its own entry, so
that α, δ, the judges and the human cost never make the rest of the report be computed again).
"""

from __future__ import annotations

from annotate.models import Campaign
from calibration import cache as report_cache
from calibration.cascade import judges_with_confidences, selective_cascade, selective_parameters
from calibration.plan.study import frozen_plan

NOT_REQUESTED = "not requested (give --alpha and --delta, or freeze a study plan with them)"


def selective_request(campaign: Campaign, options: dict | None) -> dict | None:
    """The checked request: α, δ, the judges (None: every judge with confidences, cheapest first), the
    human cost and where α and δ came from (`options` or `plan`); None when not requested.
    ValueError (one line) for a bad value, or an option without α and δ to go with it."""
    options = options or {}
    alpha, delta = options.get("alpha"), options.get("delta")
    cascade, human_cost = options.get("cascade"), options.get("human_cost")
    if (alpha is None) != (delta is None):
        raise ValueError("give both --alpha and --delta (selective judging), or neither")
    source = "options"
    if alpha is None:
        plan = frozen_plan(campaign)
        record = plan.record if plan is not None else {}
        if record.get("alpha") is None or record.get("delta") is None:
            if cascade is not None or human_cost is not None:
                raise ValueError("--cascade and --human-cost go with --alpha and --delta (or a study plan that states them)")
            return None
        alpha, delta, source = record["alpha"], record["delta"], "plan"
    params = selective_parameters(alpha, delta, human_cost)
    judges = None if cascade is None else [n.strip() for n in str(cascade).split(",") if n.strip()]
    if judges is not None and not judges:
        raise ValueError("--cascade needs at least one judge name (j1,j2,...)")
    return {"alpha": params["alpha"], "delta": params["delta"], "judges": judges, "human_cost": params["human_cost"], "source": source}


def composition(out: dict) -> list[dict]:
    """Who decides the calibration items: each judge's accepted share, then the humans' share."""
    n = out["n_calibration"]
    rows = [{"by": s["judge"], "n": s["n_accepted"], "share": s["n_accepted"] / n if n else None} for s in out["stages"]]
    rows.append({"by": "humans", "n": out["n_to_humans"], "share": out["human_share"]})
    return rows


def section(campaign: Campaign, request: dict | None, *, rounds: int, stamp: tuple) -> dict:
    """The `selective` section (docs/calibration-report.md). With α and δ from the command, a judge
    without confidences is a ValueError; with α and δ from the plan, the section states the reason."""
    if request is None:
        return {"requested": False, "note": NOT_REQUESTED}
    names = request["judges"] if request["judges"] is not None else judges_with_confidences(campaign=campaign)
    head = {"requested": True, "source": request["source"], "judges_asked": names}

    def build() -> dict:
        try:
            if not names:
                raise ValueError("no judge has confidences on this campaign (name the cascade's judges with --cascade j1,j2)")
            out = selective_cascade(
                campaign=campaign, judge_names=names, alpha=request["alpha"], delta=request["delta"],
                human_cost=request["human_cost"], rounds=rounds,
            )  # fmt: skip
        except ValueError as exc:
            if request["source"] == "options":
                raise
            return {**head, "alpha": request["alpha"], "delta": request["delta"], "error": str(exc)}
        return {**head, **out, "composition": composition(out)}

    params = {key: request[key] for key in ("alpha", "delta", "human_cost", "source")}
    params.update(judges=names, rounds=rounds)
    return report_cache.campaign_cached(campaign, "selective", stamp, params, build)
