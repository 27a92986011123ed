"""The report's consensus, tie and soft-label sections (issue 40, items 3, 4, 6 and 7): in the JSON, the
Markdown, the HTML, the CSV tables and the methods paragraph."""

from dataclasses import replace

import numpy as np
import pytest

from calibration import metrics as M
from calibration.metrics import LabelRow
from calibration.report.build import report_from_inputs
from calibration.report.formats import render, render_table_csv
from calibration.report.methods import render_methods
from tests.calibration_builders import assert_contract, offline_campaign, offline_inputs, summary

W = "wikipedia"


def panel(seed: int = 5):
    """60 pairs x 2 criteria, three annotators who tie where the true margin is small; `sure` (confidences)
    and `flat` (no confidences) judges."""
    rng = np.random.default_rng(seed)
    rows, confident = [], []
    for p in range(60):
        other = ("atlas", "quill")[p % 2]
        for c in ("c1", "c2"):
            margin = rng.uniform(-1, 1)
            truth = "tie" if abs(margin) < 0.3 else W if margin > 0 else other
            for h in range(3):
                noisy = truth if rng.random() < 0.8 else str(rng.choice([W, other, "tie"]))
                rows.append(LabelRow(f"p{p}", c, "style", f"human:h{h}", "human", W, other, noisy))
            said = W if margin > 0 else other
            rows.append(LabelRow(f"p{p}", c, "style", "flat", "judge", W, other, truth if rng.random() < 0.7 else said, W))
            rows.append(LabelRow(f"p{p}", c, "style", "sure", "judge", W, other, said, W))
            confident.append((LabelRow(f"p{p}", c, "", "sure", "judge", W, other, said), 0.5 + abs(margin) / 2))
    table = M.LabelTable.from_labels([r for r, _ in confident])
    return rows, (table, np.array([x for _, x in confident]))


def report_with_confidences() -> dict:
    rows, confidences = panel()
    inputs = replace(offline_inputs(rows, [summary("flat"), summary("sure")]), confidences=confidences)
    report = report_from_inputs(offline_campaign(), inputs, rounds=200)
    assert_contract(report)
    return report


def test_it_puts_every_new_figure_in_every_format():
    report = report_with_confidences()
    c = report["consensus"]
    assert c["n_items"]["unanimous"] + c["n_items"]["split"] == 120 and c["n_items"]["single"] == 0
    assert {j["judge"] for j in c["judges"]} == {"flat", "sure"} and set(c["split_share"]) == {"c1", "c2"}
    assert c["humans"]["split"]["par"]["ci"] is not None and c["intervals"] == {"judges": True, "annotators": True}

    [tie] = report["tie_accuracy"]["judges"]
    assert tie["judge"] == "sure" and tie["epsilon"] > 0 and "Deutsch" in report["tie_accuracy"]["citation"]
    # the judge never says tie; a calibrated threshold turns its unsure wins into ties and gains
    assert tie["held_out"]["value"] > tie["held_out_own_verdicts"]["value"]

    d = report["davidson"]
    assert set(d["raters"]) == {"humans", "flat", "sure"}
    assert d["raters"]["humans"]["nu"] > 0 and d["raters"]["humans"]["nu_ci"] is not None
    assert d["raters"]["sure"]["nu"] == 0.0 and d["raters"]["sure"]["nu_ci"] is None  # no ties: today's Bradley-Terry
    assert "no ties" in d["raters"]["sure"]["note"]
    assert set(d["rankings"]["humans"]) == {"half_wins", "davidson", "changed"}

    s = report["soft_labels"]
    assert len(s["items"]) == 120 and s["items"][0]["n"] == 3
    [soft] = s["judges"]
    assert soft["judge"] == "sure" and soft["tv"]["value"] < soft["tv_whole_verdicts"]["value"]

    md = render(report, "md")
    for title in (
        "## Agreement by consensus: unanimous, split and single-annotator items",
        "## Share of split items per criterion",
        "## Accuracy with ties, tie threshold calibrated (judges with confidences)",
        "## Bradley–Terry with Davidson's tie parameter ν, beside today's ranks (ties as half wins)",
        "## Judges against the annotators' distribution per item (total-variation distance)",
        "## The annotators' distribution per item (soft labels)",
    ):
        assert title in md
    html = render(report, "html")
    assert "Agreement by consensus" in html and "Davidson" in html and "soft labels" in html
    assert render_table_csv(report, "soft_label_items").splitlines()[0] == (
        "Pair,Criterion,System 1,System 2,Annotators,Share 1 wins,Share 2 wins,Share tie"
    )
    assert len(render_table_csv(report, "soft_label_items").splitlines()) == 121
    assert render_table_csv(report, "tie_accuracy").splitlines()[1].startswith("sure,")
    methods = render_methods(report)
    assert "Agreement by consensus:" in methods and "tie calibration" in methods
    assert "sure: no ties (ν = 0)" in methods and "Davidson's tie parameter" in methods and "Soft labels:" in methods
    assert "Human-likeness: each judge's mean Cohen's κ" in methods and "over 3 annotator pairs of 3 annotators" in methods


def test_it_says_when_no_judge_gave_confidences():
    rows, _ = panel()
    report = report_from_inputs(offline_campaign(), offline_inputs(rows, [summary("flat"), summary("sure")]), rounds=50)
    assert report["tie_accuracy"]["judges"] == [] and "no judge gave confidences" in report["tie_accuracy"]["note"]
    assert report["soft_labels"]["judges"] == [] and len(report["soft_labels"]["items"]) == 120
    assert "no judge gave confidences" in render(report, "md")


@pytest.mark.django_db
def test_it_reads_the_judges_confidences_from_the_campaign(campaign, alice, llm_server, monkeypatch):
    from tests.test_report_selective import make_labelled
    from tests.test_report_selective import report as command_report

    make_labelled(campaign, alice, llm_server, monkeypatch)
    out = command_report(campaign)
    [tie] = out["tie_accuracy"]["judges"]
    assert tie["judge"] == "lp" and tie["calibration"]["n"] + tie["held_out"]["n"] == out["judges"][0]["n_labels"]
    [soft] = out["soft_labels"]["judges"]
    assert soft["judge"] == "lp" and soft["tv"]["n"] == out["judges"][0]["n_labels"]
    assert out["soft_labels"]["items"][0]["n"] == 1 and out["consensus"]["n_items"]["single"] == len(out["soft_labels"]["items"])
