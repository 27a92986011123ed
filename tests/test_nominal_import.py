"""Nominal criteria end to end (issue 39): a rubric with a five-class criterion (non-ASCII names) and a
checklist whose N/A is a class, imported by import_criteria; human and judge answers imported from a
labels file; the report's figures (equal to the metrics' on the same answers, which equal scikit-learn,
statsmodels and krippendorff in tests/test_nominal_statistics.py); an exact export round trip. A new
nominal criterion can also grow from a labels file's response cell."""

import csv
import json
import random

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotate.models import Answer, Campaign, Criterion
from calibration.report.build import build_report
from interchange import LABEL_COLUMNS
from judges.models import JudgeVerdict
from tests.helpers import csv_file, run

pytestmark = pytest.mark.django_db

COLUMNS = LABEL_COLUMNS + ("response", "system", "answer", "model", "error")
CLASSES = ["Oui", "Partiellement", "Non", "Sans réponse", "Hors sujet"]
CELL = "nominal: " + " | ".join(CLASSES)
SYSTEMS = ("gpt-4o", "qwen-72b")
HUMANS = ("ann_1", "ann_2", "ann_3")
JUDGE = "judge-mini"
RUBRIC = {
    "name": "Relations",
    "categories": [
        {
            "id": "rel",
            "name": "Relations",
            "criteria": [
                {"id": "stance", "text": "What does the article say about the claim?", "response": {"type": "nominal", "classes": CLASSES}},
                {"id": "dated", "text": "Is the claim dated?", "response": {"type": "checklist", "na": "class"}},
            ],
        }
    ],
}


def one(topic, system, criterion, rater, answer, response, kind="human"):
    return {
        "campaign": "relations", "topic": topic, "criterion": criterion, "rater_kind": kind, "rater": rater,
        "left_system": "", "right_system": "", "winner_system": "", "rationale": "", "started_at": "",
        "saved_at": "2024-05-01T10:00:00Z" if kind == "human" else "", "response": response, "system": system,
        "answer": answer, "model": "m/mini" if kind == "judge" else "", "error": "",
    }  # fmt: skip


def answers(topics: int = 30, seed: int = 3) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for t in range(topics):
        for system in SYSTEMS:
            stance, dated = rng.randrange(5), rng.choice(("yes", "no", "na"))
            for rater in (*HUMANS, JUDGE):
                kind = "judge" if rater == JUDGE else "human"
                given = stance if rng.random() < 0.75 else rng.randrange(5)
                when = dated if rng.random() < 0.8 else rng.choice(("yes", "no", "na"))
                rows.append(one(f"Topic {t:02d}", system, "stance", rater, CLASSES[given], CELL, kind))
                rows.append(one(f"Topic {t:02d}", system, "dated", rater, when, "checklist+na-class", kind))
    return rows


@pytest.fixture
def relations(tmp_path):
    (tmp_path / "relations.json").write_text(json.dumps(RUBRIC, ensure_ascii=False), encoding="utf-8")
    assert run("import_criteria", str(tmp_path / "relations.json")).code == 0
    assert run("create_campaign", "--name", "relations", "--criteria", "relations", "--labels-only").code == 0
    rows = answers()
    result = run("import_labels", "--campaign", "relations", str(csv_file(tmp_path / "answers.csv", rows, COLUMNS)))
    assert result.code == 0, result.err
    return Campaign.objects.get(name="relations"), rows


def _pairs(rows, criterion, code):
    """(judge answer, human answer) codes over every human answer beside the judge's."""
    by_item = {}
    for r in rows:
        if r["criterion"] == criterion:
            by_item.setdefault((r["topic"], r["system"]), {})[r["rater"]] = code(r["answer"])
    x, h = [], []
    for item in by_item.values():
        for rater in HUMANS:
            x.append(item[JUDGE])
            h.append(item[rater])
    return x, h


