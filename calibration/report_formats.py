"""The calibration report as people read it: JSON, CSV, Markdown and HTML, and the
display tables the Markdown, the HTML report and the dashboard share.

Everything here works on the report dict of `calibration.report`; nothing reads the database.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

from django.template.loader import render_to_string

from annotate.spreadsheet import row_safe
from calibration import charts
from calibration.report import HUMANS

FORMATS = {
    "json": ("application/json", "json"),
    "csv": ("text/csv", "csv"),
    "md": ("text/markdown", "md"),
    "html": ("text/html", "html"),
}

# --- display tables (shared by Markdown, the HTML report and the dashboard) ---------------------

DASH = "—"
SMALL_MARK = "†"


def fmt_value(value: float | None, digits: int = 3) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def fmt_estimate(value: float | None, ci: list | None, digits: int = 3) -> str:
    if value is None:
        return DASH
    text = f"{value:.{digits}f}"
    return text if ci is None else f"{text} [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def fmt_score(entry: dict) -> str:
    """A Bradley–Terry score with its CI (an unbounded end as ∞), or why it has none."""
    if not entry.get("estimable", True):
        return entry["reason"] or "not estimable"
    text = f"{entry['score']:.0f}"
    if entry["ci"] is not None:
        lo, hi = entry["ci"]
        text += f" [{'−∞' if lo is None else f'{lo:.0f}'}, {'+∞' if hi is None else f'{hi:.0f}'}]"
    return text + (SMALL_MARK if entry["small_n"] else "")


def fmt_spread(spread: dict) -> str:
    """Median seconds with quartiles, e.g. `312 s (240–401, n=12)`."""
    if spread["median"] is None:
        return DASH
    return f"{spread['median']:.0f} s ({spread['q1']:.0f}–{spread['q3']:.0f}, n={spread['n']:,})"


def fmt_usd(value: float | None) -> str:
    return DASH if value is None else f"${value:.4g}"


@dataclass
class Table:
    key: str
    title: str
    headers: list[str]
    rows: list[list[str]]
    numeric: list[bool]
    note: str = ""

    @property
    def numeric_columns(self) -> set[int]:
        return {i for i, numeric in enumerate(self.numeric) if numeric}


def _flagged(source: dict, name: str, digits: int = 3) -> str:
    text = fmt_estimate(source.get(name), source.get(f"{name}_ci"), digits)
    return text + SMALL_MARK if name in source.get("small_n_figures", []) and text != DASH else text


def _with_n(source: dict, name: str, n_key: str | None = None) -> str:
    return f"{_flagged(source, name)} (n={source[n_key or name + '_n']:,})"


def _nested(entry: dict) -> str:
    """An {value, ci, n, small_n} object as `0.61 [0.55, 0.66]† (n=120)`."""
    text = fmt_estimate(entry["value"], entry["ci"])
    return text if text == DASH else f"{text}{SMALL_MARK if entry['small_n'] else ''} (n={entry['n']:,})"


def _agreement_tables(report: dict, note: str) -> dict[str, Table]:
    """Annotators against each other and against the others' majority; judges against each other."""
    h = report["humans"]
    out: dict[str, Table] = {}
    out["annotator_pairs"] = Table(
        "annotator_pairs", "Annotators against each other (Cohen's κ for every two)",
        ["Annotator A", "Annotator B", "Cohen's κ", "Raw agreement"],
        [[p["a"], p["b"], _nested(p["kappa"]), _nested(p["agreement"])] for p in h["annotator_pairs"]],
        [False, False, True, True], "Items both rated; κ categories: the first of the pair's systems by name wins, the second wins, a tie. " + note,
    )
    out["annotators"] = Table(
        "annotators", "Each annotator",
        ["Annotator", "Labels", "Pairs", "Agreement with the others' majority", "Outlier", "Time per pair", "Time per criterion"],
        [
            [
                a["name"], f"{a['n_labels']:,}", f"{a['n_pairs']:,}", _nested(a["agreement_with_others"]),
                "yes" if a["outlier"] else "", fmt_spread(a["seconds_per_pair"]), fmt_spread(a["seconds_per_criterion"]),
            ]
            for a in h["annotators"]
        ],
        [False, True, True, True, False, True, True],
        f"Outlier: {h['outlier_rule']}. Times: {h['time_rule']}; median (quartiles, pairs timed). " + note,
    )
    judges = [j["name"] for j in report["judges"] if not j.get("members")]
    cells = {}
    for p in report["judge_pairs"]:
        text = f"{fmt_value(p['agreement']['value'])} (κ {fmt_value(p['kappa']['value'])}, n={p['agreement']['n']:,})"
        cells[(p["a"], p["b"])] = cells[(p["b"], p["a"])] = text
    listed = [n for n in judges if any(n in key for key in cells)]
    out["judge_pairs"] = Table(
        "judge_pairs", "Judges against each other",
        ["Judge"] + listed,
        [[a] + ["1" if a == b else cells.get((a, b), DASH) for b in listed] for a in listed],
        [False] + [True] * len(listed),
        "Share of items two judges give the same verdict (swapped runs merged), Cohen's κ and the items both judged; "
        "CIs are in the JSON report.",
    )
    return out


