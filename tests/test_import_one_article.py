"""Labels files with one-article rows (a `response` column): checklists, ratings and counts, by humans and judges.

A labels-only campaign takes every type beside its pairwise votes; its rubric grows with each
criterion's response type. Export then import is an exact round trip; a bad row is refused with
its line and nothing is written.
"""

import csv

import pytest

from annotate.models import Answer, Criterion, LabelChange, Reading, ReadingAssignment
from interchange import LABEL_COLUMNS
from judges.models import JudgeUnit, JudgeVerdict
from tests.helpers import csv_file, run

pytestmark = pytest.mark.django_db

COLUMNS = LABEL_COLUMNS + ("response", "system", "answer", "model", "error")
GPT, QWEN = "gpt-4o", "qwen-72b"
JUDGE = "judge-mini"


def one(topic, system, criterion, rater, answer, response, *, kind="human", rationale="", saved="2024-05-01T10:00:00Z", **extra):
    row = {"campaign": "arena", "topic": topic, "criterion": criterion, "rater_kind": kind, "rater": rater,
           "left_system": "", "right_system": "", "winner_system": "", "rationale": rationale, "started_at": "",
           "saved_at": saved if kind == "human" else "", "response": response, "system": system, "answer": answer}  # fmt: skip
    return {**row, **extra}


def mixed_rows() -> list[dict]:
    pair = {"campaign": "arena", "topic": "Fridges", "criterion": "depth", "rater_kind": "human", "rater": "ann_1",
            "left_system": GPT, "right_system": QWEN, "winner_system": QWEN, "rationale": "", "started_at": "",
            "saved_at": "2024-05-01T09:00:00Z"}  # fmt: skip
    rows = [pair]
    for topic in ("Fridges", "Towers"):
        for system, base in ((GPT, 4), (QWEN, 2)):
            for rater, shift in (("ann_1", 0), ("ann_2", 1)):
                rows.append(one(topic, system, "clarity", rater, str(min(5, base + shift)), "rating 1-5", rationale="Reads well."))
                rows.append(one(topic, system, "has_summary", rater, "yes" if base > 3 else "na", "checklist+na"))
                rows.append(one(topic, system, "errors", rater, str(shift + (base == 2)), "count"))
            rows.append(one(topic, system, "clarity", JUDGE, str(base), "rating 1-5", kind="judge", rationale="Fine.", model="m/mini"))
            # An error fills every criterion the judge could not answer.
            for key, cell in (("has_summary", "checklist+na"), ("errors", "count")):
                rows.append(one(topic, system, key, JUDGE, "", cell, kind="judge", model="m/mini", error="no JSON in the reply"))
    return rows


def write_csv(path, rows, columns=COLUMNS):
    return csv_file(path, rows, columns)


@pytest.fixture
def arena():
    result = run("create_campaign", "--name", "arena", "--labels-only", "--allow-tie")
    assert result.code == 0, result.err


def test_it_imports_every_response_type_into_a_labels_only_campaign(arena, tmp_path):
    result = run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "in.csv", mixed_rows())))

    assert result.code == 0, result.err
    responses = {c.key: c.response for c in Criterion.objects.filter(criterion_set__campaigns__name="arena")}
    assert responses["depth"] == {}
    assert responses["has_summary"] == {"type": "checklist", "allow_na": True}
    assert responses["errors"] == {"type": "count"}
    assert [p["value"] for p in responses["clarity"]["points"]] == [1, 2, 3, 4, 5]
    assert Reading.objects.filter(campaign__name="arena").count() == 4
    assert ReadingAssignment.objects.filter(status="submitted").count() == 8
    assert Answer.objects.count() == 24
    assert Answer.objects.get(assignment__annotator__username="ann_2", criterion__key="clarity",
                              assignment__pair__article_a__system__key=GPT, assignment__pair__topic__title="Towers").value == "5"  # fmt: skip
    units = JudgeUnit.objects.filter(pair__kind="reading")
    # The file's judge is imported in criterion mode: its error rows mark their two criteria alone, its ratings stand.
    assert units.count() == 12
    assert {(u.criterion.key, u.status) for u in units.select_related("criterion")} == {
        ("clarity", "done"), ("has_summary", "error"), ("errors", "error"),
    }  # fmt: skip
    assert sorted(JudgeVerdict.objects.filter(unit__in=units).values_list("answer", flat=True)) == ["2", "2", "4", "4"]
    changes = LabelChange.objects.filter(assignment__pair__kind="reading")
    assert set(changes.values_list("source", flat=True)) == {"import"}
    assert changes.filter(field="value").count() == 24 and changes.filter(field="status").count() == 8
    assert "one-article answers: 24 new" in result.out


