"""Turn raw article markdown into the text annotators are shown.

Pure Python, no Django. Two steps, applied identically to both articles of a pair
(``clean_article`` = ``normalize_article(strip_citations(md), title)``). The one
difference: ``is_reference=True`` (the human-written article) turns off the
source-commentary rule below, which only agents' articles need.

``strip_citations``
    Removes every trace of sourcing (inline citation markers, URLs, link targets,
    images, footnotes, reference sections, fetch metadata) while keeping all prose,
    lists, tables and headings.
``normalize_article``
    Gives both articles the same skeleton so that nothing but content tells them
    apart: one ``# Title`` first line, sections from ``##`` down, ATX headings only.

strip_citations: rules and judgement calls
------------------------------------------
* Inline markers removed: ``[1]``, ``[1, 2]``, ``[1-3]``/``[1–3]``, ``[1][2]``,
  comma/semicolon separated runs ``[4], [5]`` (separators go too), ``[1, p. 4]``,
  ``[1†source]``, ``[^note]``, ``【…】``, ``<sup>`` holding a number, a letter or a
  bracket (kept after ``10`` or a unit: ``10<sup>6</sup>``, ``km<sup>2</sup>``),
  ``[citation needed]``-style maintenance tags, ``[Source 3]``, and the broken
  ``[[1]), [26]]`` wrapper one agent emits.
* A bracketed number is a citation only with 1-3 digits: ``[1939]`` (4+ digits) is
  kept as prose, since a bracketed year (or ``[2009] ACHPR 102``, a neutral case
  citation that is prose) is far likelier than a 1000th source. Other bracketed
  text (``[sic]``, ``[...]``, ``[the]``, ``[a]``, task boxes ``[ ]``) is kept.
* Links ``[text](url)`` keep ``text`` (a link whose text is itself a URL vanishes);
  ``[3](url)`` and images ``![alt](url)`` are dropped; bare, parenthesised,
  angle-bracket and scheme-mangled (``httpswww.…``) URLs are dropped; reference
  link definitions ``[label]: url`` are dropped and ``[text][label]`` keeps ``text``.
* Code (fenced blocks and inline code spans) is never modified.
* Reference sections: a heading (ATX ``#``-``######``, setext, a line that is only
  bold/italic text, or a ``Label:`` / bare ``References`` line after a blank line)
  whose text, ignoring markup, numbering (``8.``), a trailing ``(…)``, case and
  colons, is made only of reference names -- References, Reference, Reference list,
  Sources, Source, Source list, Sources cited, Works cited, Cited works, Citations,
  Notes, Footnotes, Endnotes, External links, Further reading, Links, Bibliography --
  joined by ``and``/``&``/``,``/``/``. The section runs up to the next heading of
  the same or a higher level that is not itself a reference section. So a trailing
  run of such sections goes to the end of the article, a ``Notes`` section followed
  by ``## History`` drops only itself, and a ``### Sources`` sub-section ends at the
  next ``##``/``###``. Pseudo-headings (bold line, ``Label:``) count as level 7,
  below ``######``, and their section also ends at the first long prose paragraph
  (30+ words, no URL), since nothing else marks where it ends. Headings that merely
  contain such a word (``Selected bibliography``, ``Historical sources``) are
  content and stay. A heading that *begins* with a reference name and says more
  (``External links and metadata``) is a reference section only when it opens
  the trailing run of reference sections and its own body holds URLs or ``[N]``
  entries.
* A reference-named ATX/setext section whose body is prose is content, whatever
  its heading: a Wikipedia ``## Sources`` with ``### Written`` / ``#### Campaign``
  over paragraphs on the primary accounts stays, sub-sections included. Prose
  means: no URL, no list item, table row or ``[N]``/``[^N]`` entry anywhere in the
  section, at least one paragraph of 30+ words, and fewer than half its lines
  with bibliographic cues (ISBN, DOI, ``pp. 4``, ``(1990).``, Retrieved). Trade-offs:
  a section mixing a prose paragraph with a list of works goes whole; a list of
  plain unmarked entries with one 30-word annotated entry would stay.
* Source commentary (agents only, ``is_reference=False``): a section goes when its
  heading is about sourcing (source(s), sourcing, verification, methodology,
  citation(s), research notes/coverage/workflow/methods, "how this article was
  ..."), it sits in the trailing run (every later heading of its level or higher
  is a reference section or more commentary), it has an earlier sibling heading
  (so a title such as ``# Source guide to X`` is never one), and its body talks
  about the article or the act of checking sources ("this article/report",
  consulted, verified, corroborated, cross-checked, accessed, retrieved, cited)
  or its heading names the article itself. A prose ``## Sources`` written by an
  agent about its own sourcing ("This report draws on ...") goes by the same body
  test. Trade-offs: commentary in the middle of an article stays (content
  sections such as ``## Sources of the river`` or ``### Historical sources`` are
  far likelier there); a trailing content section about documents ("## Later
  maps and photographs" corroborating a site) goes if its heading says
  "sources"; the reference article is never judged by this rule, since its
  historiography uses the same words ("cited", "corroborated").
* ``Bibliography`` is ambiguous (sources, or the subject's own works): it is removed
  only when its body is empty or holds a URL or ``[N]``/footnote entries; a plain
  list of works stays.
* A trailing block of lines that are only reference entries (``[12] …``,
  ``1. … https://…``, a lone URL, ``- [title](url)``) goes even without a heading,
  with a bare reference-name line (``Sources:``) just above it. Anywhere, a line
  ``[N] … URL`` is a reference entry and goes.
* Fetch metadata: ``URL Source:`` and ``Markdown Content:`` lines anywhere; ``Title:``,
  ``Published Time:``, ``Description:``, ``Author:``, ``Source:`` only in the block of
  such lines that opens the file.
* Caption residue: a line or list item (under 80 characters), or a table row with
  one filled cell, that holds only a source label -- Source, Sources, Source(s),
  Data source, Ref./Refs, Reference(s), Citation(s), any case -- with nothing
  after it but note numbers, punctuation and emphasis markers goes, whether a
  citation was stripped from it (``*Source: [4](url)*``, ``Sources: [3], [4]``)
  or it came bare (``Source: 5``, ``| Source: |  |  |``). The label needs a colon,
  a number or emphasis around it: a bare ``Sources`` line may be a list word (and
  after a blank line it is a reference heading, above). ``Source: the 1911
  census ...`` has words and stays; so does a header row named ``Source:``.
* Tables (``| a | b |`` rows of equal width after an alignment row): a column
  headed Ref./Ref/Refs/Reference(s)/Source(s)/Citation(s)/Cite/Note(s) whose body
  cells are all empty once citations are stripped goes, header and alignment
  cell included (never the only column). In a column where two or more cells
  start with the same capitalised name said twice -- one to three capitalised
  words, with "and"/"of"/"the"/... between them, then only the end of the cell
  or ``(``/``[``/``,``/``;`` -- the doubled name is said once ("Albania Albania",
  "Antigua and Barbuda Antigua and Barbuda", "Taiwan Taiwan (Republic of
  China)"): a flag's alt text scraped before the name. Trade-off: a lone doubled
  cell (a real "Walla Walla") stays, and so would a lone flag; a name that goes
  on ("Moo Moo Meadows") stays; prose and list items are never touched.
* Tidying where something was removed: no double space, no space before
  ``.,;:!?)`` or at a line start, nor before emphasis that closes a line or a
  clause (``*Source: the log [3]*`` becomes ``*Source: the log*``), ``()`` left
  empty goes, and a line, list item or table row left without words (or with
  only a short label such as ``- Website:``) goes. A removed marker between a
  sentence end (``.!?``, maybe with a closing quote or parenthesis) and a capital
  letter leaves one space (``it.[3]It was`` becomes ``it. It was``); text where
  no marker was (``U.S.``, ``3.5``, ``e.g.Smith``) is never touched.
  Globally: ``word .`` becomes ``word.``, trailing spaces go, runs of blank
  lines collapse to one blank line, leading/trailing blank lines go. Lines are never
  joined or split; table pipes and alignment rows are left alone but where a
  whole column goes (above).

normalize_article: rules
------------------------
* ``\r\n``/``\r`` become ``\n``, trailing whitespace goes, one trailing newline.
* Title: ``title`` with ``_`` read as spaces. If the first line is an H1 (whatever
  its spelling, e.g. ``# Arne_Furumark``) or a heading spelling the title, it is
  replaced; else an H1 spelling the title elsewhere is removed; then ``# Title`` is
  put first.
* Setext headings become ATX; bold (not italic: titles of works) wrapping a whole
  heading and trailing colons go; empty headings go; every heading gets a blank
  line before and after.
* All headings but the title shift so that the shallowest becomes ``##``, keeping
  relative depth, capped at ``######`` (``# Early life`` / ``## Childhood`` become
  ``## Early life`` / ``### Childhood``).
"""

