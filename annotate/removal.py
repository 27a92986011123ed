"""What the cleaner removed from one article, recomputed from its raw and display markdown.

Pure Python, no Django. ``cleaning.clean_article`` never joins or splits lines, so
a line-level diff (``difflib``) pairs raw lines with what is left of them; lines
that differ are then compared token by token (a word, or one punctuation mark).
Raw tokens with no counterpart in the display text are *removed*; the spans they
cover (character offsets into the raw markdown) are what the staff page highlights.

Counting words:

* A *word* is a run of letters/digits holding at least one letter, outside a URL
  and outside a short bracketed group such as ``[12]`` or ``[citation needed]``
  (citation markers, never prose). Numbers alone are not counted.
* A *prose word* is a word on a paragraph line: not a heading, list item, table
  row, code, link definition, reference entry (``[12] …``) or fetch metadata line
  (``Title:``, ``URL Source:`` …). ``prose_lost`` is the share of the raw
  article's prose words that were removed.
* A *removed section* is a heading of the raw article (ATX, setext, or a line that
  is only bold text) whose text, ignoring markup, case, ``_`` and trailing colons,
  no longer appears as a heading in the display text. Its section runs to the next
  heading of the same or a higher level (a bold line counts as level 7).

* A *kept reference section* is a section under a reference heading
  ("References", "9. References and Data Sources"; ``cleaning.sections.ref_kind``)
  that is still shown but lost words: the cleaner removed its citation list and
  kept the tables and prose under it as content. Its kept and removed words are
  reported, so that staff can check what was kept.

* *Block decisions* (``Removal.decisions``): why each block under a source heading
  was removed or kept, and each agent's note removed at the article's start or end,
  as the cleaner decided them (``cleaning.cleaning_decisions``): the class (citation
  entry, agent's note, content), the feature that decided it, an excerpt and its words.

Flags: prose loss above ``PROSE_LOSS_LIMIT`` (3%), any removed section whose
removed paragraph lines held at least ``SECTION_PROSE_MIN`` prose words (one
sentence of text, not list entries or URLs), and every kept reference section.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field

from annotate.cleaning import Decision, cleaning_decisions
from annotate.cleaning.sections import ref_kind
from annotate.markdown_lines import FENCE_OPEN_RE, FETCH_METADATA_LABELS

__all__ = [
    "Decision",
    "PROSE_LOSS_LIMIT",
    "SECTION_PROSE_MIN",
    "KeptReferenceSection",
    "Removal",
    "RemovedSection",
    "article_removal",
    "removed_segments",
]

PROSE_LOSS_LIMIT = 0.03
SECTION_PROSE_MIN = 8

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_WORD_RE = re.compile(r"\w*[^\W\d_]\w*")
_NOT_WORDS_RE = re.compile(
    r"(?:https?:|ftp:|www\.)[^\s<>\"'\])]*"  # URLs
    r"|\[[^\[\]\n]{0,40}\](?!\()"  # [12], [1, 2], [citation needed]; not link text
    r"|【[^】\n]{0,80}】"
)
# Line kinds. The opening of a code fence is shared with the cleaner
# (annotate.markdown_lines); the other patterns are this audit's own reading and
# differ from the cleaner's in small ways, so they stay here (sharing them would
# change what the audit counts):
# - ATX: closing hashes and trailing spaces are cut by the pattern, even without a
#   space before them ("## C#" reads "C"), where markdown_lines.atx keeps "C#";
# - setext: a single "-" underlines, as in CommonMark; markdown_lines.SETEXT_RE
#   wants two or more;
# - link definitions: any "[label]:" line, where the cleaner drops only those
#   pointing at a URL, a path or an anchor;
# - fetch metadata: the cleaner's labels, in any case and indented.
_ATX_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
_SETEXT_RE = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_BOLD_LINE_RE = re.compile(r"\s*(\*\*|__)(?=\S)(.+?)(?<=\S)\1\s*:?\s*$")
_LIST_RE = re.compile(r"\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_ENTRY_RE = re.compile(r"\s*\[\^?\w{1,6}\]")
_LINK_DEF_RE = re.compile(r" {0,3}\[[^\]\n]+\]:")
_META_RE = re.compile(rf"\s*{FETCH_METADATA_LABELS}:", re.IGNORECASE)

# How a raw line is classed; only PARAGRAPH lines hold prose words.
PARAGRAPH, HEADING, LIST, TABLE, CODE, OTHER = (
    "paragraph",
    "heading",
    "list",
    "table",
    "code",
    "other",
)


@dataclass(frozen=True)
class RemovedSection:
    heading: str
    level: int  # 1-6 for ATX/setext headings, 7 for a bold line
    line: int  # 0-based line of the heading in the raw markdown
    words: int  # words removed from the section, heading included
    prose_words: int  # of which on paragraph lines

    @property
    def held_prose(self) -> bool:
        return self.prose_words >= SECTION_PROSE_MIN


@dataclass(frozen=True)
class KeptReferenceSection:
    heading: str
    line: int  # 0-based line of the heading in the raw markdown
    kept_words: int  # words of the section still shown, heading included
    removed_words: int  # words removed from it: its citation list


@dataclass(frozen=True)
class Removal:
    # Removed character ranges of the raw markdown, sorted, disjoint.
    spans: tuple[tuple[int, int], ...]
    words: int
    removed_words: int
    prose_words: int
    removed_prose_words: int
    removed_sections: tuple[RemovedSection, ...] = field(default=())
    kept_reference_sections: tuple[KeptReferenceSection, ...] = field(default=())
    decisions: tuple[Decision, ...] = field(default=())

    @property
    def removed_blocks(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.decisions if d.removed)

    @property
    def kept_blocks(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.decisions if not d.removed)

    @property
    def words_removed_percent(self) -> float:
        return round(100 * self.removed_words / self.words, 1) if self.words else 0.0

    @property
    def prose_lost(self) -> float:
        return self.removed_prose_words / self.prose_words if self.prose_words else 0.0

    @property
    def prose_lost_percent(self) -> float:
        return round(100 * self.prose_lost, 1)

    @property
    def flags(self) -> tuple[str, ...]:
        flags = []
        if self.prose_lost > PROSE_LOSS_LIMIT:
            flags.append(f"lost {self.prose_lost:.1%} of its prose words")
        for section in self.removed_sections:
            if section.held_prose:
                flags.append(f"removed section '{section.heading}' held {section.prose_words} prose words")
        for section in self.kept_reference_sections:
            flags.append(
                f"kept {section.kept_words} words under the reference heading '{section.heading}' "
                f"(removed {section.removed_words}: its citation list)"
            )
        return tuple(flags)


def _heading_key(text: str) -> str:
    text = re.sub(r"[*_`]+", " ", text).replace("\\", "")
    return " ".join(text.split()).rstrip(":").strip().casefold()


def _shown_heading(text: str) -> str:
    return " ".join(re.sub(r"[*_`]+", " ", text).split()).rstrip(":")


def _classify(lines: list[str]) -> tuple[list[str], list[tuple[int, int, str]]]:
    """A class per line, and the headings as (line, level, text)."""
    kinds: list[str] = []
    headings: list[tuple[int, int, str]] = []
    fence = ""
    for i, line in enumerate(lines):
        if fence:
            kinds.append(CODE)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = ""
            continue
        m = FENCE_OPEN_RE.match(line)
        if m:
            fence = m.group(1)
            kinds.append(CODE)
            continue
        stripped = line.strip()
        if not stripped:
            kinds.append(OTHER)
            continue
        m = _ATX_RE.match(line)
        if m:
            kinds.append(HEADING)
            headings.append((i, len(m.group(1)), (m.group(2) or "").strip()))
            continue
        if _SETEXT_RE.match(line) and i > 0 and kinds[i - 1] == PARAGRAPH:
            kinds[i - 1] = HEADING
            kinds.append(OTHER)
            headings.append((i - 1, 1 if "=" in line else 2, lines[i - 1].strip()))
            continue
        m = _BOLD_LINE_RE.match(line)
        if m and len(stripped) < 120:
            kinds.append(HEADING)
            headings.append((i, 7, m.group(2).strip()))
            continue
        if stripped.startswith("|"):
            kinds.append(TABLE)
        elif _LIST_RE.match(line):
            kinds.append(LIST)
        elif _ENTRY_RE.match(line) or _LINK_DEF_RE.match(line) or _META_RE.match(line):
            kinds.append(OTHER)
        else:
            kinds.append(PARAGRAPH)
    headings.sort()
    return kinds, headings


def _lines(text: str) -> tuple[list[str], list[int]]:
    lines = text.split("\n")
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    return [line.rstrip("\r") for line in lines], starts


def _tokens(text: str, base: int) -> list[tuple[str, int, int]]:
    return [(m.group(0), base + m.start(), base + m.end()) for m in _TOKEN_RE.finditer(text)]


def _removed_ranges(all_raw_lines, all_raw_starts, all_display_lines) -> list[tuple[int, int]]:
    # Blank lines are left out: the cleaner adds some around headings, and a blank line
    # matched out of place would turn a changed paragraph into "deleted" plus "inserted".
    kept = [i for i, line in enumerate(all_raw_lines) if line.strip()]
    raw_lines = [all_raw_lines[i] for i in kept]
    raw_starts = [all_raw_starts[i] for i in kept]
    display_lines = [line for line in all_display_lines if line.strip()]

    # Spaces are compared loosely: trailing spaces and tabs are tidied by the cleaner.
    def key(line: str) -> str:
        return " ".join(line.split())

    matcher = difflib.SequenceMatcher(
        None,
        [key(x) for x in raw_lines],
        [key(x) for x in display_lines],
        autojunk=False,
    )
    ranges: list[tuple[int, int]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "delete":
            ranges.extend((raw_starts[i], raw_starts[i] + len(raw_lines[i])) for i in range(i1, i2))
        elif op == "replace":
            # Lines are never joined or split: n changed lines usually face n lines, pairwise.
            pairs = zip(range(i1, i2), range(j1, j2)) if i2 - i1 == j2 - j1 else [(range(i1, i2), range(j1, j2))]
            for raw_part, shown_part in pairs:
                raw_part = raw_part if isinstance(raw_part, range) else [raw_part]
                shown_part = shown_part if isinstance(shown_part, range) else [shown_part]
                raw_tokens = [t for i in raw_part for t in _tokens(raw_lines[i], raw_starts[i])]
                shown = [m.group(0) for j in shown_part for m in _TOKEN_RE.finditer(display_lines[j])]
                tokens = difflib.SequenceMatcher(None, [t[0] for t in raw_tokens], shown, autojunk=False)
                for t_op, a1, a2, _, _ in tokens.get_opcodes():
                    if t_op in ("delete", "replace"):
                        ranges.extend((start, end) for _, start, end in raw_tokens[a1:a2])
    return ranges


def _merge(ranges: list[tuple[int, int]], raw: str) -> tuple[tuple[int, int], ...]:
    """Joins ranges separated only by spaces or tabs, so a removed phrase is one span."""
    merged: list[list[int]] = []
    for start, end in sorted(ranges):
        if merged and (start <= merged[-1][1] or not raw[merged[-1][1] : start].strip(" \t")):
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((s, e) for s, e in merged)


def article_removal(raw: str, display: str, *, is_reference: bool = False) -> Removal:
    """What ``clean_article`` removed from ``raw`` to give ``display``; ``is_reference``:
    the article is the human-written one (the cleaner's decisions differ for it)."""
    raw_lines, raw_starts = _lines(raw)
    display_lines, _ = _lines(display)
    kinds, headings = _classify(raw_lines)
    spans = _merge(_removed_ranges(raw_lines, raw_starts, display_lines), raw)

    removed_at = bytearray(len(raw))  # 1 where a character was removed
    for start, end in spans:
        removed_at[start:end] = b"\x01" * (end - start)
    not_words = bytearray(len(raw))
    for m in _NOT_WORDS_RE.finditer(raw):
        not_words[m.start() : m.end()] = b"\x01" * (m.end() - m.start())

    words = removed_words = prose = removed_prose = 0
    per_line_words: Counter = Counter()
    per_line_removed: Counter = Counter()
    per_line_removed_prose: Counter = Counter()
    for i, line in enumerate(raw_lines):
        base = raw_starts[i]
        is_prose = kinds[i] == PARAGRAPH
        for m in _WORD_RE.finditer(line):
            start = base + m.start()
            if not_words[start]:
                continue
            gone = bool(removed_at[start])
            words += 1
            per_line_words[i] += 1
            removed_words += gone
            per_line_removed[i] += gone
            if is_prose:
                prose += 1
                removed_prose += gone
                per_line_removed_prose[i] += gone

    shown_headings = Counter(_heading_key(text) for _, _, text in _classify(display_lines)[1])
    sections = []
    kept_sections = []
    for h, (line, level, text) in enumerate(headings):
        if h == 0 and level == 1:
            continue  # the title: normalize_article puts the topic's title in its place
        key = _heading_key(text)
        end = next((ln for ln, lv, _ in headings[h + 1 :] if lv <= level), len(raw_lines))
        if shown_headings[key] > 0:
            shown_headings[key] -= 1
            gone = sum(per_line_removed[i] for i in range(line, end))
            if gone and ref_kind(text):
                kept_sections.append(
                    KeptReferenceSection(
                        heading=_shown_heading(text),
                        line=line,
                        kept_words=sum(per_line_words[i] for i in range(line, end)) - gone,
                        removed_words=gone,
                    )
                )
            continue
        if not key:
            continue
        sections.append(
            RemovedSection(
                heading=_shown_heading(text),
                level=level,
                line=line,
                words=sum(per_line_removed[i] for i in range(line, end)),
                prose_words=sum(per_line_removed_prose[i] for i in range(line, end)),
            )
        )
    return Removal(
        spans=spans,
        words=words,
        removed_words=removed_words,
        prose_words=prose,
        removed_prose_words=removed_prose,
        removed_sections=tuple(sections),
        kept_reference_sections=tuple(kept_sections),
        decisions=tuple(cleaning_decisions(raw, is_reference=is_reference)),
    )


def removed_segments(raw: str, spans: tuple[tuple[int, int], ...]) -> list[tuple[str, bool]]:
    """``raw`` cut into ``(text, removed)`` pieces, in order, for display."""
    pieces: list[tuple[str, bool]] = []
    pos = 0
    for start, end in spans:
        if start > pos:
            pieces.append((raw[pos:start], False))
        pieces.append((raw[start:end], True))
        pos = end
    if pos < len(raw):
        pieces.append((raw[pos:], False))
    return pieces
