"""The one-article alt-test pooled over a rubric's criteria whatever their scales, with each scale's
test kept as the breakdown (issue 39, item 3): features scored 0-2 and 1-6 give one pooled test."""

import csv
import random

import numpy as np
import pytest

from annotate.models import Campaign
from calibration.metrics import alttest
from calibration.metrics.alttest_wins import Ratings
from calibration.pointwise_selectors import pointwise_inputs
from calibration.report.build import build_report
from calibration.report.formats import render_md, render_table_csv
from tests.helpers import run
from tests.test_report_pointwise import write_csv

pytestmark = pytest.mark.django_db

HUMANS = ("ann_1", "ann_2", "ann_3")
FEATURES = (("fluency", "rating 0-2", 0, 2), ("depth", "rating 1-6", 1, 6))


def two_scales(topics: int = 20, seed: int = 3) -> list[dict]:
    """Each article's features scored 0-2 and 1-6 by three annotators and a judge that answers near them."""
    rng = random.Random(seed)
    rows = []
    for t in range(topics):
        for system in ("sys-a", "sys-b"):
            for criterion, response, low, high in FEATURES:
                truth = rng.randint(low, high)
                for rater in (*HUMANS, "judge-x"):
                    kind = "judge" if rater == "judge-x" else "human"
                    point = min(high, max(low, truth + rng.choice((-1, 0, 0, 0, 1))))
                    rows.append({
                        "campaign": "scales", "topic": f"Topic {t:02d}", "criterion": criterion, "rater_kind": kind, "rater": rater,
                        "left_system": "", "right_system": "", "winner_system": "", "rationale": "", "started_at": "",
                        "saved_at": "2024-05-01T10:00:00Z" if kind == "human" else "", "response": response, "system": system,
                        "answer": str(point), "model": "m/x" if kind == "judge" else "", "error": "",
                    })  # fmt: skip
    return rows


def by_hand(rows: list[dict], unit: str) -> alttest.AltTestResult:
    """The paper's test on every feature at once, from the rows themselves: one long form, numeric scoring."""
    humans = [(f"{r['topic']}|{r['system']}", r["criterion"], r["rater"], float(r["answer"])) for r in rows if r["rater_kind"] == "human"]
    judge = [(f"{r['topic']}|{r['system']}", r["criterion"], "judge-x", float(r["answer"])) for r in rows if r["rater_kind"] == "judge"]
    return alttest.alt_test(Ratings.from_rows(humans), Ratings.from_rows(judge), epsilon=0.2, unit=unit, scoring="numeric", rounds=20)


@pytest.fixture
def scales(tmp_path):
    assert run("create_campaign", "--name", "scales", "--labels-only").code == 0
    rows = two_scales()
    assert run("import_labels", "--campaign", "scales", str(write_csv(tmp_path / "s.csv", rows))).code == 0
    return Campaign.objects.get(name="scales"), rows