from __future__ import annotations

import re

__all__ = ["strip_citations", "normalize_article", "clean_article", "count_words"]

# Placeholders: \x01 marks a removed citation/URL until whitespace is tidied,
# \x02<n>\x03 stands for a stashed piece of code.
_MARK = "\x01"
_CTRL_RE = re.compile(r"[\x00-\x04]")
_STASH_RE = re.compile(r"\x02(\d+)\x03")

# ---------------------------------------------------------------- code protection

_FENCE_OPEN_RE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})")
_CODE_SPAN_RE = re.compile(r"(?<!`)(`+)(?!`)[^\n]+?(?<!`)\1(?!`)")


def _split_lines(text: str, stash: list[str]) -> list[str]:
    """Right-stripped lines, with each fenced code block replaced by one placeholder
    line and each inline code span by an inline placeholder (saved in ``stash``)."""
    lines = text.split("\n")
    if "`" not in text and "~~~" not in text:
        return [line.rstrip() for line in lines]
    out: list[str] = []
    append = out.append
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if "`" not in line and "~~~" not in line:
            append(line.rstrip())
            i += 1
            continue
        m = _FENCE_OPEN_RE.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in line[m.end():]):
            fence = m.group(1)
            char, size = fence[0], len(fence)
            j = i + 1
            while j < n:
                s = lines[j].lstrip(" ")
                if len(lines[j]) - len(s) <= 3 and s.startswith(char * size) and not s.rstrip(" \t").strip(char):
                    break
                j += 1
            stash.append("\n".join(lines[i:j + 1]))
            append(f"\x02{len(stash) - 1}\x03")
            i = j + 1
            continue
        if "`" in line:
            line = _CODE_SPAN_RE.sub(lambda mm: _stash_one(mm.group(0), stash), line)
        append(line.rstrip())
        i += 1
    return out


