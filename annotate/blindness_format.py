"""The blindness audit's tables, shared by the staff page and the markdown of ``blindness_report``.

Pure Python, no Django.
"""

from __future__ import annotations

import math

from annotate.blindness import AS_WRITTEN, NEUTRAL, OPTIONS, BlindnessReport
from annotate.blindness_features import FEATURES

__all__ = ["effect_rows", "emphasis_lines", "feature_rows", "report_markdown"]

_WAYS = {AS_WRITTEN: "emphasis as written", NEUTRAL: "neutral emphasis (bold and italic as plain text)"}


def _number(value: float | None, key: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if key == "bullet_share":
        return f"{value:.0%}"
    if key in ("words", "paragraph_median", "paragraph_longest"):
        return f"{value:,.0f}"
    if abs(value) < 10:
        return f"{value:.2f}"
    return f"{value:.1f}" if abs(value) < 100 else f"{value:,.0f}"


def feature_rows(report: BlindnessReport) -> list[tuple[str, str, list[str]]]:
    """(label, explanation, one cell per system) for the systems table."""
    systems = report.systems
    rows = [
        (
            "n articles",
            "articles of this system in the campaign's pairs, each once",
            [str(r.n_articles) for r in systems],
        ),
        (
            "Length ratio to reference (median)",
            "per topic, words over the reference's words",
            [_number(r.length_ratio) for r in systems],
        ),
    ]
    for feature in FEATURES:
        if feature.rare:
            rows.append(
                (
                    f"{feature.label} (% of articles with any)",
                    feature.help,
                    [f"{r.any_share[feature.key]:.0%}" for r in systems],
                )
            )
        else:
            rows.append(
                (
                    f"{feature.label} (mean)",
                    feature.help,
                    [_number(r.means[feature.key], feature.key) for r in systems],
                )
            )
    return rows


def effect_rows(report: BlindnessReport) -> list[tuple[str, list[str]]]:
    """(feature label, one AUC per system) for the per-system effect table; the reference's cell is empty."""
    return [
        (
            feature.label,
            ["" if r.is_reference else _number(r.effects.get(feature.key)) if r.effects else "–" for r in report.systems],
        )
        for feature in FEATURES
    ]


def emphasis_lines(report: BlindnessReport) -> list[str]:
    """Guessability with each way of showing emphasis, the campaign's way first."""
    shown = NEUTRAL if report.neutral_emphasis else AS_WRITTEN
    lines = []
    for way in (shown, NEUTRAL if shown == AS_WRITTEN else AS_WRITTEN):
        g = report.guessability_by_emphasis.get(way)
        if g is not None:
            note = " (what this campaign shows)" if way == shown else ""
            lines.append(f"With {_WAYS[way]}{note}: {g.text}")
    options = report.guessability_by_options
    if options:
        lines.append(
            "Guessability under each presentation: "
            + "; ".join(f"{_OPTIONS[way]}: {options[way].text}" for way in OPTIONS if way in options)
            + f" (this campaign: {'neutral headings' if report.neutral_headings else 'headings as written'})"
        )
    return lines


_OPTIONS = {
    AS_WRITTEN: "as written",
    "neutral_emphasis": "neutral emphasis",
    "neutral_headings": "neutral headings (sentence case, no numbering, levels from the top)",
    "both": "both neutral options",
}


def report_markdown(report: BlindnessReport, *, title: str = "") -> str:
    """The report as markdown tables: systems in columns, features in rows, n on the first row."""
    out = []
    if title:
        out += [f"# Blindness audit: {title}", ""]
    g = report.guessability
    out += [
        (
            f"Guessability (reference vs generated, balanced accuracy, chance 50%): **{g.text}**, "
            f"n = {g.n_articles} articles on {g.n_topics} topics."
        ),
        "",
    ]
    out += [f"- {line}" for line in emphasis_lines(report)] + [""]
    if not report.systems:
        return "\n".join(out) + "\n"
    keys = [row.key + (" (ref)" if row.is_reference else "") for row in report.systems]
    header = ["| | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
    out += header
    for label, _, cells in feature_rows(report):
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append(
        "| guessable vs reference | " + " | ".join("" if r.guessability is None else r.guessability.text for r in report.systems) + " |"
    )
    out.append(
        "| giveaways (AUC) | "
        + " | ".join(
            ", ".join(f"{s.label} {s.auc:.2f}" for s in r.giveaways[:3]) or ("" if r.is_reference else "none") for r in report.systems
        )
        + " |"
    )
    out.append("| tells the reference never shows (% of articles) | " + " | ".join(", ".join(r.tells_text) for r in report.systems) + " |")
    out += [
        "",
        "Per-system effect of each feature (AUC of the reference against that system on the same topics: "
        "0.5 none, near 0 or 1 it alone tells them apart):",
        "",
    ]
    out += header
    for label, cells in effect_rows(report):
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out += [
        "",
        "Features that separate most (all systems pooled; AUC: chance the reference scores higher; coefficient on standardized features):",
        "",
    ]
    out += ["| feature | AUC | coefficient | |", "|---|---:|---:|---|"]
    for s in report.separation:
        auc = "–" if s.auc is None else f"{s.auc:.2f}"
        out.append(f"| {s.label} | {auc} | {_number(s.coefficient)} | {s.direction} |")
    return "\n".join(out) + "\n"
