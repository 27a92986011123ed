"""The calibration report as people read it: JSON, CSV, Markdown and HTML (the display tables they
share are in `calibration.report.display`), and any one table as CSV.

Everything here works on the report dict of `calibration.report.build`; nothing reads the database.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import re

from django.template.loader import render_to_string

from calibration import charts
from calibration.report.build import HUMANS
from calibration.report.display import ABSENT_BECAUSE, ORDER, TABLE_KEYS, Table, heading, tables
from calibration.report.shape import md_order
from calibration.report.table_format import ROWS_SHOWN
from calibration.report.tables.design import CSV_COLUMNS as DESIGN_COLUMNS
from calibration.report.tables.design import csv_fields as design_csv_fields
from calibration.report.tables.orderings import KEYS as ORDERING_KEYS
from calibration.report.tables.pointwise import KEYS as POINTWISE_KEYS
from common.spreadsheet import row_safe

__all__ = [
    "FORMATS",
    "tables",
    "heading",
    "render",
    "render_json",
    "render_csv",
    "render_md",
    "render_html",
    "render_table_csv",
    "download_name",
]

FORMATS = {
    "json": ("application/json", "json"),
    "csv": ("text/csv", "csv"),
    "md": ("text/markdown", "md"),
    "html": ("text/html", "html"),
}

# --- renderers -------------------------------------------------------------------------------


def render_json(report: dict) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


CSV_COLUMNS = (
    "rater",
    "kind",
    "model",
    "n_items",
    "n_labels",
    "par",
    "par_ci_low",
    "par_ci_high",
    "par_majority",
    "par_majority_ci_low",
    "par_majority_ci_high",
    "par_no_ties",
    "cohen_kappa",
    "position_consistency",
    "first_position_rate",
    "prefers_longer",
    "krippendorff_alpha",
    "par_all_pairs",
    "cost_usd",
    "cost_per_pair_usd",
    "cost_per_1000_verdicts_usd",
    "mean_latency_ms",
    "errors",
    "small_n",
    "pareto",
    "recommended",
    "possibly_billed_usd",
    "par_n_pairs",
    "par_ci_note",
    "n_unparsable",
    "swap_policy",
    "unparsable",
    "human_reference",
    "adjudicated_items",
    "adjudicated_pairs",
    "majority_ties",
)


class _SafeWriter(csv.DictWriter):
    """Text cells (a judge's name or model) a spreadsheet would run as a formula get a leading quote; numbers stay numbers."""

    def writerow(self, rowdict):
        return super().writerow(row_safe(rowdict))


def render_csv(report: dict) -> str:
    """One row per judge and one `humans` row (whose `par` is the leave-one-out PAR)."""
    stream = io.StringIO()
    columns = CSV_COLUMNS + (DESIGN_COLUMNS if "design" in report else ())
    writer = _SafeWriter(stream, fieldnames=columns, lineterminator="\n")
    writer.writeheader()

    def ci(source: dict, name: str) -> tuple:
        pair = source.get(f"{name}_ci")
        return (None, None) if pair is None else tuple(pair)

    p = report["parameters"]
    convention = {"swap_policy": p.get("swap_policy"), "unparsable": p.get("unparsable"), "majority_ties": p.get("majority_ties", "drop")}
    # Every row says which humans the judges were measured against, and how many items were adjudicated (on how many pairs).
    reference = report.get("human_reference") or {}
    counts = reference.get("adjudicated") or {}
    convention.update(
        human_reference=reference.get("used"), adjudicated_items=counts.get("n_items"), adjudicated_pairs=counts.get("n_pairs")
    )
    for j in report["judges"]:
        par_lo, par_hi = ci(j, "par")
        maj_lo, maj_hi = ci(j, "par_majority")
        writer.writerow(
            {
                "rater": j["name"],
                "kind": "judge",
                "model": j["model"],
                "n_items": j["n_items"],
                "n_labels": j["n_labels"],
                "par": j["par"],
                "par_ci_low": par_lo,
                "par_ci_high": par_hi,
                "par_majority": j["par_majority"],
                "par_majority_ci_low": maj_lo,
                "par_majority_ci_high": maj_hi,
                "par_no_ties": j["par_no_ties"],
                "cohen_kappa": j["cohen_kappa"],
                "position_consistency": j["position_consistency"],
                "first_position_rate": j["first_position_rate"],
                "prefers_longer": j["prefers_longer"],
                "cost_usd": j["cost_usd"],
                "cost_per_pair_usd": j["cost_per_pair_usd"],
                "cost_per_1000_verdicts_usd": j["cost_per_1000_verdicts_usd"],
                "mean_latency_ms": j["mean_latency_ms"],
                "errors": j["errors"],
                "small_n": j["small_n"],
                "pareto": j["name"] in report["pareto_frontier"],
                "recommended": j["name"] == report["recommended_judge"],
                "possibly_billed_usd": j["possibly_billed_usd"],
                "par_n_pairs": j.get("par_n_pairs"),
                "par_ci_note": j.get("par_ci_note"),
                "n_unparsable": j.get("n_unparsable"),
                **convention,
                **design_csv_fields(report, j["name"]),
            }
        )
    h = report["humans"]
    lo, hi = ci(h, "par_leave_one_out")
    writer.writerow(
        {
            "rater": HUMANS,
            "kind": "human",
            "n_items": h["n_items"],
            "n_labels": h["n_labels"],
            "par": h["par_leave_one_out"],
            "par_ci_low": lo,
            "par_ci_high": hi,
            "krippendorff_alpha": h["krippendorff_alpha"],
            "par_all_pairs": h["par_all_pairs"],
            "prefers_longer": h["prefers_longer"],
            "first_position_rate": h["first_position_rate"],
            "small_n": h["small_n"],
            "par_n_pairs": h.get("par_leave_one_out_n_pairs"),
            "par_ci_note": h.get("par_leave_one_out_ci_note"),
            **convention,
        }
    )
    return stream.getvalue()


def render_table_csv(report: dict, key: str) -> str:
    """One display table of the report, every row, as CSV (its cells as the tables show them)."""
    every = tables(report)
    if key not in TABLE_KEYS:
        raise ValueError(f"unknown table '{key}' (choose {', '.join(TABLE_KEYS)})")
    if key not in every:
        raise ValueError(f"table '{key}' is not in this report: {ABSENT_BECAUSE.get(key, 'its section has no data')}")
    table = every[key]
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(table.headers)
    for row in table.rows:
        writer.writerow(row_safe(dict(enumerate(row))).values())
    return stream.getvalue()


def _md_table(table: Table) -> list[str]:
    lines = [f"## {table.title}", ""]
    if not table.rows:
        return lines + [table.empty or "Nothing to show.", ""]
    lines.append("| " + " | ".join(table.headers) + " |")
    lines.append("|" + "|".join("---:" if num else "---" for num in table.numeric) + "|")
    for row in table.rows_head:
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    lines.append("")
    if table.rows_rest:
        lines += [
            f"Rows 1–{ROWS_SHOWN:,} of {len(table.rows):,} shown. Every row is in the JSON report; "
            f"`calibration_report --format csv --table {table.key}` writes this table whole.",
            "",
        ]
    if table.note:
        lines += [table.note, ""]
    return lines


def render_md(report: dict) -> str:
    c = report["campaign"]
    head = heading(report)
    lines = [
        f"# Calibration report: {c['name']}",
        "",
        head.generated,
        "",
        head.convention,
        "",
        f"**Recommendation.** {report['recommendation']}",
        "",
        head.frontier,
        "",
    ]
    if head.ensembles:
        lines += [head.ensembles, ""]
    if head.human_reference:
        lines += [head.human_reference, ""]
    for note in report["notes"]:
        lines += [f"> {note}", ""]
    every = tables(report)
    keys, no_data = md_order(report, every, ORDER["md"])
    if no_data:
        lines += [no_data, ""]
    for key in keys:
        lines += _md_table(every[key])
    return "\n".join(lines).rstrip() + "\n"


def render_html(report: dict, svgs: dict[str, str] | None = None) -> str:
    """A standalone page with the charts inline (`svgs`: already rendered ones)."""
    svgs = svgs if svgs is not None else charts.report_charts(report)
    every = tables(report)
    pointwise = [every[key] for key in (*POINTWISE_KEYS, *ORDERING_KEYS) if key in every]
    return render_to_string(
        "calibration/report.html", {"report": report, "tables": every, "charts": svgs, "heading": heading(report), "pointwise": pointwise}
    )


def html_policy(page: str) -> str:
    """The Content-Security-Policy of a downloaded HTML report: its own <style> blocks (by hash) and data: images, nothing else.

    The file stands alone, so it carries its stylesheet inline, which the site's
    policy forbids. Served as an attachment it is saved, not shown; should a
    browser show it anyway, no script runs, nothing loads and no form posts.
    """
    none = "'none'"
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(block.encode()).digest()).decode() + "'"
        for block in re.findall(r"<style>(.*?)</style>", page, flags=re.S)
    )
    return (
        f"default-src 'none'; style-src {hashes or none}; img-src data:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox"
    )


RENDERERS = {"json": render_json, "csv": render_csv, "md": render_md, "html": render_html}


def render(report: dict, fmt: str) -> str:
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format '{fmt}' (choose {', '.join(RENDERERS)})")
    return RENDERERS[fmt](report)


def download_name(campaign_name: str, fmt: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in campaign_name).strip("-") or "campaign"
    return f"calibration-{safe}.{FORMATS[fmt][1]}"
