"""Display tables of the report's human reference (`human_reference`, `competence` and `sensitivity`
sections): how each judge's figures move when the humans are read differently, and how competent each
annotator is. Shared by the Markdown, the HTML report and the dashboard, like `calibration.report.display`."""

from __future__ import annotations

from calibration.report.table_format import DASH, Table, fmt_estimate, fmt_n, nested

NOT_IN_REPORT = "not in this report (made before the human reference was selectable)"


def reference_line(report: dict) -> str | None:
    """Which reference the main figures use, in one sentence (None for a report without the section)."""
    section = report.get("human_reference")
    return None if section is None else section["statement"]


def _cell(cell: dict | None) -> str:
    if cell is None or cell["value"] is None:
        return DASH
    text = fmt_estimate(cell["value"], cell["ci"], 3, cell.get("ci_note"))
    return text if cell["n"] is None else f"{text} {fmt_n(cell['n'], None)}"


def _shift(cell: dict | None, baseline: bool) -> str:
    if baseline:
        return "baseline"
    if cell is None or cell["shift"] is None:
        return DASH
    mark = " (outside the baseline's CI)" if cell["outside_baseline_ci"] else ""
    return f"{cell['shift']:+.3f}{mark}"


def _verdict(cell: dict | None, baseline: bool) -> str:
    if cell is None or cell["value"] is None:
        return DASH
    return str(cell["value"]) + ("" if baseline or not cell["changed"] else " (changed)")


def _sensitivity(report: dict) -> Table:
    section = report.get("sensitivity")
    headers = ["Judge", "Human reference", "PAR [95% CI] (n)", "PAR shift", "κ [95% CI] (n)", "κ shift", "Alt-test verdict"]
    numeric = [False, False, True, True, True, True, False]
    if section is None:
        return Table("sensitivity", "Sensitivity to the human reference", headers, [], numeric, NOT_IN_REPORT)
    if not section.get("computed", True):  # the one line saying how to ask for it
        return Table("sensitivity", "Sensitivity to the human reference", headers, [], numeric, empty=section["note"])
    rows = []
    for judge in section["judges"]:
        for ref in section["references"]:
            name = ref["name"]
            base = name == section["baseline"]
            par, kappa, alt = (judge.get(s, {}).get(name) for s in ("par", "kappa", "alt_test"))
            label = name + (" (used)" if name == section["used"] else "")
            rows.append([judge["judge"], label, _cell(par), _shift(par, base), _cell(kappa), _shift(kappa, base), _verdict(alt, base)])
    sizes = "; ".join(
        f"{r['name']}: {r['n_labels']:,} labels on {r['n_items']:,} items by {r['n_raters']} rater{'' if r['n_raters'] == 1 else 's'} ({r['note']})"
        for r in section["references"]
    )
    note = (
        f"The main figures use the '{section['used']}' reference. Shift: the value minus the value under {section['baseline']}. "
        f"{section['statistics']['alt_test'].capitalize()}. References: {sizes}. {section['rounds']:,} bootstrap rounds."
    )
    return Table("sensitivity", "Sensitivity to the human reference", headers, rows, numeric, note)


def _competence(report: dict) -> Table:
    section, reference = report.get("competence"), report.get("human_reference")
    headers = ["Annotator", "Dawid–Skene competence [95% CI]", "MACE competence [95% CI]", "Flagged"]
    numeric = [False, True, True, False]
    if section is None or reference is None:
        return Table("competence", "Annotator competence", headers, [], numeric, NOT_IN_REPORT)
    if not section.get("computed", True):
        return Table("competence", "Annotator competence", headers, [], numeric, empty=section["note"])
    rows = []
    for a in section["annotators"]:
        why = reference["flagged"].get(a["name"])
        rows.append(
            [
                a["name"],
                DASH if a["dawid_skene"] is None else nested(a["dawid_skene"]),
                DASH if a["mace"] is None else nested(a["mace"]),
                "; ".join(why) if why else "no",
            ]
        )
    ds, mc = section["dawid_skene"], section["mace"]
    note = (
        f"{section['method']}. {section['ci_rule']}. Aggregated labels per item are in the JSON report (competence.dawid_skene.items, "
        f"competence.mace.items): Dawid–Skene {ds['n_items'] - ds['n_unresolved']:,} of {ds['n_items']:,} items resolved, MACE "
        f"{mc['n_items'] - mc['n_unresolved']:,} of {mc['n_items']:,}. Ties: {section['note']} Flag rule: {reference['flag_rule']}."
    )
    return Table("competence", "Annotator competence", headers, rows, numeric, note)


def reference_tables(report: dict) -> dict[str, Table]:
    return {"sensitivity": _sensitivity(report), "competence": _competence(report)}
