"""Judges' verdicts in the long-format label files: exported beside the humans', and imported back."""

import csv
import hashlib
import json

import pytest

from annotate.services.campaigns import campaign_create
from common.names import NAME_RULE
from judges.models import Judge, JudgeCall, JudgeUnit, JudgeVerdict
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.helpers import run
from tests.test_export_labels import choose, claim, read_csv

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"


@pytest.fixture
def judged(demo_campaign, llm_server, monkeypatch):
    """The demo campaign judged by an LLM (both orders, one unit left in error) and by the length baseline."""
    monkeypatch.setenv(KEY_ENV, "sk-test-export-9d2e")
    llm, _ = judge_create(
        name="fake-gpt", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV, input_price="0", output_price="10"
    )
    length, _ = judge_create(name="longer", kind="length")
    llm_server.script("truncated", "wrong_count", "not_json")
    for judge, swap in ((llm, True), (length, False)):
        judge_run_execute(run=judge_run_create(campaign=demo_campaign, judge=judge, swap=swap, limit=3, concurrency=1))
    human = claim(demo_campaign, "annotator1", a_first=True)
    choose(human, "ww_cc_1", "1")
    return demo_campaign


UNREADABLE = "unreadable answer after 3 attempt(s): the response holds no JSON: 'Both articles"


def expected_rows(campaign) -> set[tuple]:
    """(topic, criterion, judge, left system, right system) for every criterion of every unit the judges finished."""
    wanted = set()
    for unit in (
        JudgeUnit.objects.filter(pair__campaign=campaign)
        .exclude(status="pending")
        .select_related("judge", "pair__topic", "pair__article_a__system", "pair__article_b__system")
    ):
        pair = unit.pair
        left, right = (pair.article_a, pair.article_b) if unit.a_first else (pair.article_b, pair.article_a)
        for criterion in unit.category.criteria.all():
            wanted.add((pair.topic.title, criterion.key, unit.judge.name, left.system.key, right.system.key))
    return wanted


def test_it_exports_a_verdict_or_an_error_for_every_pair_criterion_and_order(judged, tmp_path):
    out = tmp_path / "labels.csv"

    result = run("export_labels", "--campaign", "Demo campaign", "--out", str(out))

    assert result.code == 0, result.err
    rows = read_csv(out)
    judge_rows = [r for r in rows if r["rater_kind"] == "judge"]
    keys = [(r["topic"], r["criterion"], r["rater"], r["left_system"], r["right_system"]) for r in judge_rows]
    assert len(keys) == len(set(keys)) == (3 * 2 + 3) * 39  # none twice
    assert set(keys) == expected_rows(judged)  # none missing, none invented
    errors = [r for r in judge_rows if r["winner_system"] == ""]
    error_unit = JudgeUnit.objects.get(status="error")
    assert len(errors) == error_unit.category.criteria.count()
    assert all(r["error"].startswith("unreadable answer after 3 attempt(s)") and r["rater"] == "fake-gpt" for r in errors)
    assert {r["call_id"] for r in errors} == {str(error_unit.calls.order_by("id").last().pk)}
    human = [r for r in rows if r["rater_kind"] == "human"]
    assert len(human) == 1 and human[0]["model"] == human[0]["call_id"] == human[0]["error"] == ""


def test_it_names_systems_and_positions_as_the_judge_saw_them(judged, tmp_path):
    out = tmp_path / "labels.jsonl"
    assert run("export_labels", "--campaign", "Demo campaign", "--out", str(out)).code == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]

    verdicts = {
        v.pk: v for v in JudgeVerdict.objects.select_related("call", "unit__pair__article_a__system", "unit__pair__article_b__system")
    }
    for row in (r for r in rows if r["rater_kind"] == "judge" and r["winner_system"]):
        assert row["winner_system"] == (row["left_system"] if row["position"] == "1" else row["right_system"])
        if row["rater"] == "fake-gpt":
            call = JudgeCall.objects.get(pk=row["call_id"])
            assert call.valid and (row["prompt_tokens"], row["completion_tokens"], row["latency_ms"]) == (
                call.prompt_tokens,
                call.completion_tokens,
                call.latency_ms,
            )
            assert row["cost_usd"] == f"{call.cost_usd:.8f}" and row["model"] == "fake-judge"
        else:
            assert row["call_id"] is None and row["cost_usd"] is None
    assert len(verdicts) == sum(1 for r in rows if r["rater_kind"] == "judge" and r["winner_system"])
    # Sums over distinct calls give the runs' cost.
    per_call = {r["call_id"]: r["cost_usd"] for r in rows if r["rater"] == "fake-gpt"}
    total = sum(float(c) for c in per_call.values())
    assert abs(total - float(sum(JudgeCall.objects.filter(pk__in=per_call).values_list("cost_usd", flat=True)))) < 1e-9


