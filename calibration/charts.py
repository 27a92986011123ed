"""SVG charts of a calibration report (matplotlib, Agg backend, no pyplot state).

Each function takes the report dict and returns an `<svg>` element ready to be
embedded inline in HTML: no XML prolog, width 100% with its viewBox kept, a
title for screen readers, and every id prefixed so that several charts can
share one page (matplotlib's clip-path ids would otherwise collide).
"""

from __future__ import annotations

import io
import math
import re

import matplotlib

matplotlib.use("Agg")

from matplotlib import rc_context  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

HUMANS = "humans"
RC = {"svg.fonttype": "none", "svg.hashsalt": "pairwise-calibration", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False}
HUMAN_COLOUR = "#222222"
# What an id in the charts may not hold: each is a plain `#id` selector.
_NOT_ID = re.compile(r"[^A-Za-z0-9_-]")
# Judges cycle through these; black stays the humans'.
COLOURS = ["#2457c5", "#c0392b", "#1f9a4a", "#8e44ad", "#d35400", "#16a0b5", "#b7950b", "#7f8c8d"]


def _colours(report: dict) -> dict[str, str]:
    """One colour per rater, the same in every chart."""
    colours = {j["name"]: COLOURS[i % len(COLOURS)] for i, j in enumerate(report["judges"])}
    colours[HUMANS] = HUMAN_COLOUR
    return colours


def _svg(fig: Figure, key: str, title: str) -> str:
    buffer = io.StringIO()
    with rc_context(RC):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)

    # Every id prefixed and made plain (matplotlib's own hold dots: "matplotlib.axis_1"), references alike.
    def local(match: re.Match) -> str:
        return match.group(1) + key + "-" + _NOT_ID.sub("-", match.group(2)) + match.group(3)

    text = re.sub(r'(\bid=")([^"]+)(")', local, text)
    text = re.sub(r"(url\(#)([^)]+)(\))", local, text)
    text = re.sub(r'(href="#)([^"]+)(")', local, text)
    head_end = text.index(">")
    head = re.sub(r'\s(width|height)="[^"]*"', "", text[:head_end])
    safe_title = title.replace("&", "&amp;").replace("<", "&lt;")
    return f'{head} width="100%" role="img" aria-label="{safe_title}"><title>{safe_title}</title>{text[head_end + 1 :]}'.strip()


def _empty(key: str, message: str) -> str:
    fig = Figure(figsize=(6, 1))
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center")
    return _svg(fig, key, message)


def par_cost_scatter(report: dict) -> str:
    """PAR (with CI whiskers) against cost per judged pair; the Pareto frontier as a step line; the human ceiling as a band."""
    points = [j for j in report["judges"] if j["par"] is not None and j["cost_per_pair_usd"] is not None]
    if not points:
        return _empty("par-cost", "No judge has both a PAR and a cost yet.")
    fig = Figure(figsize=(6.4, 4))
    ax = fig.add_subplot()
    costs = [j["cost_per_pair_usd"] for j in points]
    log = min(costs) > 0 and max(costs) / min(costs) > 20
    colours = _colours(report)
    for j in points:
        lo, hi = j["par_ci"] or (j["par"], j["par"])
        colour = colours[j["name"]]
        ax.errorbar([j["cost_per_pair_usd"]], [j["par"]], yerr=[[j["par"] - lo], [hi - j["par"]]], fmt="o", color=colour, capsize=3)
        label = j["name"] + (" †" if j["small_n"] else "")
        ax.annotate(label, (j["cost_per_pair_usd"], j["par"]), textcoords="offset points", xytext=(6, 4), color=colour)
    front = sorted((j for j in points if j["name"] in report["pareto_frontier"]), key=lambda j: j["cost_per_pair_usd"])
    if len(front) > 1:
        ax.step([j["cost_per_pair_usd"] for j in front], [j["par"] for j in front], where="post", color="#555", linestyle="--", linewidth=1, label="Pareto frontier")
    h = report["humans"]
    if h["par_leave_one_out"] is not None:
        ax.axhline(h["par_leave_one_out"], color=HUMAN_COLOUR, linewidth=1, label="humans (leave one out)")
        if h["par_leave_one_out_ci"]:
            ax.axhspan(*h["par_leave_one_out_ci"], color=HUMAN_COLOUR, alpha=0.08)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("Cost per judged pair (USD)")
    ax.set_ylabel("PAR (agreement with human labels)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right", frameon=False)
    return _svg(fig, "par-cost", "PAR against cost per pair, with the Pareto frontier")


