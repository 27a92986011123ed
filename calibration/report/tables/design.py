"""Display table of the report's `design` section (actively sampled campaigns only): the sampling
design, the labelled pairs, the effective sample size, rho and the ceiling 1 / (1 - rho^2).

Pure: no Django.
"""

from __future__ import annotations

from calibration.report.table_format import DASH, Table

# The main CSV's extra columns, per judge, when the report has a design section.
CSV_COLUMNS = (
    "design",
    "design_n_labelled_pairs",
    "design_n_effective",
    "design_rho",
    "design_rho_ci_low",
    "design_rho_ci_high",
    "design_ceiling",
    "design_ceiling_ci_low",
    "design_ceiling_ci_high",
)


def _num(x, digits: int = 3) -> str:
    return DASH if x is None else f"{x:,.{digits}f}"


def _with_ci(value, ci, digits: int = 3) -> str:
    return _num(value, digits) + ("" if ci is None else f" [{_num(ci[0], digits)}, {_num(ci[1], digits)}]")


def design_note(design: dict) -> str:
    lo, hi = design["probability_min"], design["probability_max"]
    spread = DASH if lo is None else f"{lo:.4g} to {hi:.4g}"
    return (
        f"Sampling design: active; {design['n_pairs_drawn']:,} pairs drawn, inclusion probabilities {spread}; "
        f"{design['n_labelled_pairs']:,} pairs with human labels. {design['method']} Weighted: {design['weighted_figures']}. "
        f"Effective sample size: how many uniformly drawn human labels a judge's prediction-powered win rates are worth "
        f"(median over systems). Ceiling: {design['ceiling_rule']}. Brackets: 95% CI (rho: Fisher's, pairs counted as "
        f"Kish's effective number)."
    )


def design_tables(report: dict) -> dict[str, Table]:
    design = report.get("design")
    if design is None:
        return {}
    rows = [
        [
            name,
            f"{j['n_labelled_pairs']:,}",
            _num(j["n_effective"], 1),
            _with_ci(j["rho"], j["rho_ci"]),
            _with_ci(j["ceiling"], j["ceiling_ci"], 2),
        ]
        for name, j in design["judges"].items()
    ]
    return {
        "design": Table(
            "design",
            "Sampling design",
            ["Judge", "Labelled pairs", "Effective sample size", "ρ judge–human", "Ceiling 1/(1 − ρ²)"],
            rows,
            [False, True, True, True, True],
            design_note(design),
            design_note(design),
        )
    }


def csv_fields(report: dict, judge: str) -> dict:
    """The design columns of one judge's CSV row (none without a design section)."""
    design = report.get("design")
    if design is None:
        return {}
    j = design["judges"].get(judge)
    if j is None:
        return {"design": design["sampling"]}
    rho_ci, ceiling_ci = j["rho_ci"] or (None, None), j["ceiling_ci"] or (None, None)
    return dict(
        zip(
            CSV_COLUMNS,
            (design["sampling"], j["n_labelled_pairs"], j["n_effective"], j["rho"], *rho_ci, j["ceiling"], *ceiling_ci),
            strict=True,
        )
    )