def tables(report: dict) -> dict[str, Table]:
    """The report's figures as tables of display strings, keyed by table."""
    out: dict[str, Table] = {}
    note = f"{SMALL_MARK}: fewer than {report['parameters']['small_n_threshold']} observations. Brackets: 95% pair-bootstrap CI ({report['parameters']['rounds']:,} rounds)."
    judge_rows = []
    for j in report["judges"]:
        flags = []
        if j["name"] in report["pareto_frontier"]:
            flags.append("Pareto")
        if j["name"] == report["recommended_judge"]:
            flags.append("recommended")
        if j.get("members"):
            flags.append("ensemble")
        judge_rows.append([
            j["name"] + (f" ({j['model']})" if j["model"] else ""),
            _with_n(j, "par", "n_labels"),
            _with_n(j, "par_majority"),
            _with_n(j, "cohen_kappa"),
            _with_n(j, "position_consistency"),
            _with_n(j, "first_position_rate"),
            _with_n(j, "prefers_longer"),
            fmt_usd(j["cost_per_pair_usd"]),
            f"{j['n_items']:,}" + (SMALL_MARK if j["small_n"] else ""),
            str(j["errors"]),
            ", ".join(flags),
        ])
    unrecorded = "; ".join(
        f"{j['name']}: {j['n_possibly_billed_calls']:,} call(s) sent with no answer recorded, possibly billed up to {fmt_usd(j['possibly_billed_usd'])}"
        for j in report["judges"] if j.get("n_possibly_billed_calls") and not j.get("members")
    )
    out["judges"] = Table(
        "judges", "Judges against the humans",
        ["Judge", "PAR", "PAR vs majority", "Cohen's κ", "Position consistency", "First-position rate", "Prefers longer", "Cost / pair", "Items", "Errors", ""],
        judge_rows, [False] + [True] * 9 + [False],
        note + (f" Costs are the calls recorded; not in them: {unrecorded} (a run was killed with requests in flight)." if unrecorded else ""),
    )
    h = report["humans"]
    out["humans"] = Table(
        "humans", "Human ceiling",
        ["Figure", "Value"],
        [
            ["Labels / annotators / items / pairs", f"{h['n_labels']:,} / {h['n_annotators']:,} / {h['n_items']:,} / {h['n_pairs']:,}"],
            ["PAR, leave one out", _with_n(h, "par_leave_one_out")],
            ["PAR, all pairs of labels", _with_n(h, "par_all_pairs")],
            ["Krippendorff's α (items with ≥ 2 labels)", _with_n(h, "krippendorff_alpha")],
            [
                f"Fleiss' κ (items with {h['fleiss_kappa']['raters_per_item'] or DASH} labels; {h['fleiss_kappa']['n_items_left_out']:,} others left out)",
                _nested(h["fleiss_kappa"]),
            ],
            ["Prefers longer", _with_n(h, "prefers_longer")],
            ["First-position rate", _with_n(h, "first_position_rate")],
        ],
        [False, True], note,
    )
    out["comparisons"] = Table(
        "comparisons", "Paired PAR differences",
        ["A", "B", "PAR(A) − PAR(B)", "Significant", "Labels", "Pairs"],
        [[c["a"], c["b"], fmt_estimate(c["difference"], c["ci"]) + (SMALL_MARK if c["small_n"] else ""), "yes" if c["significant"] else "no", f"{c['n']:,}", f"{c['n_pairs']:,}"] for c in report["comparisons"]],
        [False, False, True, False, True, True], "Same resampled pairs for both judges; significant when the 95% CI excludes 0.",
    )
    categories = report["campaign"]["categories"]
    cat_rows = [[f"{HUMANS} (leave one out)"] + [_cell(h["by_category"].get(c), "par_leave_one_out") for c in categories]]
    cat_rows += [[j["name"]] + [_cell(j["by_category"].get(c), "par") for c in categories] for j in report["judges"]]
    out["categories"] = Table("categories", "PAR per category", ["Rater"] + categories, cat_rows, [False] + [True] * len(categories), note)
    bt_rows = []
    for rater, scores in report["bradley_terry"].items():
        for s in scores or []:
            bt_rows.append([rater, s["system"], fmt_score(s), f"{s['n']:,}", f"{s['wins']:g} / {s['losses']:g}"])
    out["bradley_terry"] = Table(
        "bradley_terry", "Bradley–Terry scores",
        ["Rater", "System", "Score", "Comparisons", "Wins / losses"], bt_rows, [False, False, True, True, True],
        f"Elo-like scale; {report['parameters']['anchor']['text']}. A system with no finite maximum-likelihood score "
        "(e.g. it never wins) is not estimable and says why; ∞: the CI is unbounded on that side. Ties count ½. " + note,
    )
    out["kendall_tau"] = Table(
        "kendall_tau", "Ranking agreement with the humans (Kendall's τ)",
        ["Judge", "τ", "p", "Systems"],
        [[name, fmt_value(k["tau"]), fmt_value(k["p_value"]), str(k["n_systems"])] for name, k in report["kendall_tau"].items()],
        [False, True, True, True],
    )
    win_rows = []
    for rater, systems in report["win_rates"].items():
        for system, figures in (systems or {}).items():
            o = figures["overall"]
            win_rows.append([rater, system, fmt_estimate(o["rate"], o["ci"]) + (SMALL_MARK if o["small_n"] else ""), f"{o['n']:,}"])
    reference = report["parameters"]["reference"]
    out["win_rates"] = Table(
        "win_rates", f"Win rate against {reference}" if reference else "Win rate against the field (every comparison)",
        ["Rater", "System", "Win rate (tie = ½)", "Labels"], win_rows, [False, False, True, True], note,
    )
    out.update(_agreement_tables(report, note))
    out.update(_powered_tables(report))
    return out


