"""The recommendation names every judge tied for the best PAR, and a judge without prices is "cost unknown"
everywhere: in the tables, on the frontier, in the recommendation and on the chart, never $0.

The panel: 20 pairs x 3 criteria, one human label per item. twin_a copies the humans; twin_b copies
them except on 2 items (its paired difference from twin_a has a CI that reaches 0); weak disagrees
on every other item (significantly below).
"""

import numpy as np
from matplotlib.figure import Figure

from calibration import charts
from calibration.metrics import LabelRow
from calibration.report.build import report_from_inputs
from calibration.report.formats import render
from tests.calibration_builders import assert_contract, offline_campaign, offline_inputs, summary

W = "wikipedia"


def panel(seed: int = 0) -> list[LabelRow]:
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(20):
        other = ("atlas", "quill")[p % 2]
        for i, c in enumerate(("c1", "c2", "c3")):
            truth = str(rng.choice([W, other]))
            flipped = other if truth == W else W
            rows.append(LabelRow(f"p{p}", c, "style", "human:ann", "human", W, other, truth))
            rows.append(LabelRow(f"p{p}", c, "style", "twin_a", "judge", W, other, truth, W))
            rows.append(LabelRow(f"p{p}", c, "style", "twin_b", "judge", W, other, flipped if (p < 2 and c == "c1") else truth, W))
            rows.append(LabelRow(f"p{p}", c, "style", "weak", "judge", W, other, flipped if (p + i) % 2 else truth, W))
    return rows


def report_with(costs: dict) -> dict:
    report = report_from_inputs(offline_campaign(), offline_inputs(panel(), [summary(n, c) for n, c in costs.items()]), rounds=300)
    assert_contract(report)
    return report


def test_it_names_every_judge_tied_for_the_best_and_picks_the_cheapest_when_costs_tell():
    report = report_with({"twin_a": 0.02, "twin_b": 0.01, "weak": 0.0})
    [ab] = [c for c in report["comparisons"] if {c["a"], c["b"]} == {"twin_a", "twin_b"}]
    assert ab["ci"][0] <= 0 <= ab["ci"][1] and not ab["significant"] and ab["n_pairs"] == 20
    assert report["tied_for_best"] == ["twin_a", "twin_b"] and report["recommended_judge"] == "twin_b"
    sentence = report["recommendation"]
    assert (
        sentence.startswith("twin_a and twin_b are statistically tied for the best PAR") and "The cheapest of them: use twin_b" in sentence
    )
    assert "weak" not in sentence
    md = render(report, "md")
    assert sentence in md and "| twin_a (twin_a-model) |" in md and "tied for best" in md


def test_it_recommends_none_of_the_tied_judges_when_they_cost_the_same():
    report = report_with({"twin_a": 0.01, "twin_b": 0.01, "weak": 0.0})
    assert report["recommended_judge"] is None and report["tied_for_best"] == ["twin_a", "twin_b"]
    # costs per judged pair: 0.01 over 20 pairs
    assert "twin_a and twin_b cost the same ($0.0005): no single judge is recommended on cost." in report["recommendation"]


def test_it_says_cost_unknown_in_the_tables_frontier_recommendation_and_chart():
    report = report_with({"twin_a": 0.02, "twin_b": None, "weak": 0.0})
    twin_b = next(j for j in report["judges"] if j["name"] == "twin_b")
    assert (twin_b["cost_usd"], twin_b["cost_per_pair_usd"], twin_b["cost_per_1000_verdicts_usd"]) == (None, None, None)
    assert report["cost_unknown"] == ["twin_b"] and "twin_b" not in report["pareto_frontier"]
    assert report["recommended_judge"] is None
    assert "Cost unknown for twin_b: no single judge is recommended on cost." in report["recommendation"]
    md = render(report, "md")
    row = next(line for line in md.splitlines() if line.startswith("| twin_b (twin_b-model) |"))
    assert "cost unknown" in row and "$0" not in row
    work = next(line for line in md.splitlines() if line.startswith("| twin_b | "))
    assert work.count("cost unknown") == 2  # the cost and the cost per 1,000 verdicts
    assert "cost unknown, so not placed: twin_b" in md
    html = render(report, "html")
    assert "cost unknown, so not placed: twin_b" in html and "Cost unknown (no prices): twin_b." in html
    svg = charts.par_cost_scatter(report)
    assert "cost unknown (no prices)" in svg and "twin_b" in svg and "judges of unknown cost apart" in svg


def test_it_never_recommends_the_only_judge_with_a_known_cost_when_the_others_are_unknown():
    report = report_with({"twin_a": None, "twin_b": None, "weak": 0.0})  # weak stands for a free baseline such as `longer`
    assert report["recommended_judge"] is None and report["tied_for_best"] == ["twin_a", "twin_b"]
    assert "Cost unknown for twin_a and twin_b" in report["recommendation"] and "cost 0" not in report["recommendation"]
    assert report["pareto_frontier"] == ["weak"] and report["cost_unknown"] == ["twin_a", "twin_b"]
    svg = charts.par_cost_scatter(report)
    assert "cost unknown (no prices)" in svg and "−" not in svg  # no negative cost on the axis


def test_it_keeps_the_cost_axis_at_zero_or_more_and_names_apart():
    report = report_with({"twin_a": 0.0, "twin_b": 0.0, "weak": 0.0})
    svg = charts.par_cost_scatter(report)
    assert "$0" in svg and "−" not in svg
    fig = Figure()
    ax = fig.add_subplot()
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    charts._spread_labels(ax, [(0.5, 0.5, "twin_a", "#000"), (0.5, 0.5, "twin_b", "#000"), (0.5, 0.501, "weak", "#000")])
    offsets = [text.xyann[1] for text in ax.texts]
    assert len(set(offsets)) == 3  # three labels at one point: three heights


def test_it_recommends_the_best_judge_when_no_other_is_tied():
    rows = [r for r in panel() if r.rater != "twin_b"]
    report = report_from_inputs(offline_campaign(), offline_inputs(rows, [summary("twin_a", 0.02), summary("weak", 0.0)]), rounds=300)
    assert report["tied_for_best"] == ["twin_a"] and report["recommended_judge"] == "twin_a"
    assert report["recommendation"].startswith(
        "Use twin_a (cost $0.001): it has the best PAR 1.000 (n=60) and every other judge is significantly below it."
    )
