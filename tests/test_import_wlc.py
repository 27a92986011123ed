import json

import pytest

from annotate.models import Article, Criterion, CriterionSet, System, Topic
from tests.helpers import article, run, write_wlc

pytestmark = pytest.mark.django_db


def counts():
    return Topic.objects.count(), System.objects.count(), Article.objects.count(), Criterion.objects.count()


def test_it_imports_topics_systems_articles_and_criteria(tmp_path):
    repo = write_wlc(tmp_path, categories={"Red_Fox": "Biology"})
    result = run("import_wlc", str(repo), "--quiet-progress")
    assert result.code == 0, result.err
    assert counts() == (2, 2, 4, 3)
    fox = Topic.objects.get(title="Red Fox")
    assert fox.benchmark == "2025_test"
    assert fox.category == "Biology"
    assert System.objects.get(key="wikipedia").is_reference
    assert System.objects.get(key="agent_a").name == "Agent A"
    generated = Article.objects.get(topic=fox, system__key="agent_a")
    assert "[1]" in generated.raw_markdown
    assert "[1]" not in generated.display_markdown
    assert "References" not in generated.display_markdown
    assert "example.org" not in generated.html
    assert generated.display_markdown.startswith("# Red Fox\n")
    assert "topics: 2 new" in result.out
    assert "articles: 4 new" in result.out


def test_it_adds_nothing_on_a_second_run(tmp_path):
    repo = write_wlc(tmp_path)
    assert run("import_wlc", str(repo)).code == 0
    before = counts()
    hashes = sorted(Article.objects.values_list("content_hash", flat=True))
    again = run("import_wlc", str(repo))
    assert again.code == 0, again.err
    assert counts() == before
    assert sorted(Article.objects.values_list("content_hash", flat=True)) == hashes
    assert CriterionSet.objects.count() == 1
    assert "articles: 0 new, 0 updated, 4 unchanged" in again.out
    assert "(unchanged)" in again.out


def test_it_accepts_the_benchmark_folder_itself(tmp_path):
    repo = write_wlc(tmp_path)
    result = run("import_wlc", str(repo / "data" / "2025_test"))
    assert result.code == 0, result.err
    assert counts() == (2, 2, 4, 3)


def test_it_matches_file_names_that_differ_from_titles(tmp_path):
    topics = {
        "AC_DC_(album)": article("AC/DC (album)", "An album."),
        "Vorlesungen_über_Mathematik": article("Vorlesungen über Mathematik", "A book."),
        "Cow_(Mario)": article("Cow (Mario)", "A cow."),
    }
    # Decomposed umlaut and different case, as file systems and agents produce them.
    systems = {
        "agent_a": {
            "AC_DC_(album)": article("AC/DC (album)", "Rock."),
            "Vorlesungen_u\u0308ber_Mathematik": article("Vorlesungen", "Lectures."),
            "cow_(mario)": article("Cow", "Moo."),
        }
    }
    result = run("import_wlc", str(write_wlc(tmp_path, topics=topics, systems=systems)))
    assert result.code == 0, result.err
    assert set(Topic.objects.values_list("title", flat=True)) == {"AC/DC (album)", "Vorlesungen über Mathematik", "Cow (Mario)"}
    assert Article.objects.filter(system__key="agent_a").count() == 3


def test_it_reports_every_file_it_cannot_place(tmp_path):
    systems = {"agent_a": {"Red_Fox": article("Red Fox", "Foxes."), "Green_Hill": article("Green Hill", "A hill.")}}
    result = run("import_wlc", str(write_wlc(tmp_path, systems=systems)))
    assert result.code == 2
    assert "test_data/agent_a/md_data/Green_Hill.md: matches no reference article title" in result.err
    assert Article.objects.filter(system__key="agent_a").count() == 1