def _ranks(entry: dict) -> str:
    lo, hi = entry["rank_set"]
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _powered_tables(report: dict) -> dict[str, Table]:
    """Prediction-powered win rates and scores, next to the humans' and the judge's own."""
    section = report.get("prediction_powered") or {"judges": {}}
    reference = report["parameters"]["reference"]
    rate_rows, score_rows = [], []
    for judge, figures in section["judges"].items():
        if figures["note"] and not figures["win_rates"]:
            rate_rows.append([judge, DASH, f"{judge}: {figures['note']}", DASH, DASH, DASH, DASH])
        for system, r in figures["win_rates"].items():
            rate_rows.append([
                judge, system,
                *(f"{fmt_estimate(r[m]['rate'], r[m]['ci'])} (n={r[m]['n']:,})" for m in ("ppi", "human", "judge")),
                fmt_value(r["lam"], 2), DASH if r["n_effective"] is None else f"{r['n_effective']:,.0f}",
            ])
        bt = figures["bradley_terry"] or {"scores": [], "left_out": {}}
        for row in bt["scores"]:
            cells = []
            for m in ("ppi", "human", "judge"):
                e = row[m]
                cells.append(DASH if e is None else f"{fmt_estimate(e['score'], e['ci'], 0)} · rank {_ranks(e)}")
            score_rows.append([judge, row["system"], *cells])
        for system, reason in bt["left_out"].items():
            score_rows.append([judge, system, reason, DASH, DASH])
    against = f"against {reference}" if reference else "against the field"
    worth = "; ".join(
        f"{judge}: {f['n_human']:,} human labels worth {f['n_effective']:,.0f} (gain ×{f['gain']:.2f})"
        for judge, f in section["judges"].items() if f["n_effective"] is not None
    )
    common = f"{section.get('method', '')} {section.get('assumption', '')}".strip()
    return {
        "ppi_win_rates": Table(
            "ppi_win_rates", f"Prediction-powered win rates {against}",
            ["Judge", "System", "Prediction-powered", "Humans only", "Judge only", "λ", "Worth (human labels)"],
            rate_rows, [False, False, True, True, True, True, True],
            " ".join(x for x in (common, worth + "." if worth else "") if x),
        ),
        "ppi_bradley_terry": Table(
            "ppi_bradley_terry", "Prediction-powered Bradley–Terry scores and rank-sets",
            ["Judge", "System", "Prediction-powered", "Humans only", "Judge only"],
            score_rows, [False, False, True, True, True],
            f"Elo-like scale; {f'{reference} = 1000' if reference else 'the mean of the systems scored here is 1000'}; normal 95% CIs; "
            "a system that never wins or never loses in the human labels or the judge's verdicts is left out of all three. "
            + section.get("rank_set_rule", ""),
        ),
    }


