"""The block classifier (issue 33) on the real benchmark sample ($PAIRWISE_SHARED/wlc-sample; skipped without it).

``fixtures/sample_display_before_issue33.json`` holds, per sample article (system and a
digest of its file name: no benchmark text), digests of the display markdown and the
HTML the cleaner and renderer gave before issue 33. Articles without a heading that
announces sources must still be shown exactly so.
"""

import hashlib
import json
import re
from pathlib import Path

import pytest

from annotate.cleaning import clean_article, cleaning_decisions
from annotate.cleaning.protect import prepare, split_lines
from annotate.cleaning.sections import ref_kind, scan
from annotate.rendering import render_html

BEFORE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_display_before_issue33.json"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


@pytest.fixture(scope="module")
def sample(sample_path):
    data = sample_path / "data" / "2025_Mar_Nov"
    wiki = sorted((data / "wiki_data" / "cleaned_data" / "article").glob("*.md"))
    systems = sorted((data / "test_data").glob("*/md_data/*.md"))
    out = []
    for system, path in [("wikipedia", p) for p in wiki] + [(p.parent.parent.name, p) for p in systems]:
        raw = path.read_text(encoding="utf-8")
        is_reference = system == "wikipedia"
        shown = clean_article(raw, path.stem.replace("_", " "), is_reference=is_reference)
        key = f"{system}/{hashlib.sha256(path.stem.encode('utf-8')).hexdigest()[:12]}"
        out.append((key, raw, is_reference, shown))
    assert len(out) == 140
    return out


def _has_source_heading(raw: str) -> bool:
    _, headings = scan(split_lines(prepare(raw), []), set())
    return any(ref_kind(text) for _, _, _, text in headings)


def test_it_shows_every_sample_article_without_a_source_heading_as_before(sample):
    before = json.loads(BEFORE.read_text(encoding="utf-8"))
    checked = changed = 0
    for key, raw, is_reference, shown in sample:
        if _has_source_heading(raw) or any(d.heading == "" and d.removed for d in cleaning_decisions(raw, is_reference=is_reference)):
            continue
        checked += 1
        if [_digest(shown), _digest(render_html(shown))] != before[key]:
            changed += 1
    assert checked >= 40 and changed == 0, f"{changed} of {checked} articles without a source heading changed"


_TOKEN_RE = re.compile(r"[^\W_]+")


def _pattern(excerpt: str) -> re.Pattern | None:
    """The block's words in order (URLs, note numbers and a cut-off last word aside), any
    punctuation or markup between them, from the start of a line: how its text would
    read if it were shown."""
    text = re.sub(r"https?:\S*|www\.\S*|\[\d+\]", " ", excerpt)
    tokens = _TOKEN_RE.findall(text)
    if excerpt.endswith("…"):
        tokens = tokens[:-1]
    while tokens and tokens[0].isdigit():
        tokens = tokens[1:]
    if len(tokens) < 4:  # a heading of the article may say as much
        return None
    # A shown block is a line of its own (behind list or quote markup, or a number).
    return re.compile(r"(?m)^(?:[^\w\n]|_)*(?:\d+[.)](?:[^\w\n]|_)*)?" + r"[\W_]+".join(map(re.escape, tokens)))


def test_it_shows_no_entry_or_note_and_keeps_every_content_block_of_the_sample(sample):
    removed = kept = 0
    problems = []
    for key, raw, is_reference, shown in sample:
        for d in cleaning_decisions(raw, is_reference=is_reference):
            pattern = _pattern(d.excerpt)
            if pattern is None:
                continue
            present = pattern.search(shown) is not None
            if d.removed:
                removed += 1
                if present:
                    problems.append(f"{key}: {d.kind} shown: {d.excerpt}")
            else:
                kept += 1
                if not present:
                    problems.append(f"{key}: content lost: {d.excerpt}")
    assert removed > 100 and kept >= 1
    assert not problems, "\n".join(problems)
