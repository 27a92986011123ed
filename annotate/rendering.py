"""Markdown to sanitized HTML for the side-by-side view. Pure Python, no Django.

* cmark-gfm (CommonMark with GitHub's tables, strikethrough and autolinks).
* Links render as their text only; images, autolinked URLs and bare URLs vanish,
  so the output carries no URL at all (no ``href``, no ``src``, no ``http``).
* Raw HTML in the markdown is passed to nh3, which keeps only an allow-list of tags
  (p, h1-h6, ul, ol, li, table, thead, tbody, tr, th, td, blockquote, em, strong,
  code, pre, hr, br, del, sup, sub) and drops every attribute except ``start`` on
  ``ol`` (a number; without it a list resumed after a paragraph would restart at 1).
  ``script``/``style`` elements are dropped with their content.
* After sanitization every heading gets ``id="sec-N"``, N counting all headings
  (h1-h6) in document order from 1: identical for any two articles, independent of
  the heading text. ``table_of_contents`` reads the ids back from the rendered HTML,
  so it always agrees with ``render_html``.
"""

from __future__ import annotations

import html as _html
import re

import cmarkgfm
import nh3
from cmarkgfm.cmark import Options

__all__ = ["render_html", "table_of_contents", "toc_from_html", "plain_text"]

ALLOWED_TAGS = frozenset(
    {
        "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li",
        "table", "thead", "tbody", "tr", "th", "td", "blockquote",
        "em", "strong", "code", "pre", "hr", "br", "del", "sup", "sub",
    }
)
# "*": no attribute on any tag (ammonia would otherwise allow lang and title everywhere).
ALLOWED_ATTRIBUTES = {"ol": {"start"}, "*": set()}

_URL_RE = re.compile(r"(?:https?:|ftp:|www\.)[^\s<>\"']*", re.I)
_URL_HINTS = ("http", "HTTP", "Http", "www.", "WWW.", "Www.", "ftp:", "FTP:")
_HEADING_OPEN_RE = re.compile(r"<h([1-6])>")
_TOC_RE = re.compile(r'<h([23]) id="(sec-\d+)">(.*?)</h\1>', re.S)
_TAG_RE = re.compile(r"<[^>]*>")


def _to_html(markdown: str) -> str:
    # cmark-gfm (C) is ~15x faster than pure-Python parsers on long articles.
    # Raw HTML passes through here and is sanitized by nh3 below; links lose their
    # <a> (nh3 keeps the text), images their <img>, and any URL text left is cut.
    # No "tagfilter": it would turn <script> into visible text; nh3 drops it whole instead.
    return cmarkgfm.markdown_to_html_with_extensions(markdown, options=Options.CMARK_OPT_UNSAFE, extensions=_EXTENSIONS)


_EXTENSIONS = ["table", "strikethrough", "autolink"]


try:
    _CLEANER = nh3.Cleaner(
        tags=set(ALLOWED_TAGS),
        attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(),
        link_rel=None,
        strip_comments=True,
    )
    _clean = _CLEANER.clean
except AttributeError:  # nh3 < 0.3 has no Cleaner: same options on every call
    def _clean(fragment: str) -> str:
        return nh3.clean(
            fragment,
            tags=set(ALLOWED_TAGS),
            attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
            url_schemes=set(),
            link_rel=None,
            strip_comments=True,
        )


def _number_headings(fragment: str) -> str:
    counter = 0

    def add_id(m: re.Match) -> str:
        nonlocal counter
        counter += 1
        return f'<h{m.group(1)} id="sec-{counter}">'

    return _HEADING_OPEN_RE.sub(add_id, fragment)


def render_html(markdown: str) -> str:
    """Sanitized HTML for ``markdown`` (meant to be rendered once, at import)."""
    safe = _clean(_to_html(markdown))
    # Cleaned markdown holds no URL any more; this is the last line of defence.
    if any(hint in safe for hint in _URL_HINTS):
        safe = _URL_RE.sub("", safe)
    return _number_headings(safe)


def toc_from_html(rendered: str) -> list[tuple[int, str, str]]:
    """``(level, text, anchor_id)`` for the h2 and h3 headings of HTML from ``render_html``."""
    toc = []
    for m in _TOC_RE.finditer(rendered):
        text = " ".join(_html.unescape(_TAG_RE.sub("", m.group(3))).split())
        toc.append((int(m.group(1)), text, m.group(2)))
    return toc


def table_of_contents(markdown: str) -> list[tuple[int, str, str]]:
    """``(level, text, anchor_id)`` for the h2 and h3 headings of ``render_html(markdown)``."""
    return toc_from_html(render_html(markdown))


def plain_text(rendered: str) -> str:
    """The text a browser's ``textContent`` gives for HTML from ``render_html``.

    Span feedback counts characters in this text, so it must match the browser
    exactly: the sanitized HTML has no comments, scripts or CDATA, so dropping the
    tags and decoding entities is enough.
    """
    return _html.unescape(_TAG_RE.sub("", rendered))
