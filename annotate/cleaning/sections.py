"""Which lines and sections of an article are reference apparatus, and dropping them.

The line-level half of ``strip_citations`` (the package docstring has the rules
and their trade-offs): fetch metadata, footnote and link definitions and
``[N] … URL`` entries anywhere (``scan``); reference sections under any kind of
heading, prose ``Sources`` sections kept, tables and prose paragraphs kept from
the rest (``content_kept``), agents' source commentary (``drop_sections``); a
trailing block of reference entries (``drop_trailing_entries``).
Works on the right-stripped lines of ``protect.split_lines``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from annotate.cleaning.blocks import CONTENT, ENTRY, NOTE, Block, Decision, classify_blocks, decision, split_blocks
from annotate.markdown_lines import FETCH_METADATA_LABELS, SETEXT_RE, atx

# Pseudo-headings (level 7): a line that is only bold/italic text, or "Label:".
_EMPH_LINE_RE = re.compile(r"[ ]{0,3}(\*{1,3}|_{1,3})([^*_\n][^\n]*?)(\*{1,3}|_{1,3})[ \t]*:?[ \t]*$")
_LABEL_LINE_RE = re.compile(r"[ ]{0,3}([A-Z][^\n:|]{0,60}?):[ \t]*$")
# Lines that cannot be a paragraph (nor a setext heading's text): list items,
# quotes, table rows, ATX headings and stashed code. The removal audit classes
# lines its own way (removal._classify).
NOT_PARAGRAPH_RE = re.compile(r"[ ]{0,3}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|[>|#]|\x02)")


def setext_heading(line: str, nxt: str) -> bool:
    """Whether `line` is the text of a setext heading underlined by `nxt` (and not a list item,
    quote, table row or heading of its own)."""
    return bool(nxt) and nxt[-1] in ("=", "-") and bool(SETEXT_RE.match(nxt)) and not NOT_PARAGRAPH_RE.match(line)


# ---------------------------------------------------------------- reference names

_REF_NAME = (
    r"(?:references?|reference list|list of references|sources?|source list|sources cited|"
    r"cited sources|works cited|cited works|citations?|notes|footnotes|endnotes|"
    r"external links?|further reading|links|bibliography|bibliographies|"
    r"data sources?|sources of data|selected sources|sources consulted|suggested reading|additional reading|reading list|"
    # The same names in the languages agents write in (a heading may be translated
    # with the article): Spanish, Portuguese, French, Italian, German, Swedish,
    # Norwegian/Danish, Finnish, Dutch, Russian, Chinese, Japanese, Korean.
    r"referencias|referências|références|riferimenti|fuentes|fontes|fonti|notas|"
    r"bibliografía|bibliografia|bibliographie|quellen|quellenangaben|einzelnachweise|anmerkungen|literatur|weblinks|"
    r"källor|källförteckning|noter|kilder|lähteet|viitteet|bronnen|bronvermelding|"
    r"источники|литература|примечания|ссылки|参考文献|参考资料|参考来源|引用|出典|脚注|注释|注釋|外部链接|外部リンク|참고 문헌|참고문헌|출처)"
)
_REF_KEY_RE = re.compile(rf"{_REF_NAME}(?:\s*(?:,\s*and|,|and|&|/)\s*{_REF_NAME})*")
_WEAK_REF_KEY_RE = re.compile(r"bibliograph(?:y|ies)(?:\s*(?:,\s*and|,|and|&|/)\s*bibliograph(?:y|ies))*")
_REF_HINT_RE = re.compile(
    r"(?i)refer|sourc|biblio|cit|note|link|read|fuent|font|notas|quell|nachweis|anmerk|literat|källor|kilder|lähteet|viitte|bron"
    r"|источ|литер|примеч|ссылк|参考|引用|出典|脚注|注|链接|リンク|참고|출처"
)


def _hint_search(pattern: re.Pattern) -> Callable[[str], bool]:
    """``pattern.search`` as a test, faster for ASCII text. ``pattern`` is a
    case-insensitive alternation of plain words; Unicode case-insensitive matching
    is slow in ``re`` (no fast scan to the first letter), so ASCII text is searched
    lower-cased with the case-sensitive pattern instead. That is the same test:
    for ASCII letters, case-insensitive means equal once lower-cased, and none of
    the pattern's other letters matches an ASCII one whatever its case (asserted)."""
    words = pattern.pattern.removeprefix("(?i)")
    assert pattern.flags & re.IGNORECASE and words == words.lower() and not re.search(r"[\\.^$*+?{}()\[\]]", words), words
    assert not any(re.fullmatch(f"(?i){re.escape(ch)}", chr(a)) for ch in set(words) if not ch.isascii() for a in range(128)), (
        "a letter of the pattern matches an ASCII one"
    )
    lowered = re.compile(words).search
    full = pattern.search

    def search(text: str) -> bool:
        return bool(lowered(text.lower()) if text.isascii() else full(text))

    return search


