"""Caption residue: lines, list items and one-cell table rows that only name a source.

What a figure or table caption leaves behind once its citation is stripped
(``*Source: [4](url)*`` becomes ``*Source:*``), or what came bare
(``Source: 5``, ``| Source: |  |  |``). The rule and its trade-offs are in the
package docstring ("Caption residue").
"""

from __future__ import annotations

import re

from annotate.cleaning.sections import KEY_NUMBERING_RE
from annotate.markdown_lines import ALIGN_ROW_RE, CELL_SPLIT_RE

_CAPTION_LABEL = r"(?:data[ \t]+)?(?:source(?:s|\(s\))?|refs?|references?|citations?)"
# A line that starts with a label, after quote/list/table syntax and emphasis. It is
# searched in "\n" + text: a literal first character makes the scan fast.
_CAPTION_HINT_RE = re.compile(
    r"\n[ \t>|]*+(?:(?:[-*+]|\d{1,4}[.)])[ \t]++)?+[*_ \t]*+"
    r"(?:[Dd]ata|[Ss]ource|[Rr]ef|[Cc]itation|DATA|SOURCE|REF|CITATION)"
)
_CAPTION_RE = re.compile(
    rf"(?i)(?P<emph>[*_]{{1,3}})?+[ \t]*+{_CAPTION_LABEL}\.?+[ \t]*+[*_]{{0,3}}+[ \t]*+(?P<colon>:)?+"
    r"(?P<rest>[\s\d,;:.()\[\]^*_†–—-]*+)"
)


def _is_caption_only(text: str) -> bool:
    """``Source:``, ``*Sources: 3, 4*``, ``Ref. 12``: a source label left with nothing
    but note numbers, punctuation or emphasis. A bare ``Sources`` needs a colon, a
    number or emphasis to count: alone it may be a word of a list."""
    m = _CAPTION_RE.fullmatch(text.strip())
    return bool(m) and bool(m.group("emph") or m.group("colon") or any(c.isdigit() for c in m.group("rest")))


def drop_caption_residue(text: str) -> str:
    """Drop lines, and table rows, that only name a source (see the package docstring)."""
    padded = "\n" + text + "\n"
    drops = []  # (start, end) in padded of each line to drop, with its "\n"
    pos = 0
    while True:
        m = _CAPTION_HINT_RE.search(padded, pos)
        if m is None:
            break
        start = m.start() + 1
        end = padded.index("\n", start)
        pos = end
        line = padded[start:end]
        body = line.lstrip(" \t>")
        if body[:1] == "|":
            filled = [c for c in (c.strip() for c in CELL_SPLIT_RE.split(body.strip().strip("|"))) if c]
            after = padded.find("\n", end + 1)
            is_header = after > 0 and ALIGN_ROW_RE.fullmatch(padded, end + 1, after)
            if len(filled) != 1 or is_header or not _is_caption_only(filled[0]):
                continue
        else:
            if body[:1] in ("-", "+", "*") and body[1:2] in (" ", "\t"):
                body = body[2:]
            elif body[:1].isdigit():
                body = KEY_NUMBERING_RE.sub("", body)
            if len(body) >= 80 or not _is_caption_only(body):
                continue
        drops.append((start, end + 1))
    if not drops:
        return text
    pieces = []
    pos = 0
    for start, end in drops:
        pieces.append(padded[pos:start])
        pos = end
    pieces.append(padded[pos:])
    return "".join(pieces)[1:-1]
