"""Display table of the report's `selective` section: the cascade of judges that abstain with a
guarantee, its composition and its cost against the all-human cost. The texts are
`calibration.cascade`'s (what `calibrate_selective` prints); nothing is recomputed."""

from __future__ import annotations

from calibration.cascade import estimate_text, selective_lines, usd_text
from calibration.report.table_format import DASH, Table

HEADERS = [
    "Step",
    "Decided by",
    "λ̂",
    "Accepts",
    "Share",
    "Coverage",
    "Agreement on accepted",
    "Guarantee",
    "Cost per accepted item",
    "Held out",
]


def _share(value) -> str:
    return DASH if value is None else f"{value:.1%}"


def _rows(section: dict) -> list[list[str]]:
    shares = {row["by"]: row for row in section["composition"]}
    rows = []
    for i, stage in enumerate(section["stages"], 1):
        hold = stage["holdout"]
        rows.append([
            str(i), stage["judge"], "none" if stage["threshold"] is None else f"{stage['threshold']:.4g}",
            f"{stage['n_accepted']:,} of {stage['n_reaching']:,}", _share(shares[stage["judge"]]["share"]),
            estimate_text(stage["coverage"]), estimate_text(stage["agreement"]), stage["guarantee"],
            "cost unknown" if stage["cost_per_accepted"] is None else usd_text(stage["cost_per_accepted"]),
            DASH if hold is None else f"{estimate_text(hold['agreement'])} beside 1 − α = {hold['target']:g}",
        ])  # fmt: skip
    cost = (
        "cost unknown"
        if section["cost"] is None
        else f"{usd_text(section['cost'])} against {usd_text(section['all_human_cost'])} all-human"
    )
    rows.append(["", "humans", DASH, f"{section['n_to_humans']:,}", _share(section["human_share"]), DASH, DASH, DASH, DASH, DASH])
    hold = section["holdout"]
    rows.append([
        "", "cascade", DASH, f"{section['n_calibration'] - section['n_to_humans']:,} of {section['n_calibration']:,}",
        _share(1 - section["human_share"]), DASH, estimate_text(section["agreement"]), section["cascade_guarantee"], cost,
        DASH if hold is None else f"{estimate_text(hold['agreement'])} beside 1 − α = {hold['target']:g}",
    ])  # fmt: skip
    return rows


def selective_tables(report: dict) -> dict[str, Table]:
    section = report.get("selective") or {"requested": False, "note": ""}
    if not section.get("requested"):
        note = f"Selective judging: {section.get('note') or 'not requested'}."
        rows = [[DASH, "not requested", *[DASH] * (len(HEADERS) - 2)]]
    elif "error" in section:
        note = f"Selective judging (α = {section['alpha']:g}, δ = {section['delta']:g}, from the study plan) could not run: {section['error']}."
        rows = [[DASH, "could not run", *[DASH] * (len(HEADERS) - 2)]]
    else:
        note = ". ".join(line.strip().rstrip(".") for line in selective_lines(section)) + "."
        rows = _rows(section)
    return {"selective": Table("selective", "Selective judging: the cascade and its cost", HEADERS, rows, [False] * len(HEADERS), note)}
