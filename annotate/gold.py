"""Known-answer (gold) copies of a reference article: the same markdown, made worse on purpose in one
way, so that on the criteria that way targets the original must win. Pure Python, no Django.

Five degradations (:data:`DEGRADATIONS`), each deterministic for a given seed:

* ``lead_removed``: the opening passage between the title and the first heading is dropped.
* ``opinion_inserted``: sentences praising the subject in the article's own voice (written for this
  project, :data:`OPINIONS`) are added at the end of prose paragraphs.
* ``paragraphs_shuffled``: the body's prose paragraphs trade places across its sections; headings,
  the lead, lists, tables and code stay where they were.
* ``prose_damaged``: misspellings (two letters swapped, one dropped or doubled, never the first) and
  run-on sentences (a full stop turned into a comma splice or a fused join) in the prose.
* ``section_removed``: one major section (at the article's top section level, with its subsections)
  is dropped.

Which criteria each targets is one explicit table, :data:`TARGETS`, by the rubric's criterion ids
(the same 39 in ``fixtures/criteria/wiki_writing.json`` and the benchmark's
``wiki_writing_criteria.json``). Only criteria where the damage is plain to a careful reader are
listed, so that a careful annotator never "fails" a check: an article without an opening does lose
on "opens with an introductory passage" (``ww_ls_1``), but whether its missing opening is "plain",
"balanced" or "sourced" (``ww_ls_3``, ``ww_ls_5``, ``ww_ls_6``, ``ww_ls_7``) has no sensible answer,
so those are not scored. The rubric has no criterion on spelling or on paragraph order: typos
target the reference-work style of ``ww_cc_1`` (its subcategory, Clear & Concise, is where both
rubrics put spelling and grammar), and shuffled paragraphs target ``bc_7`` (each sub-topic in a
section of its own), which is why they move *across* sections.

Reading the markdown: a line of prose is a paragraph (as the benchmark writes them and as the page
shows them); consecutive list items, table rows or quoted lines, and fenced code, are one block each
and never edited. Headings are ATX (``#``); the first line is the title when it is a level-1
heading; the sections are the headings of the smallest level used after the title. Sections named
like an appendix (References, Notes, Sources, See also, External links, Further reading,
Bibliography...) are never shuffled, damaged, chosen for removal or given an opinion.

A degradation that cannot apply (no lead, a single section, too little prose) raises
:class:`CannotDegrade` with the reason; it never returns an unchanged copy, nor an article left
without prose.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Iterable

from annotate.markdown_lines import FENCE_OPEN_RE, atx

DEGRADATIONS = ("lead_removed", "opinion_inserted", "paragraphs_shuffled", "prose_damaged", "section_removed")


@dataclass(frozen=True)
class GoldTarget:
    """A degradation, the criteria on which the original must win against it, and why."""

    degradation: str
    criteria: tuple[str, ...]
    why: str


TARGETS: tuple[GoldTarget, ...] = (
    GoldTarget(
        "lead_removed",
        ("ww_ls_1", "ww_ls_2", "ww_ls_4", "bc_2", "bc_6"),
        "the copy has no opening at all: nothing introduces, bounds or sums up the subject before the first heading",
    ),
    GoldTarget(
        "opinion_inserted",
        ("ww_wtw_1", "ww_wtw_5", "n_1", "n_2", "n_5"),
        "the added sentences praise the subject in the article's own voice, with promotional adjectives and "
        "commentary words, and state an opinion as fact",
    ),
    GoldTarget(
        "paragraphs_shuffled",
        ("bc_7",),
        "paragraphs moved across sections leave the sub-topics scattered instead of each in a section of its own",
    ),
    GoldTarget(
        "prose_damaged",
        ("ww_cc_1",),
        "misspelt words and run-on sentences do not read like an entry in a reference work",
    ),
    GoldTarget(
        "section_removed",
        ("bc_1", "bc_3"),
        "a principal aspect of the subject, and the significant information it held, is gone",
    ),
)

# Written for this project. Each states an unattributed opinion in the article's voice, with a
# commentary word (clearly, sadly, frankly...) and promotional wording (breathtaking, unrivalled...).
OPINIONS = (
    "{Subject} is, without question, one of the most breathtaking achievements of its kind, and anyone who says otherwise has clearly missed the point.",
    "Frankly, {subject} deserves far more admiration than it has ever received, for it is simply unrivalled.",
    "It is worth noting that {subject} remains the finest example of its sort, a truly iconic case that no serious reader can dismiss.",
    "Sadly, the critics of {subject} were, of course, entirely wrong, and its extraordinary importance is now beyond any reasonable doubt.",
    "Remarkably, {subject} stands far above everything comparable, a genuinely world-class story that speaks for itself.",
    "Undeniably, {subject} is the most fascinating topic in its field, and its detractors have only shown their own ignorance.",
    "Clearly, {subject} is a triumph that every reader ought to admire, whatever its small-minded critics may claim.",
    "Interestingly, nothing else of its kind comes close to the sheer brilliance of {subject}, which is surely why it is so widely loved.",
)  # fmt: skip


class CannotDegrade(ValueError):
    """A degradation that cannot apply to this article, with the reason in words."""

    def __init__(self, degradation: str, reason: str) -> None:
        super().__init__(f"{degradation}: {reason}")
        self.degradation = degradation
        self.reason = reason


@dataclass(frozen=True)
class Degraded:
    """A degraded copy: its markdown, the criteria on which the original must win, and what was done."""

    degradation: str
    markdown: str
    targets: tuple[str, ...]
    change: str


# --------------------------------------------------------------------------
# reading the markdown into blocks
# --------------------------------------------------------------------------

_LIST_ITEM = re.compile(r"[ ]{0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_APPENDIX = re.compile(
    r"(references?|notes?|sources?|see also|external links?|further reading|bibliography|citations?|footnotes?|works cited)\b"
)


@dataclass
class _Block:
    kind: str  # heading | prose | blank | other
    lines: list[str]
    level: int = 0

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _fence_end(lines: list[str], start: int, fence: str) -> int:
    """Index after the closing fence of the block opened at ``start`` (the end of the text if none)."""
    for j in range(start + 1, len(lines)):
        stripped = lines[j].strip()
        if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
            return j + 1
    return len(lines)


def _kind(line: str) -> str:
    if not line.strip():
        return "blank"
    if atx(line.rstrip()) is not None:
        return "heading"
    stripped = line.lstrip()
    if stripped.startswith("|"):
        return "table"
    if stripped.startswith(">"):
        return "quote"
    if _LIST_ITEM.match(line):
        return "list"
    return "prose"


def _blocks(markdown: str) -> list[_Block]:
    lines = markdown.split("\n")
    out: list[_Block] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE_OPEN_RE.match(line)
        if fence:
            end = _fence_end(lines, i, fence.group(1))
            out.append(_Block("other", lines[i:end]))
            i = end
            continue
        kind = _kind(line)
        if kind == "heading":
            out.append(_Block("heading", [line], atx(line.rstrip())[0]))
        elif kind in ("blank", "prose"):
            out.append(_Block(kind, [line]))
        else:  # a run of table rows, quoted lines, or list items with their indented continuations
            end = i + 1
            while (
                end < len(lines)
                and lines[end].strip()
                and (_kind(lines[end]) == kind or (kind == "list" and lines[end][:1] in (" ", "\t")))
            ):
                end += 1
            out.append(_Block("other", lines[i:end]))
            i = end
            continue
        i += 1
    return out


def _join(blocks: list[_Block]) -> str:
    return "\n".join(line for b in blocks for line in b.lines)


def _heading_text(block: _Block) -> str:
    return (atx(block.lines[0].rstrip()) or (0, ""))[1]


def _is_appendix(block: _Block) -> bool:
    name = re.sub(r"[^a-z ]+", " ", _heading_text(block).lower()).strip()
    return bool(_APPENDIX.fullmatch(name) or _APPENDIX.match(name) and len(name.split()) <= 3)


@dataclass
class _Layout:
    """Where things are: the title block, the first heading after it, the section level, and each
    section as (heading index, end index), with appendix sections marked."""

    blocks: list[_Block]
    title: int | None
    body: int | None  # index of the first heading after the title (None: no heading)
    level: int
    sections: list[tuple[int, int]]

    def lead_range(self) -> range:
        start = 0 if self.title is None else self.title + 1
        return range(start, len(self.blocks) if self.body is None else self.body)

    def appendix_blocks(self) -> set[int]:
        """Indices of the blocks in appendix sections (headings included), at any heading level."""
        out: set[int] = set()
        for i, b in enumerate(self.blocks):
            if b.kind == "heading" and (self.title is None or i != self.title) and _is_appendix(b):
                j = i + 1
                while j < len(self.blocks) and not (self.blocks[j].kind == "heading" and self.blocks[j].level <= b.level):
                    j += 1
                out.update(range(i, j))
        return out


def _layout(markdown: str) -> _Layout:
    blocks = _blocks(markdown)
    first = next((i for i, b in enumerate(blocks) if b.kind != "blank"), None)
    title = first if first is not None and blocks[first].kind == "heading" and blocks[first].level == 1 else None
    after = 0 if title is None else title + 1
    headings = [i for i in range(after, len(blocks)) if blocks[i].kind == "heading"]
    if not headings:
        return _Layout(blocks, title, None, 0, [])
    level = min(blocks[i].level for i in headings)
    tops = [i for i in headings if blocks[i].level == level]
    sections = [(h, tops[k + 1] if k + 1 < len(tops) else len(blocks)) for k, h in enumerate(tops)]
    return _Layout(blocks, title, headings[0], level, sections)


def _subject(layout: _Layout) -> str | None:
    if layout.title is None:
        return None
    name = re.sub(r"[_*`]+", " ", _heading_text(layout.blocks[layout.title])).strip()
    return re.sub(r"\s+", " ", name) or None


def _has_prose(blocks: Iterable[_Block]) -> bool:
    return any(b.kind == "prose" for b in blocks)


def _content_sections(layout: _Layout) -> list[tuple[int, int]]:
    appendix = layout.appendix_blocks()
    return [(h, e) for h, e in layout.sections if h not in appendix and _has_prose(layout.blocks[h + 1 : e])]


# --------------------------------------------------------------------------
# the degradations
# --------------------------------------------------------------------------


def _lead_removed(layout: _Layout, rng: random.Random) -> tuple[list[_Block], str]:
    lead = [i for i in layout.lead_range() if layout.blocks[i].kind != "blank"]
    if not lead:
        raise CannotDegrade("lead_removed", "no lead section: nothing stands between the title and the first heading")
    if layout.body is None or not any(b.kind not in ("heading", "blank") for b in layout.blocks[layout.body :]):
        raise CannotDegrade("lead_removed", "the article is all lead: without it nothing but headings would be left")
    start = layout.lead_range().start
    while start < layout.body and layout.blocks[start].kind == "blank":
        start += 1  # the blank lines under the title stay
    removed = layout.blocks[start : layout.body]
    chars = sum(len(b.text) for b in removed if b.kind != "blank")
    return layout.blocks[:start] + layout.blocks[layout.body :], f"removed the lead ({len(lead)} blocks, {chars} characters)"


def _ends_a_sentence(line: str) -> bool:
    return bool(re.search(r"[.!?][\"')\]’”]*\s*$", line)) and len(line.strip()) >= 40


def _opinion_inserted(layout: _Layout, rng: random.Random, count: int = 2) -> tuple[list[_Block], str]:
    appendix = layout.appendix_blocks()
    start = 0 if layout.title is None else layout.title + 1
    eligible = [
        i for i in range(start, len(layout.blocks))
        if layout.blocks[i].kind == "prose" and i not in appendix and _ends_a_sentence(layout.blocks[i].lines[0])
    ]  # fmt: skip
    if not eligible:
        raise CannotDegrade("opinion_inserted", "no prose paragraph ending in a full sentence to add an opinion to")
    chosen = sorted(rng.sample(eligible, min(count, len(eligible))))
    sentences = rng.sample(OPINIONS, len(chosen))
    subject = _subject(layout)
    blocks = [_Block(b.kind, list(b.lines), b.level) for b in layout.blocks]
    for i, sentence in zip(chosen, sentences):
        text = sentence.format(subject=subject or "this subject", Subject=(subject[0].upper() + subject[1:]) if subject else "This subject")
        line = blocks[i].lines[0]
        body = line.rstrip()
        blocks[i].lines[0] = f"{body} {text}{line[len(body) :]}"
    return blocks, f"added {len(chosen)} opinion sentence{'s' if len(chosen) > 1 else ''} in the article's own voice"


def _movable(block: _Block) -> bool:
    return block.kind == "prose" and not block.lines[0].rstrip().endswith(":")


def _paragraphs_shuffled(layout: _Layout, rng: random.Random) -> tuple[list[_Block], str]:
    """Each section's paragraphs are shuffled, then the whole sequence is turned round by k places,
    k drawn between the largest section's paragraph count m and n - m: with m <= n / 2 every
    paragraph lands in another section (an offset of at least m carries it past the end of its own
    section, and one of at most n - m never brings it back); otherwise as many as can."""
    sections = _content_sections(layout)
    if len(sections) < 2:
        raise CannotDegrade("paragraphs_shuffled", "fewer than two sections hold prose: no paragraph can leave its section")
    # A line ending in a colon introduces the list or table under it: it stays with them.
    groups = [[i for i in range(h + 1, e) if _movable(layout.blocks[i])] for h, e in sections]
    groups = [g for g in groups if g]
    if len(groups) < 2:
        raise CannotDegrade("paragraphs_shuffled", "fewer than two sections hold paragraphs that can move")
    slots = [i for group in groups for i in group]
    order = []
    for group in groups:
        mixed = list(group)
        rng.shuffle(mixed)
        order.extend(mixed)
    n, m = len(slots), max(len(g) for g in groups)
    k = rng.randint(min(m, n - m), max(m, n - m))
    home = {i: g for g, group in enumerate(groups) for i in group}
    blocks = list(layout.blocks)
    moved = 0
    for position, src in enumerate(order):
        dst = slots[(position + k) % n]  # order[position] came from slots[position]'s section
        blocks[dst] = layout.blocks[src]
        moved += home[dst] != home[src]
    return blocks, f"moved {moved} of {n} paragraphs into other sections ({len(groups)} sections)"


def _section_removed(layout: _Layout, rng: random.Random) -> tuple[list[_Block], str]:
    sections = _content_sections(layout)
    if len(sections) < 2:
        raise CannotDegrade("section_removed", "the article has a single section with prose: removing it would leave no body")
    size = [sum(len(b.text) for b in layout.blocks[h + 1 : e] if b.kind != "blank") for h, e in sections]
    ordered = sorted(size)
    median = ordered[(len(ordered) - 1) // 2]
    major = [k for k, s in enumerate(size) if s >= median]
    k = rng.choice(major)
    h, e = sections[k]
    name = _heading_text(layout.blocks[h])
    return layout.blocks[:h] + layout.blocks[e:], f"removed the section {name!r} ({size[k]} characters)"


# -- prose damage -----------------------------------------------------------

_WORD = re.compile(r"(?<![\w/.@-])[^\W\d_]{4,}(?![\w/@-])")
_BOUNDARY = re.compile(r"(?<=[a-z0-9)\]\"'’”%])\.\s+(?=([A-Z][a-z]*))")
_STARTERS = frozenset(
    "The It Its This That These Those They Their He His She Her In On At A An After Before During Later There Some Many Most".split()
)


def _typo(word: str, rng: random.Random) -> str:
    """A misspelling that keeps the first letter: two inner letters swapped, one dropped or one doubled."""
    for _ in range(10):
        i = rng.randrange(1, len(word) - 1)
        how = rng.choice(("swap", "drop", "double"))
        if how == "swap" and word[i] != word[i + 1]:
            return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        if how == "drop":
            return word[:i] + word[i + 1 :]
        if how == "double":
            return word[: i + 1] + word[i] + word[i + 1 :]
    return word[:1] + word[2:]  # drop the second letter


def _run_on(line: str, boundary: re.Match, rng: random.Random) -> str:
    """The full stop at ``boundary`` made a comma splice, or (before a common sentence opener, lowered)
    sometimes no stop at all: a fused sentence."""
    nxt = boundary.group(1)
    rest = line[boundary.end() + len(nxt) :]
    if nxt not in _STARTERS:
        return line[: boundary.start()] + ", " + nxt + rest  # a name keeps its capital
    joint = " " if rng.random() < 0.5 else ", "
    return line[: boundary.start()] + joint + nxt[0].lower() + nxt[1:] + rest


def _abbreviation(line: str, at: int) -> bool:
    word = re.search(r"(\S+)$", line[:at])
    token = word.group(1) if word else ""
    return len(token.strip("(\"'")) <= 3 and token[:1].isupper() or bool(re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", token))


def _prose_damaged(layout: _Layout, rng: random.Random, typo_rate: float = 0.02, run_on_rate: float = 0.25) -> tuple[list[_Block], str]:
    appendix = layout.appendix_blocks()
    start = 0 if layout.title is None else layout.title + 1
    prose = [i for i in range(start, len(layout.blocks)) if layout.blocks[i].kind == "prose" and i not in appendix]
    lines = {i: layout.blocks[i].lines[0] for i in prose}
    boundaries = [(i, m.start()) for i in prose for m in _BOUNDARY.finditer(lines[i]) if not _abbreviation(lines[i], m.start())]
    n_runs = min(len(boundaries), max(2, round(run_on_rate * len(boundaries))))
    for i, at in sorted(rng.sample(boundaries, n_runs), key=lambda x: (x[0], -x[1])):  # right to left within a line
        match = _BOUNDARY.match(lines[i], at)
        lines[i] = _run_on(lines[i], match, rng)
    words = [(i, m.start(), m.group()) for i in prose for m in _WORD.finditer(lines[i]) if not m.group().isupper()]
    if len(words) < 20:
        raise CannotDegrade("prose_damaged", f"too little prose to damage ({len(words)} words of four letters or more)")
    n_typos = min(len(words), max(5, round(typo_rate * len(words))))
    for i, at, word in sorted(rng.sample(words, n_typos), key=lambda x: (x[0], -x[1])):
        lines[i] = lines[i][:at] + _typo(word, rng) + lines[i][at + len(word) :]
    blocks = [_Block(b.kind, [lines[k]] if k in lines else b.lines, b.level) for k, b in enumerate(layout.blocks)]
    runs = f"{n_runs} run-on sentence{'s' if n_runs != 1 else ''}" if n_runs else "no run-on (no paragraph has two sentences)"
    return blocks, f"misspelt {n_typos} words and made {runs}"


_APPLY = {
    "lead_removed": _lead_removed,
    "opinion_inserted": _opinion_inserted,
    "paragraphs_shuffled": _paragraphs_shuffled,
    "prose_damaged": _prose_damaged,
    "section_removed": _section_removed,
}


# --------------------------------------------------------------------------
# the API
# --------------------------------------------------------------------------


def targets_for(degradation: str, criteria: Iterable[str] | None = None) -> tuple[str, ...]:
    """The criteria :data:`TARGETS` gives ``degradation``, kept to those in ``criteria`` (a rubric's
    criterion ids) when given, in the table's order. Raises ValueError for an unknown degradation."""
    target = next((t for t in TARGETS if t.degradation == degradation), None)
    if target is None:
        raise ValueError(f"unknown degradation {degradation!r} (choose {', '.join(DEGRADATIONS)})")
    if criteria is None:
        return target.criteria
    known = set(criteria)
    return tuple(c for c in target.criteria if c in known)