def _cell(entry: dict | None, key: str) -> str:
    if not entry:
        return DASH
    text = fmt_estimate(entry[key], entry["ci"])
    return f"{text}{SMALL_MARK if entry['small_n'] else ''} (n={entry['n']:,})"


# --- renderers -------------------------------------------------------------------------------


def render_json(report: dict) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


CSV_COLUMNS = (
    "rater", "kind", "model", "n_items", "n_labels", "par", "par_ci_low", "par_ci_high",
    "par_majority", "par_majority_ci_low", "par_majority_ci_high", "par_no_ties", "cohen_kappa",
    "position_consistency", "first_position_rate", "prefers_longer", "krippendorff_alpha", "par_all_pairs",
    "cost_usd", "cost_per_pair_usd", "cost_per_1000_verdicts_usd", "mean_latency_ms", "errors",
    "small_n", "pareto", "recommended", "possibly_billed_usd",
)


class _SafeWriter(csv.DictWriter):
    """Text cells (a judge's name or model) a spreadsheet would run as a formula get a leading quote; numbers stay numbers."""

    def writerow(self, rowdict):
        return super().writerow(row_safe(rowdict))


def render_csv(report: dict) -> str:
    """One row per judge and one `humans` row (whose `par` is the leave-one-out PAR)."""
    stream = io.StringIO()
    writer = _SafeWriter(stream, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()

    def ci(source: dict, name: str) -> tuple:
        pair = source.get(f"{name}_ci")
        return (None, None) if pair is None else tuple(pair)

    for j in report["judges"]:
        par_lo, par_hi = ci(j, "par")
        maj_lo, maj_hi = ci(j, "par_majority")
        writer.writerow({
            "rater": j["name"], "kind": "judge", "model": j["model"], "n_items": j["n_items"], "n_labels": j["n_labels"],
            "par": j["par"], "par_ci_low": par_lo, "par_ci_high": par_hi,
            "par_majority": j["par_majority"], "par_majority_ci_low": maj_lo, "par_majority_ci_high": maj_hi,
            "par_no_ties": j["par_no_ties"], "cohen_kappa": j["cohen_kappa"],
            "position_consistency": j["position_consistency"], "first_position_rate": j["first_position_rate"],
            "prefers_longer": j["prefers_longer"], "cost_usd": j["cost_usd"], "cost_per_pair_usd": j["cost_per_pair_usd"],
            "cost_per_1000_verdicts_usd": j["cost_per_1000_verdicts_usd"], "mean_latency_ms": j["mean_latency_ms"],
            "errors": j["errors"], "small_n": j["small_n"],
            "pareto": j["name"] in report["pareto_frontier"], "recommended": j["name"] == report["recommended_judge"],
            "possibly_billed_usd": j["possibly_billed_usd"],
        })
    h = report["humans"]
    lo, hi = ci(h, "par_leave_one_out")
    writer.writerow({
        "rater": HUMANS, "kind": "human", "n_items": h["n_items"], "n_labels": h["n_labels"],
        "par": h["par_leave_one_out"], "par_ci_low": lo, "par_ci_high": hi,
        "krippendorff_alpha": h["krippendorff_alpha"], "par_all_pairs": h["par_all_pairs"],
        "prefers_longer": h["prefers_longer"], "first_position_rate": h["first_position_rate"], "small_n": h["small_n"],
    })
    return stream.getvalue()


def _md_table(table: Table) -> list[str]:
    lines = [f"## {table.title}", ""]
    if not table.rows:
        return lines + ["Nothing to show.", ""]
    lines.append("| " + " | ".join(table.headers) + " |")
    lines.append("|" + "|".join("---:" if num else "---" for num in table.numeric) + "|")
    for row in table.rows:
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    lines.append("")
    if table.note:
        lines += [table.note, ""]
    return lines


def render_md(report: dict) -> str:
    c, p = report["campaign"], report["parameters"]
    lines = [
        f"# Calibration report: {c['name']}",
        "",
        f"Generated {report['generated_at']} · schema {report['schema']} v{report['version']} · {report['n_pairs']:,} pairs · "
        f"scores: {p['anchor']['text']} · {p['rounds']:,} bootstrap rounds (seed {p['seed']}) · "
        + ("all assignments" if p["include_unsubmitted"] else "submitted assignments only"),
        "",
        f"**Recommendation.** {report['recommendation']}",
        "",
        f"Pareto frontier (PAR vs cost per pair): {', '.join(report['pareto_frontier']) or DASH}",
        "",
    ]
    if p["ensembles"]:
        lines += [
            f"Ensemble judges (majority vote of their members; {p['ensemble_tie_rule']}; cost = the sum of the members' costs): "
            + ", ".join(p["ensembles"]),
            "",
        ]
    for note in report["notes"]:
        lines += [f"> {note}", ""]
    for table in tables(report).values():
        lines += _md_table(table)
    return "\n".join(lines).rstrip() + "\n"


def render_html(report: dict, svgs: dict[str, str] | None = None) -> str:
    """A standalone page with the charts inline (`svgs`: already rendered ones)."""
    svgs = svgs if svgs is not None else charts.report_charts(report)
    return render_to_string("calibration/report.html", {"report": report, "tables": tables(report), "charts": svgs})


RENDERERS = {"json": render_json, "csv": render_csv, "md": render_md, "html": render_html}


def render(report: dict, fmt: str) -> str:
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format '{fmt}' (choose {', '.join(RENDERERS)})")
    return RENDERERS[fmt](report)


def download_name(campaign_name: str, fmt: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in campaign_name).strip("-") or "campaign"
    return f"calibration-{safe}.{FORMATS[fmt][1]}"
