"""Display table of the report's `gold` section (campaigns with known-answer pairs only): every
rater's gold accuracy with its interval, n answers and n gold pairs, and the accuracy per kind of damage.

Pure: no Django.
"""

from __future__ import annotations

from calibration.report.table_format import DASH, Table


def _accuracy(estimate: dict) -> str:
    if estimate["value"] is None:
        return DASH
    low, high = estimate["ci"]
    ci = "" if low is None else f" [{low:.3f}, {high:.3f}]"
    return f"{estimate['value']:.3f}{ci} (n = {estimate['n']:,}, {estimate['n_pairs']:,} pairs)"


def gold_tables(report: dict) -> dict[str, Table]:
    gold = report.get("gold")
    if gold is None:
        return {}
    kinds = sorted({kind for entry in gold["raters"] for kind in entry["by_kind"]})
    rows = [
        [
            entry["rater"],
            _accuracy(entry["accuracy"]),
            f"{entry['n_ties']:,}",
            *(_accuracy(entry["by_kind"][kind]) if kind in entry["by_kind"] else DASH for kind in kinds),
        ]
        for entry in gold["raters"]
    ]
    note = f"{gold['n_gold_pairs']:,} known-answer pairs. Accuracy: {gold['rule']}. Gold pairs are left out of every other table."
    return {
        "gold": Table(
            "gold",
            "Gold accuracy (known-answer pairs)",
            ["Rater", "Gold accuracy", "Ties", *kinds],
            rows,
            [False, True, True, *(True for _ in kinds)],
            note,
            "No answer on the known-answer pairs yet." if not rows else DASH,
        )
    }
