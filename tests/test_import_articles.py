import json

import pytest
from django.db import IntegrityError

from annotate.models import Article, System, Topic
from annotate.services import articles_import
from annotate.sources import ArticleRecord, Batch, SystemRecord
from common.names import NAME_RULE
from tests.helpers import run

pytestmark = pytest.mark.django_db


def line(**fields):
    return json.dumps(fields, ensure_ascii=False)


GOOD = [
    line(topic="Salt Marsh", system="wikipedia", reference=True, category="Nature", markdown="# Salt Marsh\n\nA wetland."),
    line(topic="Salt Marsh", system="bot_one", markdown="# Salt Marsh\n\nWet land [1][2].\n\n### Sources:\n1. https://example.org"),
]


def write(tmp_path, lines, name="articles.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_it_imports_json_lines(tmp_path):
    result = run("import_articles", str(write(tmp_path, GOOD)))
    assert result.code == 0, result.err
    topic = Topic.objects.get()
    assert (topic.title, topic.category, topic.benchmark) == ("Salt Marsh", "Nature", "articles")
    assert System.objects.get(key="wikipedia").is_reference
    assert not System.objects.get(key="bot_one").is_reference
    assert Article.objects.get(system__key="bot_one").display_markdown == "# Salt Marsh\n\nWet land.\n"


def test_it_adds_nothing_on_a_second_run(tmp_path):
    path = write(tmp_path, GOOD)
    run("import_articles", str(path))
    again = run("import_articles", str(path))
    assert again.code == 0
    assert (Topic.objects.count(), Article.objects.count()) == (1, 2)
    assert "0 new, 0 updated, 2 unchanged" in again.out


def test_it_reports_bad_lines_by_number_and_imports_the_rest(tmp_path, settings):
    settings.MAX_ARTICLE_BYTES = 1000
    lines = GOOD + [
        "{not json",
        line(topic="Salt Marsh", markdown="no system"),
        line(topic="Salt Marsh", system="bot_two", markdown="   "),
        "[1, 2]",
        line(topic="Big", system="bot_one", markdown="x " * 1000),
        line(topic="Salt Marsh", system="bad system!", markdown="text"),
        line(topic="Salt Marsh", system="bot_one", markdown="# Salt Marsh\n\nA second copy."),
    ]
    path = write(tmp_path, lines)
    with path.open("ab") as handle:
        handle.write(b'{"topic": "Caf\xe9", "system": "bot_one", "markdown": "x"}\n')
    result = run("import_articles", str(path))
    assert result.code == 2
    err = result.err
    assert f"{path}:3: is not valid JSON" in err
    assert f"{path}:4: lacks the field(s) system" in err
    assert f"{path}:5: lacks the field(s) markdown" in err
    assert f"{path}:6: is not a JSON object" in err
    assert f"{path}:7: article is 0.0 MB, over the 0.0 MB limit" in err
    assert f"{path}:8: system 'bad system!' must be {NAME_RULE}" in err
    assert f"{path}:9: a second article for topic 'Salt Marsh' and system 'bot_one' (first: {path}:2)" in err
    assert f"{path}:10: is not valid UTF-8" in err
    assert Article.objects.count() == 2


def test_it_fails_clearly_on_an_empty_or_missing_file(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n\n")
    assert "empty.jsonl: is empty" in run("import_articles", str(empty)).err
    missing = run("import_articles", str(tmp_path / "gone.jsonl"))
    assert missing.code == 1
    assert "gone.jsonl: no such file" in missing.err


def test_it_writes_nothing_when_the_import_fails_half_way(tmp_path):
    run("import_articles", str(write(tmp_path, GOOD)))
    before = list(Article.objects.order_by("pk").values_list("pk", "content_hash"))
    batch = Batch(benchmark="articles", systems={"bot_one": SystemRecord("bot_one", "Bot")})
    batch.articles = [
        ArticleRecord("New Topic", "bot_one", "# New Topic\n\nFresh."),
        # An unknown system fails after the new topic was written: all of it must roll back.
        ArticleRecord("Other Topic", "ghost", "# Other Topic\n\nGhost."),
    ]
    with pytest.raises(KeyError):
        articles_import(batch=batch)
    assert list(Article.objects.order_by("pk").values_list("pk", "content_hash")) == before
    assert list(Topic.objects.values_list("title", flat=True)) == ["Salt Marsh"]


def test_it_refuses_two_articles_for_one_topic_and_system_at_the_database(tmp_path):
    run("import_articles", str(write(tmp_path, GOOD)))
    stored = Article.objects.get(system__key="bot_one")
    stored.pk = None
    with pytest.raises(IntegrityError):
        stored.save()


def test_it_keeps_apart_topics_whose_titles_slugify_alike(tmp_path):
    lines = [
        line(topic="C", system="wikipedia", reference=True, markdown="# C\n\nA programming language."),
        line(topic="C++", system="wikipedia", reference=True, markdown="# C++\n\nAnother programming language."),
        line(topic="C++", system="bot_one", markdown="# C++\n\nA language with classes."),
    ]
    result = run("import_articles", str(write(tmp_path, lines)))
    assert result.code == 0, result.err
    c, cpp = Topic.objects.get(title="C"), Topic.objects.get(title="C++")
    assert c.slug == "c" and cpp.slug.startswith("c-") and cpp.slug != c.slug
    assert [a.system.key for a in c.articles.all()] == ["wikipedia"]
    assert sorted(a.system.key for a in cpp.articles.all()) == ["bot_one", "wikipedia"]
    # A later import finds each again by its title, whatever the slugs.
    again = run("import_articles", str(write(tmp_path, lines)))
    assert again.code == 0 and Topic.objects.count() == 2 and "3 unchanged" in again.out


def test_it_takes_titles_differing_only_in_case_or_spacing_for_one_topic(tmp_path):
    lines = [
        line(topic="Salt Marsh", system="wikipedia", reference=True, markdown="# Salt Marsh\n\nA wetland."),
        line(topic="salt  marsh", system="bot_one", markdown="# Salt marsh\n\nWet land."),
    ]
    result = run("import_articles", str(write(tmp_path, lines)))
    assert result.code == 0, result.err
    topic = Topic.objects.get()
    assert topic.title == "Salt Marsh" and topic.articles.count() == 2


def test_it_drops_notes_on_sourcing_from_agents_only(tmp_path):
    body = (
        "## Overview\n\nThe marsh floods twice a day and feeds many birds.\n\n"
        "## Notes on sources and verification\n\n- Tide tables were consulted and verified against two county atlases.\n"
    )
    lines = [
        line(topic="Salt Marsh", system="wikipedia", reference=True, markdown="# Salt Marsh\n\n" + body),
        line(topic="Salt Marsh", system="bot_one", markdown="# Salt Marsh\n\n" + body),
    ]
    result = run("import_articles", str(write(tmp_path, lines)))
    assert result.code == 0, result.err
    assert "Notes on sources and verification" in Article.objects.get(system__key="wikipedia").display_markdown
    agent = Article.objects.get(system__key="bot_one").display_markdown
    assert "Notes on sources" not in agent and "feeds many birds" in agent
