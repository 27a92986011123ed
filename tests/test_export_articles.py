import json

import pytest

from annotate.models import Article
from tests.conftest import FIXTURES
from tests.helpers import run

pytestmark = pytest.mark.django_db


def test_it_writes_one_line_per_article(tmp_path):
    run("import_articles", str(FIXTURES / "demo" / "articles.jsonl"), "--benchmark", "demo")
    out = tmp_path / "export.jsonl"
    result = run("export_articles", "--format", "jsonl", "--out", str(out))
    assert result.code == 0, result.err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == Article.objects.count() == 12
    for row in rows:
        assert {"topic", "system", "category", "raw_markdown", "display_markdown"} <= set(row)
        stored = Article.objects.get(topic__title=row["topic"], system__key=row["system"])
        assert row["raw_markdown"] == stored.raw_markdown
        assert row["display_markdown"] == stored.display_markdown
    assert not (tmp_path / "export.jsonl.part").exists()


def test_it_round_trips_through_import_articles(tmp_path, django_db_blocker):
    run("import_articles", str(FIXTURES / "demo" / "articles.jsonl"), "--benchmark", "demo")
    out = tmp_path / "export.jsonl"
    run("export_articles", "--out", str(out))
    # Re-importing the export as its raw markdown must find every article unchanged.
    lines = []
    for row in map(json.loads, out.read_text(encoding="utf-8").splitlines()):
        lines.append(
            json.dumps(
                {
                    "topic": row["topic"],
                    "system": row["system"],
                    "markdown": row["raw_markdown"],
                    "reference": row["reference"],
                    "category": row["category"],
                }
            )
        )
    again = tmp_path / "again.jsonl"
    again.write_text("\n".join(lines), encoding="utf-8")
    result = run("import_articles", str(again), "--benchmark", "demo")
    assert result.code == 0, result.err
    assert "0 new, 0 updated, 12 unchanged" in result.out


def test_it_refuses_an_output_folder_that_does_not_exist(tmp_path):
    result = run("export_articles", "--out", str(tmp_path / "missing" / "x.jsonl"))
    assert result.code == 1
    assert "no such folder" in result.err
