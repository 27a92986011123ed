"""Display tables of the report's `steps` section (campaigns that show the agents' steps): each
system's step and passage upvote rates beside its Bradley-Terry score, the rates by kind of step,
and the annotators' agreement on step votes.

Pure: no Django.
"""

from __future__ import annotations

from calibration.report.table_format import DASH, Table


def _rate(estimate: dict | None) -> str:
    if not estimate or estimate["value"] is None:
        return DASH
    low, high = estimate["ci"]
    ci = "" if low is None else f" [{low:.3f}, {high:.3f}]"
    return f"{estimate['value']:.3f}{ci} (n = {estimate['n']:,}, {estimate['n_pairs']:,} pairs)"


def _tau(entry: dict) -> str:
    return DASH if entry["kendall_tau"] is None else f"{entry['kendall_tau']:.2f} ({entry['n_systems']} systems)"


def step_tables(report: dict) -> dict[str, Table]:
    steps = report.get("steps")
    if steps is None:
        return {}
    rankings, agreement = steps["rankings"], steps["agreement"]
    rows = [
        [
            entry["system"],
            _rate(entry["step_upvote_rate"]),
            _rate(entry["span_upvote_rate"]),
            DASH if entry["bradley_terry"] is None else f"{entry['bradley_terry']:.1f}",
        ]
        for entry in steps["systems"]
    ]
    kappa = DASH if agreement["kappa"] is None else f"{agreement['kappa']:.3f}"
    note = (
        f"{steps['n_step_votes']:,} step votes, {steps['n_span_votes']:,} passage votes. Kendall's tau against the humans' "
        f"Bradley-Terry ranking: step upvote rate {_tau(rankings['step_upvote_rate'])}, passage upvote rate "
        f"{_tau(rankings['span_upvote_rate'])}. Annotators on step votes: kappa {kappa} over {agreement['n_steps']:,} steps, "
        f"leave-one-out ceiling {_rate(agreement['ceiling'])}. {steps['rule']}." + "".join(f" {n}" for n in steps["notes"])
    )
    by_kind = [[entry["system"], entry["kind"], _rate(entry["step_upvote_rate"])] for entry in steps["by_kind"]]
    return {
        "steps": Table(
            "steps",
            "Votes on the agents' steps and passages",
            ["System", "Step upvote rate", "Passage upvote rate", "Bradley-Terry (humans)"],
            rows,
            [False, True, True, True],
            note,
            "No vote on a step or passage yet.",
        ),
        "steps_by_kind": Table(
            "steps_by_kind",
            "Step upvote rate by kind of step",
            ["System", "Kind", "Step upvote rate"],
            by_kind,
            [False, False, True],
            "Each system's steps of one kind (plan, search, read, ...); 95% interval resampling pairs.",
            "No vote on a step yet.",
        ),
    }
