"""Importers report unstorable input by file and line, skip it and import the rest.

NUL (raw or as the JSON escape \\u0000), lone surrogates (\\ud800, or their
UTF-8 spelling, which is not valid UTF-8), undecodable bytes, absurd nesting and
numbers of thousands of digits: each is a problem line naming the file (and the
line, for JSON Lines and CSV), and the command exits 2 when the rest was imported.
Run on PostgreSQL too: that is where a NUL used to stop the whole import.
"""

import json
import os

import pytest

from annotate.models import Article, CriterionSet, Label, Span, System, Topic
from annotate.sources import Problem
from interchange import SPAN_COLUMNS
from tests.helpers import RUBRIC, article, run, write_wlc
from tests.test_import_labels import import_labels, label_row, span_row, write_csv, write_jsonl

pytestmark = pytest.mark.django_db

DEEP = "[" * 50_000 + "]" * 50_000


def line(**fields) -> str:
    return json.dumps(fields)  # ASCII: \u0000 and \ud800 stay escapes, as other tools write them


def test_it_prints_problems_holding_nul_and_surrogates():
    assert str(Problem("bad\udcffname.md", "a\x00b")) == "bad\\udcffname.md: a\\x00b"


# --- import_articles (JSON Lines) ---------------------------------------------------------


def test_it_skips_articles_lines_a_database_cannot_store(tmp_path):
    good = [
        line(topic="Salt Marsh", system="wikipedia", markdown="# Salt Marsh\n\nA wetland."),
        line(topic="Salt Marsh", system="bot_one", markdown="# Salt Marsh\n\nWet land."),
    ]
    bad = [
        line(topic="Fen", system="bot_one", markdown="# Fen\n\nNUL \x00 here."),
        line(topic="Bog \ud800", system="bot_one", markdown="# Bog\n\nA surrogate in the title."),
        line(topic="Mire", system="bot_one", markdown="text", category="x" * 201),
        '{"topic": "Deep", "system": "bot_one", "markdown": ' + DEEP + "}",
        '{"topic": "Big", "system": "bot_one", "markdown": "x", "n": ' + "9" * 5000 + "}",
    ]
    path = tmp_path / "articles.jsonl"
    path.write_bytes(
        ("\n".join(good + bad) + "\n").encode()
        + b'{"topic": "Raw", "system": "bot_one", "markdown": "raw \x00 byte"}\n'
        + b'{"topic": "Lone", "system": "bot_one", "markdown": "lone \xed\xa0\x80 surrogate"}\n'
    )

    result = run("import_articles", str(path))

    assert result.code == 2, result.err
    err = result.err
    assert f"{path}:3: markdown contains a NUL character (U+0000)" in err
    assert f"{path}:4: topic contains a lone surrogate (U+D800)" in err
    assert f"{path}:5: field(s) too long: category (at most 200 characters)" in err
    assert f"{path}:6: is not usable JSON (nested too deeply)" in err
    assert f"{path}:7: is not usable JSON (Exceeds the limit (4300 digits)" in err
    assert f"{path}:8: contains a NUL byte (column 56), which cannot be stored" in err
    assert f"{path}:9: is not valid UTF-8 (bad byte at column 58)" in err
    assert "9 input(s) could not be imported" not in err and "7 input(s) could not be imported" in err
    assert sorted(Article.objects.values_list("system__key", flat=True)) == ["bot_one", "wikipedia"]
    assert list(Topic.objects.values_list("title", flat=True)) == ["Salt Marsh"]


# --- import_wlc (a folder of Markdown) ------------------------------------------------------


def test_it_skips_markdown_files_a_database_cannot_store(tmp_path):
    repo = write_wlc(tmp_path, categories={"Red_Fox": "Biology", "Blue_Lake": "Geo\x00graphy"})
    bench = repo / "data" / "2025_test"
    md_dir = bench / "test_data" / "agent_b" / "md_data"
    md_dir.mkdir(parents=True)
    (md_dir / "Red_Fox.md").write_text("# Red Fox\n\nFine line.\nA NUL \x00 on line 4.\n", encoding="utf-8")
    (md_dir / "Blue_Lake.md").write_bytes(b"# Blue Lake\n\nA lone \xed\xa0\x80 surrogate.\n")
    # A file name that is not UTF-8: Python spells the byte as a surrogate.
    odd = os.path.join(os.fsencode(bench / "test_data" / "agent_a" / "md_data"), b"Blue\xffLake.md")
    with open(odd, "wb") as handle:
        handle.write(article("Blue Lake", "Named in Latin-1.").encode())
    odd_system = os.path.join(os.fsencode(bench / "test_data"), b"agent\xfe", b"md_data")
    os.makedirs(odd_system)
    with open(os.path.join(odd_system, b"Red_Fox.md"), "wb") as handle:
        handle.write(article("Red Fox", "By a system in a Latin-1 folder.").encode())

    result = run("import_wlc", str(repo), "--quiet-progress")

    assert result.code == 2, result.err
    err = result.err
    assert "test_data/agent_b/md_data/Red_Fox.md:4: contains a NUL character (U+0000), which cannot be stored (column 7)" in err
    assert "test_data/agent_b/md_data/Blue_Lake.md: is not valid UTF-8 (bad byte at offset 20)" in err
    assert "test_data/agent_a/md_data/Blue\\udcffLake.md: has a name that is not valid UTF-8 text: skipped" in err
    assert "test_data/agent\\udcfe: has a name that is not valid UTF-8 text: skipped" in err
    assert "wiki_data/ga_100.csv:3: contains a NUL character (U+0000), which cannot be stored: row skipped" in err
    # Everything else came in: both reference articles, agent_a's two, and Red Fox's category.
    assert Article.objects.count() == 4
    assert not Article.objects.filter(system__key="agent_b").exists()
    assert Topic.objects.get(title="Red Fox").category == "Biology"
    assert Topic.objects.get(title="Blue Lake").category == ""