def test_it_keeps_the_thirteen_columns_for_a_humans_only_export(demo_campaign, tmp_path):
    choose(claim(demo_campaign, "annotator1", a_first=True), "ww_cc_1", "1")
    out = tmp_path / "labels.csv"

    assert run("export_labels", "--campaign", "Demo campaign", "--out", str(out)).code == 0

    with out.open(encoding="utf-8", newline="") as handle:
        assert len(next(csv.reader(handle))) == 13  # no judge columns; the last are annotator_removed, neutral_emphasis


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_it_imports_judge_rows_into_another_campaign(judged, tmp_path, fmt):
    source = tmp_path / f"labels.{fmt}"
    assert run("export_labels", "--campaign", "Demo campaign", "--out", str(source)).code == 0
    campaign_create(
        name="Copy", criterion_set=judged.criterion_set, systems=["wikipedia", "atlas_agent", "quill_researcher"], benchmark="demo"
    )
    Judge.objects.filter(name="fake-gpt").update(name="fake-gpt-original")  # the copy's rows then create an imported judge
    text = source.read_text(encoding="utf-8").replace("Demo campaign", "Copy")
    source.write_text(text, encoding="utf-8")
    for companion in (tmp_path / f"labels.overall.{fmt}", tmp_path / f"labels.spans.{fmt}"):
        companion.unlink()  # no overall answers nor spans here (and an empty .jsonl is refused)

    result = run("import_labels", "--campaign", "Copy", str(source))

    assert result.code == 0, result.err
    # fake-gpt: (3 x 2 + 3) pair orders x 26 criteria, as 234 units: an imported judge keeps each answer (or its error)
    # as a unit of its own; longer (a judge of this database, category mode): 3 pairs x 3 categories; the human's one label
    assert result.out == (
        "labels: 1 new, 0 updated, 0 unchanged\n"
        "assignments: 1 new, 0 updated, 0 unchanged\n"
        "judge units (pair, order, category or criterion): 243 new, 0 updated, 0 unchanged; judges created: 1\n"
        f"judge fake-gpt: 213 answers imported, 21 stored as errors (21 '{UNREADABLE}')\n"
        "judge longer: 117 answers imported, 0 stored as errors\n"
        "pairs created: 0; rater accounts created: 0\n"
        "the calibration report is queued for the task worker (manage.py db_worker), so that the dashboard opens at once\n"
    )
    imported = Judge.objects.get(name="fake-gpt")
    assert (imported.kind, imported.model) == ("imported", "fake-judge")
    again = tmp_path / f"again.{fmt}"
    assert run("export_labels", "--campaign", "Copy", "--out", str(again)).code == 0
    decided = {
        "topic",
        "criterion",
        "rater_kind",
        "rater",
        "left_system",
        "right_system",
        "winner_system",
        "rationale",
        "position",
        "error",
    }

    def judged_rows(path):
        rows = read_csv(path) if fmt == "csv" else [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return sorted(tuple(sorted((k, v) for k, v in r.items() if k in decided)) for r in rows if r["rater_kind"] == "judge")

    assert judged_rows(again) == judged_rows(source)
    stored = (JudgeUnit.objects.count(), JudgeVerdict.objects.count(), JudgeCall.objects.count())
    second = run("import_labels", "--campaign", "Copy", str(source))  # a second import changes nothing
    assert (second.code, second.err) == (0, "")
    assert second.out == (
        "labels: 0 new, 0 updated, 1 unchanged\n"
        "assignments: 0 new, 0 updated, 1 unchanged\n"
        "judge units (pair, order, category or criterion): 0 new, 0 updated, 243 unchanged; judges created: 0\n"
        f"judge fake-gpt: 213 answers imported, 21 stored as errors (21 '{UNREADABLE}')\n"
        "judge longer: 117 answers imported, 0 stored as errors\n"
        "pairs created: 0; rater accounts created: 0\n"
        "unchanged: everything in the file(s) was already stored\n"
    )
    assert (JudgeUnit.objects.count(), JudgeVerdict.objects.count(), JudgeCall.objects.count()) == stored


def test_it_reports_bad_judge_rows(judged, tmp_path):
    source = tmp_path / "labels.csv"
    assert run("export_labels", "--campaign", "Demo campaign", "--out", str(source)).code == 0
    rows = read_csv(source)
    first, second, third = [i for i, r in enumerate(rows) if r["rater_kind"] == "judge" and r["winner_system"]][:3]
    rows[first]["winner_system"] = ""
    rows[second]["rater"] = "two words"
    rows[third]["error"] = "made up"
    with source.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)

    result = run("import_labels", "--campaign", "Demo campaign", str(source))

    assert result.code == 1
    # Line numbers count the header as line 1.
    assert f"{source}:{first + 2}: winner_system is empty and error is empty" in result.err
    assert f"{source}:{second + 2}: judge name 'two words' must be {NAME_RULE}" in result.err
    assert f"{source}:{third + 2}: a judge row has either a winner_system or an error, not both" in result.err


