"""The judges' per-category Bradley–Terry intervals: computed for up to 12 judges, asked for above that.

A report of 65 judges spent two thirds of its time on 130 per-category fits of 1,000 rounds each; above
`CATEGORY_INTERVALS_MAX_JUDGES` judges those scores come without intervals unless `category_intervals="all"`,
and every format says so.
"""

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from calibration.metrics import LabelRow
from calibration.report import build as reports
from calibration.report.build import report_from_inputs
from calibration.report.formats import render
from tests.calibration_builders import assert_contract, hand_dataset, offline_campaign, offline_inputs, summary

SYSTEMS = ["alpha-1.5", "bravo", "charlie", "delta"]
STRENGTH = {"alpha-1.5": 0.8, "bravo": 0.3, "charlie": 0.0, "delta": -0.4}


def rows_for(n_judges: int, seed: int = 0) -> list[LabelRow]:
    """Humans and `n_judges` judges on the same pairs, in two categories."""
    rng = np.random.default_rng(seed)
    out = []
    k = 0
    for _ in range(8):
        for i, a in enumerate(SYSTEMS):
            for b in SYSTEMS[i + 1 :]:
                k += 1
                p = 1 / (1 + np.exp(STRENGTH[b] - STRENGTH[a]))
                for criterion, category in (("c1", "style"), ("c2", "coverage")):
                    out.append(LabelRow(f"g{k}", criterion, category, "human:ann", "human", a, b, a if rng.random() < p else b))
                    for j in range(n_judges):
                        out.append(
                            LabelRow(f"g{k}", criterion, category, f"judge-{j:02d}.v1.5", "judge", a, b, a if rng.random() < p else b)
                        )
    return out


def report_for(n_judges: int, **kwargs) -> dict:
    rows = rows_for(n_judges)
    judges = [summary(f"judge-{j:02d}.v1.5") for j in range(n_judges)]
    return report_from_inputs(offline_campaign(), offline_inputs(rows, judges), rounds=60, **kwargs)


def with_interval(scores: list[dict]) -> list[bool]:
    return [s["ci"] is not None for s in scores if s["estimable"]]


def test_it_computes_every_per_category_interval_up_to_twelve_judges():
    report = report_for(reports.CATEGORY_INTERVALS_MAX_JUDGES)
    assert_contract(report)
    assert report["parameters"]["category_intervals"] == {"asked": "auto", "max_judges": 12, "judges_computed": True}
    for rater, per_category in report["bradley_terry_by_category"].items():
        for scores in per_category.values():
            assert all(with_interval(scores)), rater
    assert not any("per-category" in note.lower() for note in report["notes"])


def test_it_leaves_the_judges_per_category_intervals_out_above_twelve_judges_and_says_so():
    report = report_for(13)
    assert_contract(report)
    assert report["parameters"]["category_intervals"]["judges_computed"] is False
    by_category = report["bradley_terry_by_category"]
    for scores in by_category["humans"].values():
        assert with_interval(scores) and all(with_interval(scores))
    for rater in (name for name in by_category if name != "humans"):
        for scores in by_category[rater].values():
            estimable = [s for s in scores if s["estimable"]]
            assert estimable and all(s["ci"] is None and s["ci_note"] == reports.CATEGORY_INTERVAL_NOTE for s in estimable)
            assert all(s["score"] is not None and s["rank"] is not None for s in estimable)
        assert all(with_interval(report["bradley_terry"][rater]))  # the overall intervals stay
    assert any("--category-intervals all" in note for note in report["notes"])
    md = render(report, "md")
    assert "interval not computed" in md and "`calibration_report --category-intervals all` computes them" in md
    assert "--category-intervals all" in render(report, "html")


def test_it_computes_them_all_when_asked_with_the_same_scores():
    auto, full = report_for(13), report_for(13, category_intervals="all")
    assert full["parameters"]["category_intervals"] == {"asked": "all", "max_judges": 12, "judges_computed": True}
    for rater, per_category in full["bradley_terry_by_category"].items():
        for category, scores in per_category.items():
            assert all(with_interval(scores))
            # The ranks and the gaps between scores do not depend on whether the intervals were computed
            # (the anchor systems may: they are those finite in every round of every rater).
            gaps, ranks = relative(scores)
            plain_gaps, plain_ranks = relative(auto["bradley_terry_by_category"][rater][category])
            assert ranks == plain_ranks and gaps == pytest.approx(plain_gaps, abs=0.021)


def relative(scores: list[dict]) -> tuple[dict, dict]:
    """Each system's score less the first system's (scores are rounded to 0.01), and its rank."""
    first = next(s["score"] for s in scores if s["system"] == SYSTEMS[0])
    return {s["system"]: s["score"] - first for s in scores}, {s["system"]: s["rank"] for s in scores}


def test_it_refuses_an_unknown_choice():
    with pytest.raises(ValueError, match="category intervals must be one of auto, all"):
        report_for(2, category_intervals="some")


@pytest.mark.django_db
def test_it_refuses_an_unknown_choice_on_the_command_line():
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("calibration_report", "--campaign", "x", "--category-intervals", "some")


@pytest.mark.django_db
def test_it_takes_the_choice_through_the_api(settings, alice, bob, rachel):
    settings.CALIBRATION_ROUNDS = 50
    campaign = hand_dataset(alice, bob)
    client = APIClient()
    client.force_login(rachel)
    url = reverse("api-campaign-calibration", args=[campaign.pk])
    bad = client.get(url, {"category_intervals": "some"})
    assert bad.status_code == 400 and "category intervals must be one of auto, all" in bad.json()["detail"]
    full = client.get(url, {"category_intervals": "all"})
    assert full.status_code == 200 and full.json()["parameters"]["category_intervals"]["asked"] == "all"
    assert client.get(url).json()["parameters"]["category_intervals"]["asked"] == "auto"


@pytest.mark.django_db
def test_it_takes_the_choice_on_the_dashboard_and_its_downloads(settings, client, alice, bob, rachel):
    settings.CALIBRATION_ROUNDS = 50
    campaign = hand_dataset(alice, bob)
    client.force_login(rachel)
    dashboard = reverse("calibration-dashboard", args=[campaign.pk])
    bad = client.get(dashboard, {"category_intervals": "some"})
    assert bad.status_code == 400 and "category intervals must be one of auto, all" in bad.content.decode()
    page = client.get(dashboard, {"category_intervals": "all"})
    assert page.status_code == 200 and "category_intervals=all" in page.content.decode()  # the downloads keep the choice
    body = client.get(reverse("calibration-download", args=[campaign.pk, "json"]), {"category_intervals": "all"})
    assert body.status_code == 200 and json.loads(body.content)["parameters"]["category_intervals"]["asked"] == "all"
    # Two judges: nothing to ask for, no link.
    assert 'id="category-intervals"' not in client.get(dashboard).content.decode()
