"""Labels-only campaigns: human votes and judges' verdicts imported without the texts they judged.

The data look like Chatbot Arena's: a battle is two models answering one question, a crowd
vote, and LLM judges' verdicts. Nothing of it is in the catalogue beforehand.
"""

import csv
import hashlib
import json

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotate.models import Article, Assignment, Campaign, Label, Pair, System, Topic
from annotate.services.claims import (
    LABELS_ONLY,
    assignment_claim_next,
    claim_candidates,
)
from annotate.services.placeholders import PLACEHOLDER_SOURCE, labels_only_benchmark
from interchange import LABEL_COLUMNS, OVERALL_COLUMNS, SPAN_COLUMNS
from judges.models import Judge, JudgeUnit, JudgeVerdict
from judges.services import judge_run_create
from tests.helpers import RUBRIC, csv_file, run

pytestmark = pytest.mark.django_db

GPT35, QWEN, CLAUDE = "gpt-3.5-turbo", "qwen2.5-72b", "claude-3.5-sonnet"
JUDGE = "gpt-4.1-mini"
FRIDGE = "Wie funktioniert ein Kühlschrank?"
TOWER = "東京タワーの高さは？"
BENCHMARK = "labels-only:arena"
COLUMNS = LABEL_COLUMNS + ("model", "error")


def battle_rows(topic: str, left: str, right: str, winner: str, *, rater: str = "crowd_1") -> list[dict]:
    """One battle: a crowd vote on ww_cc_1 (no started_at) and the judge's verdicts on the well-written category."""
    common = {"campaign": "arena", "topic": topic, "left_system": left, "right_system": right, "started_at": ""}
    human = {**common, "criterion": "ww_cc_1", "rater_kind": "human", "rater": rater, "winner_system": winner,
             "rationale": "", "saved_at": "2024-05-01T10:00:00Z"}  # fmt: skip
    judged = [
        {
            **common,
            "criterion": key,
            "rater_kind": "judge",
            "rater": JUDGE,
            "winner_system": winner,
            "rationale": "Clearer.",
            "saved_at": "",
            "model": "openai/gpt-4.1-mini",
        }  # fmt: skip
        for key in ("ww_cc_1", "ww_wtw_1")
    ]
    return [human, *judged]


def arena_rows() -> list[dict]:
    return [
        *battle_rows(FRIDGE, GPT35, QWEN, QWEN),
        *battle_rows(TOWER, CLAUDE, GPT35, "tie", rater="crowd_2"),
        # "C" and "C++" slugify alike: two topics all the same.
        *battle_rows("C", QWEN, CLAUDE, CLAUDE),
        *battle_rows("C++", GPT35, CLAUDE, GPT35),
    ]


def write_csv(path, rows, columns=COLUMNS):
    return csv_file(path, rows, columns)


def import_labels(path, *args, campaign="arena"):
    return run("import_labels", "--campaign", campaign, str(path), *args)


def counts() -> dict:
    return {
        model.__name__: model.objects.count()
        for model in (System, Topic, Article, Pair, Assignment, Label, User, Judge, JudgeUnit, JudgeVerdict)
    }


@pytest.fixture
def rubric(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(RUBRIC), encoding="utf-8")
    assert run("import_criteria", str(path)).code == 0


@pytest.fixture
def arena(rubric):
    result = run("create_campaign", "--name", "arena", "--criteria", "tiny", "--labels-only", "--allow-tie")
    assert result.code == 0, result.err
    return Campaign.objects.get(name="arena")


@pytest.fixture
def imported(arena, tmp_path):
    result = import_labels(write_csv(tmp_path / "votes.csv", arena_rows()))
    assert result.code == 0, result.err
    return arena


# --- creating the campaign --------------------------------------------------------------


def test_it_creates_a_labels_only_campaign_without_pairs_or_reference(arena):
    assert arena.labels_only and arena.allow_tie
    assert arena.reference_system is None
    assert not arena.pairs.exists()
    assert not System.objects.exists()


def test_it_sets_a_reference_only_when_asked_and_adds_a_missing_one_as_a_system(rubric):
    result = run("create_campaign", "--name", "ref", "--criteria", "tiny", "--labels-only", "--reference", GPT35)

    assert result.code == 0, result.err
    assert Campaign.objects.get(name="ref").reference_system.key == GPT35
    assert "reference system: gpt-3.5-turbo" in result.out