def test_it_reports_unstorable_criteria_and_agencies_and_imports_the_articles(tmp_path):
    rubric = json.loads(json.dumps(RUBRIC))
    rubric["categories"][1]["criteria"][0]["text"] = "Fair \x00 to every side."
    repo = write_wlc(tmp_path, rubric=rubric)
    agencies = repo / "data" / "2025_test" / "test_data" / "agencies.json"
    agencies.write_text('{"agencies": {"agent_a": {"name": "Agent \\ud800 A"}}}', encoding="utf-8")

    result = run("import_wlc", str(repo), "--quiet-progress")

    assert result.code == 2, result.err
    assert "wiki_writing_criteria.json: is not usable: categories[1].criteria[0].text contains a NUL character" in result.err
    assert "agencies.json: is not usable: agencies.agent_a.name contains a lone surrogate (U+D800)" in result.err
    assert not CriterionSet.objects.exists()
    assert Article.objects.count() == 4
    assert System.objects.get(key="agent_a").name == "agent_a"  # named after its folder, as without agencies.json


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"categories": ' + DEEP + "}", "is not usable JSON (nested too deeply)"),
        ('{"name": "x\\udc80", "categories": []}', "contains a lone surrogate (U+DC80)"),
        (b'{"name": "raw \x00"}', ":1: contains a NUL character (U+0000), which cannot be stored (column 15)"),
    ],
    ids=["deep", "surrogate", "nul"],
)
def test_it_reports_an_unstorable_criteria_file(tmp_path, content, message):
    path = tmp_path / "criteria.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = run("import_criteria", str(path))
    assert result.code == 1
    assert message in result.err
    assert not CriterionSet.objects.exists()


# --- import_labels ---------------------------------------------------------------------------


def test_it_skips_label_rows_with_nul_in_csv(demo_campaign, tmp_path):
    path = write_csv(
        tmp_path / "labels.csv",
        [
            label_row(),
            label_row(criterion="ww_cc_2", rationale="A NUL \x00 inside."),
            label_row(criterion="ww_cc_3", topic="Marrow\x00River"),
        ],
    )

    refused = import_labels(path)
    assert refused.code == 1
    assert not Label.objects.filter(assignment__annotator__username="ext_rater").exists()

    result = import_labels(path, "--skip-bad")
    assert result.code == 2, result.err
    assert f"{path}:3: rationale contains a NUL character (U+0000)" in result.err
    assert f"{path}:4: topic contains a NUL character (U+0000)" in result.err
    assert "labels: 1 new" in result.out
    assert list(Label.objects.filter(assignment__annotator__username="ext_rater").values_list("criterion__key", flat=True)) == ["ww_cc_1"]


def test_it_skips_label_lines_with_escaped_surrogates_deep_nesting_or_huge_numbers_in_jsonl(demo_campaign, tmp_path):
    path = write_jsonl(tmp_path / "labels.jsonl", [label_row(), label_row(criterion="ww_cc_2", rationale="Lone \ud800 half.")])
    with path.open("a", encoding="utf-8") as handle:
        handle.write(DEEP + "\n")
        handle.write('{"campaign": ' + "7" * 5000 + "}\n")
        handle.write(json.dumps(label_row(criterion="ww_cc_3", rater="ext\u0000rater")) + "\n")

    result = import_labels(path, "--skip-bad")

    assert result.code == 2, result.err
    assert f"{path}:2: rationale contains a lone surrogate (U+D800)" in result.err
    assert f"{path}:3: is not usable JSON (nested too deeply)" in result.err
    assert f"{path}:4: is not usable JSON (Exceeds the limit" in result.err
    assert f"{path}:5: rater contains a NUL character" in result.err
    assert "labels: 1 new" in result.out


def test_it_refuses_a_labels_file_that_is_not_utf8_as_a_whole(demo_campaign, tmp_path):
    """A file in another encoding is wrong throughout; importing its ASCII rows alone would hide that."""
    path = tmp_path / "labels.csv"
    write_csv(path, [label_row()])
    path.write_bytes(
        path.read_bytes() + "Demo campaign,Marrow River,ww_cc_2,human,ext_rater,lone \ud800".encode("utf-8", "surrogatepass") + b"\n"
    )
    result = import_labels(path, "--skip-bad")
    assert result.code == 1
    assert f"{path}: is not valid UTF-8 (bad byte at offset" in result.err
    assert not Label.objects.filter(assignment__annotator__username="ext_rater").exists()


def test_it_skips_spans_with_offsets_of_thousands_of_digits(demo_campaign, tmp_path):
    labels = write_csv(tmp_path / "labels.csv", [label_row()])
    spans = tmp_path / "labels.spans.csv"
    write_csv(spans, [span_row(), span_row(start="9" * 5000, end="9" * 5001)], SPAN_COLUMNS)
    result = import_labels(labels, "--skip-bad")
    assert result.code == 2, result.err
    assert f"{spans}:3: start and end must be whole numbers" in result.err
    assert Span.objects.count() == 1


def test_it_refuses_a_campaign_name_that_is_not_utf8(demo_campaign, tmp_path):
    outcome = run("import_labels", "--campaign", "Demo \udcff", str(write_csv(tmp_path / "labels.csv", [label_row()])))
    assert outcome.code == 1
    assert "--campaign is not valid UTF-8 text" in outcome.err
