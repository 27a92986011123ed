"""An agent's intermediate steps imported with its article (issue 42, item 1): stored in order,
cleaned of citations, exported, and checked line by line like every other field."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate.models import Article, ArticleStep
from annotate.services.catalogue import content_hash
from annotate.sources import ArticleRecord, StepRecord, read_jsonl

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "steps" / "agent_traces.jsonl"


def write(tmp_path, rows) -> Path:
    path = tmp_path / "steps.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def row(**extra) -> dict:
    return {"topic": "Ørsted field", "system": "agent.v2", "markdown": "# Ørsted field\n\nA text.\n", **extra}


@pytest.mark.django_db
def test_it_imports_the_fixture_traces_with_every_step_in_order_and_cleaned():
    call_command("import_articles", str(TRACES), "--benchmark", "traces", stdout=io.StringIO())
    assert Article.objects.filter(topic__benchmark="traces").count() == 8
    counts = {a.system.key: a.steps.count() for a in Article.objects.select_related("system")}
    assert counts == {"agent.alpha-2": 9, "agent.beta.v3": 12}
    steps = list(ArticleStep.objects.filter(article__system__key="agent.beta.v3", article__topic__title="Alder Vale moss gardens"))
    assert [s.order for s in steps] == list(range(12))
    assert [s.kind for s in steps[:3]] == ["plan", "search", "read"]
    assert steps[1].query == "Alder Vale moss gardens"
    forum = next(s for s in steps if s.title == "Discussion thread")
    assert "https://" in forum.raw_content and "https://" not in forum.content and "https://" not in forum.html
    assert forum.url == "https://example.com/forum/123"  # kept for the export, never shown
    cited = ArticleStep.objects.filter(raw_content__contains="[1]").first()
    assert "[1]" not in cited.content and "newsletter." in cited.content


@pytest.mark.django_db
def test_it_exports_the_steps_and_a_reimport_finds_nothing_changed(tmp_path):
    call_command("import_articles", str(TRACES), "--benchmark", "traces", stdout=io.StringIO())
    out = tmp_path / "articles.jsonl"
    call_command("export_articles", "--out", str(out), stdout=io.StringIO())
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    source = {(r["topic"], r["system"]): r for r in map(json.loads, TRACES.read_text(encoding="utf-8").splitlines())}
    for exported in rows:
        given = source[(exported["topic"], exported["system"])]["steps"]
        assert [{k: s[k] for k in ("type", "content")} for s in exported["steps"]] == [
            {"type": s["type"], "content": s["content"]} for s in given
        ]
        assert [s["query"] for s in exported["steps"]] == [s.get("query", "") for s in given]
    again = io.StringIO()
    call_command("import_articles", str(TRACES), "--benchmark", "traces", stdout=again)
    assert "0 new, 0 updated, 8 unchanged" in again.getvalue()


@pytest.mark.django_db
def test_it_replaces_the_steps_of_an_article_whose_steps_changed(tmp_path):
    first = write(tmp_path, [row(steps=[{"type": "plan", "content": "one"}, {"type": "answer", "content": "two"}])])
    call_command("import_articles", str(first), stdout=io.StringIO())
    changed = write(tmp_path, [row(steps=[{"type": "plan", "content": "one, revised"}])])
    with pytest.raises(CommandError):
        call_command("import_articles", str(changed), stdout=io.StringIO(), stderr=io.StringIO())  # kept and reported
    assert list(ArticleStep.objects.values_list("raw_content", flat=True)) == ["one", "two"]
    call_command("import_articles", str(changed), "--replace", stdout=io.StringIO())
    assert list(ArticleStep.objects.values_list("raw_content", flat=True)) == ["one, revised"]


@pytest.mark.parametrize(
    "steps, message",
    [
        ("plan it", "steps must be a list of objects"),
        (["plan"], "steps[1] is not an object"),
        ([{"type": "plan", "content": "x"}, {"content": "no type"}], "steps[2]: type must be one short word"),
        ([{"type": "two words", "content": "x"}], "type must be one short word"),
        ([{"type": "read", "content": 3}], "steps[1]: content must be a string of Markdown"),
        ([{"type": "read", "content": "x", "url": ["a"]}], "steps[1]: url must be a string"),
        ([{"type": "read", "content": "x", "query": "q" * 1001}], "query is longer than 1000 characters"),
        ([{"type": "read", "content": "x", "source": "s"}], "unknown field(s) source"),
    ],
)
def test_it_refuses_a_line_with_bad_steps_and_says_which(tmp_path, steps, message):
    batch = read_jsonl(write(tmp_path, [row(steps=steps), row(topic="Another")]), max_bytes=1_000_000)
    assert [a.topic for a in batch.articles] == ["Another"]  # the rest of the file is read
    [problem] = batch.problems
    assert problem.where.endswith(":1") and message in problem.message


def test_it_keeps_the_hash_of_an_article_without_steps_and_changes_it_with_steps():
    plain = ArticleRecord(topic="T", system="s", markdown="Text.")
    import hashlib

    assert content_hash(plain) == hashlib.sha256(b"Text.").hexdigest()
    with_steps = ArticleRecord(topic="T", system="s", markdown="Text.", steps=(StepRecord(kind="plan", content="Go."),))
    other = ArticleRecord(topic="T", system="s", markdown="Text.", steps=(StepRecord(kind="plan", content="Stop."),))
    assert len({content_hash(plain), content_hash(with_steps), content_hash(other)}) == 3
