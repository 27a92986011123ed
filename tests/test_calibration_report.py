"""build_report on the hand-made dataset of tests/calibration_builders.py, its contract and its renderings.

The dataset (2 pairs x 3 criteria; A = wikipedia in both pairs):

    criterion     c1 c2 c3 | c1 c2 c3      pair 1: wikipedia vs atlas_agent (wikipedia longer)
    alice          a  a  b |  a  b  b      pair 2: wikipedia vs quill_researcher (quill longer)
    bob            a  b  b |  a  b  a
    sharp          a  a  b |  a  b  b      (A shown first only)
    cheap, A first a  a  a |  a  a  a
    cheap, B first a  b  a |  b  a  a      merged: a tie a | tie a a
"""

import csv
import io
import json

import krippendorff
import numpy as np
import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from calibration.report import build as reports
from calibration.report.build import build_report
from calibration.report.formats import render
from judges.models import Judge
from tests.calibration_builders import ATLAS, QUILL, WIKI, assert_contract, by_criterion, hand_campaign, hand_dataset, judge_rows, pair_of

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


@pytest.fixture
def hand(alice, bob):
    campaign = hand_dataset(alice, bob)
    return campaign, build_report(campaign, rounds=200)


def judge(report: dict, name: str) -> dict:
    return next(j for j in report["judges"] if j["name"] == name)


def test_it_computes_agreement_by_hand(hand):
    _, report = hand
    sharp, cheap = judge(report, "sharp"), judge(report, "cheap")
    # sharp: all 6 of alice's labels, 4 of bob's (c2 on pair 1, c3 on pair 2 differ).
    assert (sharp["par"], sharp["n_labels"], sharp["n_items"]) == (pytest.approx(10 / 12, abs=1e-6), 12, 6)
    # The humans agree on 4 items; sharp matches all 4.
    assert (sharp["par_majority"], sharp["par_majority_n"], sharp["n_no_majority"]) == (1.0, 4, 2)
    assert sharp["cohen_kappa"] == 1.0
    assert sharp["by_category"]["style"]["par"] == pytest.approx(7 / 8) and sharp["by_category"]["style"]["n"] == 8
    assert sharp["by_category"]["neutral"]["par"] == pytest.approx(3 / 4)
    assert sharp["by_criterion"]["c1"]["par"] == 1.0
    # cheap, merged: a tie a | tie a a -> 1 agreement with alice, 2 with bob.
    assert cheap["par"] == pytest.approx(3 / 12, abs=1e-6)
    assert cheap["par_majority"] == pytest.approx(1 / 4)
    # Without the 4 comparisons where cheap says tie: 3 of 8.
    assert (cheap["par_no_ties"], cheap["par_no_ties_n"], cheap["share_kept_no_ties"]) == (0.375, 8, pytest.approx(8 / 12, abs=1e-6))
    # kappa: po = 1/4; judge marginals wiki 3, tie 1; majority wiki 2, atlas 1, quill 1 -> pe = 6/16.
    assert cheap["cohen_kappa"] == pytest.approx((0.25 - 6 / 16) / (1 - 6 / 16), abs=1e-6)
    assert [j["name"] for j in report["judges"]] == ["sharp", "cheap"]


def test_it_computes_biases_and_costs_by_hand(hand):
    _, report = hand
    sharp, cheap = judge(report, "sharp"), judge(report, "cheap")
    # cheap changes its verdict with the order on p1 c2 and p2 c1: 4 of 6 swapped items are consistent.
    assert (cheap["position_consistency"], cheap["position_consistency_n"], cheap["n_swapped_items"]) == (
        pytest.approx(4 / 6, abs=1e-6),
        6,
        6,
    )
    # A first: 6 of 6 pick the first; B first: 2 of 6 pick B.
    assert (cheap["first_position_rate"], cheap["first_position_rate_n"]) == (pytest.approx(8 / 12, abs=1e-6), 12)
    assert sharp["position_consistency"] is None and sharp["position_consistency_ci"] is None and sharp["position_consistency_n"] == 0
    assert sharp["first_position_rate"] == 0.5
    # Longer: wikipedia in p1, quill in p2. sharp picks it 2 + 2 of 6; cheap's non-tie merged verdicts 2 of 4.
    assert (sharp["prefers_longer"], sharp["prefers_longer_n"]) == (pytest.approx(4 / 6, abs=1e-6), 6)
    assert (cheap["prefers_longer"], cheap["prefers_longer_n"]) == (0.5, 4)
    assert (sharp["cost_usd"], sharp["cost_per_pair_usd"], sharp["errors"]) == (pytest.approx(0.1), pytest.approx(0.05), 1)
    assert sharp["cost_per_1000_verdicts_usd"] == pytest.approx(0.1 * 1000 / 6)
    assert (cheap["cost_per_pair_usd"], cheap["n_verdicts"], cheap["errors"]) == (pytest.approx(0.004), 12, 0)
    assert sharp["small_n"] and "par" in sharp["small_n_figures"]


