"""Tables: empty source columns dropped, doubled flag names said once.

Only ``| a | b |`` tables (a header row, an alignment row, body rows of the
same width) with a source-like column name or a doubled name are rebuilt; every
other table, and every row outside a table, is left byte for byte. The rules
and their trade-offs are in the package docstring ("Tables").
"""

from __future__ import annotations

import re

from annotate.markdown_lines import ALIGN_ROW_RE, CELL_SPLIT_RE

# The start of an alignment row, searched in "\n" + text.
_ALIGN_FIND_RE = re.compile(r"\n[ \t]*\|[ \t]*:?-{3,}:?[ \t]*\|")
_SOURCE_COLUMNS = {
    "ref",
    "refs",
    "reference",
    "references",
    "source",
    "sources",
    "source(s)",
    "citation",
    "citations",
    "cite",
    "note",
    "notes",
}
# A name of one to three capitalised words, with "and"/"of"/... between them, said
# twice: a flag's alt text followed by the country's name ("Albania Albania").
_NAME = r"[A-ZÀ-ÖØ-Þ][\w'’.-]*"
_DOUBLED_NAME_RE = re.compile(
    rf"(?P<lead>[ \t]*)(?P<name>{_NAME}(?:[ \t](?:(?:and|of|the|de|da|do|du|del|la|le|y|und|et)[ \t])*{_NAME}){{0,2}})"
    r"[ \t](?P=name)(?=[ \t]*(?:$|[(\[,;]))"
)


def _split_row(line: str) -> list[str] | None:
    """Cells of a ``| a | b |`` row, raw (spaces kept); None for other lines."""
    body = line.strip()
    if len(body) < 2 or body[0] != "|" or body[-1] != "|" or body.endswith("\\|"):
        return None
    return CELL_SPLIT_RE.split(body[1:-1])


def _tidy_table(rows: list[list[str]]) -> list[list[str]]:
    """Drop empty source columns and collapse doubled names in one table (header,
    alignment row, body rows; all rows of equal width)."""
    header, body = rows[0], rows[2:]
    drop = {
        c
        for c, cell in enumerate(header)
        if cell.strip(" \t*_:.").lower() in _SOURCE_COLUMNS and all(not row[c].strip(" \t*_") for row in body)
    }
    if drop and len(drop) < len(header):
        rows = [[cell for c, cell in enumerate(row) if c not in drop] for row in rows]
        body = rows[2:]
    for c in range(len(rows[0])):
        doubled = [r for r, row in enumerate(body) if _DOUBLED_NAME_RE.match(row[c])]
        if len(doubled) >= 2:  # a lone "Walla Walla" is a name, not a flag
            for r in doubled:
                body[r][c] = _DOUBLED_NAME_RE.sub(r"\g<lead>\g<name>", body[r][c], count=1)
    return rows


_ROW_START_RE = re.compile(r"[ \t]*\|")
_SOURCE_COLUMN_HINT_RE = re.compile(r"(?i)\b(?:ref|source|citation|cite|note)")
_DOUBLED_HINT_RE = re.compile(r"\|" + _DOUBLED_NAME_RE.pattern)


def tidy_tables(text: str) -> str:
    """Tidy each ``| a | b |`` table (header, alignment row, body rows) that has a
    source-like column name or a doubled name; other tables are not touched."""
    padded = "\n" + text + "\n"
    pieces = []
    pos = 0  # padded[:pos] is settled
    for m in _ALIGN_FIND_RE.finditer(padded):
        align_start = m.start() + 1
        if align_start < pos:
            continue  # inside a table already handled
        head_start = padded.rfind("\n", 0, m.start()) + 1
        header = padded[head_start : m.start()]
        align_end = padded.index("\n", align_start)
        if header.lstrip()[:1] != "|" or not ALIGN_ROW_RE.fullmatch(padded, align_start, align_end):
            continue
        end = align_end
        while end + 1 < len(padded) and _ROW_START_RE.match(padded, end + 1):
            end = padded.index("\n", end + 1)
        block = padded[head_start:end].split("\n")
        if len(block) < 3 or not (_SOURCE_COLUMN_HINT_RE.search(header) or _DOUBLED_HINT_RE.search(padded, align_end, end)):
            continue
        rows = [_split_row(line) for line in block]
        if not all(row is not None and len(row) == len(rows[0]) for row in rows):
            continue
        indent = header[: len(header) - len(header.lstrip())]
        pieces.append(padded[pos:head_start])
        pieces.append("\n".join(indent + "|" + "|".join(row) + "|" for row in _tidy_table(rows)))
        pos = end
    if not pieces:
        return text
    pieces.append(padded[pos:])
    return "".join(pieces)[1:-1]
