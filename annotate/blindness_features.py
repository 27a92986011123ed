"""The blindness audit's surface features of one displayed article. Pure Python, no Django.

Measured on what annotators are shown: the text features on the displayed markdown, the
presentation features on the HTML the page shows (``annotate.rendering``: paragraphs as written,
one per line of prose), so that a paragraph is counted as the page draws it.

Text:

- ``words``: words (whitespace-separated tokens). The system table reports it as the median, over
  topics, of the ratio to the reference article of the same topic.
- ``headings``: section headings of level 2 and below (the `# Title` line every article has is left out).
- ``title_case_headings``: the share of those headings in Title Case (``rendering.is_title_case``).
- ``numbered_headings``: headings whose text starts with a section number: "## 1. History", "### 2.3 Legacy"
  (a year is not a section number: "## 2007 season" is not counted).
- ``self_reference``: phrases in which the text talks about itself (`SELF_REFERENCE`).
- ``wikipedia``: mentions of Wikipedia.
- ``source_talk``: phrases about the sources it was given (`SOURCE_TALK`).
- ``self_reference_per_1k``: phrases in which the text speaks of itself, of the sources it was given
  or of the person it was written for (`TASK_SELF_REFERENCE`: "this report", "this article", "the
  provided sources", "the user", ...) per 1,000 words. The cleaner keeps such phrases inside an
  article's prose (they are its writing, and the criteria judge them) and removes only whole notes
  to the user at its start or end; this feature measures, per system, how much of it is left.
- ``bullet_share``: share of the body's non-blank lines (headings and table rows left out) that are list items.
- ``sentence_words``: mean words per sentence in prose lines (not headings, lists or tables).

Presentation (as the page shows it):

- ``paragraph_median``, ``paragraph_longest``: words in the article's prose paragraphs (``<p>``
  outside list items), the median and the longest; 0 without any.
- ``bold_per_1k``, ``italic_per_1k``: bold (``<strong>``, ``<b>``) and italic (``<em>``, ``<i>``)
  runs per 1,000 words. Both are 0 under a campaign's neutral emphasis, which shows them as plain text.
- ``lists_per_1k``, ``tables_per_1k``: lists (a nested list is part of its list) and tables per
  1,000 words.
- ``heading_depth``: the deepest heading level below the title (``##`` is 2, ``###`` 3, ...); 1 when
  the article has no section heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import mean, median

from annotate.rendering import emphasis_plain, headings_neutral, is_title_case, prose_paragraphs, render_html

# Lower-case phrases; matched on word boundaries, case-insensitive. Small on purpose: each must be a
# phrase a reader would notice and that an encyclopedia article rarely uses.
SELF_REFERENCE = (
    "this article",
    "this report",
    "this section",
    "this overview",
    "this analysis",
    "this document",
    "this essay",
    "in this article we",
    "as discussed above",
    "as mentioned above",
    "as noted above",
    "as discussed earlier",
    "as mentioned earlier",
    "discussed below",
)
SOURCE_TALK = (
    "provided sources",
    "sources provided",
    "the given sources",
    "the available sources",
    "according to the sources",
    "based on the sources",
    "the sources do not",
    "the sources don't",
    "the sources indicate",
    "the sources suggest",
)

# Phrases about the task rather than the subject, counted per 1,000 words (``self_reference_per_1k``).
TASK_SELF_REFERENCE = (
    "this report",
    "this article",
    "this document",
    "this overview",
    "this entry",
    "this summary",
    "the present article",
    "the present report",
    "provided sources",
    "sources provided",
    "provided documents",
    "provided materials",
    "the given sources",
    "the user",
    "the user's",
    "your request",
    "as requested",
)


@dataclass(frozen=True)
class Feature:
    key: str
    label: str
    help: str
    # Rare tells (a phrase, a numbered heading) read best as the share of articles that show one at all.
    rare: bool = False
    # Shown as a presentation feature: what the page draws rather than what the words say.
    presentation: bool = False


FEATURES = (
    Feature("words", "Words", "words in the displayed text"),
    Feature("headings", "Headings", "headings below the title"),
    Feature(
        "numbered_headings",
        "Numbered headings",
        'headings starting with a section number ("## 1. History")',
        rare=True,
    ),
    Feature(
        "title_case_headings",
        "Title Case headings",
        'share of headings in Title Case ("Early Operations And Legacy") rather than sentence case',
    ),
    Feature(
        "self_reference",
        "Self-reference",
        'phrases such as "this article", "as discussed above"',
        rare=True,
    ),
    Feature("wikipedia", "Mentions of Wikipedia", "the word Wikipedia", rare=True),
    Feature(
        "source_talk",
        "Talk of the sources",
        'phrases such as "the provided sources", "according to the sources"',
        rare=True,
    ),
    Feature(
        "self_reference_per_1k",
        "Self-reference per 1,000 words",
        'phrases about the text itself, the sources it was given or its user ("this report", "the provided sources", '
        '"the user") per 1,000 words',
    ),
    Feature("bullet_share", "Bullet-list share", "share of body lines that are list items"),
    Feature("sentence_words", "Words per sentence", "mean sentence length in prose"),
    Feature(
        "paragraph_median",
        "Median paragraph",
        "words in the article's median paragraph, as the page shows it",
        presentation=True,
    ),
    Feature(
        "paragraph_longest",
        "Longest paragraph",
        "words in the article's longest paragraph, as the page shows it",
        presentation=True,
    ),
    Feature("bold_per_1k", "Bold per 1,000 words", "bold runs per 1,000 words", presentation=True),
    Feature("italic_per_1k", "Italic per 1,000 words", "italic runs per 1,000 words", presentation=True),
    Feature("lists_per_1k", "Lists per 1,000 words", "bulleted or numbered lists per 1,000 words", presentation=True),
    Feature("tables_per_1k", "Tables per 1,000 words", "tables per 1,000 words", presentation=True),
    Feature(
        "heading_depth",
        "Heading depth",
        "deepest heading level below the title (## = 2, ### = 3; 1: none)",
        presentation=True,
    ),
)
FEATURE_KEYS = tuple(f.key for f in FEATURES)
# What neutral emphasis changes: it drops exactly the bold and italic tags.
EMPHASIS_KEYS = ("bold_per_1k", "italic_per_1k")

# Line kinds of the displayed (already normalized) markdown. They are not the
# patterns of annotate.markdown_lines, and differ from them on purpose or in ways
# that would change the features if merged:
# - a heading needs a space after its hashes and no indentation (normalized
#   headings are always "## Text"), and loses closing hashes without a space
#   before them; markdown_lines.atx accepts a bare "##" and up to three spaces;
# - a section number needs a dot or a parenthesis: a bare year is not one ("## 2007
#   season"), where the cleaner's heading key (cleaning.sections.KEY_NUMBERING_RE)
#   drops a bare number ("8 References");
# - a list item needs text after its marker (an empty "-" is not a bullet);
# - a table row starts and ends with "|"; a separator row may be one cell with
#   only its opening pipe ("|---"), which markdown_lines.ALIGN_ROW_RE refuses.
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# "1.", "1)", "2.3", "2.3.1." or "IV." then a space; a bare number is not one, so "## 2007 season" and "#### 1945" are not.
_NUMBERED = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3})+\.?|\d{1,3}[.)]|[IVXLC]{1,6}\.)\s")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_SEPARATOR = re.compile(r"^(?=.*\|)\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_WIKIPEDIA = re.compile(r"\bwikipedia\b", re.IGNORECASE)
# In the sanitized HTML tags are bare, but for a heading's id.
_BOLD_TAG = re.compile(r"<(?:strong|b)>")
_ITALIC_TAG = re.compile(r"<(?:em|i)>")
_LIST_TAG = re.compile(r"<(/?)(?:ul|ol)\b[^>]*>")
_SECTION_HEADING_TAG = re.compile(r"<h([2-6])\b")


def _phrases(phrases: tuple[str, ...]) -> re.Pattern:
    # Longest first, so "in this article we" is counted once rather than also as "this article".
    ordered = sorted(phrases, key=len, reverse=True)
    return re.compile(
        r"\b(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in ordered) + r")\b",
        re.IGNORECASE,
    )


_SELF_REFERENCE = _phrases(SELF_REFERENCE)
_SOURCE_TALK = _phrases(SOURCE_TALK)
_TASK_SELF_REFERENCE = _phrases(TASK_SELF_REFERENCE)


def _lists(html: str) -> int:
    """Lists that are not inside another list."""
    count = depth = 0
    for m in _LIST_TAG.finditer(html):
        if m.group(1):
            depth -= 1
        else:
            count += depth == 0
            depth += 1
    return count


def presentation_of(html: str, words: int) -> dict[str, float]:
    """The presentation features of HTML from ``render_html`` (see the module docstring)."""
    lengths = [len(p.split()) for p in prose_paragraphs(html)]
    lengths = [n for n in lengths if n] or [0]
    per_1k = 1000 / words if words else 0.0
    levels = [int(level) for level in _SECTION_HEADING_TAG.findall(html)]
    return {
        "paragraph_median": float(median(lengths)),
        "paragraph_longest": float(max(lengths)),
        "bold_per_1k": len(_BOLD_TAG.findall(html)) * per_1k,
        "italic_per_1k": len(_ITALIC_TAG.findall(html)) * per_1k,
        "lists_per_1k": _lists(html) * per_1k,
        "tables_per_1k": html.count("<table>") * per_1k,
        "heading_depth": float(max(levels, default=1)),
    }


def features_of(markdown: str, *, neutral_emphasis: bool = False, neutral_headings: bool = False) -> dict[str, float]:
    """The surface features of one article's displayed markdown (see the module docstring).

    ``neutral_emphasis``: as a campaign with that option shows it, bold and italic as plain text.
    ``neutral_headings``: as a campaign with that option shows it (`rendering.headings_neutral`):
    no visible section numbers, no Title Case heading, levels renumbered from the top.
    """
    lines = markdown.splitlines()
    words = len(markdown.split())
    headings = 0
    numbered = 0
    title_case = 0
    body_lines = 0
    list_lines = 0
    prose: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        heading = _HEADING.match(line)
        if heading:
            if len(heading.group(1)) >= 2:
                headings += 1
                numbered += bool(_NUMBERED.match(heading.group(2) + " "))
                title_case += is_title_case(heading.group(2))
            continue
        if _TABLE_ROW.match(line) or _TABLE_SEPARATOR.match(line):
            continue
        body_lines += 1
        if _LIST_ITEM.match(line):
            list_lines += 1
        else:
            prose.append(line.strip())
    sentences = [s for paragraph in prose for s in _SENTENCE_END.split(paragraph) if s.split()]
    html = render_html(markdown)
    if neutral_emphasis:
        html = emphasis_plain(html)
    if neutral_headings:
        html = headings_neutral(html)
        numbered = title_case = 0
    return {
        "words": float(words),
        "headings": float(headings),
        "numbered_headings": float(numbered),
        "title_case_headings": title_case / headings if headings else 0.0,
        "self_reference": float(len(_SELF_REFERENCE.findall(markdown))),
        "wikipedia": float(len(_WIKIPEDIA.findall(markdown))),
        "source_talk": float(len(_SOURCE_TALK.findall(markdown))),
        "self_reference_per_1k": len(_TASK_SELF_REFERENCE.findall(markdown)) * 1000 / words if words else 0.0,
        "bullet_share": list_lines / body_lines if body_lines else 0.0,
        "sentence_words": mean(len(s.split()) for s in sentences) if sentences else 0.0,
        **presentation_of(html, words),
    }


# The style covariates of the report's style-controlled Bradley-Terry fit (`calibration.report.blinding`),
# with the audit's definitions: words, section headings (level 2 and below), the share of body lines
# that are list items, and bold runs as the page shows them. Measured on the stored markdown and HTML,
# so nothing is rendered again.
STYLE_FEATURES = ("length", "headings", "list_items", "bold")


def style_of(markdown: str, html: str, *, neutral_emphasis: bool = False) -> dict[str, float]:
    """An article's style covariates (`STYLE_FEATURES`), as the page showed it."""
    headings = body = items = 0
    for line in markdown.splitlines():
        if not line.strip():
            continue
        heading = _HEADING.match(line)
        if heading:
            headings += len(heading.group(1)) >= 2
            continue
        if _TABLE_ROW.match(line) or _TABLE_SEPARATOR.match(line):
            continue
        body += 1
        items += bool(_LIST_ITEM.match(line))
    return {
        "length": float(len(markdown.split())),
        "headings": float(headings),
        "list_items": items / body if body else 0.0,
        "bold": 0.0 if neutral_emphasis else float(len(_BOLD_TAG.findall(html))),
    }
