"""Cleaning checked against the real benchmark sample ($PAIRWISE_SHARED/wlc-sample; see tests/conftest.py).

The prose check recomputes, independently of annotate.cleaning and with deliberately
simple rules, the sequence of prose words an article should keep, and compares it
with the words of the displayed article.
"""

import re
from collections import defaultdict
from pathlib import Path

import pytest

from annotate.cleaning import clean_article, count_words


def _articles(data: Path):
    wiki = sorted((data / "wiki_data" / "cleaned_data" / "article").glob("*.md"))
    systems = sorted((data / "test_data").glob("*/md_data/*.md"))
    return [("wikipedia", p) for p in wiki] + [(p.parent.parent.name, p) for p in systems]


@pytest.fixture(scope="module")
def displayed(sample_path):
    data = sample_path / "data" / "2025_Mar_Nov"
    assert data.is_dir(), f"the sample at {sample_path} has no data/2025_Mar_Nov"
    out = []
    for system, path in _articles(data):
        raw = path.read_text(encoding="utf-8")
        title = path.stem.replace("_", " ")
        out.append((system, path.stem, raw, clean_article(raw, title)))
    assert len(out) == 140, f"expected 20 Wikipedia + 6x20 system articles, found {len(out)}"
    return out


# ------------------------------------------------------------------ markers

MARKERS = {
    "[N]": re.compile(r"\[\s*\d{1,3}(?:\s*[,–-]\s*\d{1,3})*\s*\]"),
    "[^N]": re.compile(r"\[\^[^\]]*\]"),
    "【": re.compile(r"【"),
    "<sup>": re.compile(r"<sup>", re.I),
    "http": re.compile(r"http", re.I),
    "www.": re.compile(r"www\.", re.I),
    "](": re.compile(r"\]\("),
}
REF_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*)?\s*(?:\d+\.\s*)?"
    r"(references?|sources?|bibliography|works cited|cited works|citations?|notes|"
    r"external links|further reading|source list)\s*:?\s*(?:\*\*)?\s*:?\s*$",
    re.I | re.M,
)

# Agents' notes on how they sourced the article: dropped when they end it.
META_HEADING = re.compile(
    r"^\s*#{1,6}\s.*\b(?:sources?|verification|methodology|citations?|research\s+(?:notes|coverage|workflow|methods?))\b",
    re.I,
)

REF_PREFIX = re.compile(r"^\s*#{1,6}\s*(?:\*\*)?\s*(?:references?|sources?|external links|further reading|notes)\s+\w", re.I)


def test_it_leaves_no_citation_marker_in_any_sample_article(displayed):
    problems = []
    for system, stem, _raw, shown in displayed:
        for name, rx in MARKERS.items():
            m = rx.search(shown)
            if m:
                problems.append(f"{system}/{stem}: {name} in {shown[max(0, m.start() - 50) : m.end() + 30]!r}")
        for m in REF_HEADING.finditer(shown):
            if m.group(1).lower() == "bibliography" and "http" not in shown[m.end() :]:
                continue  # a list of works, not of sources
            problems.append(f"{system}/{stem}: reference heading {m.group(0).strip()!r}")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ prose words

METADATA = re.compile(r"^(?:Title|URL Source|Published Time|Markdown Content):.*$", re.M)
HEADING = re.compile(r"^\s*#{1,6}\s.*$|^\s*\*\*[^*\n]+\*\*\s*:?\s*$|^[A-Z][A-Za-z ]{0,30}:\s*$", re.M)
IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
LINK_TARGET = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*\)")
URL = re.compile(r"(?:https?|www\.)\S*")
# "- Website: https://…" — a short label whose whole value was a URL or a citation.
LABEL_ONLY_LINE = re.compile(
    r"^\s*(?:[-*+]\s+|\d+\.\s+)?(?:\*\*)?\w[\w'’/-]*(?:\s+[\w'’/&-]+){0,2}(?:\*\*)?\s*:(?:\*\*)?"
    r"(?:[ \t,;]*(?:<?https?://\S+|\[(?:https?:|www\.)[^\]]*\]\([^)]*\)|\[\d+\]))+[ \t,;.]*$",
    re.M,
)
ENTRY_LINE = re.compile(r"^\s*(?:[-*]\s*)?\[\d+\].*(?:https?:|www\.).*$", re.M)
GARBLED = re.compile(r"\[\[\d+\][^\s\]]*")  # e.g. [[2].djvu/527), from a broken citation
BRACKET_NUMBERS = re.compile(r"\[\^?\d{1,3}(?:\s*[,–-]\s*\d{1,3})*\]|【[^】]*】|<sup>.*?</sup>")