def test_it_reports_bad_files_by_name_and_imports_the_rest(tmp_path, settings):
    settings.MAX_ARTICLE_BYTES = 1_000_000
    repo = write_wlc(tmp_path)
    md_dir = repo / "data" / "2025_test" / "test_data" / "agent_b" / "md_data"
    md_dir.mkdir(parents=True)
    (md_dir / "Red_Fox.md").write_bytes(b"")
    (md_dir / "Blue_Lake.md").write_bytes(b"# Blue Lake\n\ncaf\xe9 au lait\n")
    big = md_dir.parent.parent / "agent_c" / "md_data"
    big.mkdir(parents=True)
    (big / "Red_Fox.md").write_text("# Red Fox\n\n" + "word " * 1_100_000, encoding="utf-8")
    result = run("import_wlc", str(repo))
    assert result.code == 2
    assert "agent_b/md_data/Red_Fox.md: is empty" in result.err
    assert "agent_b/md_data/Blue_Lake.md: is not valid UTF-8 (bad byte at offset 16)" in result.err
    assert "agent_c/md_data/Red_Fox.md: is 5.2 MB, over the 1.0 MB limit" in result.err
    assert Article.objects.count() == 4
    assert not Article.objects.filter(system__key__in=["agent_b", "agent_c"]).exists()


def test_it_fails_clearly_on_a_missing_folder(tmp_path):
    result = run("import_wlc", str(tmp_path / "nowhere"))
    assert result.code == 1
    assert "nowhere: no such folder" in result.err
    assert counts() == (0, 0, 0, 0)


def test_it_fails_clearly_on_a_folder_of_another_layout(tmp_path):
    result = run("import_wlc", str(tmp_path))
    assert result.code == 1
    assert "neither a Wiki Live Challenge repository" in result.err


def test_it_asks_which_benchmark_when_there_are_several(tmp_path):
    repo = write_wlc(tmp_path, benchmark="2025_a", rubric=None)
    write_wlc(tmp_path, benchmark="2025_b", rubric=None)
    result = run("import_wlc", str(repo))
    assert result.code == 1
    assert "several benchmarks (2025_a, 2025_b); choose one with --benchmark" in result.err
    assert run("import_wlc", str(repo), "--benchmark", "2025_b").code == 0
    assert set(Topic.objects.values_list("benchmark", flat=True)) == {"2025_b"}
    assert "no benchmark '2025_c'" in run("import_wlc", str(repo), "--benchmark", "2025_c").err


def test_it_rejects_a_criteria_file_with_a_duplicate_id_and_imports_the_articles(tmp_path):
    rubric = {"categories": [{"id": "neutral", "criteria": [{"id": "n_1", "text": "A"}, {"id": "n_1", "text": "B"}]}]}
    result = run("import_wlc", str(write_wlc(tmp_path, rubric=rubric)))
    assert result.code == 2
    assert "wiki_writing_criteria.json: duplicate criterion id 'n_1'" in result.err
    assert CriterionSet.objects.count() == 0
    assert Article.objects.count() == 4


def test_it_keeps_the_stored_article_when_the_file_changed(tmp_path):
    repo = write_wlc(tmp_path)
    run("import_wlc", str(repo))
    path = repo / "data" / "2025_test" / "test_data" / "agent_a" / "md_data" / "Red_Fox.md"
    path.write_text(article("Red Fox", "Rewritten text."), encoding="utf-8")
    result = run("import_wlc", str(repo))
    assert result.code == 2
    assert "differs from the stored article" in result.err
    stored = Article.objects.get(topic__title="Red Fox", system__key="agent_a")
    assert "Foxes hunt at night" in stored.display_markdown

    replaced = run("import_wlc", str(repo), "--replace")
    assert replaced.code == 0, replaced.err
    assert "1 updated" in replaced.out
    stored.refresh_from_db()
    assert "Rewritten text." in stored.display_markdown
    assert Article.objects.count() == 4


def test_it_takes_systems_from_folders_missing_in_agencies(tmp_path):
    repo = write_wlc(tmp_path)
    bench = repo / "data" / "2025_test" / "test_data"
    (bench / "agencies.json").write_text(json.dumps({"agencies": {}}), encoding="utf-8")
    result = run("import_wlc", str(repo))
    assert result.code == 0, result.err
    assert "system 'agent_a' is not listed in agencies.json" in result.out
    assert System.objects.get(key="agent_a").name == "agent_a"
