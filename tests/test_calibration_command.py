"""The calibration_report command: four formats, standard output, atomic writes and clear errors."""

import csv
import io
import json

import pytest

from tests.calibration_builders import assert_contract, hand_campaign
from tests.helpers import run

pytestmark = pytest.mark.django_db


def test_it_writes_every_format(calibration_campaign, tmp_path):
    for fmt in ("json", "csv", "md", "html"):
        out = tmp_path / f"report.{fmt}"
        rounds = "200" if fmt == "json" else "50"
        result = run("calibration_report", "--campaign", calibration_campaign.name, "--format", fmt, "--out", str(out), "--rounds", rounds)
        assert result.code == 0, result.err
        assert f"-> {out}" in result.err and "12 human labels, 2 judges" in result.err
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert_contract(report)
    assert report["parameters"]["rounds"] == 200 and report["recommended_judge"] == "sharp"
    rows = list(csv.DictReader(io.StringIO((tmp_path / "report.csv").read_text(encoding="utf-8"))))
    assert [r["rater"] for r in rows] == ["sharp", "cheap", "humans"]
    assert report["recommendation"] in (tmp_path / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<svg" in html and calibration_campaign.name in html
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.csv", "report.html", "report.json", "report.md"]


def test_it_writes_to_standard_output_with_the_options(calibration_campaign):
    result = run(
        "calibration_report",
        "--campaign",
        calibration_campaign.name,
        "--out",
        "-",
        "--rounds",
        "0",
        "--seed",
        "7",
        "--reference",
        "atlas_agent",
        "--include-unsubmitted",
    )
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["parameters"] == {
        "rounds": 0,
        "seed": 7,
        "reference": "atlas_agent",
        "include_unsubmitted": True,
        "confidence_level": 0.95,
        "small_n_threshold": 30,
        "bootstrap_unit": "pair",
        "anchor": {
            "kind": "reference",
            "system": "atlas_agent",
            "score": 1000.0,
            "text": "atlas_agent = 1000; win rates are against atlas_agent",
            "systems": ["atlas_agent"],
        },
        "ensembles": [],
        "ensemble_tie_rule": "no strict majority of the members: tie",
        "neutral_emphasis": False,
        "min_pairs_for_ci": 10,
        "interval_rule": "an estimate resting on fewer than 10 pairs has no interval: too few pairs for an interval",
        "tie_tolerance": 1e-06,
        "swap_policy": "tie",
        "unparsable": "drop",
        "convention": "an item judged in both orders counts once: the verdict both orders agree on, else a tie; "
        "verdicts the judge failed to give (units left in error) are left out",
        "category_intervals": {"asked": "auto", "max_judges": 12, "judges_computed": True},
        "majority_ties": "drop",
        "majority_rule": "the majority vote is each item's strict majority (more than half of its human labels); items without one are left out",
    }


def test_it_replaces_an_existing_file_whole(calibration_campaign, tmp_path):
    out = tmp_path / "report.md"
    out.write_text("old report", encoding="utf-8")
    assert (
        run("calibration_report", "--campaign", calibration_campaign.name, "--format", "md", "--out", str(out), "--rounds", "0").code == 0
    )
    assert out.read_text(encoding="utf-8").startswith("# Calibration report: Calib")
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_it_reports_a_campaign_without_human_labels(alice, bob, tmp_path):
    campaign = hand_campaign([alice, bob])
    result = run("calibration_report", "--campaign", campaign.name, "--out", str(tmp_path / "r.json"), "--rounds", "0")
    assert result.code == 0
    assert "note: No human labels yet in submitted assignments" in result.err
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert_contract(report)
    assert report["recommendation"].startswith("No recommendation")


def test_it_explains_what_is_wrong(calibration_campaign, tmp_path):
    unknown = run("calibration_report", "--campaign", "Nope", "--out", "-")
    assert unknown.code == 1 and "No campaign named 'Nope'" in unknown.err
    reference = run("calibration_report", "--campaign", calibration_campaign.name, "--reference", "storm", "--rounds", "0")
    assert reference.code == 1 and "reference system 'storm' is not compared in campaign 'Calib'" in reference.err
    folder = run("calibration_report", "--campaign", calibration_campaign.name, "--out", str(tmp_path / "missing" / "r.json"))
    assert folder.code == 1 and "no such folder" in folder.err
    rounds = run("calibration_report", "--campaign", calibration_campaign.name, "--rounds", "-1")
    assert rounds.code == 1 and "--rounds must be 0 or more" in rounds.err
    fmt = run("calibration_report", "--campaign", calibration_campaign.name, "--format", "pdf")
    assert fmt.code == 1 and "invalid choice: 'pdf'" in fmt.err
