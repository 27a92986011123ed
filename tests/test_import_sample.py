"""The real Wiki Live Challenge slice in ../shared; skipped where it is absent."""

import re

import pytest

from annotate.models import Article, Criterion, System, Topic
from tests.helpers import run

pytestmark = pytest.mark.django_db

# A "Bibliography" listing the subject's own works is content and stays (a cited one has URLs, caught above).
# Bracketed years such as "[2009] ACHPR 102" are legal citations quoted as prose, so 1-3 digits only.
LEFTOVER = re.compile(
    r"\[\d{1,3}(?:[,–-]\s*\d{1,3})*\]|\[\^\d+\]|【|<sup>|https?:|https?www|www\.|\]\(|^#+\s*\**(references|sources|works cited|citations|notes|external links|further reading)\**:?\**\s*$",
    re.I | re.M,
)


def test_it_imports_the_whole_sample_once(sample_path):
    first = run("import_wlc", str(sample_path), "--quiet-progress")
    assert first.code == 0, first.err
    assert Topic.objects.count() == 20
    assert Article.objects.filter(system__key="wikipedia").count() == 20
    assert Article.objects.exclude(system__key="wikipedia").count() == 120
    assert System.objects.count() == 7
    assert Criterion.objects.count() == 39
    assert Topic.objects.exclude(category="").count() == 20

    second = run("import_wlc", str(sample_path), "--quiet-progress")
    assert second.code == 0, second.err
    assert "articles: 0 new, 0 updated, 140 unchanged" in second.out
    assert (Topic.objects.count(), Article.objects.count(), Criterion.objects.count()) == (20, 140, 39)


def test_it_leaves_no_citation_in_any_displayed_article(sample_path):
    run("import_wlc", str(sample_path), "--quiet-progress")
    leftovers = []
    for article in Article.objects.select_related("topic", "system"):
        for text in (article.display_markdown, article.html):
            match = LEFTOVER.search(text)
            if match:
                leftovers.append(f"{article.topic}/{article.system}: {text[max(0, match.start() - 40) : match.end() + 40]!r}")
        assert "href" not in article.html and "src=" not in article.html
    assert not leftovers, "\n".join(leftovers[:20])
