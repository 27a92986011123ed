"""How the report's figures read in a table cell, and the table itself (no Django, no report logic)."""

from __future__ import annotations

from dataclasses import dataclass

DASH = "—"
SMALL_MARK = "†"
# A table longer than this shows its first rows in the Markdown and HTML and collapses (HTML) or
# cuts (Markdown) the rest, and the dashboard pages through it; the JSON and CSV hold every row.
ROWS_SHOWN = 50


def fmt_value(value: float | None, digits: int = 3) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def fmt_estimate(value: float | None, ci: list | None, digits: int = 3, note: str | None = None) -> str:
    """`0.610 [0.550, 0.660]`; `[too few pairs for an interval]` when the report withheld the interval."""
    if value is None:
        return DASH
    text = f"{value:.{digits}f}"
    if note:
        return f"{text} [{note}]"
    return text if ci is None else f"{text} [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def fmt_n(n: int, n_pairs: int | None) -> str:
    """`(n=120, 12 pairs)`; `(n=120)` where the pairs are not counted."""
    if n_pairs is None:
        return f"(n={n:,})"
    return f"(n={n:,}, {n_pairs:,} pair{'' if n_pairs == 1 else 's'})"


def nested(entry: dict, key: str = "value", digits: int = 3) -> str:
    """An {value, ci, n, n_pairs, small_n, ci_note} object as `0.61 [0.55, 0.66]† (n=120, 12 pairs)`."""
    text = fmt_estimate(entry[key], entry["ci"], digits, entry.get("ci_note"))
    return text if text == DASH else f"{text}{SMALL_MARK if entry['small_n'] else ''} {fmt_n(entry['n'], entry.get('n_pairs'))}"


def fmt_score(entry: dict) -> str:
    """A Bradley–Terry score with its CI (an unbounded end as ∞), or why it has none."""
    if not entry.get("estimable", True):
        return entry["reason"] or "not estimable"
    text = f"{entry['score']:.0f}"
    if entry.get("ci_note"):
        text += f" [{entry['ci_note']}]"
    elif entry["ci"] is not None:
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
    empty: str = ""  # shown instead of "Nothing to show" when there are no rows

    @property
    def numeric_columns(self) -> set[int]:
        return {i for i, numeric in enumerate(self.numeric) if numeric}

    @property
    def rows_head(self) -> list[list[str]]:
        """The rows shown at once."""
        return self.rows[:ROWS_SHOWN]

    @property
    def rows_rest(self) -> list[list[str]]:
        """The rows collapsed (HTML) or left to the JSON and CSV (Markdown)."""
        return self.rows[ROWS_SHOWN:]

    def page(self, number: int, size: int = ROWS_SHOWN) -> "TablePage":
        """Page `number` (from 1, clamped to the pages there are) of the rows."""
        pages = max(1, -(-len(self.rows) // size))
        number = min(max(1, number), pages)
        start = (number - 1) * size
        return TablePage(self, self.rows[start : start + size], number, pages, start + 1, min(start + size, len(self.rows)))


@dataclass
class TablePage:
    table: Table
    rows: list[list[str]]
    number: int
    pages: int
    first: int  # the rows shown, from 1
    last: int

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.pages else None