_ref_hint = _hint_search(_REF_HINT_RE)
KEY_NUMBERING_RE = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[ivxlc]+\.|[a-z]\.)\s+")
_KEY_PAREN_TAIL_RE = re.compile(r"\s*\([^()]*\)$")


def _heading_key(text: str) -> str:
    """Lower-cased heading text without markup, numbering, trailing colons or (…)."""
    t = text.replace("*", " ").replace("_", " ").replace("#", " ").replace("`", " ")
    t = " ".join(t.lower().split()).strip(" :.")
    t = KEY_NUMBERING_RE.sub("", t)
    t = _KEY_PAREN_TAIL_RE.sub("", t)
    return t.strip(" :.")


def ref_kind(text: str) -> int:
    """0: not a reference heading, 1: reference heading, 2: ambiguous (bibliography),
    3: begins with a reference name but says more (``External links and metadata``)."""
    if not _ref_hint(text):
        return 0
    key = _heading_key(text)
    if not key:
        return 0
    if not _REF_KEY_RE.fullmatch(key):
        match = _REF_KEY_RE.match(key)
        return 3 if match and key[match.end() : match.end() + 1] == " " else 0
    return 2 if _WEAK_REF_KEY_RE.fullmatch(key) else 1


# ---------------------------------------------------------------- line-level removals

_META_TOP_RE = re.compile(rf"{FETCH_METADATA_LABELS}:")
_META_ANYWHERE = ("URL Source:", "Markdown Content:")
_FOOTNOTE_DEF_RE = re.compile(r"[ ]{0,3}\[\^[^\]\n]+\]:")
_LINK_DEF_RE = re.compile(r"[ ]{0,3}\[([^\]\n]{1,200})\]:[ \t]*<?(?:https?:|www\.|/|#)")
# "[N] … URL": the entry's start, then a URL anywhere after it (``_ref_entry_anywhere``).
_REF_ENTRY_START_RE = re.compile(r"[ ]*(?:[-*+][ \t]+)?\[\d{1,4}\][ \t]+")
_TRAIL_ENTRY_RE = re.compile(
    r"[ \t]*(?:[-*+][ \t]+)?(?:"
    r"(?:\[\^?\d{1,4}\]:?|【\d{1,4}[^】\n]*】)[ \t]*\S[^\n]*"
    r"|\d{1,4}[.)][ \t]+[^\n]*(?:https?:|www\.)[^\n]*"
    r"|<?(?:https?:|www\.)\S*>?"
    r"|\[[^\]\n]*\]\((?:https?:|www\.)[^)\n]*\)"
    r")[ \t]*"
)
_URLISH_RE = re.compile(r"https?:|www\.|^\s*(?:[-*+]\s+)?\[\^?\d{1,4}\]", re.MULTILINE)

Heading = tuple[int, int, int, str]  # (line index, number of lines, level, text)


def _ref_entry_anywhere(line: str) -> bool:
    """Whether ``line`` is a ``[N] … URL`` entry. The URL is looked for with ``find`` after the
    entry's start: a pattern ending in "anything, then a URL" would walk back from the line's end."""
    m = _REF_ENTRY_START_RE.match(line)
    if m is None:
        return False
    at = m.end()
    return line.find("http:", at) >= 0 or line.find("https:", at) >= 0 or line.find("www.", at) >= 0


_ANYWHERE_REASON = "a [N] entry with a URL (removed wherever it stands)"


def _log_line(log: list[Decision], heads: list[Heading], line: str, reason: str) -> None:
    """Record one line removed as a citation entry, under the last heading met."""
    block = Block(0, 1, "paragraph", line)
    log.append(decision(heads[-1][3] if heads else "", block, (ENTRY, reason, 3.0)))