@pytest.mark.parametrize("unit", ["pair", "item"])
def test_it_pools_the_alt_test_over_two_scales_and_keeps_each_scale_as_a_breakdown(scales, unit):
    campaign, rows = scales
    assert sorted(key for key in pointwise_inputs(campaign=campaign).tables) == [("rating", (0, 2)), ("rating", (1, 6))]
    report = build_report(campaign, rounds=20, alt_epsilon=0.2, alt_epsilon_reason="skilled", alt_unit=unit)

    pooled = report["pointwise"]["alt_test_pooled"]
    assert [p["scope"] for p in pooled] == ["all"] and pooled[0]["pools"] == ["rating 0-2", "rating 1-6"]
    mine, expected = pooled[0]["judges"]["judge-x"], by_hand(rows, unit)
    assert mine["ran"] and expected.ran
    assert mine["omega"] == expected.omega and mine["passes"] == expected.passes
    assert mine["rho"]["value"] == pytest.approx(expected.rho.value, abs=1e-12)
    assert {a["annotator"]: a["n"] for a in mine["annotators"]} == {a.annotator: a.n for a in expected.annotators}
    assert [a["p"] for a in mine["annotators"]] == pytest.approx([a.p for a in expected.annotators], abs=1e-12)
    assert mine["by_criterion"]["n_criteria"] == 2

    table = list(csv.reader(render_table_csv(report, "pointwise_alt_test").splitlines()))
    labels = [r[0] for r in table[1:] if r[1] == "judge-x"]
    assert labels == ["all one-article criteria, pooled (rating 0-2, rating 1-6)", "rating 0-2", "rating 1-6"]
    annotators = list(csv.reader(render_table_csv(report, "pointwise_alt_test_annotators").splitlines()))
    pooled_rows = [r for r in annotators[1:] if r[0].startswith("all one-article criteria")]
    assert [r[2] for r in pooled_rows] == list(HUMANS)
    markdown = render_md(report)
    assert "the pooled rows come first (the headline)" in markdown
    headline = f"Alt-test pooled over rating 0-2, rating 1-6: judge-x {'passes' if expected.passes else 'fails'} (ω {expected.omega:.2f}"
    assert headline in markdown.split("## ")[0]


def test_it_pools_the_scales_of_one_response_type_beside_every_criterion(tmp_path):
    """Scales of one type pool on their own when the rubric has other types too; a table alone is not pooled again."""
    rows = two_scales()
    rows += [
        dict(r, criterion="cited", response="checklist", answer="yes" if int(r["answer"]) >= 3 else "no")
        for r in rows
        if r["criterion"] == "depth"
    ]
    assert run("create_campaign", "--name", "scales", "--labels-only").code == 0
    assert run("import_labels", "--campaign", "scales", str(write_csv(tmp_path / "s.csv", rows))).code == 0
    report = build_report(Campaign.objects.get(name="scales"), rounds=0, alt_epsilon=0.2, alt_epsilon_reason="skilled")
    pooled = report["pointwise"]["alt_test_pooled"]
    assert [(p["scope"], p["pools"]) for p in pooled] == [
        ("all", ["checklist", "rating 0-2", "rating 1-6"]),
        ("rating", ["rating 0-2", "rating 1-6"]),
    ]
    assert pooled[0]["judges"]["judge-x"]["scoring"] == "categorical+numeric"
    labels = [r[0] for r in csv.reader(render_table_csv(report, "pointwise_alt_test").splitlines())][1:]
    assert labels[:2] == [
        "all one-article criteria, pooled (checklist, rating 0-2, rating 1-6)",
        "rating, every scale pooled (rating 0-2, rating 1-6)",
    ]


def test_it_gives_the_one_long_form_test_when_the_groups_are_pooled():
    rng = np.random.default_rng(5)
    humans, judge = [], []
    for article in range(40):
        for criterion, low, high in (("a", 0, 2), ("b", 1, 6)):
            truth = int(rng.integers(low, high + 1))
            for rater in HUMANS:
                humans.append((f"p{article}", criterion, rater, float(np.clip(truth + rng.integers(-1, 2), low, high))))
            judge.append((f"p{article}", criterion, "j", float(truth)))
    h, j = Ratings.from_rows(humans), Ratings.from_rows(judge)
    alone = alttest.alt_test(h, j, epsilon=0.2, scoring="numeric", rounds=0)
    split = [
        (Ratings.from_rows([r for r in humans if r[1] == c]), Ratings.from_rows([r for r in judge if r[1] == c]), "numeric") for c in "ab"
    ]
    together = alttest.alt_test_pooled(split, epsilon=0.2, rounds=0)
    assert together.omega == alone.omega and together.rho.value == alone.rho.value
    assert [a.p for a in together.annotators] == [a.p for a in alone.annotators]
    assert together.scoring == "numeric"
    mixed = alttest.alt_test_pooled([split[0], (split[1][0], split[1][1], "categorical")], epsilon=0.2, rounds=0)
    assert mixed.scoring == "numeric+categorical"