def _is_prose(section):
    """Paragraphs only (sub-headings aside): no URL, list item, table row or [N] entry,
    and one paragraph of 30+ words."""
    lines = [line for line in section.split("\n")[1:] if line.strip() and not line.lstrip().startswith("#")]
    if any(re.match(r"\s*(?:[-*+]\s|\d+[.)]\s|[|\[])", line) or "http" in line for line in lines):
        return False
    return any(len(line.split()) >= 30 for line in lines)


def _body_before_trailing_references(text, system):
    """Everything before the first reference-type heading after which every heading
    is reference-type too (a bibliography without URLs is content, and so is a
    "## Sources" of paragraphs). In agents' articles, a trailing heading about sources,
    verification or research notes counts as reference-type when the article has
    sections before it."""
    headings = [(m.start(), m.group(0)) for m in HEADING.finditer(text)]
    cut = len(text)
    for n, (start, line) in reversed(list(enumerate(headings))):
        ref = REF_HEADING.fullmatch(line)
        if ref and line.lstrip().startswith("#") and _is_prose(text[start:cut]):
            break
        if not ref and system != "wikipedia" and n > 1 and META_HEADING.match(line):
            cut = start
            continue
        if not ref:
            # "## External Links and Metadata" over a list of URLs is a reference section too.
            if REF_PREFIX.match(line) and "http" in text[start:cut]:
                cut = start
                continue
            break
        if ref.group(1).lower() == "bibliography" and "http" not in text[start:cut]:
            break
        cut = start
    return text[:cut]


def _trim_trailing_entries(text):
    """Drop a final run of lines that are only reference entries / URLs."""
    lines = text.rstrip().split("\n")
    while lines and (
        not lines[-1].strip() or re.fullmatch(r"\s*(?:[-*]\s*)?(?:\[\d+\]\s*\S.*|\d+\.\s.*https?:.*|<?https?:\S*>?)\s*", lines[-1])
    ):
        lines.pop()
    return "\n".join(lines)


def _words(text):
    text = IMAGE.sub(" ", text)
    text = LINK_TARGET.sub("] ", text)
    text = URL.sub(" ", text)
    text = GARBLED.sub(" ", text)
    text = BRACKET_NUMBERS.sub(" ", text)
    words = []
    for token in text.split():
        word = re.sub(r"[\W_]+", "", token)
        if re.search(r"[^\W\d_]", word):
            words.append(word)
    return words


# Scraping leftovers: a table row that only says "Source:", a column headed "Ref."
# whose cells held only citations, a flag's alt text before the country's name.
CAPTION_ROW = re.compile(r"^\|\s*(?:sources?|refs?\.?|references?|citations?)\s*:?\s*(?:\|\s*)+$", re.I | re.M)
CAPTION_LINE = re.compile(
    r"^\s*[*_]{0,3}(?:data\s+)?(?:sources?|refs?\.?|references?|citations?)\s*:?\s*[*_]{0,3}"
    r"(?:\s*(?:\[\d+\]|\[\d+\]\([^)]*\)|\d+)[,;]?)*\s*[*_]{0,3}\s*$",
    re.I | re.M,
)
SOURCE_COLUMN = re.compile(r"\s*\**(?:refs?\.?|references?|sources?|citations?|notes?)\**\s*", re.I)
EMPTY_CELL = re.compile(r"\s*(?:\[\d+\](?:\s*,?\s*\[\d+\])*)?\s*")
DOUBLED = re.compile(r"^(\s*)([A-Z][\w.'’-]*(?:\s+(?:(?:and|of|the)\s+)*[A-Z][\w.'’-]*){0,2})\s+\2(?=\s*(?:$|\())")


