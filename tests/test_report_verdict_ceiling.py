"""A verdict on a judge never flatters it (issue 40): a judge is recommended only when its PAR reaches the
humans' own agreement (the leave-one-out ceiling, CIs compared); below chance is named; baselines are
floors; money reads as money.

The panel: 40 pairs x 3 criteria, three annotators who each give the item's true winner with
probability 0.85; judges give it with their own probability (`accuracy`).
"""

from dataclasses import replace

import numpy as np
import pytest

from calibration import metrics as M
from calibration.metrics import LabelRow
from calibration.report.build import report_from_inputs
from tests.calibration_builders import assert_contract, offline_campaign, offline_inputs, summary

W = "wikipedia"


def panel(judges: dict[str, float], seed: int = 3, humans: int = 3) -> list[LabelRow]:
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(40):
        other = ("atlas", "quill")[p % 2]
        for c in ("c1", "c2", "c3"):
            truth = str(rng.choice([W, other]))
            flipped = other if truth == W else W
            for h in range(humans):
                rows.append(LabelRow(f"p{p}", c, "style", f"human:h{h}", "human", W, other, truth if rng.random() < 0.85 else flipped))
            for name, accuracy in judges.items():
                rows.append(LabelRow(f"p{p}", c, "style", name, "judge", W, other, truth if rng.random() < accuracy else flipped, W))
    return rows


def report_of(judges: dict[str, float], kinds: dict[str, str] | None = None, **panel_options) -> dict:
    kinds = kinds or {}
    summaries = [replace(summary(name, 0.0070425 * 40), kind=kinds.get(name, "imported")) for name in judges]
    report = report_from_inputs(offline_campaign(), offline_inputs(panel(judges, **panel_options), summaries), rounds=300)
    assert_contract(report)
    return report


def test_it_never_recommends_a_lone_judge_below_chance_and_formats_its_cost():
    # The demo's situation: one judge, far below the humans and below chance.
    report = report_of({"fake1": 0.1})
    sentence = report["recommendation"]
    assert report["recommended_judge"] is None
    ceiling = report["humans"]["par_leave_one_out"]
    assert ceiling > 0.7 and report["judges"][0]["par"] < 0.35
    assert sentence.startswith("No judge is recommended: no judge's PAR comes to the humans' agreement (leave-one-out ceiling")
    assert f"{ceiling:.3f}, 95% CI" in sentence and "The closest is fake1, PAR" in sentence
    assert "Below chance (Cohen's kappa CI under 0): fake1." in sentence
    assert "significantly below it" not in sentence and "Use fake1" not in sentence
    assert "0.0070425" not in sentence  # money, not a raw float


def test_it_shows_baselines_as_floors_and_never_recommends_one():
    report = report_of({"longer": 0.6}, kinds={"longer": "length"})
    assert report["recommended_judge"] is None
    assert report["recommendation"].startswith("No recommendation: only baselines have verdicts here, and baselines are floors")
    assert "(the best, longer: PAR" in report["recommendation"]

    beside = report_of({"good": 0.85, "longer": 0.95}, kinds={"longer": "length"})
    assert beside["recommended_judge"] == "good"  # the baseline is better here and still never recommended
    assert "Baselines are floors, never recommended: the best, longer, has PAR" in beside["recommendation"]


def test_it_recommends_a_judge_that_reaches_the_ceiling():
    report = report_of({"peer": 0.85})
    judge = report["judges"][0]
    ceiling = report["humans"]
    assert judge["par_ci"][1] >= ceiling["par_leave_one_out_ci"][0]
    assert report["recommended_judge"] == "peer"
    assert report["recommendation"].startswith("Use peer (cost $0.00704)")
    assert "Its PAR reaches the humans' own agreement (leave-one-out ceiling" in report["recommendation"]


def test_it_names_the_closest_when_the_best_of_several_falls_short_and_keeps_two_within_the_ceiling():
    short = report_of({"mid": 0.6, "low": 0.5})
    assert short["recommended_judge"] is None and "The closest is mid" in short["recommendation"]

    both = report_of({"peer_a": 0.86, "peer_b": 0.86, "low": 0.5})
    assert set(both["tied_for_best"]) == {"peer_a", "peer_b"}
    assert "reach the humans' ceiling" in both["recommendation"] or "Its PAR reaches" in both["recommendation"]
    assert both["recommended_judge"] is None  # tied at the same cost: none singled out, both within the ceiling


def test_it_says_so_without_a_ceiling():
    report = report_of({"peer": 0.85}, humans=1)
    assert report["humans"]["par_leave_one_out"] is None
    assert report["recommended_judge"] == "peer"
    assert "There is no human ceiling to hold it against" in report["recommendation"]


@pytest.mark.parametrize(
    "usd, text",
    [(None, "cost unknown"), (0, "$0.00"), (0.0070425, "$0.00704"), (0.05, "$0.05"), (1234.5, "$1,234.50"), (0.0000012, "$0.0000012")],
)
def test_it_formats_money(usd, text):
    assert M.money(usd) == text


def test_it_reaches_by_the_point_or_by_overlapping_intervals():
    ceiling = M.Estimate(0.80, 300, 0.75, 0.85)
    point_above = M.JudgeStanding("a", M.Estimate(0.81, 10), M.Estimate(0.5, 0))
    overlapping = M.JudgeStanding("b", M.Estimate(0.70, 300, 0.62, 0.76), M.Estimate(0.4, 0))
    apart = M.JudgeStanding("c", M.Estimate(0.70, 300, 0.66, 0.74), M.Estimate(0.4, 0))
    ranked = M.Recommendation("c", "c", "Use c.", None, ("c",))
    verdict = M.verdict_against_ceiling([point_above, overlapping, apart], ranked, ceiling)
    assert verdict.within_ceiling == ("a", "b") and verdict.judge is None
    assert M.verdict_against_ceiling([apart], ranked, ceiling, margin=0.11).judge == "c"


def test_it_reports_human_likeness_in_every_format():
    from calibration.report.formats import render, render_table_csv

    report = report_of({"peer": 0.85, "fake1": 0.1})
    likeness = report["human_likeness"]
    assert likeness["n_annotators"] == 3 and likeness["n_annotator_pairs"] == 3
    by = {j["judge"]: j for j in likeness["judges"]}
    assert by["fake1"]["class"] == "below humans" and by["fake1"]["z"]["ci"][1] < -1
    assert by["peer"]["class"] == "human-like" and set(by["peer"]["kappas"]) == {"human:h0", "human:h1", "human:h2"}
    md = render(report, "md")
    assert "## Human-likeness: each judge's κ with the annotators against theirs with each other" in md
    assert "| fake1 |" in md and "below humans" in md
    assert "human-like" in render(report, "html")
    assert render_table_csv(report, "human_likeness").splitlines()[0] == "Judge,Mean κ with the annotators,z,Class,κ with each annotator"
