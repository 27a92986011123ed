"""Report contract v2 on the hand-made dataset: annotators and judges against each other, ensembles,
per-annotator times, and Bradley–Terry scores that do not exist (a system that never wins).

The dataset is the one of tests/calibration_builders.py (see test_calibration_report):

    criterion     c1 c2 c3 | c1 c2 c3      pair 1: wikipedia vs atlas_agent
    alice          a  a  b |  a  b  b      pair 2: wikipedia vs quill_researcher
    bob            a  b  b |  a  b  a
    sharp          a  a  b |  a  b  b
    cheap merged   a tie a | tie a  a
    loyal          a  a  a |  a  a  a      (added here: wikipedia always wins)
"""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone
from sklearn.metrics import cohen_kappa_score

from annotate.models import Assignment
from calibration.charts import report_charts
from calibration.report.build import build_report
from calibration.report.formats import render
from tests.calibration_builders import ATLAS, QUILL, WIKI, assert_contract, by_criterion, hand_dataset, judge_rows, pair_of
from tests.test_calibration_command import run

pytestmark = pytest.mark.django_db

ENSEMBLE = "ensemble:sharp+cheap+loyal"


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


@pytest.fixture
def campaign(alice, bob):
    campaign = hand_dataset(alice, bob)
    p1, p2 = pair_of(campaign, ATLAS), pair_of(campaign, QUILL)
    judge_rows(campaign, "loyal", {(p1, True): by_criterion("a", "a", "a"), (p2, True): by_criterion("a", "a", "a")}, cost_per_unit="0.005")
    return campaign


def judge(report: dict, name: str) -> dict:
    return next(j for j in report["judges"] if j["name"] == name)


def scores(report: dict, rater: str) -> dict:
    return {s["system"]: s for s in report["bradley_terry"][rater]}


def test_it_reports_a_system_that_never_wins_as_not_estimable_in_every_format(campaign):
    report = build_report(campaign, rounds=100)
    assert_contract(report)
    loyal = scores(report, "loyal")
    assert loyal[WIKI]["score"] == 1000.0
    for system in (ATLAS, QUILL):
        entry = loyal[system]
        assert (entry["estimable"], entry["score"], entry["ci"], entry["side"]) == (False, None, None, "below")
        assert entry["reason"] == "not estimable: 0 wins in 3 comparisons"
        assert (entry["wins"], entry["losses"]) == (0.0, 3.0)
    assert report["bradley_terry_meta"]["loyal"]["not_estimable"] == [ATLAS, QUILL]
    assert any("loyal: no finite Bradley-Terry score" in note for note in report["notes"])
    # the humans' scores exist: both systems win some labels
    assert all(s["estimable"] for s in report["bradley_terry"]["humans"])
    for fmt in ("md", "html"):
        text = render(report, fmt)
        assert "not estimable: 0 wins in 3 comparisons" in text, fmt
    chart = report_charts(report)["bradley_terry"]
    assert "not estimable" in chart