@pytest.mark.parametrize(
    "args, option",
    [
        (["--overlap", "2"], "overlap"),
        (["--annotators", "alice"], "annotators"),
        (["--systems", f"{GPT35},{QWEN}"], "systems"),
        (["--topics", "3"], "topics"),
        (["--no-repeats"], "no repeats"),
        (["--claim-timeout", "5"], "claim timeout"),
    ],
)
def test_it_refuses_the_options_about_annotators_and_articles(rubric, alice, args, option):
    result = run("create_campaign", "--name", "arena", "--criteria", "tiny", "--labels-only", *args)

    assert result.code == 1
    assert "A labels-only campaign pairs no articles and is never offered to annotators" in result.err
    assert f"{option} does not apply to it" in result.err
    assert not Campaign.objects.exists()


def test_it_refuses_instructions_for_nobody(rubric, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("Read both answers.", encoding="utf-8")

    result = run("create_campaign", "--name", "arena", "--criteria", "tiny", "--labels-only", "--instructions", notes)

    assert result.code == 1 and "instructions does not apply" in result.err


def test_it_still_needs_systems_for_a_campaign_with_texts(rubric):
    result = run("create_campaign", "--name", "plain", "--criteria", "tiny")

    assert result.code == 1 and "--systems is required (except with --labels-only)" in result.err


def test_it_names_the_benchmark_after_the_campaign_within_the_field():
    assert labels_only_benchmark("arena") == BENCHMARK
    long_a, long_b = "x" * 150 + "a", "x" * 150 + "b"
    assert len(labels_only_benchmark(long_a)) == 100
    assert labels_only_benchmark(long_a) != labels_only_benchmark(long_b)


# --- importing --------------------------------------------------------------------------


def test_it_imports_votes_and_verdicts_creating_systems_topics_and_textless_articles(imported):
    assert set(System.objects.values_list("key", flat=True)) == {GPT35, QWEN, CLAUDE}
    topics = {t.title: t for t in Topic.objects.all()}
    assert set(topics) == {FRIDGE, TOWER, "C", "C++"}
    assert {t.benchmark for t in topics.values()} == {BENCHMARK}
    assert topics[FRIDGE].slug == "wie-funktioniert-ein-kühlschrank"
    assert topics["C"].slug != topics["C++"].slug
    empty = hashlib.sha256(b"").hexdigest()
    for article in Article.objects.all():
        assert (article.raw_markdown, article.display_markdown, article.html, article.toc) == ("", "", "", [])
        assert (article.word_count, article.raw_word_count, article.content_hash) == (0, 0, empty)
        assert article.source == PLACEHOLDER_SOURCE
    assert Article.objects.count() == 8
    assert imported.pairs.count() == 4

    vote = Assignment.objects.get(pair__topic__title=FRIDGE)
    assert vote.annotator.username == "crowd_1" and not vote.annotator.is_active
    assert vote.status == Assignment.Status.SUBMITTED and vote.first_opened_at is None
    label = vote.labels.get()
    assert (label.criterion.key, label.winner) == ("ww_cc_1", "b" if vote.pair.article_b.system.key == QWEN else "a")
    assert Label.objects.get(assignment__pair__topic__title=TOWER).winner == "tie"

    judge = Judge.objects.get()
    assert (judge.name, judge.kind, judge.model) == (JUDGE, Judge.Kind.IMPORTED, "openai/gpt-4.1-mini")
    assert JudgeVerdict.objects.filter(unit__judge=judge).count() == 8


def test_it_changes_nothing_when_the_same_file_comes_again(imported, tmp_path):
    before = counts()

    result = import_labels(write_csv(tmp_path / "again.csv", arena_rows()))

    assert result.code == 0, result.err
    assert "unchanged: everything in the file(s) was already stored" in result.out
    assert "0 topics, 0 systems and 0 text-less articles created" in result.out
    assert counts() == before


def test_it_adds_only_what_is_missing_on_a_later_import(imported, tmp_path):
    before = counts()
    rows = battle_rows(FRIDGE, CLAUDE, QWEN, CLAUDE, rater="crowd_3")

    result = import_labels(write_csv(tmp_path / "more.csv", rows))

    assert result.code == 0, result.err
    after = counts()
    assert (after["Topic"], after["System"], after["Article"], after["Pair"]) == (
        before["Topic"], before["System"], before["Article"] + 1, before["Pair"] + 1,
    )  # fmt: skip


def test_it_keeps_the_topics_of_a_renamed_campaign(imported, tmp_path):
    Campaign.objects.filter(pk=imported.pk).update(name="arena-2024")
    rows = [{**row, "campaign": "arena-2024"} for row in battle_rows(FRIDGE, CLAUDE, QWEN, CLAUDE, rater="crowd_3")]

    result = import_labels(write_csv(tmp_path / "more.csv", rows), campaign="arena-2024")

    assert result.code == 0, result.err
    assert Topic.objects.filter(title=FRIDGE).count() == 1
    assert set(Topic.objects.values_list("benchmark", flat=True)) == {BENCHMARK}


def test_it_stores_overall_answers_beside_the_labels(rubric, tmp_path):
    assert run("create_campaign", "--name", "arena", "--criteria", "tiny", "--labels-only", "--overall").code == 0
    rows = battle_rows(FRIDGE, GPT35, QWEN, QWEN)[:1]
    path = write_csv(tmp_path / "votes.csv", rows)
    overall = {key: rows[0][key] for key in OVERALL_COLUMNS if key in rows[0]}
    write_csv(tmp_path / "votes.overall.csv", [{**overall, "overall": QWEN}], columns=OVERALL_COLUMNS)

    result = import_labels(path)

    assert result.code == 0, result.err
    assignment = Assignment.objects.get()
    assert assignment.overall == ("a" if assignment.pair.article_a.system.key == QWEN else "b")


def test_it_exports_the_imported_labels(imported, tmp_path):
    out = tmp_path / "export.csv"

    result = run("export_labels", "--campaign", "arena", "--out", str(out))

    assert result.code == 0, result.err
    with out.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted((r["rater_kind"], r["rater"]) for r in rows).count(("judge", JUDGE)) == 8
    assert {r["topic"] for r in rows} == {FRIDGE, TOWER, "C", "C++"}


def test_it_reads_json_lines_too(arena, tmp_path):
    path = tmp_path / "votes.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in arena_rows()), encoding="utf-8")

    result = import_labels(path)

    assert result.code == 0, result.err
    assert arena.pairs.count() == 4 and Topic.objects.filter(title=TOWER).exists()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"criterion": "nope"}, "unknown criterion 'nope'"),
        ({"left_system": "two words"}, "system 'two words' must be"),
        ({"topic": "x" * 301}, "topic is longer than 300 characters (301)"),
        ({"topic": ""}, "topic is empty"),
        ({"saved_at": "soon"}, "saved_at: 'soon' is not an ISO 8601 time"),
    ],
)
def test_it_imports_nothing_when_a_row_is_bad(arena, tmp_path, change, message):
    rows = arena_rows()
    rows[0] = {**rows[0], **change}
    before = counts()

    result = import_labels(write_csv(tmp_path / "votes.csv", rows))

    assert result.code == 1
    assert f"votes.csv:2: {message}" in result.err
    assert counts() == before


