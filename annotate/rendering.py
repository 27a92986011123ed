"""Markdown to sanitized HTML for the side-by-side view. Pure Python, no Django.

* cmark-gfm (CommonMark with GitHub's tables, strikethrough and autolinks).
* Links render as their text only; images, autolinked URLs and bare URLs vanish,
  so the output carries no URL at all (no ``href``, no ``src``, no ``http``).
* Raw HTML in the markdown is shown as text, never interpreted: prose that mentions
  ``<script>``, ``<textarea>`` or ``a<b and c>d`` keeps every word. Before parsing,
  every ``<`` is swapped for a private-use sentinel, so cmark sees no raw HTML at
  all (code spans and blocks keep their ``<`` as before); afterwards the sentinel
  becomes ``&lt;``. The only exception is a short list of harmless inline tags,
  written bare (no attribute, so nothing can carry a URL or an event handler) and
  outside code: ``KEPT_RAW_TAGS`` = sup, sub, br, em, strong, b, i, u, s, small,
  del. A closing tag is kept only when it closes the last kept tag still open in
  the same block; otherwise it too is shown as text, so the HTML parser never has a
  stray tag to drop silently. Angle-bracket autolinks (``<https://…>``) vanish
  like every other URL.
* nh3 then keeps only an allow-list of tags (p, h1-h6, ul, ol, li, table, thead,
  tbody, tr, th, td, blockquote, em, strong, code, pre, hr, br, del, sup, sub, plus
  the kept raw tags) and drops every attribute except ``start`` on ``ol`` (a
  number; without it a list resumed after a paragraph would restart at 1).
* A new line of prose starts a new paragraph (``paragraph_per_line``, on for
  articles): the benchmark's files write one paragraph per line with no blank
  line between, which CommonMark would join into one. After cmark, each soft
  line break that sits directly in a paragraph of the document or of a block
  quote (not inside bold, italics, a link or a code span that runs across the
  line) closes the paragraph and opens the next. List items, tables, headings
  and code blocks are left as cmark made them, and so are hard breaks
  (``\\`` or two spaces at the end of a line). The text is unchanged
  character for character (``<p>a\nb</p>`` becomes ``<p>a</p>\n<p>b</p>``), so
  ``plain_text`` and every span offset into it stay the same.
* ``emphasis_plain`` shows bold and italic as plain text (a campaign's
  "neutral emphasis"), again without changing ``plain_text``.
* ``render`` says what it did besides rendering: the raw HTML shown as text and
  what was dropped (images, link targets, URLs), so an importer can report it per
  file. ``render_html`` is the same without the report.
* After sanitization every heading gets ``id="sec-N"``, N counting all headings
  (h1-h6) in document order from 1: identical for any two articles, independent of
  the heading text. ``toc_from_html`` reads the ids back from the rendered HTML,
  so the table of contents always agrees with ``render_html``.
"""

from __future__ import annotations

import functools
import html as _html
import re
from collections import Counter
from dataclasses import dataclass, field

import cmarkgfm
import nh3

__all__ = [
    "KEPT_RAW_TAGS",
    "Rendered",
    "emphasis_plain",
    "plain_text",
    "prose_paragraphs",
    "render",
    "render_html",
    "toc_from_html",
]

# Inline presentation only: none of them takes a URL, and they are kept only bare.
KEPT_RAW_TAGS = frozenset({"sup", "sub", "br", "em", "strong", "b", "i", "u", "s", "small", "del"})
_VOID_TAGS = frozenset({"br"})

ALLOWED_TAGS = (
    frozenset(
        {
            "p",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "ul",
            "ol",
            "li",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "blockquote",
            "em",
            "strong",
            "code",
            "pre",
            "hr",
            "br",
            "del",
            "sup",
            "sub",
        }
    )
    | KEPT_RAW_TAGS
)
# "*": no attribute on any tag (ammonia would otherwise allow lang and title everywhere).
ALLOWED_ATTRIBUTES = {"ol": {"start"}, "*": set()}