def _without_scraping_leftovers(text):
    text = CAPTION_LINE.sub("", CAPTION_ROW.sub("", text))
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        if not (lines[i].startswith("|") and re.fullmatch(r"[|\s:-]+", lines[i + 1]) and "---" in lines[i + 1]):
            continue
        j = i + 2
        while j < len(lines) and lines[j].startswith("|"):
            j += 1
        rows = [line.strip().strip("|").split("|") for line in lines[i:j]]
        header = rows[0]
        for c, cell in enumerate(header):
            if SOURCE_COLUMN.fullmatch(cell) and all(c < len(r) and EMPTY_CELL.fullmatch(r[c]) for r in rows[2:]):
                header[c] = " "
        for r in rows[2:]:
            r[:] = [DOUBLED.sub(r"\1\2", cell, count=1) for cell in r]
        lines[i:j] = ["|" + "|".join(r) + "|" for r in rows]
    return "\n".join(lines)


def _raw_prose(raw, system):
    text = METADATA.sub("", raw.replace("\r\n", "\n"))
    text = _body_before_trailing_references(text, system)
    text = _without_scraping_leftovers(text)
    text = ENTRY_LINE.sub("", text)
    text = LABEL_ONLY_LINE.sub("", text)
    text = _trim_trailing_entries(text)
    lines = text.split("\n")
    if lines and lines[0].startswith("# "):
        lines = lines[1:]  # the title line, replaced by normalization
    return _words("\n".join(lines))


def _shown_prose(shown):
    assert shown.startswith("# ")
    return _words(shown.split("\n", 1)[1])


def _first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def test_it_loses_no_prose_words_in_any_sample_article(displayed):
    problems = []
    totals = defaultdict(lambda: [0, 0])
    for system, stem, raw, shown in displayed:
        totals[system][0] += count_words(raw)
        totals[system][1] += count_words(shown)
        want, got = _raw_prose(raw, system), _shown_prose(shown)
        if want != got:
            i = _first_difference(want, got)
            problems.append(
                f"{system}/{stem}: {len(want)} raw prose words vs {len(got)} displayed; first difference "
                f"at word {i}:\n    raw:       {' '.join(want[max(0, i - 8) : i + 8])}\n"
                f"    displayed: {' '.join(got[max(0, i - 8) : i + 8])}"
            )
    summary = "\n".join(
        f"  {system:18s} raw {raw_n:7d} words, displayed {shown_n:7d} ({shown_n / raw_n:.1%})"
        for system, (raw_n, shown_n) in sorted(totals.items())
    )
    print("\nword counts (count_words), raw vs displayed:\n" + summary)
    assert not problems, "\n".join(problems) + "\nword counts (count_words):\n" + summary


def test_it_keeps_wikipedia_articles_word_for_word(displayed):
    for system, stem, raw, shown in displayed:
        if system != "wikipedia":
            continue
        body_raw = raw.split("\n", 1)[1] if raw.startswith("# ") else raw
        body_raw = _without_scraping_leftovers(body_raw)
        body_shown = shown.split("\n", 1)[1]
        assert count_words(body_shown) == count_words(body_raw), stem
        assert _words(body_shown) == _words(body_raw), stem


def test_it_is_idempotent_on_every_sample_article(displayed):
    for system, stem, _raw, shown in displayed:
        title = stem.replace("_", " ")
        assert clean_article(shown, title) == shown, f"{system}/{stem}"