def _stash_one(text: str, stash: list[str]) -> str:
    stash.append(text)
    return f"\x02{len(stash) - 1}\x03"


def _unstash(text: str, stash: list[str]) -> str:
    if not stash:
        return text
    # Stashed text never contains \x02, so one pass restores everything.
    return _STASH_RE.sub(lambda m: stash[int(m.group(1))], text)


def _prepare(markdown: str) -> str:
    if "\r" in markdown:
        markdown = markdown.replace("\r\n", "\n").replace("\r", "\n")
    # Only the characters used as internal placeholders need to go.
    if "\x00" in markdown or "\x01" in markdown or "\x02" in markdown or "\x03" in markdown or "\x04" in markdown:
        markdown = _CTRL_RE.sub("", markdown)
    return markdown


# ---------------------------------------------------------------- headings

_ATX_RE = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]+(.*))?$")
_SETEXT_RE = re.compile(r"[ ]{0,3}(=+|-{2,})[ \t]*$")
_EMPH_LINE_RE = re.compile(r"[ ]{0,3}(\*{1,3}|_{1,3})([^*_\n][^\n]*?)(\*{1,3}|_{1,3})[ \t]*:?[ \t]*$")
_LABEL_LINE_RE = re.compile(r"[ ]{0,3}([A-Z][^\n:|]{0,60}?):[ \t]*$")
_NOT_PARAGRAPH_RE = re.compile(r"[ ]{0,3}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|[>|#]|\x02)")

_REF_NAME = (
    r"(?:references?|reference list|list of references|sources?|source list|sources cited|"
    r"cited sources|works cited|cited works|citations?|notes|footnotes|endnotes|"
    r"external links?|further reading|links|bibliography|bibliographies)"
)
_REF_KEY_RE = re.compile(rf"{_REF_NAME}(?:\s*(?:,\s*and|,|and|&|/)\s*{_REF_NAME})*")
_WEAK_REF_KEY_RE = re.compile(r"bibliograph(?:y|ies)(?:\s*(?:,\s*and|,|and|&|/)\s*bibliograph(?:y|ies))*")
_REF_HINT_RE = re.compile(r"(?i)refer|sourc|biblio|cit|note|link|read")
_KEY_NUMBERING_RE = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[ivxlc]+\.|[a-z]\.)\s+")
_KEY_PAREN_TAIL_RE = re.compile(r"\s*\([^()]*\)$")