_URL_RE = re.compile(r"(?:https?:|ftp:|www\.)[^\s<>\"']*", re.I)
_URL_HINTS = ("http", "HTTP", "Http", "www.", "WWW.", "Www.", "ftp:", "FTP:")
# The hints by a short core each of them holds: four scans of the text rule out all eight in most
# articles, and a core that is there ("tp" of "output") calls for its own hints only.
_URL_HINT_CORES = (("tp", ("http", "Http", "ftp:")), ("TP", ("HTTP", "FTP:")), ("ww.", ("www.", "Www.")), ("WW.", ("WWW.",)))
assert sorted(h for _, hints in _URL_HINT_CORES for h in hints) == sorted(_URL_HINTS)
_HEADING_OPEN_RE = re.compile(r"<h([1-6])>")
# The heading's inside is spelled out ("[^<]*" runs between tags) rather than a lazy ".*?", as below.
_TOC_RE = re.compile(r'<h([23]) id="(sec-\d+)">([^<]*(?:<(?!/h\1>)[^<]*)*)</h\1>')
_TAG_RE = re.compile(r"<[^>]*>")
# cmark's own output: every "<" in it opens a tag (text has "&lt;" or the sentinel).
_CMARK_TOKEN_RE = re.compile(r"<(/?)([a-z][a-z0-9]*)[^>]*?(/?)>|\n")
# A list item's opening or closing tag, or a whole paragraph (paragraphs never nest).
# (The paragraph's inside is spelled out, "[^<]*" runs between tags, rather than a lazy ".*?":
# five times faster on long articles.)
_ITEM_OR_PARAGRAPH_RE = re.compile(r"<(?P<close>/?)li>|<p>(?P<p>[^<]*(?:<(?!/p>)[^<]*)*)</p>")
_EMPHASIS_TAG_RE = re.compile(r"</?(?:strong|b|em|i)>")

_EXTENSIONS = ["table", "strikethrough", "autolink"]
# Private-use characters: the first one absent from the article stands for "<".
_SENTINELS = [chr(c) for c in range(0xE000, 0xF900)]


def _to_html(markdown: str) -> str:
    # cmark-gfm (C) is ~15x faster than pure-Python parsers on long articles.
    # Default options: raw HTML would be omitted, but the markdown reaching here
    # holds no "<" any more (see _sentinel_for), so there is none to omit.
    return cmarkgfm.markdown_to_html_with_extensions(markdown, options=0, extensions=_EXTENSIONS)


_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
    url_schemes=set(),
    link_rel=None,
    strip_comments=True,
)
_clean = _CLEANER.clean


@dataclass(frozen=True)
class Rendered:
    """HTML for one markdown text, and what rendering did to it besides.

    ``as_text``: raw HTML constructs shown as text, in order, as ``<name>``,
    ``</name>``, ``<!-- -->`` or ``<!…>``. ``dropped``: what vanished, by kind
    (``image``, ``link target``, ``URL``) with counts.
    """

    html: str
    as_text: tuple[str, ...] = ()
    dropped: dict[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        """One line for an import report, or "" when nothing needs saying."""
        parts = []
        if self.as_text:
            counts = Counter(self.as_text)
            names = ", ".join(f"{n} {name}" if n > 1 else name for name, n in counts.most_common())
            noun = "tag" if len(self.as_text) == 1 else "tags"
            parts.append(f"{len(self.as_text)} raw HTML {noun} shown as text ({names})")
        if self.dropped:
            dropped = ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in sorted(self.dropped.items()))
            parts.append(f"dropped at rendering: {dropped}")
        return "; ".join(parts)


@functools.cache
def _raw_re(sentinel: str) -> re.Pattern:
    # Runs over cmark's output, where text has "<" as the sentinel, ">" as "&gt;"
    # and '"' as "&quot;"; cmark's own tags are real tags.
    s = re.escape(sentinel)
    return re.compile(
        r"(?P<code><code[^>]*>.*?</code>)"
        r"|(?P<end></(?:p|li|h[1-6]|td|th|blockquote)>)"
        # An angle-bracket autolink; cmark's autolink extension may have wrapped its URL in <a>.
        rf'|{s}(?:<a href="[^"]*">)?(?P<url>(?:https?:|ftp:|mailto:|www\.|[\w.+-]+@)[^\s<{s}]*?)(?:&gt;</a>|</a>&gt;|&gt;)'
        rf"|{s}(?P<close>/?)(?P<name>[A-Za-z][A-Za-z0-9-]*)(?:(?P<bare>[ \t]*/?&gt;)|(?=[\s/]|&gt;))"
        rf"|{s}(?P<other>!--|![A-Za-z\[]|\?)",
        re.S,
    )


