"""The Markdown report shaped by what the campaign holds (issue 39, item 10).

A campaign of answers about one article alone or of rankings (no pairwise verdict) opens with their
tables; its pairwise tables, which can only be empty there, are left out, and one line lists what has
no data. A report with pairwise verdicts keeps its order and every table, empty or not.
"""

from __future__ import annotations

from calibration.report.table_format import Table
from calibration.report.tables.orderings import KEYS as ORDERING_KEYS
from calibration.report.tables.pointwise import KEYS as POINTWISE_KEYS


def one_article_only(report: dict) -> bool:
    """Whether the report has no pairwise verdict at all, a human's or a judge's, but other answers:
    about one article, or rankings. A campaign whose rubric asks nothing of pairs still holds its pairs
    as a record of its articles: they count only once somebody has given a verdict on them."""
    if "pointwise" not in report and "orderings" not in report:
        return False
    pairwise = report.get("n_pairs", 0) and (report["humans"]["n_labels"] or any(j.get("n_labels") for j in report["judges"]))
    return not pairwise


def md_order(report: dict, every: dict[str, Table], pairwise_order: list[str]) -> tuple[list[str], str | None]:
    """(the table keys to print, in order; the line naming the tables left out for having no data, or None)."""
    pointwise = [key for key in (*POINTWISE_KEYS, *ORDERING_KEYS) if key in every]
    if not one_article_only(report):
        sets = ["acceptable_sets"] if "acceptable_sets" in every else []
        gold = ["gold"] if "gold" in every else []
        steps = [key for key in ("steps", "steps_by_kind", "step_judges") if key in every]
        return (["design"] if "design" in every else []) + sets + pairwise_order + gold + steps + pointwise, None
    shown = [key for key in pointwise if every[key].rows] + [key for key in pairwise_order if every[key].rows]
    empty = [every[key].title for key in pointwise + pairwise_order if not every[key].rows]
    line = f"No data in this campaign for: {'; '.join(empty)}." if empty else None
    return shown, line


def lead_line(report: dict) -> str:
    """What the campaign holds, for the command's summary line: one-article answers and judges when it has no pairs."""
    if not one_article_only(report):
        judges = len(report["judges"])
        return f"{report['humans']['n_labels']} human labels, {judges} judge{'s' if judges != 1 else ''}"
    if "pointwise" not in report:
        criteria = report["orderings"]["criteria"]
        judges = sorted({name for c in criteria for name in c["judges"]})
        n = sum(c["n_orderings"] for c in criteria)
        return f"{n:,} human orderings, {len(judges)} judge{'s' if len(judges) != 1 else ''} (no pairs)"
    tables = report["pointwise"]["tables"]
    answers = sum(t["n_answers"] for t in tables)
    judges = sorted({name for t in tables for name in t["judges"]})
    return f"{answers:,} one-article answers, {len(judges)} judge{'s' if len(judges) != 1 else ''} (no pairs)"