def _atx(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line (right-stripped), else None."""
    m = _ATX_RE.match(line)
    if m is None:
        return None
    text = m.group(2) or ""
    if text.endswith("#"):  # an optional closing sequence: "## Title ##"
        bare = text.rstrip("#")
        if not bare or bare[-1] in " \t":
            text = bare.rstrip()
    return len(m.group(1)), text


def _heading_key(text: str) -> str:
    """Lower-cased heading text without markup, numbering, trailing colons or (…)."""
    t = text.replace("*", " ").replace("_", " ").replace("#", " ").replace("`", " ")
    t = " ".join(t.lower().split()).strip(" :.")
    t = _KEY_NUMBERING_RE.sub("", t)
    t = _KEY_PAREN_TAIL_RE.sub("", t)
    return t.strip(" :.")


def _ref_kind(text: str) -> int:
    """0: not a reference heading, 1: reference heading, 2: ambiguous (bibliography),
    3: begins with a reference name but says more (``External links and metadata``)."""
    if not _REF_HINT_RE.search(text):
        return 0
    key = _heading_key(text)
    if not key:
        return 0
    if not _REF_KEY_RE.fullmatch(key):
        match = _REF_KEY_RE.match(key)
        return 3 if match and key[match.end():match.end() + 1] == " " else 0
    return 2 if _WEAK_REF_KEY_RE.fullmatch(key) else 1


# ---------------------------------------------------------------- line-level removals

_META_TOP_RE = re.compile(r"(?:Title|URL Source|Published Time|Markdown Content|Description|Author|Source):")
_META_ANYWHERE = ("URL Source:", "Markdown Content:")
_FOOTNOTE_DEF_RE = re.compile(r"[ ]{0,3}\[\^[^\]\n]+\]:")
_LINK_DEF_RE = re.compile(r"[ ]{0,3}\[([^\]\n]{1,200})\]:[ \t]*<?(?:https?:|www\.|/|#)")
_REF_ENTRY_ANYWHERE_RE = re.compile(r"[ ]*(?:[-*+][ \t]+)?\[\d{1,4}\][ \t]+[^\n]*(?:https?:|www\.)")
_TRAIL_ENTRY_RE = re.compile(
    r"[ \t]*(?:[-*+][ \t]+)?(?:"
    r"(?:\[\^?\d{1,4}\]:?|【\d{1,4}[^】\n]*】)[ \t]*\S[^\n]*"
    r"|\d{1,4}[.)][ \t]+[^\n]*(?:https?:|www\.)[^\n]*"
    r"|<?(?:https?:|www\.)\S*>?"
    r"|\[[^\]\n]*\]\((?:https?:|www\.)[^)\n]*\)"
    r")[ \t]*"
)
_URLISH_RE = re.compile(r"https?:|www\.|^\s*(?:[-*+]\s+)?\[\^?\d{1,4}\]", re.M)

Heading = tuple[int, int, int, str]  # (line index, number of lines, level, text)


def _scan(lines: list[str], link_labels: set[str]) -> tuple[list[str], list[Heading]]:
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
                continue
            m = _LINK_DEF_RE.match(line)
            if m:
                link_labels.add(" ".join(m.group(1).lower().split()))
                continue
            if _REF_ENTRY_ANYWHERE_RE.match(line):
                continue
        elif first in ("-", "*", "+") and "[" in line[:8] and _REF_ENTRY_ANYWHERE_RE.match(line):
            continue
        heading = None
        if first == "#":
            atx = _atx(line)
            if atx:
                heading = (len(out), 1, atx[0], atx[1])
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
            elif len(line) < 40 and first.isalpha() and _ref_kind(line):
                heading = (len(out), 1, 7, line)
            if heading is None and i + 1 < n:
                nxt = lines[i + 1]
                if nxt and nxt[-1] in ("=", "-") and _SETEXT_RE.match(nxt) and not _NOT_PARAGRAPH_RE.match(line):
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
        and not _NOT_PARAGRAPH_RE.match(line)
        and line.lstrip()[:1] not in ("[", "<", "*", "_")
        and "http" not in line
        and "www." not in line
        and len(line.split()) >= 30
    )


# Source commentary: a heading about how the article was sourced or researched ...
_META_HINT_RE = re.compile(r"(?i)sourc|verif|method|cit|research|how this|fact")
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


def _drop_sections(lines: list[str], headings: list[Heading], is_reference: bool = False) -> list[str]:
    """Drop reference-type sections and source commentary (see the module docstring)."""
    kinds = [_ref_kind(text) for _, _, _, text in headings]
    meta = [] if is_reference else [
        level <= 6 and bool(_META_HINT_RE.search(text)) and bool(_META_HEAD_RE.search(_heading_key(text)))
        for _, _, level, text in headings
    ]
    if not any(kinds) and not any(meta):
        return lines
    heading_lines: set[int] | None = None  # built on first use: most articles never need it
    # From the last heading up, so that "trailing" can be read off the later ones.
    for h in range(len(headings) - 1, -1, -1):
        kind = kinds[h]
        if not kind and not (meta and meta[h]):
            continue
        idx, size, level, _ = headings[h]
        later = [k for k in range(h + 1, len(headings)) if headings[k][2] <= level]
        end = headings[later[0]][0] if later else len(lines)
        body = "\n".join(lines[idx + size:end])
        trailing = all(kinds[k] == 1 for k in later)
        if kind == 3:
            # "External links and metadata": a reference section only where it opens
            # the trailing run of reference sections and its body lists URLs or entries.
            kind = 1 if trailing and _URLISH_RE.search(body) else 0
        elif kind == 2:  # a bibliography: sources or the subject's works?
            kind = 1 if (not body.strip() or _URLISH_RE.search(body)) else 0
        if kind == 1 and level <= 6 and heading_lines is None:
            heading_lines = {i + k for i, sz, _, _ in headings for k in range(sz)}
        if kind == 1 and level <= 6 and _is_prose_body(lines, idx + size, end, heading_lines):
            # "## Sources" over paragraphs on the primary accounts is content, unless
            # an agent wrote it about its own sourcing.
            kind = 1 if meta and _META_BODY_RE.search(body) else 0
        elif (
            not kind and meta and meta[h] and trailing
            and any(lv == level for _, _, lv, _ in headings[:h])  # after a content sibling, not a title
            and (_META_BODY_RE.search(body) or _SELF_REF_RE.search(headings[h][3]))
        ):
            kind = 1  # "## Notes on sources and verification" at the end
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
            if headings[k][2] <= level and not kinds[k]:
                end = headings[k][0]
                break
        if level == 7:
            # A pseudo-heading does not say where its section ends: stop at the
            # first long prose paragraph as well.
            for j in range(idx + 1, end):
                if _is_long_prose(lines[j]):
                    end = j
                    break
        ranges.append((idx, end))
        while h < len(headings) and headings[h][0] < end:
            h += 1
    if not ranges:
        return lines
    kept: list[str] = []
    pos = 0
    for start, end in ranges:
        kept.extend(lines[pos:start])
        pos = end
    kept.extend(lines[pos:])
    return kept


def _drop_trailing_entries(lines: list[str]) -> list[str]:
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
    if j >= 0 and len(lines[j]) < 60 and _ref_kind(lines[j]):
        cut = j
    return lines[:cut]


# ---------------------------------------------------------------- inline removals

_URL_BODY = r"(?:[^\s()<>]|\([^\s()<>]*\))*"
_IMAGE_RE = re.compile(r"!\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\](?:\((?:[^()\n]|\([^()\n]*\))*\)|\[[^\[\]\n]*\])")
_NUM_LABEL_RE = re.compile(r"\s*\^?\d{1,3}(?:[ \t]*[,–—-][ \t]*\d{1,3})*\s*")
_LINK_RE = re.compile(r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\((?:[^()\n]|\([^()\n]*\))*\)")
_AUTOLINK_RE = re.compile(r"<(?:https?:|www\.|ftp:|mailto:)[^>\s]*>")
_PAREN_URL_RE = re.compile(
    rf"\([ \t]*(?:https?:|www\.){_URL_BODY}(?:[ \t]*[,;][ \t]*(?:https?:|www\.){_URL_BODY})*[ \t]*\)"
)
# Two passes, each starting with a literal, scan much faster than one alternation.
_BARE_URL_RE = re.compile(r"https?(?::/*|/+|(?=www\.))[^\s<>\"\[\]`]*")
_WWW_RE = re.compile(r"www\.[^\s<>\"\[\]`]+")
_NUMS = r"\d{1,3}(?:[ \t]*(?:[,;]|[-–—]|and)[ \t]*\d{1,3})*"
_CITE = (
    r"\[(?:"
    r"(?:\^[^\]\s]{1,40}"
    rf"|[ \t]*\d{{1,3}}†[^\]\n]{{0,80}}"
    rf"|[ \t]*{_NUMS}(?:[ \t]*,[ \t]*pp?\.[ \t]*\d{{1,5}}(?:[-–]\d{{1,5}})?)?[ \t]*"
    r"|(?i:(?:source|ref|reference|cite|citation|note)s?[ \t]*:?[ \t]*)" + _NUMS +
    r"|(?i:[a-z ]{0,30}(?:citation|source|verification|clarification|page|year|date|reference)s? needed"
    r"|citation missing|failed verification|dubious(?:[ \t]*[–—-][ \t]*discuss)?|unreliable source\??"
    r"|according to whom\?|by whom\?|who\?|when\?|which\?|where\?|not in citation given"
    r"|self-published source\??))\]"
    r"|\[\d{1,3}\][^\s\[\]]*\)(?:[ \t]*,[ \t]*\[\d{1,3}\])*\]"  # [[1]), [26]]
    r")"
)
# A whole run ("[1][2]", "[4], [5]") becomes one mark. A literal "[" comes first, so
# the regex engine can skip quickly from one "[" to the next.
_CITATION_RE = re.compile(rf"{_CITE}(?:[ \t]*[,;]?[ \t]*{_CITE})*")
_LENTICULAR_RE = re.compile(r"【[^】\n]{0,80}】")
_SUP_RE = re.compile(r"<sup>[ \t]*(\[?[ \t]*(?:\d{1,3}(?:[ \t]*[,–-][ \t]*\d{1,3})*|\^?[A-Za-z]|\^\w{1,10})[ \t]*\]?|\[[^\]\n]{1,40}\])[ \t]*</sup>")
_UNIT_BEFORE_RE = re.compile(r"\b(?:10|k?m|cm|mm|ft|mi|yd|in|sq|km/h|m/s)$")
_REF_LINK_RE = re.compile(r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])+)\](?:\[([^\[\]\n]*)\])?")


def _url_tail(m: re.Match) -> str:
    """Drop a bare URL but give back trailing sentence punctuation and a ')' that
    closes a parenthesis opened before the URL."""
    url = m.group(0)
    tail = ""
    while url and url[-1] in ".,;:!?'’”)*_":
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        tail = url[-1] + tail
        url = url[:-1]
    return _MARK + tail


def _link_text(m: re.Match) -> str:
    """``[text](url)`` keeps ``text``; ``[3](url)`` and ``[](url)`` go."""
    label = m.group(1)
    if not label.strip() or _NUM_LABEL_RE.fullmatch(label):
        return _MARK
    return label


def _sup(m: re.Match) -> str:
    before = m.string[max(0, m.start() - 8):m.start()]
    if _UNIT_BEFORE_RE.search(before) and not m.group(1).startswith("["):
        return m.group(0)
    return _MARK


_EMPTY_EMPH_RE = re.compile(r"(\*{1,3}|_{1,3})\x01\1")
# A line holding only list/quote/table syntax, punctuation, marks and at most a short
# label such as "Source:" or "- Website:". Possessive quantifiers: no backtracking.
_WORDLESS_RE = re.compile(
    r"[ \t>]*+(?:(?:[-*+]|\d{1,4}[.)])[ \t]+)?+(?:\*\*|__)?+"
    r"(?:[^\W\d_][\w'’/-]*+(?:[ \t]++[\w'’/&-]++){0,2}+(?:\*\*|__)?+[ \t]*+:"
    r"|(?i:(?:sources?|references?|citations?|refs?|links?|see(?: also)?|via|urls?)\b))?"
    r"(?:\*\*|__)?[\s\x01,;:.()\[\]\-–—|*_†]*+"
)
_MARK_RUN_RE = re.compile(r"\x01(?:[ \t]*[,;]?[ \t]*\x01)+")
_MARK_IN_BRACKETS_RE = re.compile(r"[ \t]*(?:\(\x01\)|\[\x01\])")
_MARK_AFTER_OPENER_RE = re.compile(r"([(\[])\x01[ \t]*")
# A mark goes with the space before it when closing punctuation, a space or the end
# of the line follows ("word [1]." "word [1] next"); any other mark goes alone
# ("word[1] next"). The pattern starts with a literal, so the scan is fast.
_SPACE_MARK_RE = re.compile(r" \x01(?=[ \t\n.,;:!?)\]}”’»…]|$|[*_]{1,3}(?:[\s.,;:!?)]|$))")
# "it.[3]It was": a mark between a sentence end and a capital letter becomes a space.
# The pattern starts with the mark itself (fast to find); _unglue looks behind it.
_GLUED_MARK_RE = re.compile(r"\x01\x01*(?=[A-ZÀ-ÖØ-Þ])")  # not "\x01+": that loses the fast scan


def _unglue(m: re.Match) -> str:
    before = m.string[max(0, m.start() - 2):m.start()]
    if before[-1:] in (".", "!", "?") or (before[-1:] in ("\"", "'", "”", "’", ")") and before[:1] in (".", "!", "?")):
        return " "
    return m.group(0)
_WORDLESS_STRIP = " \t|-*+>.,;:()[]\x01"


def _tidy_marked_line(line: str) -> str | None:
    """First step of removing the \x01 marks of one line: None when the line is left
    without content (it is then dropped); otherwise the line with the rarer cases
    done (a run of marks joined by commas/semicolons becomes one mark, ``(mark)``
    goes with the space before it, a mark starting the line goes with the spaces
    after it). The common cases are left to one pass over the whole text."""
    if len(line.strip(_WORDLESS_STRIP)) <= 60 and _WORDLESS_RE.fullmatch(line):
        return None
    if "\x01*" in line or "\x01_" in line:
        line = _EMPTY_EMPH_RE.sub(_MARK, line)
    if ",\x01" in line or ", \x01" in line or ";\x01" in line or "; \x01" in line:
        line = _MARK_RUN_RE.sub(_MARK, line)
    if "(\x01" in line or "[\x01" in line:
        line = _MARK_IN_BRACKETS_RE.sub("", line)
        line = _MARK_AFTER_OPENER_RE.sub(r"\1", line)
    body = line.lstrip(" \t")
    if body[:1] == _MARK:  # keep the indentation only
        line = line[: len(line) - len(body)] + body.lstrip("\x01 \t")
    return line


def _remove_marks(text: str) -> str:
    """Remove the \x01 marks left where citations and URLs were, tidying whitespace:
    no space before closing punctuation or at a line start, never a double space."""
    kept = []
    for line in text.split("\n"):  # lines are right-stripped already
        if _MARK in line:
            line = _tidy_marked_line(line)
            if line is None:
                continue
        kept.append(line)
    text = _SPACE_MARK_RE.sub("", "\n".join(kept))
    text = _GLUED_MARK_RE.sub(_unglue, text)
    return text.replace(_MARK, "")


# ---------------------------------------------------------------- caption residue and tables

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
_CELL_SPLIT_RE = re.compile(r"(?<!\\)\|")


def _is_caption_only(text: str) -> bool:
    """``Source:``, ``*Sources: 3, 4*``, ``Ref. 12``: a source label left with nothing
    but note numbers, punctuation or emphasis. A bare ``Sources`` needs a colon, a
    number or emphasis to count: alone it may be a word of a list."""
    m = _CAPTION_RE.fullmatch(text.strip())
    return bool(m) and bool(m.group("emph") or m.group("colon") or any(c.isdigit() for c in m.group("rest")))


def _drop_caption_residue(text: str) -> str:
    """Drop lines, and table rows, that only name a source (see the module docstring)."""
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
            filled = [c for c in (c.strip() for c in _CELL_SPLIT_RE.split(body.strip().strip("|"))) if c]
            after = padded.find("\n", end + 1)
            is_header = after > 0 and _ALIGN_ROW_RE.fullmatch(padded, end + 1, after)
            if len(filled) != 1 or is_header or not _is_caption_only(filled[0]):
                continue
        else:
            if body[:1] in ("-", "+", "*") and body[1:2] in (" ", "\t"):
                body = body[2:]
            elif body[:1].isdigit():
                body = _KEY_NUMBERING_RE.sub("", body)
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


_ALIGN_ROW_RE = re.compile(r"[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*(?::?-{3,}:?[ \t]*)?")
_ALIGN_FIND_RE = re.compile(r"\n[ \t]*\|[ \t]*:?-{3,}:?[ \t]*\|")  # searched in "\n" + text
_SOURCE_COLUMNS = {
    "ref", "refs", "reference", "references", "source", "sources", "source(s)",
    "citation", "citations", "cite", "note", "notes",
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
    return _CELL_SPLIT_RE.split(body[1:-1])


def _tidy_table(rows: list[list[str]]) -> list[list[str]]:
    """Drop empty source columns and collapse doubled names in one table (header,
    alignment row, body rows; all rows of equal width)."""
    header, body = rows[0], rows[2:]
    drop = {
        c for c, cell in enumerate(header)
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


def _tidy_tables(text: str) -> str:
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
        header = padded[head_start:m.start()]
        align_end = padded.index("\n", align_start)
        if header.lstrip()[:1] != "|" or not _ALIGN_ROW_RE.fullmatch(padded, align_start, align_end):
            continue
        end = align_end
        while end + 1 < len(padded) and _ROW_START_RE.match(padded, end + 1):
            end = padded.index("\n", end + 1)
        block = padded[head_start:end].split("\n")
        if len(block) < 3 or not (
            _SOURCE_COLUMN_HINT_RE.search(header) or _DOUBLED_HINT_RE.search(padded, align_end, end)
        ):
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


# A space before sentence punctuation that ends a word, only after a word-ish
# character (not after "-", "|", ...).
_SPACE_BEFORE_PUNCT_RE = re.compile(r" ([.,;:!?])(?<=[\w)\]\"'”’*%] .)(?=\s|$)")
_BLANKS_RE = re.compile(r"\n\n\n+")


def strip_citations(markdown: str, *, is_reference: bool = False) -> str:
    """Remove citations, URLs, images, footnotes and reference sections; keep prose.
    ``is_reference`` (the human-written article) turns off the source-commentary
    rule, which only agents' articles need."""
    text = _prepare(markdown)
    stash: list[str] = []
    lines = _split_lines(text, stash)
    labels: set[str] = set()
    lines, headings = _scan(lines, labels)
    if headings:
        lines = _drop_sections(lines, headings, is_reference)
    lines = _drop_trailing_entries(lines)
    text = "\n".join(lines)

    if "![" in text:
        text = _IMAGE_RE.sub(_MARK, text)
    if "](" in text:
        text = _LINK_RE.sub(_link_text, text)
    if "<" in text:
        text = _AUTOLINK_RE.sub(_MARK, text)
        if "<sup>" in text:
            text = _SUP_RE.sub(_sup, text)
    if "http" in text or "www." in text:
        if "(" in text:
            text = _PAREN_URL_RE.sub(_MARK, text)
        if "http" in text:
            text = _BARE_URL_RE.sub(_url_tail, text)
        if "www." in text:
            text = _WWW_RE.sub(_url_tail, text)
    if "[" in text:
        text = _CITATION_RE.sub(_MARK, text)
    if "【" in text:
        text = _LENTICULAR_RE.sub(_MARK, text)
    if labels:
        def ref_link(m: re.Match) -> str:
            label = m.group(2) if m.group(2) else m.group(1)
            if " ".join(label.lower().split()) in labels:
                return m.group(1)
            return m.group(0)

        text = _REF_LINK_RE.sub(ref_link, text)

    if _MARK in text:
        text = _remove_marks(text)
    text = _drop_caption_residue(text)
    if "|" in text:
        text = _tidy_tables(text)
    text = _SPACE_BEFORE_PUNCT_RE.sub(r"\1", text)
    text = _BLANKS_RE.sub("\n\n", text).strip("\n")
    return _unstash(text, stash)


# ---------------------------------------------------------------- normalization

_HEAD_SLOT = "\x04"  # control characters never survive _prepare
_WRAP_RE = re.compile(r"(\*{2,3}|_{2,3})(.+)\1")  # bold, not italics (titles of works)
_TITLE_KEY_RE = re.compile(r"[\W_]+")


def _clean_heading_text(text: str) -> str:
    t = text.strip()
    if not t.endswith(":") and t[:2] not in ("**", "__"):
        return t
    for _ in range(3):
        before = t
        t = t.rstrip(" \t:").strip()
        m = _WRAP_RE.fullmatch(t) if t[:2] in ("**", "__") else None
        if m and m.group(1)[0] not in m.group(2):
            t = m.group(2).strip()
        if t == before:
            break
    return t


def _title_key(text: str) -> str:
    return _TITLE_KEY_RE.sub("", text.casefold())


def normalize_article(markdown: str, title: str) -> str:
    """One ``# title`` first line, sections from ``##`` down, ATX headings only,
    ``\\n`` line endings, no trailing spaces, one trailing newline."""
    title = " ".join(title.replace("_", " ").split())
    text = _prepare(markdown)
    stash: list[str] = []
    lines = _split_lines(text, stash)

    # Headings: setext converted, text cleaned; heads holds [out index, level, text].
    out: list = []
    heads: list[list] = []
    append = out.append
    n = len(lines)
    prev_blank = True
    skip = False
    for i, line in enumerate(lines):
        if skip:  # a setext underline
            skip = False
            continue
        if not line:
            append(line)
            prev_blank = True
            continue
        first = line[0]
        if first == " ":
            first = line.lstrip(" ")[:1]
        if first == "#":
            atx = _atx(line)
            if atx:
                text_ = _clean_heading_text(atx[1])
                if text_:  # an empty heading is dropped
                    heads.append([len(out), atx[0], text_])
                    append(_HEAD_SLOT)
                prev_blank = True
                continue
        elif prev_blank and i + 1 < n:
            nxt = lines[i + 1]
            if nxt and nxt[-1] in ("=", "-") and _SETEXT_RE.match(nxt) and not _NOT_PARAGRAPH_RE.match(line):
                text_ = _clean_heading_text(line)
                if text_:
                    heads.append([len(out), 1 if "=" in nxt else 2, text_])
                    append(_HEAD_SLOT)
                skip = True
                prev_blank = True
                continue
        append(line)
        prev_blank = False

    # The title: replace a leading H1 (or a leading heading spelling the title),
    # or an H1 spelling the title anywhere; otherwise insert one.
    first_content = next((k for k, line in enumerate(out) if line), None)
    title_key = _title_key(title)
    drop_head = None
    if heads:
        first = heads[0]
        if first[0] == first_content and (first[1] == 1 or _title_key(first[2]) == title_key):
            drop_head = 0
        else:
            for k, head in enumerate(heads):
                if head[1] == 1 and _title_key(head[2]) == title_key:
                    drop_head = k
                    break
    if drop_head is not None:
        out[heads[drop_head][0]] = None
        del heads[drop_head]

    if heads:
        shift = min(h[1] for h in heads) - 2
        for idx, level, text_ in heads:
            level = min(6, max(2, level - shift))
            out[idx] = "\n" + "#" * level + " " + text_ + "\n"

    body = "\n".join(line for line in out if line is not None)
    body = _BLANKS_RE.sub("\n\n", body).strip("\n")
    result = f"# {title}\n\n{body}\n" if body else f"# {title}\n"
    return _unstash(result, stash)


def clean_article(markdown: str, title: str, *, is_reference: bool = False) -> str:
    """The displayed article: citations stripped, then normalized."""
    return normalize_article(strip_citations(markdown, is_reference=is_reference), title)


_ALNUM_RE = re.compile(r"[^\W_]")


def count_words(text: str) -> int:
    """Words of prose: whitespace-separated tokens holding at least one letter or
    digit. Markdown syntax and punctuation (``# * | - > ` _`` …) never make a word
    on their own, so ``**bold**``, ``well-known`` and ``3.5%`` count once while
    ``|``, ``---``, ``>``, ``-`` and ``—`` count zero."""
    return sum(1 for token in text.split() if token.isalnum() or _ALNUM_RE.search(token))