def _paragraph_per_line(fragment: str) -> str:
    """cmark's HTML with each soft break of a prose paragraph turned into a paragraph break.

    Prose paragraphs are those of the document and of block quotes: a ``<p>`` inside
    a list item is left alone. Only a line break directly in the paragraph splits
    it; one inside an inline element (``<strong>``, ``<em>``, ``<a>`` …) stays, so
    no element is ever cut in two. A hard break is ``<br />`` followed by the
    line break, and stays.
    """
    if "\n" not in fragment or "<p>" not in fragment:
        return fragment
    out: list[str] = []
    pos = 0
    in_item = 0  # open <li> elements
    find = fragment.find
    for m in _ITEM_OR_PARAGRAPH_RE.finditer(fragment):
        start, end = m.span("p")
        if start < 0:  # a list item's tag
            in_item += -1 if m.group("close") else 1
        elif in_item == 0 and find("\n", start, end) >= 0:
            out.append(fragment[pos:start])
            out.append(_split_soft_breaks(fragment[start:end]))
            pos = end
    if not out:
        return fragment
    out.append(fragment[pos:])
    return "".join(out)


def _split_soft_breaks(inner: str) -> str:
    """The inside of one ``<p>`` with its top-level soft breaks made paragraph breaks."""
    if "<" not in inner:  # no inline element at all: every line break is a soft break
        return inner.replace("\n", "</p>\n<p>")
    parts: list[str] = []
    pos = 0
    depth = 0  # inline elements open
    for m in _CMARK_TOKEN_RE.finditer(inner):
        name = m.group(2)
        if name is None:  # a line break
            if depth == 0 and not inner.endswith("<br />", 0, m.start()):
                parts.append(inner[pos : m.start()])
                parts.append("</p>\n<p>")
                pos = m.end()
        elif not m.group(3) and name not in _VOID_TAGS:
            depth += -1 if m.group(1) else 1
    parts.append(inner[pos:])
    return "".join(parts)


def _raw_html_as_text(fragment: str, sentinel: str, as_text: list[str], dropped: Counter) -> str:
    open_tags: list[str] = []

    def replace(m: re.Match) -> str:
        if m.group("code") is not None:
            return m.group(0)
        if m.group("end") is not None:
            open_tags.clear()  # a kept tag never spans blocks: the parser would close it here
            return m.group(0)
        if m.group("url") is not None:
            dropped["URL"] += 1
            return ""
        name = m.group("name")
        if name is None:
            as_text.append("<!-- -->" if m.group("other") == "!--" else "<!…>")
            return m.group(0)
        lowered = name.lower()
        closing = m.group("close") == "/"
        bare = m.group("bare")
        if bare is not None and lowered in KEPT_RAW_TAGS:
            if lowered in _VOID_TAGS and not closing:
                return f"<{lowered}>"
            if not closing and "/" not in bare:
                open_tags.append(lowered)
                return f"<{lowered}>"
            if closing and open_tags and open_tags[-1] == lowered:
                open_tags.pop()
                return f"</{lowered}>"
        as_text.append(f"</{lowered}>" if closing else f"<{lowered}>")
        return m.group(0)

    return _raw_re(sentinel).sub(replace, fragment)


def _url_hinted(safe: str) -> bool:
    """Whether ``safe`` holds one of ``_URL_HINTS``: the last check's trigger."""
    return any(core in safe and any(hint in safe for hint in hints) for core, hints in _URL_HINT_CORES)


