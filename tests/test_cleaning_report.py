"""cleaning_report command and the staff page showing what the cleaner removed."""

import csv
import io
import json

import pytest

from annotate.models import Topic
from tests.helpers import article, run, write_wlc

pytestmark = pytest.mark.django_db

LOSSY = (
    "Otters live along the coast [1].\n\n"
    "## Notes\n\nThis note says the otters were counted as in the sources listed below, from small boats.\n\n"
    "## References\n\n[1] https://example.org/otters\n"
)


@pytest.fixture
def imported(tmp_path):
    systems = {
        "agent_a": {
            "Red_Fox": article("Red Fox", LOSSY),
            "Blue_Lake": article("Blue Lake", "=cmd|' /C calc'!A0 is a <b>cold</b> lake (https://example.org/lake)."),
        }
    }
    result = run("import_wlc", str(write_wlc(tmp_path, systems=systems)), "--quiet-progress")
    assert result.code == 0, result.err
    return Topic.objects.get(title="Red Fox")


def test_it_reports_per_system_and_article_in_markdown(imported):
    result = run("cleaning_report")
    assert result.code == 0, result.err
    assert "## Per system" in result.out and "## Per article" in result.out
    assert "| agent_a | 2 |" in result.out
    assert "- agent_a / Red Fox: lost" in result.out
    assert "removed section 'Notes' held 16 prose words" in result.out
    assert "| agent_a | Red Fox |" in result.out and "Notes; References" in result.out


def test_it_writes_json_with_flags(imported):
    data = json.loads(run("cleaning_report", "--format", "json").out)
    rows = {(r["system"], r["topic"]): r for r in data["articles"]}
    fox = rows[("agent_a", "Red Fox")]
    assert fox["removed_sections"] == ["Notes", "References"]
    assert fox["prose_words_removed"] == 16 and fox["flags"]
    reference = [r for (system, topic), r in rows.items() if system != "agent_a" and topic == "Red Fox"]
    assert len(reference) == 1 and reference[0]["words_removed"] == 0 and reference[0]["flags"] == []
    assert [s["articles"] for s in data["systems"]] == [2, 2]


def test_it_writes_csv_with_cells_neutralized_against_formulas(imported):
    out = run("cleaning_report", "--format", "csv").out
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and set(rows[0]) >= {"system", "topic", "words_removed", "prose_lost_percent", "flags"}
    fox = next(r for r in rows if r["system"] == "agent_a" and r["topic"] == "Red Fox")
    assert fox["removed_sections"] == "Notes; References"
    assert not any(value.startswith(("=", "+", "-", "@")) for row in rows for value in row.values())


def test_it_filters_by_benchmark_and_fails_clearly_when_empty(imported):
    assert run("cleaning_report", "--benchmark", "2025_test").code == 0
    result = run("cleaning_report", "--benchmark", "nowhere")
    assert result.code != 0 and "no articles" in result.err


# --- the page -------------------------------------------------------------------


def url(topic, system="agent_a"):
    return f"/topics/{topic.pk}/removed/{system}/"


def test_it_answers_404_for_a_system_without_an_article(client, rachel, imported):
    client.force_login(rachel)
    assert client.get(url(imported, "nobody")).status_code == 404


def test_it_shows_the_raw_markdown_with_removed_spans_marked_and_escaped(client, rachel, imported):
    client.force_login(rachel)
    response = client.get(url(imported))
    assert response.status_code == 200
    body = response.content.decode()
    assert '<del class="removed">[1]</del>' in body
    assert "removed section &#x27;Notes&#x27; held 16 prose words" in body
    assert "Otters live along the coast" in body


def test_it_escapes_markup_in_the_raw_markdown(client, rachel, imported):
    client.force_login(rachel)
    body = client.get(url(Topic.objects.get(title="Blue Lake"))).content.decode()
    assert "&lt;b&gt;cold&lt;/b&gt;" in body and "<b>cold</b>" not in body


