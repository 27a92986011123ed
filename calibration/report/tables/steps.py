"""Display tables of the report's `steps` section (campaigns that show the agents' steps): each
system's step and passage upvote rates beside its Bradley-Terry score, the rates by kind of step,
the annotators' agreement on step votes, and each judge's votes on the steps against theirs.

Pure: no Django.
"""

from __future__ import annotations

from calibration.report.table_format import DASH, Table


def _rate(estimate: dict | None, unit: str | None = None) -> str:
    """The estimate with its interval and n: n votes and n pairs, or n of `unit` when it is given."""
    if not estimate or estimate["value"] is None:
        return DASH
    low, high = estimate["ci"]
    ci = "" if low is None else f" [{low:.3f}, {high:.3f}]"
    counted = f"{estimate['n']:,} {unit}" if unit else f"{estimate['n']:,}, {estimate['n_pairs']:,} pairs"
    return f"{estimate['value']:.3f}{ci} (n = {counted})"


def _tau(entry: dict) -> str:
    return DASH if entry["kendall_tau"] is None else f"{entry['kendall_tau']:.2f} ({entry['n_systems']} systems)"


def _alt(alt: dict) -> str:
    return alt.get("note") or alt.get("summary") or DASH


def _judge_rows(found: dict) -> list[list[str]]:
    rows = []
    for name, entry in found["judges"].items():
        figures = entry["figures"]
        rows.append(
            [
                name,
                _rate(figures.get("agreement"), "vote pairs"),
                _rate(figures.get("kappa"), "vote pairs"),
                _rate(figures.get("agreement_majority"), "steps"),
                _rate(figures.get("mean"), "steps"),
                _rate(figures.get("human_mean"), "steps"),
                _alt(entry["alt_test"]),
            ]
        )
    return rows


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
    found = steps.get("judges")
    judges_note = "No judge has voted on the steps (run_judges --steps)."
    if found:
        ceiling = found["human_ceiling"]
        judges_note = (
            f"{found['n_steps']:,} steps of {found['n_articles']:,} articles, {found['n_votes']:,} votes. Human ceiling: "
            f"agreement {_rate(ceiling.get('agreement'), 'vote pairs')}, kappa {_rate(ceiling.get('kappa'), 'vote pairs')}. "
            f"{found['rule']}."
        )
    return {
        "step_judges": Table(
            "step_judges",
            "Judges' votes on the agents' steps against the annotators'",
            [
                "Judge",
                "Agreement",
                "Cohen's kappa",
                "Agreement with the majority",
                "Judge upvote rate",
                "Annotators' upvote rate",
                "Alt-test",
            ],
            _judge_rows(found) if found else [],
            [False, True, True, True, True, True, False],
            judges_note,
            "No judge has voted on the steps yet (run_judges --steps).",
        ),
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