def _number_headings(fragment: str) -> str:
    # split() keeps each heading's level (the captured group) at the odd places of the list.
    parts = _HEADING_OPEN_RE.split(fragment)
    for k in range(1, len(parts), 2):
        parts[k] = f'<h{parts[k]} id="sec-{(k + 1) // 2}">'
    return "".join(parts)


def render(markdown: str, *, paragraph_per_line: bool = True) -> Rendered:
    """Sanitized HTML for ``markdown`` and a report of what was shown as text or dropped.

    ``paragraph_per_line`` (articles): a new line of prose starts a new paragraph;
    off, lines of a paragraph are joined as CommonMark says (campaign instructions,
    which people write wrapped).
    """
    as_text: list[str] = []
    dropped: Counter = Counter()
    sentinel = None
    if "<" in markdown:
        sentinel = next(c for c in _SENTINELS if c not in markdown)
        markdown = markdown.replace("<", sentinel)
    fragment = _to_html(markdown)
    if paragraph_per_line:
        fragment = _paragraph_per_line(fragment)
    if sentinel is not None and sentinel in fragment:
        fragment = _raw_html_as_text(fragment, sentinel, as_text, dropped)
    if "<img" in fragment:
        dropped["image"] += fragment.count("<img ")
    links = fragment.count("<a href=")
    if links:
        dropped["link target"] += links
    safe = _clean(fragment)
    if sentinel is not None:
        safe = safe.replace(sentinel, "&lt;")
    # Cleaned markdown holds no URL any more; this is the last line of defence.
    if _url_hinted(safe):
        safe, cut = _URL_RE.subn("", safe)
        if cut:
            dropped["URL"] += cut
    return Rendered(html=_number_headings(safe), as_text=tuple(as_text), dropped={k: v for k, v in dropped.items() if v})


def render_html(markdown: str, *, paragraph_per_line: bool = True) -> str:
    """Sanitized HTML for ``markdown`` (meant to be rendered once, at import)."""
    return render(markdown, paragraph_per_line=paragraph_per_line).html


def emphasis_plain(rendered: str) -> str:
    """HTML from ``render_html`` with bold and italic shown as plain text.

    The sanitized HTML keeps ``strong``, ``b``, ``em`` and ``i`` only bare (no
    attribute), so dropping those tags keeps their text and leaves ``plain_text``,
    and so every span offset, as it was.
    """
    return _EMPHASIS_TAG_RE.sub("", rendered)


_BLOCK_TOKEN_RE = re.compile(r"<(/?)(p|li)\b[^>]*>")


def prose_paragraphs(rendered: str) -> list[str]:
    """The text of each prose paragraph of HTML from ``render_html``, in order:
    every ``<p>`` that is not inside a list item (table cells hold no ``<p>``)."""
    paragraphs = []
    in_item = 0
    start = None
    for m in _BLOCK_TOKEN_RE.finditer(rendered):
        closing = m.group(1) == "/"
        if m.group(2) == "li":
            in_item += -1 if closing else 1
        elif not closing:
            start = m.end() if in_item == 0 else None
        elif start is not None:
            paragraphs.append(plain_text(rendered[start : m.start()]))
            start = None
    return paragraphs


def toc_from_html(rendered: str) -> list[tuple[int, str, str]]:
    """``(level, text, anchor_id)`` for the h2 and h3 headings of HTML from ``render_html``."""
    toc = []
    for m in _TOC_RE.finditer(rendered):
        text = m.group(3)
        if "<" in text:
            text = _TAG_RE.sub("", text)
        text = " ".join(_html.unescape(text).split())
        toc.append((int(m.group(1)), text, m.group(2)))
    return toc


def plain_text(rendered: str) -> str:
    """The text a browser's ``textContent`` gives for HTML from ``render_html``.

    Span feedback counts characters in this text, so it must match the browser
    exactly: the sanitized HTML has no comments, scripts or CDATA, so dropping the
    tags and decoding entities is enough.
    """
    return _html.unescape(_TAG_RE.sub("", rendered))


# --- neutral headings (a campaign's `neutral_headings`) -------------------------------------------