def test_it_imports_a_five_class_criterion_and_reports_its_figures(relations):
    campaign, rows = relations
    assert Criterion.objects.get(key="stance").response == {"type": "nominal", "classes": CLASSES}
    assert Answer.objects.filter(criterion__key="stance").count() == 60 * 3
    assert set(JudgeVerdict.objects.filter(criterion__key="stance").values_list("answer", flat=True)) <= set(CLASSES)

    report = build_report(campaign, rounds=40, alt_epsilon=0.15, alt_epsilon_reason="trained annotators")
    tables = {(t["response"], tuple(t["scale"])): t for t in report["pointwise"]["tables"]}
    assert set(tables) == {("nominal", tuple(CLASSES)), ("nominal", ("yes", "no", "na"))}
    stance = tables["nominal", tuple(CLASSES)]
    assert stance["n_answers"] == 240 and stance["n_items"] == 60
    figures = stance["judges"][JUDGE]["figures"]
    x, h = _pairs(rows, "stance", CLASSES.index)
    assert figures["figures"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(x, h), abs=1e-6)
    assert figures["figures"]["kappa"]["n"] == 180
    assert np.asarray(figures["confusion"]).shape == (5, 5)
    assert {"fleiss_kappa", "alpha_nominal"} <= set(stance["human_panel"]["figures"])
    alt = stance["judges"][JUDGE]["alt_test"]
    assert alt["scoring"] == "categorical" and alt["note"] is None
    shares = stance["judges"][JUDGE]["powered_means"]["classes"]
    assert list(shares) == CLASSES and set(shares["Oui"]["systems"]) == set(SYSTEMS)
    assert stance["cross_protocol"] is None

    # N/A a class: every "na" answer is counted, as the third class.
    dated = tables["nominal", ("yes", "no", "na")]
    assert dated["n_answers"] == 240
    x, h = _pairs(rows, "dated", ("yes", "no", "na").index)
    assert 2 in h and dated["judges"][JUDGE]["figures"]["figures"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(x, h), abs=1e-6)


def test_it_prints_the_nominal_tables_through_the_command(relations):
    md = run("calibration_report", "--campaign", "relations", "--format", "md", "--rounds", "30", "--epsilon", "0.15",
             "--epsilon-reason", "trained annotators")  # fmt: skip
    assert md.code == 0, md.err
    assert "nominal (Oui / Partiellement / Non / Sans réponse / Hors sujet)" in md.out
    assert "One-article answers: classes against the human majority" in md.out
    assert "share of Sans réponse" in md.out
    confusion = run("calibration_report", "--campaign", "relations", "--format", "csv", "--table", "pointwise_confusion", "--rounds", "30")
    assert confusion.code == 0, confusion.err
    rows = list(csv.reader(confusion.out.splitlines()))
    assert {row[2] for row in rows[1:]} <= {*CLASSES, "yes", "no", "na"} and len(rows) > 5


def test_it_round_trips_nominal_answers_through_export_and_import(relations, tmp_path):
    first = tmp_path / "first.csv"
    assert run("export_labels", "--campaign", "relations", "--out", str(first)).code == 0
    exported = list(csv.DictReader(first.read_text(encoding="utf-8").splitlines()))
    assert {r["response"] for r in exported} == {CELL, "checklist+na-class"}
    assert "Sans réponse" in {r["answer"] for r in exported}
    again = run("import_labels", "--campaign", "relations", str(first))
    assert again.code == 0, again.err
    assert "unchanged: everything in the file(s) was already stored" in again.out


def test_it_grows_a_nominal_criterion_from_a_labels_file_and_refuses_an_unknown_class(tmp_path):
    assert run("create_campaign", "--name", "relations", "--labels-only").code == 0
    rows = [one("T", "gpt-4o", "stance", "ann_1", "Hors sujet", CELL), one("T", "gpt-4o", "stance", "ann_2", "Oui", CELL)]
    result = run("import_labels", "--campaign", "relations", str(csv_file(tmp_path / "a.csv", rows, COLUMNS)))
    assert result.code == 0, result.err
    assert Criterion.objects.get(key="stance").response == {"type": "nominal", "classes": CLASSES}
    bad = [one("T", "qwen-72b", "stance", "ann_1", "Peut-être", CELL)]
    refused = run("import_labels", "--campaign", "relations", str(csv_file(tmp_path / "b.csv", bad, COLUMNS)))
    assert refused.code != 0 and "answer 'Peut-être' is not one of Oui, Partiellement" in refused.err
    other = [one("T", "qwen-72b", "stance", "ann_1", "Oui", "nominal: Oui | Non")]
    refused = run("import_labels", "--campaign", "relations", str(csv_file(tmp_path / "c.csv", other, COLUMNS)))
    assert refused.code != 0 and "response is 'nominal: Oui | Non' but the criterion is " + CELL in refused.err


def test_it_shows_the_nominal_tables_on_the_dashboard(client, rachel, relations, settings):
    from django.urls import reverse

    settings.CALIBRATION_ROUNDS = 30
    campaign, _ = relations
    client.force_login(rachel)
    response = client.get(reverse("calibration-dashboard", args=[campaign.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "One-article answers: classes against the human majority" in html
    assert "alpha_nominal" in html and "share of Hors sujet" in html