def scan(lines: list[str], link_labels: set[str], log: list[Decision] | None = None) -> tuple[list[str], list[Heading]]:
    """One pass over right-stripped lines: drops fetch metadata, footnote and link
    definitions and ``[N] … URL`` entry lines; finds headings. Pseudo-headings (a
    line that is only bold/italic text, a ``Label:`` line or a bare reference name,
    after a blank line) get level 7. Returns (kept lines, headings)."""
    out: list[str] = []
    heads: list[Heading] = []
    append = out.append
    n = len(lines)
    prev_blank = True
    leading = True
    in_footnote = False
    for i, line in enumerate(lines):
        if not line:
            append(line)
            prev_blank = True
            continue
        first = line[0]
        if in_footnote:
            if first == " " or first == "\t":
                continue  # indented continuation of a footnote definition
            in_footnote = False
        if leading:
            if _META_TOP_RE.match(line):
                continue
            leading = False
        elif (first == "U" or first == "M") and line.startswith(_META_ANYWHERE):
            continue
        if first == " ":
            first = line.lstrip(" ")[:1]
        if first == "[":
            if _FOOTNOTE_DEF_RE.match(line):
                in_footnote = True
                if log is not None:
                    _log_line(log, heads, line, "a footnote definition ([^N]: ...)")
                continue
            m = _LINK_DEF_RE.match(line)
            if m:
                link_labels.add(" ".join(m.group(1).lower().split()))
                continue
            if _ref_entry_anywhere(line):
                if log is not None:
                    _log_line(log, heads, line, _ANYWHERE_REASON)
                continue
        elif first in ("-", "*", "+") and "[" in line[:8] and _ref_entry_anywhere(line):
            if log is not None:
                _log_line(log, heads, line, _ANYWHERE_REASON)
            continue
        heading = None
        if first == "#":
            found = atx(line)
            if found:
                heading = (len(out), 1, found[0], found[1])
        elif prev_blank:
            last = line[-1]
            if first in ("*", "_") and last in ("*", "_", ":") and len(line) < 120:
                m = _EMPH_LINE_RE.match(line)
                if m and "*" not in m.group(2) and "__" not in m.group(2):
                    heading = (len(out), 1, 7, m.group(2))
            elif last == ":" and len(line) < 80:
                m = _LABEL_LINE_RE.match(line)
                if m:
                    heading = (len(out), 1, 7, m.group(1))
            elif len(line) < 40 and first.isalpha() and ref_kind(line):
                heading = (len(out), 1, 7, line)
            if heading is None and i + 1 < n:
                nxt = lines[i + 1]
                if setext_heading(line, nxt):
                    heading = (len(out), 2, 1 if "=" in nxt else 2, line.strip())
        append(line)
        if heading is not None:
            heads.append(heading)
            prev_blank = True  # the line after a heading may start a heading
        else:
            prev_blank = False
    return out, heads


def _is_long_prose(line: str) -> bool:
    return (
        len(line) > 150
        and not NOT_PARAGRAPH_RE.match(line)
        and line.lstrip()[:1] not in ("[", "<", "*", "_")
        and "http" not in line
        and "www." not in line
        and len(line.split()) >= 30
    )


# Source commentary: a heading about how the article was sourced or researched ...
_META_HINT_RE = re.compile(r"(?i)sourc|verif|method|cit|research|how this|fact")
_meta_hint = _hint_search(_META_HINT_RE)
_META_HEAD_RE = re.compile(
    r"\b(?:sources?|sourcing|verification|verifiability|methodology|citations?|citing)\b"
    r"|\bresearch[ \t]+(?:notes?|coverage|methods?|methodology|workflow|process|strategy|limitations?|gaps?|log)\b"
    r"|\bhow[ \t]+this[ \t]+(?:article|report|entry|page|summary|overview)[ \t]+was\b"
    r"|\bfact[- ]?check"
)
# ... over a body that talks about the article itself or the act of checking sources
# (a heading that names the article itself, "How this article was researched", is
# enough on its own).
_SELF_REF = r"\bthis[ \t]+(?:article|report|entry|summary|overview|page|profile|write-?up|document|draft|guide|piece)\b"
_SELF_REF_RE = re.compile(rf"(?i){_SELF_REF}")
_META_BODY_RE = re.compile(
    rf"(?i){_SELF_REF}"
    r"|\b(?:consult(?:ed|ing)?|verif(?:y|ied|ies|ying|iable|iably|ication)|corroborat\w*|cross-?check\w*"
    r"|fact-?check\w*|accessed|retrieved|cit(?:e|ed|es|ing|ations?))\b"
)
_ENTRY_LINE_RE = re.compile(r"[ \t]*(?:[-*+][ \t]|\d{1,9}[.)][ \t]|[|\[【^\x02])")
_BIBLIO_CUE_RE = re.compile(r"(?i)\bisbn\b|\bdoi\b|\bissn\b|\bretrieved\b|\barchived\b|\bpp?\.[ \t]*\d|\(\d{4}[a-z]?\)\.")