_HEADING_TAG_RE = re.compile(r"<h([1-6])(\b[^>]*)>(.*?)</h\1>", re.S)
# A section number at the start of a heading: "2.2.1 ", "3. ", "4) ", "IV. " (a year is not one: "2007 season").
HEADING_NUMBER_RE = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3})+\.?|\d{1,3}[.)]|[IVXLC]{1,6}\.)\s+")
_TAG_SPLIT_RE = re.compile(r"(<[^>]+>)")
_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")


def is_title_case(text: str) -> bool:
    """Whether a heading is in Title Case: more than half of its words of four letters or more after the
    first begin with a capital followed by lower case ("Early Operations And Legacy"). A sentence-case
    heading with a proper noun ("Early life in Paris") is not."""
    words = [w for w in _WORD_RE.findall(text)[1:] if len(w) >= 4]
    capitalised = [w for w in words if w[0].isupper() and w[1:].islower()]
    return bool(words) and len(capitalised) * 2 > len(words)


def _sentence_case(text: str, first: bool) -> str:
    """Lower-cases the capitalised words of a Title Case heading's text, the first word of the heading
    left as it is; acronyms and words with inner capitals stay. Never changes the text's length."""

    def lower(match: re.Match) -> str:
        nonlocal first
        word = match.group(0)
        if first:
            first = False
            return word
        out = word.lower() if word[0].isupper() and word[1:].islower() else word
        return out if len(out) == len(word) else word

    return _WORD_RE.sub(lower, text)


def _heading_neutral(inner: str) -> str:
    parts = _TAG_SPLIT_RE.split(inner)
    title_case = is_title_case(_TAG_SPLIT_RE.sub("", inner))
    first, numbered = True, False
    for i, part in enumerate(parts):
        if not part or part.startswith("<"):
            continue
        if not numbered:
            numbered = True
            stripped = part.lstrip()
            number = HEADING_NUMBER_RE.match(stripped)
            if number:
                # Kept in the page's text, not shown: every passage offset stays as it was (`plain_text`).
                lead = part[: len(part) - len(stripped)]
                part = f'{lead}<span class="heading-number" hidden>{number.group(0)}</span>{stripped[number.end() :]}'
        if title_case:
            pieces = _TAG_SPLIT_RE.split(part)
            for j, piece in enumerate(pieces):
                if piece and not piece.startswith("<"):
                    pieces[j] = _sentence_case(piece, first)
                    first = first and not _WORD_RE.search(piece)
            part = "".join(pieces)
        elif _WORD_RE.search(part):
            first = False
        parts[i] = part
    return "".join(parts)


def _level_map(levels) -> dict[int, int]:
    """The section levels (2 and below) renumbered from the top: the highest present becomes 2, the next 3, ..."""
    present = sorted({level for level in levels if level >= 2})
    return {level: min(2 + i, 6) for i, level in enumerate(present)}


def headings_neutral(rendered: str) -> str:
    """HTML from ``render_html`` with its section headings shown alike on every side: sentence case
    (a Title Case heading's capitalised words lower-cased), section numbers hidden, and the levels
    renumbered from the top. The title (``h1``) stays as it is; the text, so every passage offset,
    is unchanged."""
    mapping = _level_map(int(m.group(1)) for m in _HEADING_TAG_RE.finditer(rendered))

    def one(match: re.Match) -> str:
        level, attributes, inner = int(match.group(1)), match.group(2), match.group(3)
        if level < 2:
            return match.group(0)
        level = mapping[level]
        return f"<h{level}{attributes}>{_heading_neutral(inner)}</h{level}>"

    return _HEADING_TAG_RE.sub(one, rendered)


def toc_neutral(toc) -> list:
    """An article's table of contents ([level, text, anchor], ...) as `headings_neutral` shows its headings."""
    mapping = _level_map(level for level, _, _ in toc)
    out = []
    for level, text, anchor in toc:
        if level >= 2:
            text = HEADING_NUMBER_RE.sub("", text.lstrip())
            text = _sentence_case(text, True) if is_title_case(text) else text
            level = mapping[level]
        out.append((level, text, anchor))
    return out