def test_it_leaves_nothing_behind_for_the_rows_it_skips(arena, tmp_path):
    lonely = battle_rows("Lonely question", "mistral-7b", "llama-3.1-8b", "mistral-7b")
    bad = [{**row, "criterion": "nope"} for row in lonely]

    result = import_labels(write_csv(tmp_path / "votes.csv", arena_rows() + bad), "--skip-bad")

    assert result.code == 2
    assert arena.pairs.count() == 4
    assert not Topic.objects.filter(title="Lonely question").exists()
    assert not System.objects.filter(key__in=["mistral-7b", "llama-3.1-8b"]).exists()
    assert Article.objects.count() == 8


def test_it_refuses_a_spans_file_since_there_is_no_text(arena, tmp_path):
    path = write_csv(tmp_path / "votes.csv", arena_rows())
    span = {"campaign": "arena", "topic": FRIDGE, "rater": "crowd_1", "left_system": GPT35, "right_system": QWEN,
            "system": QWEN, "start": "0", "end": "1", "quote": "x", "polarity": "up", "comment": "",
            "created_at": "2024-05-01T10:00:00Z"}  # fmt: skip
    write_csv(tmp_path / "votes.spans.csv", [span], columns=SPAN_COLUMNS)

    result = import_labels(path)

    assert result.code == 1
    assert "this campaign is labels-only: its articles have no text to mark passages in" in result.err
    assert not Topic.objects.exists()


def test_a_campaign_with_texts_still_refuses_what_its_catalogue_lacks(campaign, tmp_path):
    rows = [{**battle_rows(FRIDGE, GPT35, QWEN, QWEN)[0], "campaign": "Pilot"}]
    rows.append({**rows[0], "topic": "Marrow River", "left_system": "wikipedia"})

    result = import_labels(write_csv(tmp_path / "votes.csv", rows), campaign="Pilot")

    assert result.code == 1
    assert f"votes.csv:2: unknown topic '{FRIDGE}'" in result.err
    assert f"votes.csv:3: unknown system '{QWEN}'" in result.err
    assert not System.objects.filter(key__in=[GPT35, QWEN]).exists()
    assert not Topic.objects.filter(title=FRIDGE).exists()


# --- never offered to annotators ------------------------------------------------------------