def _is_prose_body(lines: list[str], start: int, end: int, heading_lines: set[int]) -> bool:
    """True when lines[start:end] (sub-headings aside) are prose paragraphs: no URL,
    no list item, table row or bracketed entry, at least one long paragraph, and at
    most a minority of lines that read like bibliography entries (ISBN, pp. 4, …)."""
    long_prose = False
    content = cues = 0
    for j in range(start, end):
        line = lines[j]
        if not line or j in heading_lines:
            continue
        if _ENTRY_LINE_RE.match(line) or "http" in line or "www." in line:
            return False
        content += 1
        if _BIBLIO_CUE_RE.search(line):
            cues += 1
        if not long_prose and _is_long_prose(line):
            long_prose = True
    return long_prose and cues * 2 < content


def drop_sections(lines: list[str], headings: list[Heading], is_reference: bool = False, log: list[Decision] | None = None) -> list[str]:
    """Drop reference-type sections and source commentary (see the package docstring);
    each block's decision is appended to ``log`` when given."""
    kinds = [ref_kind(text) for _, _, _, text in headings]
    meta = (
        []
        if is_reference
        else [level <= 6 and _meta_hint(text) and bool(_META_HEAD_RE.search(_heading_key(text))) for _, _, level, text in headings]
    )
    if not any(kinds) and not any(meta):
        return lines
    # Sections dropped as a whole: source commentary, judged on its whole body.
    whole = [False] * len(headings)
    heading_lines: set[int] | None = None  # built on first use: most articles never need it
    # From the last heading up, so that "trailing" can be read off the later ones.
    for h in range(len(headings) - 1, -1, -1):
        kind = kinds[h]
        if not kind and not (meta and meta[h]):
            continue
        idx, size, level, _ = headings[h]
        later = [k for k in range(h + 1, len(headings)) if headings[k][2] <= level]
        end = headings[later[0]][0] if later else len(lines)
        body = "\n".join(lines[idx + size : end])
        trailing = all(kinds[k] == 1 for k in later)
        if kind == 3:
            # "External links and metadata": a reference section only where it opens
            # the trailing run of reference sections and its body lists URLs or entries.
            kind = 1 if trailing and _URLISH_RE.search(body) else 0
        elif kind == 2:  # a bibliography: sources or the subject's works?
            kind = 1 if (not body.strip() or _URLISH_RE.search(body)) else 0
            if not kind and not (meta and meta[h]):
                log_whole(lines, idx, end, headings[h][3], "a bibliography without URLs or [N] entries: the subject's works", CONTENT, log)
        if kind == 1 and meta and level <= 6 and heading_lines is None:
            heading_lines = {i + k for i, sz, _, _ in headings for k in range(sz)}
        if kind == 1 and meta and level <= 6 and _is_prose_body(lines, idx + size, end, heading_lines) and _META_BODY_RE.search(body):
            # "## Sources" over paragraphs an agent wrote about its own sourcing goes
            # whole; over paragraphs on the primary accounts, its blocks are judged
            # one by one (prose about the subject stays).
            whole[h] = True
        elif (
            not kind
            and meta
            and meta[h]
            and trailing
            # after a content sibling, not a title
            and any(lv == level for _, _, lv, _ in headings[:h])
            and (_META_BODY_RE.search(body) or _SELF_REF_RE.search(headings[h][3]))
        ):
            kind = 1  # "## Notes on sources and verification" at the end
            whole[h] = True
        kinds[h] = kind
    ranges = []
    h = 0
    while h < len(headings):
        if not kinds[h]:
            h += 1
            continue
        idx, _, level, _ = headings[h]
        end = len(lines)
        for k in range(h + 1, len(headings)):
            if headings[k][2] <= level:  # a following reference section is a range of its own
                end = headings[k][0]
                break
        if level == 7:
            # A pseudo-heading does not say where its section ends: stop at the
            # first long prose paragraph as well.
            for j in range(idx + 1, end):
                if _is_long_prose(lines[j]):
                    end = j
                    break
        inner = [hd for hd in headings if idx <= hd[0] < end]
        if whole[h]:
            keep: set[int] = set()
            log_whole(lines, idx, end, headings[h][3], "in a section of the agent's notes on its own sourcing", NOTE, log)
        else:
            keep = blocks_kept(lines, idx, end, inner, notes=not is_reference, log=log)
        ranges.append((idx, end, keep))
        while h < len(headings) and headings[h][0] < end:
            h += 1
    if not ranges:
        return lines
    kept: list[str] = []
    pos = 0
    for start, end, keep in ranges:
        kept.extend(lines[pos:start])
        kept.extend(lines[i] for i in range(start, end) if i in keep)
        pos = end
    kept.extend(lines[pos:])
    return kept