def test_it_round_trips_export_and_import_exactly(arena, tmp_path):
    assert run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "in.csv", mixed_rows()))).code == 0
    first = tmp_path / "first.csv"
    assert run("export_labels", "--campaign", "arena", "--out", str(first)).code == 0
    text = first.read_text(encoding="utf-8")
    header = text.splitlines()[0].split(",")
    assert header[header.index("neutral_emphasis") + 1 : header.index("neutral_emphasis") + 4] == ["response", "system", "answer"]
    exported = list(csv.DictReader(text.splitlines()))
    wanted = {
        (r["topic"], r["criterion"], r["rater"], r.get("system", ""), r.get("answer", ""), r.get("response", ""), r["rationale"])
        for r in mixed_rows()
    }
    assert {(r["topic"], r["criterion"], r["rater"], r["system"], r["answer"], r["response"], r["rationale"]) for r in exported} == wanted

    again = run("import_labels", "--campaign", "arena", str(first))
    second = tmp_path / "second.csv"
    assert run("export_labels", "--campaign", "arena", "--out", str(second)).code == 0

    assert again.code == 0, again.err
    assert "unchanged: everything in the file(s) was already stored" in again.out
    assert second.read_bytes() == first.read_bytes()


def test_it_round_trips_jsonl_into_a_new_campaign(arena, tmp_path):
    assert run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "in.csv", mixed_rows()))).code == 0
    first = tmp_path / "first.jsonl"
    assert run("export_labels", "--campaign", "arena", "--out", str(first)).code == 0
    assert run("create_campaign", "--name", "copy", "--labels-only", "--allow-tie").code == 0
    moved = tmp_path / "moved.jsonl"
    moved.write_text(first.read_text(encoding="utf-8").replace('"campaign": "arena"', '"campaign": "copy"'), encoding="utf-8")

    result = run("import_labels", "--campaign", "copy", str(moved))
    second = tmp_path / "second.jsonl"
    assert run("export_labels", "--campaign", "copy", "--out", str(second)).code == 0

    assert result.code == 0, result.err
    # The judge rows' saved_at is when the unit was stored: the only cells a new campaign cannot give back.
    strip = [line.split('"saved_at"')[0] + line.split('"annotator_removed"')[-1] for line in moved.read_text().splitlines()]
    back = [line.split('"saved_at"')[0] + line.split('"annotator_removed"')[-1] for line in second.read_text().splitlines()]
    assert back == strip


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (one("Fridges", GPT, "clarity", "ann_1", "7", "rating 1-5"), "answer '7' is not a point of the scale 1-5"),
        (one("Fridges", GPT, "clarity", "ann_1", "4", "likert"), "unknown response type 'likert'"),
        (one("Fridges", GPT, "has_summary", "ann_1", "na", "checklist"), "answer 'na' is not one of yes, no"),
        (one("Fridges", GPT, "errors", "ann_1", "-1", "count"), "answer"),
        (one("Fridges", GPT, "clarity", "ann_1", "", "rating 1-5"), "answer is empty"),
        (one("Fridges", "", "clarity", "ann_1", "3", "rating 1-5"), "system is empty"),
        (one("Fridges", GPT, "style", "ann_1", "3", "rating"), "a new rating criterion needs its scale"),
        ({**one("Fridges", GPT, "clarity", "ann_1", "3", "rating 1-5"), "left_system": QWEN}, "leaves left_system, right_system"),
    ],
)
def test_it_refuses_a_bad_row_naming_its_line_and_writes_nothing(arena, tmp_path, row, message):
    good = one("Towers", QWEN, "clarity", "ann_2", "3", "rating 1-5")
    result = run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "bad.csv", [good, row])))

    assert result.code != 0
    assert "bad.csv:3" in result.err and message in result.err, result.err
    assert not Answer.objects.exists() and not Reading.objects.exists() and not ReadingAssignment.objects.exists()
    assert not Criterion.objects.filter(criterion_set__campaigns__name="arena").exists()


def test_it_refuses_a_criterion_answered_as_two_types(arena, tmp_path):
    rows = [
        one("Fridges", GPT, "clarity", "ann_1", "3", "rating 1-5"),
        one("Fridges", QWEN, "clarity", "ann_1", "yes", "checklist"),
        {**mixed_rows()[0], "criterion": "clarity"},
    ]
    result = run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "two.csv", rows)))

    assert result.code != 0
    assert "two.csv:3: response is 'checklist' but the criterion is rating 1-5" in result.err, result.err
    assert "two.csv:4: criterion 'clarity' is answered on one article (rating 1-5)" in result.err, result.err
    assert not Answer.objects.exists()


def test_it_keeps_a_pairwise_export_without_the_new_columns(arena, tmp_path):
    assert run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "in.csv", mixed_rows()[:1]))).code == 0
    out = tmp_path / "out.csv"
    assert run("export_labels", "--campaign", "arena", "--out", str(out)).code == 0
    header = out.read_text(encoding="utf-8").splitlines()[0]
    assert "response" not in header and "answer" not in header


def test_it_updates_a_changed_answer_and_records_the_change(arena, tmp_path):
    rows = mixed_rows()
    assert run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "in.csv", rows))).code == 0
    changed = [dict(r) for r in rows]
    target = next(r for r in changed if r["criterion"] == "clarity" and r["rater"] == "ann_1")
    target["answer"], target["saved_at"] = "1", "2024-05-02T10:00:00Z"

    result = run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "changed.csv", changed)))

    assert result.code == 0, result.err
    assert "one-article answers: 0 new, 1 updated, 23 unchanged" in result.out
    change = LabelChange.objects.filter(assignment__pair__kind="reading", field="value").order_by("-id").first()
    assert (change.old_value, change.new_value, change.source, change.changed_by.username) == (
        str(min(5, 4 + 0)),
        "1",
        "import",
        "ann_1",
    )