def test_it_never_offers_a_pair_to_an_annotator(imported, client, alice):
    assert claim_candidates(campaign=imported, user=alice) == []
    assert assignment_claim_next(campaign=imported, user=alice) is None
    client.force_login(alice)

    home = client.get(reverse("home"))
    claim = client.post(reverse("claim-next", args=[imported.pk]))
    api_list = client.get(reverse("api:campaign-list"))
    api_claim = client.post(reverse("api:campaign-claim", args=[imported.pk]))

    assert home.status_code == 200 and "arena" not in home.content.decode()
    assert claim.status_code == 403 and LABELS_ONLY in claim.content.decode()
    assert api_list.status_code == 200 and api_list.json() == []
    assert api_claim.status_code == 403 and api_claim.json()["detail"] == LABELS_ONLY
    assert not Assignment.objects.filter(annotator=alice).exists()


def test_it_refuses_the_annotation_pages_of_labels_imported_under_an_annotators_name(arena, client, alice, tmp_path):
    rows = battle_rows(FRIDGE, GPT35, QWEN, QWEN, rater="alice")
    assert import_labels(write_csv(tmp_path / "votes.csv", rows)).code == 0
    assignment = Assignment.objects.get(annotator=alice)
    client.force_login(alice)

    page = client.get(reverse("assignment", args=[assignment.pk]))
    save = client.post(reverse("label-save", args=[assignment.pk, "ww_cc_1"]), {"position": "1", "rationale": "Good."})
    api_page = client.get(reverse("api:assignment-detail", args=[assignment.pk]))
    api_list = client.get(reverse("api:assignment-list"))

    assert page.status_code == 403 and "labels-only campaign" in page.content.decode()
    assert save.status_code == 403
    assert api_page.status_code == 403 and "labels-only campaign" in api_page.json()["detail"]
    assert api_list.json()["results"] == []
    assert assignment.labels.get().winner != ""  # the imported vote is untouched


# --- researchers' pages and what needs texts -----------------------------------------------------


def test_it_marks_the_campaign_on_the_staff_pages(imported, client, rachel, django_user_model):
    client.force_login(rachel)

    listing = client.get(reverse("campaign-list"))
    detail = client.get(reverse("campaign-detail", args=[imported.pk]))
    judges = client.get(reverse("judge-campaign", args=[imported.pk]))
    api = client.get(reverse("api:campaign-detail", args=[imported.pk]))

    for response in (listing, detail, judges):
        assert response.status_code == 200
        assert "labels only — no texts" in response.content.decode()
    assert "Start a run" not in judges.content.decode()
    assert "Blindness audit" not in detail.content.decode()
    assert api.json()["labels_only"] is True
    admin = django_user_model.objects.create_superuser("root", password="root-password")
    client.force_login(admin)
    changelist = client.get(reverse("admin:annotate_campaign_changelist"))
    assert changelist.status_code == 200 and "Labels only" in changelist.content.decode()


def test_it_refuses_to_run_judges_on_it(imported, client, rachel):
    judge = Judge.objects.create(name="longer", kind=Judge.Kind.LENGTH)
    client.force_login(rachel)

    result = run("run_judges", "--campaign", "arena", "--judge", "longer")
    dry = run("run_judges", "--campaign", "arena", "--judge", "longer", "--dry-run")
    page = client.post(reverse("judge-run-start", args=[imported.pk]), {"judge": judge.pk, "concurrency": 1, "seed": 0})

    assert result.code == 1 and "'arena' is a labels-only campaign" in result.err
    assert dry.code == 1 and "no texts for a judge to read" in dry.err
    assert page.status_code == 422 and "judges cannot be run on it" in page.content.decode()
    with pytest.raises(ValidationError, match="labels-only campaign"):
        judge_run_create(campaign=imported, judge=judge)
    assert not judge.runs.exists()


def test_it_refuses_the_blindness_audit(imported, client, rachel):
    client.force_login(rachel)

    page = client.get(reverse("campaign-blindness", args=[imported.pk]))
    command = run("blindness_report", "--campaign", "arena")

    assert page.status_code == 409 and "no looks to audit" in page.content.decode()
    assert command.code == 1 and "labels-only campaign" in command.err


def test_it_keeps_placeholders_out_of_exports_topic_pages_and_new_campaigns(imported, client, rachel, tmp_path):
    out = tmp_path / "articles.jsonl"
    client.force_login(rachel)

    exported = run("export_articles", "--out", str(out))
    refused = run("export_articles", "--out", str(out), "--benchmark", BENCHMARK)
    topics = client.get(reverse("topic-list"))
    systems = f"{GPT35},{QWEN}"
    paired = run("create_campaign", "--name", "texts", "--criteria", "tiny", "--systems", systems, "--pairs", "all")

    assert exported.code == 0 and out.read_text(encoding="utf-8") == ""
    assert refused.code == 1 and "labels-only campaign" in refused.err
    assert topics.status_code == 200 and FRIDGE not in topics.content.decode()
    assert paired.code == 1 and "the campaign would have no pairs" in paired.err
