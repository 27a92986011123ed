"""Markdown line syntax shared by the cleaner and the removal audit. Pure Python.

Only patterns that mean exactly the same thing wherever they are used live here.
Where a module reads a kind of line a little differently on purpose, it keeps its
own pattern next to the code that uses it, with a comment saying how and why it
differs: ``removal`` (ATX and setext headings, list items, link definitions),
``blindness`` (headings, list items, table rows and separator rows) and the
cleaner's section finder (a line that cannot be a paragraph, which also knows the
cleaner's code placeholder).

Every pattern is meant for ``match``/``fullmatch`` on one line without its
``\\n`` (right-stripped where the cleaner uses it), unless its comment says so.
"""

from __future__ import annotations

import re

__all__ = [
    "ALIGN_ROW_RE",
    "ATX_RE",
    "BLANK_RUN_RE",
    "CELL_SPLIT_RE",
    "FENCE_OPEN_RE",
    "FETCH_METADATA_LABELS",
    "SETEXT_RE",
    "atx",
]

# The opening line of a fenced code block: up to three spaces, then ``` or ~~~
# (three or more); group 1 is the fence. The cleaner and the removal audit find
# the closing line each in their own way: the cleaner requires the CommonMark
# indentation (at most three spaces), the audit accepts any.
FENCE_OPEN_RE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})")

# An ATX heading: group 1 the hashes, group 2 the text (None for a bare "##"),
# closing hashes included; ``atx`` takes them off.
ATX_RE = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]+(.*))?$")

# A setext underline, "=" or at least two "-": a line that is a lone "-" is not
# taken for an underline (the removal audit, following CommonMark, takes it).
SETEXT_RE = re.compile(r"[ ]{0,3}(=+|-{2,})[ \t]*$")

# The alignment row under a table's header, matched with ``fullmatch``: cells of
# three or more dashes, optionally with colons, and at least one "|" after a cell.
ALIGN_ROW_RE = re.compile(r"[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*(?::?-{3,}:?[ \t]*)?")

# The pipes between table cells (an escaped "\|" is cell text), for ``split``.
CELL_SPLIT_RE = re.compile(r"(?<!\\)\|")

# Two or more blank lines, searched in a whole text: collapsed to one blank line.
BLANK_RUN_RE = re.compile(r"\n\n\n+")

# The labels of the metadata lines a page fetcher writes at the top of the
# markdown ("Title: …", "URL Source: …"), as an alternation to build patterns from.
FETCH_METADATA_LABELS = r"(?:Title|URL Source|Published Time|Markdown Content|Description|Author|Source)"


def atx(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line (right-stripped), else None."""
    m = ATX_RE.match(line)
    if m is None:
        return None
    text = m.group(2) or ""
    if text.endswith("#"):  # an optional closing sequence: "## Title ##"
        bare = text.rstrip("#")
        if not bare or bare[-1] in " \t":
            text = bare.rstrip()
    return len(m.group(1)), text
