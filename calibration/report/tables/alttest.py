"""Display tables of the report's alt-test (`alt_test` section): can each judge stand in for the
annotators? Shared by the Markdown, the HTML report and the dashboard, like `calibration.report.display`."""

from __future__ import annotations

from calibration.report.table_format import DASH, Table, fmt_estimate, fmt_value

NOT_SET_VERDICT = "no verdict: ε not set"


def _counts(counts: dict) -> str:
    """Items (or pairs) per annotator: `30–41 (3 annotators)`, or `—`."""
    if not counts:
        return DASH
    values = sorted(counts.values())
    span = f"{values[0]:,}" if values[0] == values[-1] else f"{values[0]:,}–{values[-1]:,}"
    return f"{span} ({len(values)} annotator{'' if len(values) == 1 else 's'})"


def verdict(result: dict) -> str:
    if not result["ran"]:
        return f"cannot run: {result['reason']}"
    return "passes" if result["passes"] else "fails"


def omega(result: dict) -> str:
    if not result["ran"]:
        return DASH
    return f"{fmt_value(result['omega'], 2)} ({result['n_rejected']} of {result['n_annotators']} annotators beaten)"


def rho(result: dict) -> str:
    r = result["rho"]
    if r is None:
        return DASH
    pairs = "" if r.get("n_pairs") is None else f", {r['n_pairs']:,} pairs"
    return f"{fmt_estimate(r['value'], r['ci'], 3, r.get('ci_note'))} (n={r['n']:,}{pairs})"


def epsilon_line(section: dict) -> str:
    """ε and the reason recorded with it, or why there is no verdict."""
    if section["epsilon"] is None:
        return section["note"]
    where = "recorded on the campaign" if section["epsilon_source"] == "campaign" else "given for this report"
    return f"ε = {section['epsilon']:g} ({where}): {section['epsilon_reason']}"


def alttest_tables(report: dict) -> dict[str, Table]:
    """Per judge (pooled and criteria passed), per criterion, and per annotator of the pooled form."""
    section = report.get("alt_test") or {
        # A report of contract v2 (one a cache kept from before): the tables are there, empty.
        "epsilon": None, "note": "not in this report (contract v2)", "unit": "pair", "unit_rule": "", "judges": {},
        "pass_omega": 0.5, "min_annotators": 3, "min_items": 30, "min_humans_per_item": 2, "method": "", "q": 0.05,
    }  # fmt: skip
    unit = "pairs" if section["unit"] == "pair" else "items"
    judges = [j["name"] for j in report["judges"]]
    rows, crit_rows, ann_rows = [], [], []
    for name in judges:
        figures = section["judges"].get(name)
        if figures is None:
            rows.append([name, NOT_SET_VERDICT if section["epsilon"] is None else DASH, DASH, DASH, DASH, DASH, DASH])
            continue
        pooled, per = figures["pooled"], figures["by_criterion"]
        rows.append(
            [
                name,
                verdict(pooled),
                omega(pooled),
                rho(pooled),
                f"{pooled['n_annotators']:,}",
                _counts(pooled["items_per_annotator"]),
                f"passes on {per['n_passed']} of {per['n_criteria']} criteria"
                + (f" ({per['n_criteria'] - per['n_ran']} cannot run)" if per["n_ran"] < per["n_criteria"] else ""),
            ]
        )
        for c in per["criteria"]:
            crit_rows.append([name, c["criterion"], verdict(c), omega(c), rho(c), _counts(c["items_per_annotator"])])
        for a in pooled.get("annotators", []):
            ann_rows.append(
                [
                    name,
                    a["annotator"],
                    f"{a['n']:,}",
                    fmt_value(a["mean_wf"]),
                    fmt_estimate(a["mean_diff"], a["diff_ci"]),
                    fmt_value(a["p"], 4),
                    fmt_value(a["p_adjusted"], 4),
                    "yes" if a["rejected"] else "no",
                ]
            )
    if not rows and section["epsilon"] is None:
        rows.append([DASH, NOT_SET_VERDICT, DASH, DASH, DASH, DASH, DASH])
    head = epsilon_line(section)
    rules = (
        f"Pooled: {section['unit_rule']}. Passes when ω ≥ {section['pass_omega']:g}; the test needs at least "
        f"{section['min_annotators']} annotators with {section['min_items']} usable {unit} each (an item is usable when "
        f"{section['min_humans_per_item']} or more annotators labelled it and the judge judged it); otherwise it says so with the numbers."
    )
    return {
        "alt_test": Table(
            "alt_test",
            "Can this judge replace the annotators? (alt-test)",
            [
                "Judge",
                "Verdict",
                "ω (winning rate)",
                "ρ (advantage probability)",
                "Annotators tested",
                f"{unit.capitalize()} per annotator",
                "Per criterion (BY across criteria × annotators)",
            ],
            rows,
            [False, False, True, True, True, True, False],
            f"{head}. {rules} {section['method']}",
        ),  # fmt: skip
        "alt_test_criteria": Table(
            "alt_test_criteria",
            "Alt-test per criterion",
            ["Judge", "Criterion", "Verdict", "ω", "ρ", "Pairs per annotator"],
            crit_rows,
            [False, False, False, True, True, True],
            f"{head}. Each criterion alone, its items its pairs; one Benjamini–Yekutieli correction across every criterion × annotator test.",
        ),
        "alt_test_annotators": Table(
            "alt_test_annotators",
            "Alt-test per annotator (pooled)",
            ["Judge", "Annotator left out", unit.capitalize(), "mean W_f", "mean(W_h − W_f) [95% t-CI]", "p", "p (BY)", "Beaten"],
            ann_rows,
            [False, False, True, True, True, True, True, False],
            f"{head}. Beaten: H0 mean(W_h − W_f) ≥ ε rejected at q = {section['q']:g} after the Benjamini–Yekutieli correction.",
        ),
    }