def test_it_links_each_column_of_the_topic_page_to_its_removal_view(client, rachel, imported):
    client.force_login(rachel)
    body = client.get(f"/topics/{imported.pk}/").content.decode()
    assert f'href="/topics/{imported.pk}/removed/agent_a/"' in body


def test_it_reads_the_page_in_a_few_queries(client, rachel, imported, django_assert_max_num_queries):
    client.force_login(rachel)
    with django_assert_max_num_queries(6):
        assert client.get(url(imported)).status_code == 200


def test_it_reports_a_table_kept_under_a_references_heading(tmp_path, client, rachel):
    credits = (
        "The opera opened in 2001.\n\n## 9. References and Data Sources\n\n"
        "1. Berg, A. (2001). Opera now. https://example.org/berg\n\n"
        "| Role | Name | Country |\n|---|---|---|\n| Conductor | Anna Berg | Sweden |\n"
    )
    systems = {"agent_a": {"Red_Fox": article("Red Fox", credits), "Blue_Lake": article("Blue Lake", "A lake.")}}
    assert run("import_wlc", str(write_wlc(tmp_path, systems=systems)), "--quiet-progress").code == 0
    data = json.loads(run("cleaning_report", "--format", "json").out)
    fox = next(r for r in data["articles"] if r["system"] == "agent_a" and r["topic"] == "Red Fox")
    assert fox["kept_reference_sections"] == ["9. References and Data Sources"] and fox["removed_sections"] == []
    assert fox["flags"] == ["kept 11 words under the reference heading '9. References and Data Sources' (removed 4: its citation list)"]
    client.force_login(rachel)
    body = client.get(url(Topic.objects.get(title="Red Fox"))).content.decode()
    assert "Kept under a reference heading" in body and "<td>9. References and Data Sources</td><td>11</td><td>4</td>" in body


# --- blocks under source headings (issue 33) ---------------------------------------

SOURCED = (
    "Herons nest in colonies along the river.\n\n"
    "## 9. References and Data Sources\n\n"
    "| Site | Nests | Year |\n|---|---|---|\n| North bank | 41 | 2023 |\n\n"
    'riverwatch.org – River Trust (A. Lind) - "Heron count rises again" (Jun 2, 2023)\n'
    "Wetland Survey Office – Annual heron census (PDF)\n\n"
    "The article has been successfully created and saved. It follows the style guidelines in your rubric."
)


@pytest.fixture
def sourced(tmp_path):
    topics = {"Grey_Heron": article("Grey Heron", "The grey heron is a wading bird.")}
    systems = {"agent_b": {"Grey_Heron": article("Grey Heron", SOURCED)}}
    result = run("import_wlc", str(write_wlc(tmp_path, topics=topics, systems=systems)), "--quiet-progress")
    assert result.code == 0, result.err
    return Topic.objects.get(title="Grey Heron")


def test_it_lists_removed_and_kept_blocks_per_system_with_the_deciding_feature(sourced):
    out = run("cleaning_report").out
    assert "### agent_b: 2 citation entries and 1 agent's notes removed, 1 blocks kept" in out
    assert "Kept as content (1):" in out and "a table of data. «\\| Site \\| Nests" in out
    assert "Grey Heron / 9. References and Data Sources: URL or domain. «riverwatch.org" in out
    assert "Grey Heron / 9. References and Data Sources: format tag. «Wetland Survey Office" in out
    assert "says it created or saved the article" in out
    system = next(line for line in out.splitlines() if line.startswith("| agent_b |"))
    assert system.split(" | ")[4] != "0.0"  # the share of words removed


def test_it_gives_every_decision_in_json(sourced):
    data = json.loads(run("cleaning_report", "--format", "json").out)
    heron = next(r for r in data["articles"] if r["system"] == "agent_b")
    assert [(d["class"], d["removed"]) for d in heron["decisions"]] == [
        ("content", False),
        ("citation entry", True),
        ("citation entry", True),
        ("agent's note", True),
    ]
    assert all(d["reason"] and d["excerpt"] for d in heron["decisions"])
    assert (heron["entries_removed"], heron["notes_removed"], heron["blocks_kept"]) == (2, 1, 1)