# ---------------------------------------------------------------- blocks under a reference heading


def blocks_kept(
    lines: list[str],
    start: int,
    end: int,
    inner: list[Heading],
    *,
    notes: bool,
    log: list[Decision] | None = None,
) -> set[int]:
    """Which lines of the reference section ``lines[start:end]`` are content and stay.

    Every block under the heading is classified (``blocks.classify_blocks``): citation
    entries and agents' notes go, content stays, with the headings above it (the
    section's own heading included) and the blank lines around it; a heading with
    nothing left under it goes. ``inner`` are the headings in the range, its own
    first. ``notes``: look for agents' notes (off for the reference article).
    """
    heading_lines = {at + k for at, size, _, _ in inner for k in range(size)}
    blocks = split_blocks(lines, start, end, heading_lines)
    verdicts = classify_blocks(lines, blocks, notes=notes)
    keep: set[int] = set()
    title = inner[0][3] if inner else ""
    for block, verdict in zip(blocks, verdicts):
        if log is not None:
            under = next((hd[3] for hd in reversed(inner) if hd[0] < block.start), title)
            log.append(decision(under if under == title else f"{title} / {under}", block, verdict))
        if verdict[0] == CONTENT:
            keep.update(range(block.start, block.end))
    if not keep:
        return keep
    # Each heading with kept content in its part of the range (the section's own
    # heading spans all of it), and the blank lines that separate the blocks.
    content = sorted(keep)
    for k, (at, size, level, _) in enumerate(inner):
        stop = next((hd[0] for hd in inner[k + 1 :] if hd[2] <= level), end)
        if any(at < j < stop for j in content):
            keep.update(range(at, at + size))
    keep.update(i for i in range(start, end) if not lines[i])
    return keep


def log_whole(lines: list[str], start: int, end: int, heading: str, reason: str, kind: str, log: list[Decision] | None) -> None:
    """Record each block of a section dropped or kept as a whole, with one reason."""
    if log is None:
        return
    for block in split_blocks(lines, start + 1, end):
        log.append(decision(heading, block, (kind, reason, 0.0)))


def drop_trailing_entries(lines: list[str], log: list[Decision] | None = None) -> list[str]:
    """Drop a final block of reference-entry lines, with a bare reference-name line
    (``Sources:``) just above it."""
    j = len(lines) - 1
    cut = None
    while j >= 0:
        line = lines[j]
        if not line:
            j -= 1
            continue
        if _TRAIL_ENTRY_RE.fullmatch(line):
            cut = j
            j -= 1
            continue
        break
    if cut is None:
        return lines
    if j >= 0 and len(lines[j]) < 60 and ref_kind(lines[j]):
        cut = j
    if log is not None:
        for line in lines[cut:]:
            if line and _TRAIL_ENTRY_RE.fullmatch(line):
                log.append(decision("", Block(0, 1, "paragraph", line), (ENTRY, "a trailing block of reference entries", 3.0)))
    return lines[:cut]
