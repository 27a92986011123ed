"""Which section of one article covers what a section of the other covers (issue 37's section map).

Pure: no Django. The two articles of a pair rarely share headings, so sections are matched by
their text: each section (its heading and the prose up to the next heading) becomes a TF-IDF
vector (scikit-learn's ``TfidfVectorizer``, fitted on the sections of both articles, English
stop words dropped, sublinear term frequency) and a section's counterpart is the section of the
other article with the highest cosine similarity, when that similarity reaches ``MIN_SIMILARITY``;
below it, the section has no counterpart. Headings help (their words are part of the vector) but
the prose decides, since it holds nearly all of the words.

The result is symmetric by construction: ``align(first, second)`` and ``align(second, first)``
give the same two mappings, swapped (the vectorizer sees the same set of sections, and each
direction takes the best of one row or one column of one similarity matrix). It depends on the
two texts alone, never on an annotator or the order they are shown in. Scores are used to decide
and then dropped: only the mapping is returned, so nothing shown can carry a similarity (which
could hint at which article was written from which).

A heading whose own prose is shorter than ``MIN_WORDS`` words (a chapter heading followed at once
by its first subsection) is one section with what follows it, under the first heading's anchor;
the last heading of an article, when it has no such prose, belongs to the section before it.
"""

from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass

MIN_SIMILARITY = 0.1
MIN_WORDS = 8
LEAD_TITLE = "Opening"

_HEADING_RE = re.compile(r'<h([1-6]) id="(sec-\d+)">(.*?)</h\1>', re.S)
_TAG_RE = re.compile(r"<[^>]*>")
_WORD_RE = re.compile(r"\w+")


@dataclass(frozen=True)
class Section:
    """One unit of the map: `anchor` is its heading's id in the stored HTML ("" for the opening
    prose before any heading), `title` the heading's text."""

    anchor: str
    title: str
    text: str


@dataclass(frozen=True)
class Alignment:
    """For each section of each article, the index of its counterpart in the other, or None."""

    first_to_second: tuple[int | None, ...]
    second_to_first: tuple[int | None, ...]

    def share_matched(self) -> float:
        """The share of all sections (both articles) that have a counterpart."""
        total = len(self.first_to_second) + len(self.second_to_first)
        if not total:
            return 0.0
        found = sum(m is not None for m in self.first_to_second) + sum(m is not None for m in self.second_to_first)
        return found / total


def _text(fragment: str) -> str:
    return " ".join(_html.unescape(_TAG_RE.sub(" ", fragment)).split())


def sections_of(rendered: str) -> list[Section]:
    """The sections of HTML from ``annotate.rendering.render_html`` (headings carry ids sec-N)."""
    raw: list[tuple[str, str, str]] = []
    cursor = 0
    anchor, title = "", LEAD_TITLE
    for m in _HEADING_RE.finditer(rendered):
        raw.append((anchor, title, _text(rendered[cursor : m.start()])))
        anchor, title = m.group(2), _text(m.group(3))
        cursor = m.end()
    raw.append((anchor, title, _text(rendered[cursor:])))

    sections: list[Section] = []
    carried: tuple[str, str, str] | None = None  # a heading too short to stand alone, waiting for its prose
    for anchor, title, text in raw:
        if carried is not None:
            anchor, title, text = carried[0], f"{carried[1]} › {title}", f"{carried[2]} {text}".strip()
            carried = None
        if not anchor and not text:
            continue  # no opening prose
        if len(_WORD_RE.findall(text)) < MIN_WORDS:
            carried = (anchor, title, text)
            continue
        sections.append(Section(anchor, title, text))
    if carried is not None and sections:
        # A last heading with (nearly) no prose of its own belongs to the section before it.
        last = sections[-1]
        sections[-1] = Section(last.anchor, last.title, f"{last.text} {carried[2]}".strip())
    elif carried is not None and (carried[0] or carried[2]):
        sections.append(Section(*carried))
    return sections


def _best(row) -> int | None:
    if row.size == 0:
        return None
    index = int(row.argmax())  # the first of equal scores: the same in both orders
    return index if row[index] >= MIN_SIMILARITY else None


def align(first: list[Section], second: list[Section]) -> Alignment:
    """The counterpart of every section of `first` in `second` and the other way round."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    if not first or not second:
        return Alignment((None,) * len(first), (None,) * len(second))
    documents = [f"{s.title} {s.text}" for s in first] + [f"{s.title} {s.text}" for s in second]
    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
    try:
        vectors = vectorizer.fit_transform(documents)
    except ValueError:  # no word but stop words: nothing to compare
        return Alignment((None,) * len(first), (None,) * len(second))
    similarity = cosine_similarity(vectors[: len(first)], vectors[len(first) :])
    return Alignment(
        tuple(_best(similarity[i, :]) for i in range(len(first))),
        tuple(_best(similarity[:, j]) for j in range(len(second))),
    )