def category_heatmap(report: dict) -> str:
    """PAR per category (columns) for the humans' leave-one-out ceiling and each judge (rows)."""
    categories = report["campaign"]["categories"]
    rows = [(f"{HUMANS} (LOO)", report["humans"]["by_category"], "par_leave_one_out")]
    rows += [(j["name"], j["by_category"], "par") for j in report["judges"]]
    if not categories or not any(entries for _, entries, _ in rows):
        return _empty("heatmap", "No per-category agreement to show yet.")
    values = [[(entries.get(c) or {}).get(key) for c in categories] for _, entries, key in rows]
    fig = Figure(figsize=(1.2 + 1.3 * len(categories), 0.8 + 0.45 * len(rows)))
    ax = fig.add_subplot()
    grid = [[math.nan if v is None else v for v in row] for row in values]
    image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for r, (_, entries, key) in enumerate(rows):
        for c, category in enumerate(categories):
            entry = entries.get(category)
            if not entry or entry[key] is None:
                ax.text(c, r, "—", ha="center", va="center", color="#555")
                continue
            value = entry[key]
            ax.text(c, r, f"{value:.2f}{'†' if entry['small_n'] else ''}\nn={entry['n']}", ha="center", va="center", fontsize=8, color="white" if value < 0.6 else "black")
    ax.set_xticks(range(len(categories)), categories, rotation=20, ha="right")
    ax.set_yticks(range(len(rows)), [name for name, _, _ in rows])
    ax.spines[:].set_visible(False)
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label="PAR")
    return _svg(fig, "heatmap", "PAR per category for each judge and the human ceiling")


def bradley_terry_chart(report: dict) -> str:
    """Each rater's Bradley–Terry scores with 95% CI whiskers, systems on the vertical axis."""
    raters = [(name, scores) for name, scores in report["bradley_terry"].items() if scores]
    if not raters:
        return _empty("bt", "No Bradley–Terry scores yet.")
    order = [s["system"] for s in raters[0][1]]
    for _, scores in raters[1:]:
        order += [s["system"] for s in scores if s["system"] not in order]
    fig = Figure(figsize=(6.4, 1.5 + 0.5 * len(order) * max(1, len(raters) / 3)), layout="constrained")
    ax = fig.add_subplot()
    step = 0.8 / max(len(raters), 1)
    colours = _colours(report)
    finite = [x for _, scores in raters for s in scores for x in [s["score"], *(s["ci"] or [])] if x is not None]
    left, right = (min(finite), max(finite)) if finite else (900.0, 1100.0)
    pad = max(50.0, 0.08 * (right - left))
    left, right = left - pad, right + pad  # unbounded ends and scores that are not estimable sit on these edges
    for i, (name, scores) in enumerate(raters):
        colour = colours[name]
        labelled = False
        for s in scores:
            y = order.index(s["system"]) - 0.4 + step * (i + 0.5)
            label = None if labelled else name
            labelled = True
            if s["score"] is None:
                edge = right if s.get("side") == "above" else left
                marker = ">" if s.get("side") == "above" else "<" if s.get("side") == "below" else "x"
                ax.plot([edge], [y], marker=marker, color=colour, markersize=6, linestyle="none", label=label)
                ax.annotate("not estimable", (edge, y), textcoords="offset points", xytext=(-4 if edge == right else 4, 3),
                            ha="right" if edge == right else "left", fontsize=7, color=colour)
                continue
            lo, hi = s["ci"] or (s["score"], s["score"])
            lo = left if lo is None else lo
            hi = right if hi is None else hi
            ax.errorbar([s["score"]], [y], xerr=[[s["score"] - lo], [hi - s["score"]]], fmt="o", color=colour, capsize=2, markersize=4, label=label)
    ax.set_xlim(left, right)
    ax.set_yticks(range(len(order)), order)
    ax.invert_yaxis()
    ax.axvline(report["parameters"]["anchor"]["score"], color="#999", linewidth=0.8)
    anchor = report["parameters"]["anchor"]
    scale = f"{anchor['system']} = {anchor['score']:g}" if anchor["system"] else f"mean = {anchor['score']:g}"
    ax.set_xlabel(f"Bradley–Terry score ({scale}); ◀ ▶ not estimable, whisker to the edge: unbounded")
    ax.grid(axis="x", alpha=0.3)
    fig.legend(loc="outside lower center", ncol=2, frameon=False, fontsize=8)
    return _svg(fig, "bt", "Bradley–Terry leaderboard for the humans and each judge")


def report_charts(report: dict) -> dict[str, str]:
    return {"par_cost": par_cost_scatter(report), "heatmap": category_heatmap(report), "bradley_terry": bradley_terry_chart(report)}