def degrade(markdown: str, degradation: str, *, seed: int = 0, criteria: Iterable[str] | None = None) -> Degraded:
    """One degraded copy of ``markdown`` (a reference article) with its targeted criteria.

    ``criteria``: the campaign rubric's criterion ids; the targets are kept to those (None: the whole
    table). The same markdown, degradation and seed give the same copy. Raises :class:`CannotDegrade`
    when the degradation cannot apply to this article (the reason says why) or targets none of the
    given criteria; ValueError for an unknown degradation.
    """
    targets = targets_for(degradation, criteria)
    if not targets:
        raise CannotDegrade(degradation, "the rubric has none of the criteria this degradation targets")
    if not markdown.strip():
        raise CannotDegrade(degradation, "the article is empty")
    layout = _layout(markdown.replace("\r\n", "\n"))
    blocks, change = _APPLY[degradation](layout, random.Random(f"{seed}:{degradation}"))
    text = _join(blocks)
    if not _has_prose(blocks) or text == _join(layout.blocks):
        raise CannotDegrade(degradation, "it would leave the article without prose or unchanged")
    return Degraded(degradation, text, targets, change)


def gold_copies(
    markdown: str, *, seed: int = 0, criteria: Iterable[str] | None = None, degradations: Iterable[str] = DEGRADATIONS
) -> tuple[list[Degraded], list[tuple[str, str]]]:
    """Every applicable degradation of one article: (the copies made, (degradation, reason) for those
    that could not apply). Each degradation draws from its own seeded stream, so adding or dropping one
    leaves the others' copies unchanged."""
    criteria = None if criteria is None else tuple(criteria)
    made, skipped = [], []
    for name in degradations:
        try:
            made.append(degrade(markdown, name, seed=seed, criteria=criteria))
        except CannotDegrade as e:
            skipped.append((name, e.reason))
    return made, skipped
