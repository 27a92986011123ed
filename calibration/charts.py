"""SVG charts of a calibration report (matplotlib, Agg backend, no pyplot state).

Each function takes the report dict and returns an `<svg>` element ready to be
embedded inline in HTML: no XML prolog, width 100% with its viewBox kept, a
title for screen readers, and every id prefixed so that several charts can
share one page (matplotlib's clip-path ids would otherwise collide).
"""

from __future__ import annotations

import functools
import io
import math
import re
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

HUMANS = "humans"
RC = {"svg.fonttype": "none", "svg.hashsalt": "pairwise-calibration", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False}
HUMAN_COLOUR = "#222222"
# What an id in the charts may not hold: each is a plain `#id` selector.
_NOT_ID = re.compile(r"[^A-Za-z0-9_-]")
# The leaderboard chart draws at most this many judges (the tied for best first, then by PAR); every
# rater is in the Bradley-Terry table. 65 judges by 30 systems made a figure 330 inches tall: 1 MB of
# SVG and 1.4 s of a big dashboard's first report, and no one could read it.
CHART_MAX_JUDGES = 8
# Judges cycle through these; black stays the humans'.
COLOURS = ["#2457c5", "#c0392b", "#1f9a4a", "#8e44ad", "#d35400", "#16a0b5", "#b7950b", "#7f8c8d"]