def test_it_exports_every_billed_call_so_that_costs_sum_to_the_runs_spend(judged, tmp_path):
    from decimal import Decimal

    from judges.models import JudgeRun

    out = tmp_path / "labels.csv"
    assert run("export_labels", "--campaign", "Demo campaign", "--out", str(out)).code == 0
    calls = read_csv(tmp_path / "labels.calls.csv")

    assert len(calls) == JudgeCall.objects.filter(unit__pair__campaign=judged).count()
    assert len({c["call_id"] for c in calls}) == len(calls)
    spent = sum((run.cost_usd for run in JudgeRun.objects.filter(campaign=judged)), Decimal(0))
    exported = sum((Decimal(c["cost_usd"]) for c in calls), Decimal(0))
    assert spent > 0 and exported == spent  # to the last of eight decimals, so to the cent
    statuses = {c["status"] for c in calls}
    assert statuses == {"valid", "invalid"}, statuses  # the scripted bad answers were billed and retried
    invalid = [c for c in calls if c["status"] == "invalid"]
    assert len(invalid) == 3 and all(c["error"] and c["judge"] == "fake-gpt" for c in invalid)
    # the label rows name only the calls behind verdicts: their sum misses the retried attempts
    labelled = {r["call_id"]: Decimal(r["cost_usd"]) for r in read_csv(out) if r["rater_kind"] == "judge" and r["call_id"]}
    assert sum(labelled.values(), Decimal(0)) < spent


def test_it_writes_no_calls_file_when_no_judge_called(demo_campaign, tmp_path):
    out = tmp_path / "labels.csv"
    assert run("export_labels", "--campaign", "Demo campaign", "--out", str(out)).code == 0
    assert not (tmp_path / "labels.calls.csv").exists()


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_it_exports_the_confidence_of_judge_rows_and_reads_it_back(demo_campaign, llm_server, monkeypatch, tmp_path, fmt):
    monkeypatch.setenv(KEY_ENV, "sk-test-export-9d2e")
    sure, _ = judge_create(
        name="sure-gpt", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV,
        input_price="0", output_price="10", confidence="logprobs",
    )  # fmt: skip
    # A confidence per criterion from a hand-made rule, so that the rows differ.
    llm_server.confidence = lambda key, message: 0.55 + (int(hashlib.sha256(key.encode()).hexdigest(), 16) % 40) / 100
    judge_run_execute(run=judge_run_create(campaign=demo_campaign, judge=sure, limit=1, concurrency=1))

    def confidences(judge_name: str) -> dict:
        verdicts = JudgeVerdict.objects.filter(unit__judge__name=judge_name).select_related("criterion", "unit__pair__topic")
        return {(v.unit.pair.topic.title, v.unit.a_first, v.criterion.key, v.winner): v.confidence for v in verdicts}

    original = confidences("sure-gpt")
    assert len(original) == 39 and None not in original.values() and len(set(original.values())) > 5
    source = tmp_path / f"labels.{fmt}"
    assert run("export_labels", "--campaign", "Demo campaign", "--out", str(source)).code == 0
    rows = read_csv(source) if fmt == "csv" else [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    written = [row["confidence"] for row in rows if row["rater"] == "sure-gpt"]
    assert len(written) == 39 and sorted(float(c) for c in written) == sorted(original.values())
    assert {row["confidence"] for row in rows if row["rater_kind"] != "judge"} <= {"", None}

    campaign_create(
        name="Copy", criterion_set=demo_campaign.criterion_set, systems=["wikipedia", "atlas_agent", "quill_researcher"], benchmark="demo"
    )
    Judge.objects.filter(name="sure-gpt").update(name="sure-gpt-original")  # the copy's rows then create an imported judge
    source.write_text(source.read_text(encoding="utf-8").replace("Demo campaign", "Copy"), encoding="utf-8")
    for companion in (tmp_path / f"labels.overall.{fmt}", tmp_path / f"labels.spans.{fmt}"):
        companion.unlink(missing_ok=True)
    result = run("import_labels", "--campaign", "Copy", str(source))
    assert result.code == 0, result.err
    assert confidences("sure-gpt") == original
