"""The report's `acceptable_sets` section (issue 40): in a campaign that asks annotators for every
verdict they find acceptable, each judge's PAR under the single choice and under the set, side by
side, the best judge under each reading, and whether it changes (`metrics.acceptable`)."""

from __future__ import annotations

from calibration import selectors
from calibration.metrics.acceptable import Selection, judge_selection
from calibration.metrics.bootstrap import Estimate
from calibration.report.table_format import DASH, Table, nested

RULE = (
    "Each judge verdict against each human label of its item (pair x criterion), every order the judge was asked in counting "
    "once: under the single choice it agrees when it is the annotator's winner, under the set when it is any verdict the "
    "annotator found acceptable (the winner among them). The best judge of a reading has the highest PAR (equal values: "
    "the name first in alphabetical order). Brackets: 95% pair-bootstrap CI."
)


def _entry(estimate: Estimate) -> dict:
    return {
        "value": estimate.value,
        "ci": None if estimate.ci_low is None else [estimate.ci_low, estimate.ci_high],
        "n": estimate.n,
        "n_pairs": estimate.n_pairs,
        "small_n": estimate.small_n,
    }


def section_of(selection: Selection) -> dict:
    return {
        "judges": [{"judge": j.judge, "par_single": _entry(j.single), "par_set": _entry(j.in_set)} for j in selection.judges],
        "best_single": selection.best_single,
        "best_set": selection.best_set,
        "best_changes": selection.changed,
        "n_comparisons_with_sets": selection.n_labels_with_sets,
        "rule": RULE,
    }


def section(campaign, *, include_unsubmitted: bool, rounds: int, seed: int) -> dict:
    rows = selectors.acceptable_set_comparisons(campaign=campaign, include_unsubmitted=include_unsubmitted)
    return section_of(judge_selection(rows, rounds=rounds, seed=seed))


def verdict_line(found: dict) -> str:
    """Which judge each reading picks, and a warning when they differ."""
    if found["best_single"] is None:
        return "No judge verdicts to compare with the annotators' sets yet."
    if found["best_changes"]:
        return (
            f"⚠ The best judge changes with the reading: {found['best_single']} on single choices, "
            f"{found['best_set']} on every acceptable verdict."
        )
    return f"The best judge is {found['best_single']} under both readings."


def acceptable_tables(report: dict) -> dict[str, Table]:
    found = report.get("acceptable_sets")
    if found is None:
        return {}
    rows = [
        [
            j["judge"]
            + (" ← best, single" if j["judge"] == found["best_single"] else "")
            + (" ← best, set" if j["judge"] == found["best_set"] else ""),
            nested(j["par_single"]),
            nested(j["par_set"]),
        ]
        for j in found["judges"]
    ]
    note = f"{verdict_line(found)} {found['n_comparisons_with_sets']:,} comparisons met a set of more than one verdict. {found['rule']}"
    return {
        "acceptable_sets": Table(
            "acceptable_sets",
            "Judge selection: single choice and every acceptable verdict",
            ["Judge", "PAR, single choice", "PAR, acceptable set"],
            rows,
            [False, True, True],
            note,
            "No judge verdicts yet." if not rows else DASH,
        )
    }