@functools.cache
def _mpl() -> SimpleNamespace:
    """matplotlib, imported when the first chart is drawn: a third of a second that every process
    importing this module (every manage.py command, through the views) would pay otherwise."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import rc_context
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    return SimpleNamespace(Figure=Figure, rc_context=rc_context, FuncFormatter=FuncFormatter, MaxNLocator=MaxNLocator)


def _colours(report: dict) -> dict[str, str]:
    """One colour per rater, the same in every chart."""
    colours = {j["name"]: COLOURS[i % len(COLOURS)] for i, j in enumerate(report["judges"])}
    colours[HUMANS] = HUMAN_COLOUR
    return colours


def _svg(fig: Figure, key: str, title: str) -> str:
    buffer = io.StringIO()
    with _mpl().rc_context(RC):
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
    svg = f'{head} width="100%" role="img" aria-label="{safe_title}"><title>{safe_title}</title>{text[head_end + 1 :]}'.strip()
    return presentation_attributes(svg)


# CSS properties matplotlib writes that SVG also takes as presentation attributes.
PRESENTATION = frozenset(
    {
        "clip-path", "color", "display", "dominant-baseline", "fill", "fill-opacity", "fill-rule", "font-family",
        "font-size", "font-stretch", "font-style", "font-variant", "font-weight", "letter-spacing", "mask", "opacity",
        "stroke", "stroke-dasharray", "stroke-dashoffset", "stroke-linecap", "stroke-linejoin", "stroke-miterlimit",
        "stroke-opacity", "stroke-width", "text-anchor", "visibility",
    }
)  # fmt: skip
_TAG_WITH_STYLE = re.compile(r'<([A-Za-z][\w:-]*)((?:\s[^<>]*?)?)\sstyle="([^"]*)"([^<>]*?)(/?)>')
_UNIVERSAL_RULE = re.compile(r"<defs>\s*<style[^>]*>\s*\*\s*\{([^{}]*)\}\s*</style>\s*</defs>")
_ATTRIBUTE_NAME = re.compile(r'\s([\w:-]+)="')


# One `name: value` declaration; a value may hold character references (`&apos;`), whose `;` ends nothing.
_DECLARATION = re.compile(r"([A-Za-z-]+)\s*:\s*((?:&#?\w+;|[^;])*)")


def _declarations(css: str) -> list[tuple[str, str]]:
    return [(name.lower(), value.strip()) for name, value in _DECLARATION.findall(css)]


def _as_attributes(declarations: list[tuple[str, str]]) -> tuple[str, str]:
    """(presentation attributes, what is left as CSS) for a list of declarations."""
    attributes = "".join(f' {name}="{value}"' for name, value in declarations if name in PRESENTATION)
    rest = "; ".join(f"{name}: {value}" for name, value in declarations if name not in PRESENTATION)
    return attributes, rest


def presentation_attributes(svg: str) -> str:
    """The chart with its CSS (style attributes, matplotlib's `*{…}` rule) written as SVG presentation attributes.

    A Content-Security-Policy without 'unsafe-inline' ignores style attributes and
    `<style>` elements, but not presentation attributes, which draw the same. A
    property with no presentation attribute stays in a style attribute: the
    browser test's empty list of CSP violations shows that none is left.
    """

    def element(match: re.Match) -> str:
        tag, before, css, after, end = match.groups()
        attributes, rest = _as_attributes(_declarations(css))
        # A property set both ways: the style's value won, so it replaces the attribute.
        replaced = set(_ATTRIBUTE_NAME.findall(attributes))
        kept = "".join(m.group(0) for m in re.finditer(r'\s([\w:-]+)="[^"]*"', before + after) if m.group(1) not in replaced)
        style = f' style="{rest}"' if rest else ""
        return f"<{tag}{kept}{attributes}{style}{end}>"

    svg = _TAG_WITH_STYLE.sub(element, svg)
    universal = _UNIVERSAL_RULE.search(svg)
    if universal:
        # `*{…}` styles every element; on the root they are inherited, and an element's own attribute still wins.
        attributes, rest = _as_attributes(_declarations(universal.group(1)))
        if not rest:
            svg = svg[: universal.start()] + svg[universal.end() :]
            svg = svg.replace("<svg", "<svg" + attributes, 1)
    return svg


def _empty(key: str, message: str) -> str:
    fig = _mpl().Figure(figsize=(6, 1))
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center")
    return _svg(fig, key, message)


def _spread_labels(ax, points: list[tuple[float, float, str, str]]) -> None:
    """Names beside their points, moved up or down where they would overlap an earlier one.

    `points`: (x, y, text, colour) in data coordinates. Label boxes are estimated from the number of
    characters (the SVG keeps text as text, so nothing is measured before saving)."""
    to_points = 72.0 / ax.figure.dpi
    placed: list[tuple[float, float, float, float]] = []
    height = RC["font.size"] * 1.3
    for x, y, text, colour in sorted(points, key=lambda p: (p[1], p[0])):
        px, py = (v * to_points for v in ax.transData.transform((x, y)))
        width = 0.6 * RC["font.size"] * len(text)
        for step in (0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6):
            dy = 4 + step * height
            box = (px + 6, py + dy, px + 6 + width, py + dy + height)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
                break
        placed.append(box)
        far = dict(arrowprops={"arrowstyle": "-", "color": colour, "linewidth": 0.5}) if step else {}
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(6, dy), color=colour, **far)


def _par_points(ax, judges: list[dict], xs: list[float], colours: dict) -> None:
    for j, x in zip(judges, xs):
        lo, hi = j["par_ci"] or (j["par"], j["par"])
        ax.errorbar([x], [j["par"]], yerr=[[j["par"] - lo], [hi - j["par"]]], fmt="o", color=colours[j["name"]], capsize=3,
                    mfc="none" if j.get("par_ci_note") else None)  # fmt: skip
    _spread_labels(ax, [(x, j["par"], j["name"] + (" †" if j["small_n"] else ""), colours[j["name"]]) for j, x in zip(judges, xs)])


def par_cost_scatter(report: dict) -> str:
    """PAR (with CI whiskers) against cost per judged pair; the Pareto frontier as a step line; the human ceiling as a band.

    Judges whose cost is unknown (no prices) sit in a strip of their own at the right, "cost unknown":
    never at $0. A hollow marker: too few pairs for an interval."""
    rated = [j for j in report["judges"] if j["par"] is not None]
    points = [j for j in rated if j["cost_per_pair_usd"] is not None]
    unknown = [j for j in rated if j["cost_per_pair_usd"] is None]
    if not rated:
        return _empty("par-cost", "No judge has a PAR yet.")
    fig = _mpl().Figure(figsize=(6.4 + (1.4 if points and unknown else 0), 4))
    widths = ([4] if points else []) + ([1.2] if unknown else [])
    grid = fig.add_gridspec(1, len(widths), width_ratios=widths, wspace=0.12)
    ax = fig.add_subplot(grid[0, 0])
    strip = (fig.add_subplot(grid[0, 1], sharey=ax) if points else ax) if unknown else None
    colours = _colours(report)
    h = report["humans"]
    for axis in [a for a in (ax if points else None, strip) if a is not None]:
        if h["par_leave_one_out"] is not None:
            axis.axhline(h["par_leave_one_out"], color=HUMAN_COLOUR, linewidth=1, label="humans (leave one out)" if axis is ax else None)
            if h["par_leave_one_out_ci"]:
                axis.axhspan(*h["par_leave_one_out_ci"], color=HUMAN_COLOUR, alpha=0.08)
        axis.set_ylim(0, 1.02)
        axis.grid(alpha=0.3)
    ax.set_ylabel("PAR (agreement with human labels)")
    if points:
        costs = [j["cost_per_pair_usd"] for j in points]
        log = min(costs) > 0 and max(costs) / min(costs) > 20
        if log:
            ax.set_xscale("log")
        elif max(costs) == 0:  # free judges only (baselines): one tick, $0
            ax.set_xlim(-1, 1)
            ax.set_xticks([0])
            ax.xaxis.set_major_formatter(_mpl().FuncFormatter(lambda v, _: "$0"))
        else:  # costs are never negative: the axis starts at $0, with room for the markers
            span = max(costs)
            ax.set_xlim(-0.05 * span, 1.3 * span)
            ax.xaxis.set_major_locator(_mpl().MaxNLocator(5, min_n_ticks=2))
            ax.xaxis.set_major_formatter(_mpl().FuncFormatter(lambda v, _: "" if v < 0 else f"${v:.4g}"))
        front = sorted((j for j in points if j["name"] in report["pareto_frontier"]), key=lambda j: j["cost_per_pair_usd"])
        if len(front) > 1:
            ax.step(
                [j["cost_per_pair_usd"] for j in front],
                [j["par"] for j in front],
                where="post",
                color="#555",
                linestyle="--",
                linewidth=1,
                label="Pareto frontier",
            )
        _par_points(ax, points, costs, colours)
        ax.set_xlabel("Cost per judged pair (USD)")
    if strip is not None:
        xs = [(i + 1) / (len(unknown) + 1) for i in range(len(unknown))]
        strip.set_xlim(0, 1.6 if points else 1.4)
        strip.set_xticks([])
        strip.set_xlabel("cost unknown (no prices)")
        if strip is not ax:
            strip.tick_params(labelleft=False)
            strip.spines["left"].set_visible(False)
        _par_points(strip, unknown, xs, colours)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right", frameon=False)
    return _svg(
        fig, "par-cost", "PAR against cost per pair, with the Pareto frontier" + ("; judges of unknown cost apart" if unknown else "")
    )


def category_heatmap(report: dict) -> str:
    """PAR per category (columns) for the humans' leave-one-out ceiling and each judge (rows)."""
    categories = report["campaign"]["categories"]
    rows = [(f"{HUMANS} (LOO)", report["humans"]["by_category"], "par_leave_one_out")]
    rows += [(j["name"], j["by_category"], "par") for j in report["judges"]]
    if not categories or not any(entries for _, entries, _ in rows):
        return _empty("heatmap", "No per-category agreement to show yet.")
    values = [[(entries.get(c) or {}).get(key) for c in categories] for _, entries, key in rows]
    fig = _mpl().Figure(figsize=(1.2 + 1.3 * len(categories), 0.8 + 0.6 * len(rows)))
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
            pairs = "" if entry.get("n_pairs") is None else f"\n{entry['n_pairs']} pair{'' if entry['n_pairs'] == 1 else 's'}"
            ax.text(
                c,
                r,
                f"{value:.2f}{'†' if entry['small_n'] else ''}\nn={entry['n']}{pairs}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if value < 0.6 else "black",
            )
    ax.set_xticks(range(len(categories)), categories, rotation=20, ha="right")
    ax.set_yticks(range(len(rows)), [name for name, _, _ in rows])
    ax.spines[:].set_visible(False)
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label="PAR")
    return _svg(fig, "heatmap", "PAR per category for each judge and the human ceiling")