def test_it_computes_the_human_ceiling_by_hand(hand):
    _, report = hand
    h = report["humans"]
    assert (h["n_labels"], h["n_annotators"], h["n_items"], h["n_pairs"]) == (12, 2, 6, 2)
    assert (h["par_leave_one_out"], h["par_leave_one_out_n"]) == (pytest.approx(8 / 12, abs=1e-6), 12)
    assert (h["par_all_pairs"], h["par_all_pairs_n"]) == (pytest.approx(4 / 6, abs=1e-6), 6)
    # Krippendorff's alpha, checked against the krippendorff package (rows = annotators, units = items).
    # Categories: wikipedia (the pair's first system) wins 0, the other system wins 1.
    alice = [0, 0, 1, 0, 1, 1]
    bob = [0, 1, 1, 0, 1, 0]
    expected = krippendorff.alpha(reliability_data=np.array([alice, bob]), level_of_measurement="nominal")
    # 12 values: 6 zeros, 6 ones; 4 agreeing items -> alpha = 1 - 11 * 4 / (144 - 72) ... checked by the package
    assert h["krippendorff_alpha"] == pytest.approx(expected, abs=1e-6) == pytest.approx(1 - 11 * 4 / 72, abs=1e-6)
    assert h["prefers_longer"] == 0.5 and h["first_position_rate"] == pytest.approx(8 / 12, abs=1e-6)


def test_it_compares_judges_and_recommends_one(hand):
    _, report = hand
    [comparison] = report["comparisons"]
    assert (comparison["a"], comparison["b"], comparison["n"], comparison["n_pairs"]) == ("sharp", "cheap", 12, 2)
    assert comparison["difference"] == pytest.approx(7 / 12, abs=1e-6)
    # Two pairs are too few for an interval: none is shown, so the difference cannot be called significant.
    assert comparison["ci"] is None and comparison["ci_note"] == "too few pairs for an interval" and not comparison["significant"]
    assert report["pareto_frontier"] == ["cheap", "sharp"]
    assert report["recommended_judge"] == "sharp" and report["tied_for_best"] == ["sharp"]
    assert report["recommendation"].startswith("Use sharp") and "USD per judged pair" in report["recommendation"]
    assert "could not be compared with it (cheap: no paired comparison on 10 pairs or more)" in report["recommendation"]


def test_it_ranks_systems_for_the_humans_and_each_judge(hand):
    _, report = hand
    assert set(report["bradley_terry"]) == {"humans", "sharp", "cheap"}
    sharp = {s["system"]: s for s in report["bradley_terry"]["sharp"]}
    assert sharp[WIKI]["score"] == 1000.0
    # sharp: wikipedia beats atlas_agent 2-1 and loses to quill_researcher 1-2.
    assert sharp[QUILL]["score"] > 1000 > sharp[ATLAS]["score"]
    assert [s["system"] for s in report["bradley_terry"]["sharp"]] == [QUILL, WIKI, ATLAS]
    assert set(report["bradley_terry_by_category"]["humans"]) == {"style", "neutral"}
    assert report["kendall_tau"]["sharp"]["n_systems"] == 3
    rates = report["win_rates"]["sharp"]
    assert rates[ATLAS]["overall"]["rate"] == pytest.approx(1 / 3, abs=1e-6) and rates[ATLAS]["overall"]["n"] == 3
    assert set(rates[ATLAS]) == {"overall", "style", "neutral"}