def test_it_gives_cohen_kappa_for_the_two_annotators_and_fleiss_kappa(campaign):
    from statsmodels.stats.inter_rater import fleiss_kappa

    report = build_report(campaign, rounds=100)
    humans = report["humans"]
    [pair] = humans["annotator_pairs"]
    assert (pair["a"], pair["b"]) == ("alice", "bob")
    # kappa categories: the first of the pair's systems by name wins (atlas_agent, quill_researcher
    # before wikipedia), the second wins, a tie
    alice = ["b", "b", "a", "b", "a", "a"]
    bob = ["b", "a", "a", "b", "a", "b"]
    assert pair["kappa"]["value"] == pytest.approx(cohen_kappa_score(alice, bob), abs=1e-6)
    assert (pair["agreement"]["value"], pair["agreement"]["n"]) == (pytest.approx(4 / 6), 6)
    categories = ["a", "b", "tie"]
    table = [[(a == c) + (b == c) for c in categories] for a, b in zip(alice, bob)]
    assert humans["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(table), abs=1e-6)
    assert (humans["fleiss_kappa"]["raters_per_item"], humans["fleiss_kappa"]["n"]) == (2, 6)
    # with two annotators the "majority of the others" is the other one
    by_name = {a["name"]: a for a in humans["annotators"]}
    assert by_name["alice"]["agreement_with_others"]["value"] == pytest.approx(4 / 6)
    assert not by_name["alice"]["outlier"]


def test_it_times_each_annotator_per_pair_and_per_criterion(campaign):
    start = timezone.now() - timedelta(hours=1)
    for k, assignment in enumerate(Assignment.objects.filter(pair__campaign=campaign, annotator__username="alice").order_by("id")):
        Assignment.objects.filter(pk=assignment.pk).update(
            claimed_at=start, first_opened_at=start + timedelta(seconds=10), submitted_at=start + timedelta(seconds=10 + 90 * (k + 1))
        )
    report = build_report(campaign, rounds=0)
    alice = next(a for a in report["humans"]["annotators"] if a["name"] == "alice")
    assert (alice["n_pairs"], alice["n_labels"]) == (2, 6)
    assert alice["seconds_per_pair"] == {"median": 135.0, "q1": 112.5, "q3": 157.5, "n": 2}
    assert alice["seconds_per_criterion"]["median"] == pytest.approx(45.0)
    md = render(report, "md")
    assert "135 s (112–158, n=2)" in md or "135 s (112–157, n=2)" in md


def test_it_gives_the_judge_against_judge_matrix(campaign):
    report = build_report(campaign, rounds=100)
    pairs = {(p["a"], p["b"]): p for p in report["judge_pairs"]}
    assert set(pairs) == {("cheap", "loyal"), ("cheap", "sharp"), ("loyal", "sharp")}
    # sharp a a b | a b b against cheap a tie a | tie a a: the same on c1 of pair 1 only
    assert (pairs[("cheap", "sharp")]["agreement"]["value"], pairs[("cheap", "sharp")]["agreement"]["n"]) == (
        pytest.approx(1 / 6, abs=1e-6),
        6,
    )
    assert pairs[("loyal", "sharp")]["agreement"]["value"] == pytest.approx(3 / 6, abs=1e-6)
    md = render(report, "md")
    assert "## Judges against each other" in md and "0.167 (κ" in md


def test_it_evaluates_an_ensemble_judge_from_the_command_line(campaign, tmp_path):
    out = tmp_path / "report.json"
    result = run("calibration_report", "--campaign", campaign.name, "--rounds", "50", "--ensemble", "sharp,cheap,loyal", "--out", str(out))
    assert result.code == 0, result.err
    import json

    report = json.loads(out.read_text(encoding="utf-8"))
    assert_contract(report)
    ensemble = judge(report, ENSEMBLE)
    assert ensemble["kind"] == "ensemble" and ensemble["members"] == ["sharp", "cheap", "loyal"]
    # majority of a a b | a b b, a tie a | tie a a, a a a | a a a -> a a a | a tie a (no strict majority on c2/p2)
    # against alice a a b | a b b and bob a b b | a b a: 3 + 4 + 2 ... counted per label below
    verdicts = ["a", "a", "a", "a", "tie", "a"]
    humans = [["a", "a", "b", "a", "b", "b"], ["a", "b", "b", "a", "b", "a"]]
    agree = sum(v == h[i] for h in humans for i, v in enumerate(verdicts))
    assert (ensemble["par"], ensemble["n_labels"]) == (pytest.approx(agree / 12, abs=1e-6), 12)
    members = [judge(report, name)["cost_usd"] for name in ("sharp", "cheap", "loyal")]
    assert ensemble["cost_usd"] == pytest.approx(sum(members))
    assert report["parameters"]["ensembles"] == [ENSEMBLE]
    assert ENSEMBLE in report["kendall_tau"] and ENSEMBLE in report["bradley_terry"]


@pytest.mark.parametrize(
    "value, message",
    [
        ("sharp,nobody", "ensemble member 'nobody' has no verdicts"),
        ("sharp", "at least two different judges"),
        ("sharp,sharp", "at least two"),
    ],
)
def test_it_refuses_an_ensemble_it_cannot_build(campaign, value, message):
    result = run("calibration_report", "--campaign", campaign.name, "--rounds", "0", "--ensemble", value)
    assert result.code != 0 and message in result.err


def test_it_adds_an_ensemble_on_the_dashboard(campaign, client, rachel):
    client.force_login(rachel)
    url = reverse("calibration-dashboard", args=[campaign.pk])
    page = client.get(url)
    assert page.status_code == 200 and 'name="member" value="loyal"' in page.content.decode()
    page = client.get(url, {"member": ["sharp", "cheap", "loyal"]})
    html = page.content.decode()
    assert page.status_code == 200 and ENSEMBLE in html and "ensemble=sharp%2Ccheap%2Cloyal" in html
    download = client.get(reverse("calibration-download", args=[campaign.pk, "json"]), {"ensemble": "sharp,cheap,loyal"})
    assert download.status_code == 200 and ENSEMBLE in download.content.decode()
    bad = client.get(url, {"member": ["sharp"]})
    assert bad.status_code == 400 and "at least two different judges" in bad.content.decode()
    bad = client.get(url, {"ensemble": "sharp,ghost"})
    assert bad.status_code == 400 and "ghost" in bad.content.decode()