def bradley_terry_chart(report: dict) -> str:
    """Each rater's Bradley–Terry scores with 95% CI whiskers, systems on the vertical axis."""
    raters, left_out = charted_raters(report)
    shown = sum(name != HUMANS for name, _ in raters)
    if not raters:
        return _empty("bt", "No Bradley–Terry scores yet.")
    order = [s["system"] for s in raters[0][1]]
    for _, scores in raters[1:]:
        order += [s["system"] for s in scores if s["system"] not in order]
    fig = _mpl().Figure(figsize=(6.4, 1.5 + 0.5 * len(order) * max(1, len(raters) / 3)), layout="constrained")
    ax = fig.add_subplot()
    step = 0.8 / max(len(raters), 1)
    colours = _colours(report)
    finite = [x for _, scores in raters for s in scores for x in [s["score"], *(s["ci"] or [])] if x is not None]
    left, right = (min(finite), max(finite)) if finite else (900.0, 1100.0)
    pad = max(50.0, 0.08 * (right - left))
    left, right = left - pad, right + pad  # unbounded ends and scores that are not estimable sit on these edges
    for i, (name, scores) in enumerate(raters):
        colour = colours[name]
        # The rater's scores in two errorbar calls (filled, hollow) rather than one per system: 66 raters
        # by 30 systems made 2,000 of them, seconds of a large dashboard's first load.
        whiskers: dict[bool, list] = {False: [], True: []}
        labelled = any(s["score"] is not None for s in scores)  # the legend shows a whisker when the rater has one
        for s in scores:
            y = order.index(s["system"]) - 0.4 + step * (i + 0.5)
            if s["score"] is None:
                label = None if labelled else name
                labelled = True
                edge = right if s.get("side") == "above" else left
                marker = ">" if s.get("side") == "above" else "<" if s.get("side") == "below" else "x"
                ax.plot([edge], [y], marker=marker, color=colour, markersize=6, linestyle="none", label=label)
                ax.annotate(
                    "not estimable",
                    (edge, y),
                    textcoords="offset points",
                    xytext=(-4 if edge == right else 4, 3),
                    ha="right" if edge == right else "left",
                    fontsize=7,
                    color=colour,
                )
                continue
            lo, hi = s["ci"] or (s["score"], s["score"])
            lo = left if lo is None else lo
            hi = right if hi is None else hi
            whiskers[bool(s.get("ci_note"))].append((s["score"], y, s["score"] - lo, hi - s["score"]))
        named = False
        for hollow in (False, True):
            if whiskers[hollow]:
                x, y, below, above = np.array(whiskers[hollow]).T
                ax.errorbar(x, y, xerr=[below, above], fmt="o", color=colour, capsize=2, markersize=4, label=None if named else name,
                            mfc="none" if hollow else None)  # fmt: skip
                named = True
    ax.set_xlim(left, right)
    ax.set_yticks(range(len(order)), order)
    ax.invert_yaxis()
    ax.axvline(report["parameters"]["anchor"]["score"], color="#999", linewidth=0.8)
    anchor = report["parameters"]["anchor"]
    systems = anchor.get("systems") or []
    if anchor["system"]:
        scale = f"{anchor['system']} = {anchor['score']:g}"
    elif systems:
        scale = f"mean of {', '.join(systems) if len(systems) <= 3 else f'{len(systems)} anchor systems'} = {anchor['score']:g}"
    else:
        scale = f"mean = {anchor['score']:g}"
    ax.set_xlabel(
        f"Bradley–Terry score ({scale}); ◀ ▶ not estimable, whisker to the edge: unbounded; hollow: too few pairs for an interval"
    )
    ax.grid(axis="x", alpha=0.3)
    title = "Bradley–Terry leaderboard for the humans and each judge"
    if left_out:
        title = f"Bradley–Terry leaderboard: {shown} of {shown + left_out} judges"
        ax.set_title(
            f"The {shown} judges tied for best or of highest PAR; the other {left_out}: the Bradley–Terry table", fontsize=8, loc="left"
        )
    fig.legend(loc="outside lower center", ncol=2, frameon=False, fontsize=8)
    return _svg(fig, "bt", title)


def charted_raters(report: dict) -> tuple[list[tuple[str, list]], int]:
    """(name, scores) of the raters the leaderboard chart draws, in the report's order (the humans,
    then the judges by PAR): every one with scores when there are at most CHART_MAX_JUDGES judges,
    else the humans and that many judges, those tied for the best PAR first, then the highest PAR;
    and how many judges with scores it leaves out."""
    scored = {name: scores for name, scores in report["bradley_terry"].items() if scores}
    judges = [name for name in scored if name != HUMANS]
    priority = [name for name in dict.fromkeys([*report.get("tied_for_best", []), *judges]) if name in scored and name != HUMANS]
    chosen = set(priority[:CHART_MAX_JUDGES])
    raters = [(name, scores) for name, scores in scored.items() if name == HUMANS or name in chosen]
    return raters, len(judges) - len(chosen)


def report_charts(report: dict) -> dict[str, str]:
    return {"par_cost": par_cost_scatter(report), "heatmap": category_heatmap(report), "bradley_terry": bradley_terry_chart(report)}