def test_it_follows_the_json_contract(hand):
    campaign, report = hand
    assert_contract(report)
    assert report["campaign"]["name"] == campaign.name and report["n_pairs"] == 2
    assert report["parameters"]["reference"] == WIKI and report["parameters"]["rounds"] == 200
    assert json.loads(render(report, "json")) == report


def test_it_says_so_when_there_are_no_human_labels(alice, bob):
    campaign = hand_campaign([alice, bob])
    judge_rows(campaign, "lonely", {(pair_of(campaign, ATLAS), True): by_criterion("a", "b", "a")})
    report = build_report(campaign, rounds=50)
    assert_contract(report)
    assert report["humans"]["n_labels"] == 0 and report["humans"]["par_leave_one_out"] is None
    [lonely] = report["judges"]
    assert lonely["par"] is None and lonely["par_ci"] is None and lonely["n_labels"] == 0
    assert report["recommended_judge"] is None and "no human labels" in report["recommendation"]
    assert any("No human labels" in note for note in report["notes"])
    assert "humans" not in report["bradley_terry"] and report["kendall_tau"]["lonely"]["tau"] is None
    for fmt in ("csv", "md", "html"):
        assert render(report, fmt)


def test_it_reports_an_untouched_campaign(alice, bob):
    campaign = hand_campaign([alice, bob])
    report = build_report(campaign, rounds=50)
    assert_contract(report)
    assert report["judges"] == [] and report["comparisons"] == [] and report["pareto_frontier"] == []
    assert report["bradley_terry"] == {} and report["recommended_judge"] is None


def test_it_refuses_a_reference_the_campaign_does_not_compare(alice, bob):
    campaign = hand_campaign([alice, bob])
    with pytest.raises(ValueError, match="'storm' is not compared"):
        build_report(campaign, rounds=0, reference="storm")
    report = build_report(campaign, rounds=0, reference=ATLAS)
    assert report["parameters"]["reference"] == ATLAS


def test_it_leaves_cis_out_without_bootstrap_rounds(hand):
    campaign, _ = hand
    report = build_report(campaign, rounds=0)
    assert_contract(report)
    assert judge(report, "sharp")["par_ci"] is None and judge(report, "sharp")["par"] == pytest.approx(10 / 12, abs=1e-6)


def test_it_renders_csv_markdown_and_html(hand):
    _, report = hand
    table = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert [row["rater"] for row in table] == ["sharp", "cheap", "humans"]
    assert float(table[0]["par"]) == pytest.approx(10 / 12, abs=1e-6) and table[0]["recommended"] == "True"
    assert table[0]["position_consistency"] == "" and table[2]["par"] == "0.666667"
    md = render(report, "md")
    assert report["recommendation"] in md and "| sharp (big-model) | 0.833 [" in md and "(n=12)" in md
    html = render(report, "html")
    assert html.startswith("<!doctype html>") and html.count("<svg") == 3 and "<?xml" not in html
    # Every chart's ids carry its own prefix, so the three can share one page.
    for key in ("par-cost", "heatmap", "bt"):
        assert f'id="{key}-' in html
    with pytest.raises(ValueError, match="unknown format"):
        render(report, "pdf")


def test_it_reuses_the_cached_report_until_the_data_change(hand):
    campaign, _ = hand
    with CaptureQueriesContext(connection) as building:
        first = reports.report_cached(campaign, rounds=50)
    with CaptureQueriesContext(connection) as reusing:
        assert reports.report_cached(campaign, rounds=50) == first
    # Served from the cache, only the campaign's change stamp is read.
    assert len(reusing) < len(building)  # only the campaign's change stamp is read
    Judge.objects.get(name="cheap").units.filter(a_first=False).delete()
    with CaptureQueriesContext(connection) as rebuilding:
        fresh = reports.report_cached(campaign, rounds=50)
    assert len(rebuilding) > len(reusing)  # the data changed: built again
    assert judge(fresh, "cheap")["n_verdicts"] == 6 and judge(first, "cheap")["n_verdicts"] == 12
