"""Honest small samples: every figure shows the pairs it rests on, an interval needs 10 pairs, and every
note and figure of the JSON reaches the Markdown, the HTML report and the dashboard.

The hand dataset (tests/calibration_builders.py) has 2 pairs; the wide one 12 (6 topics, each with
wikipedia against atlas_agent and quill_researcher), so that each system other than wikipedia is
compared in 6 pairs only.
"""

import html as html_lib
import json

import pytest
from django.core.cache import cache
from django.urls import reverse

from calibration.report.build import build_report
from calibration.report.formats import render
from tests.calibration_builders import ATLAS, QUILL, assert_contract, by_criterion, hand_campaign, hand_dataset, judge_rows, label_pairs

pytestmark = pytest.mark.django_db
TOO_FEW = "too few pairs for an interval"
TOPICS = ("Red Fox", "Grey Wolf", "Brown Bear", "Snow Owl", "Sea Otter", "Elk")


@pytest.fixture(autouse=True)
def fast_reports(settings):
    settings.CALIBRATION_ROUNDS = 100
    cache.clear()


def wide_dataset(alice, bob):
    campaign = hand_campaign([alice, bob], name="Wide", topics=TOPICS)
    pairs = list(campaign.pairs.order_by("id"))
    patterns = ("aab", "abb", "bab", "aba", "bbb", "aaa")
    alice_says = {p: by_criterion(*patterns[i % 6]) for i, p in enumerate(pairs)}
    bob_says = {p: by_criterion(*patterns[(i + 1) % 6]) for i, p in enumerate(pairs)}
    label_pairs(campaign, alice, alice_says)
    label_pairs(campaign, bob, bob_says)
    judge_rows(campaign, "sharp", {(p, True): alice_says[p] for p in pairs}, model="big-model")
    return campaign


def dashboard_html(client, rachel, campaign) -> str:
    client.force_login(rachel)
    response = client.get(reverse("calibration-dashboard", args=[campaign.pk]))
    assert response.status_code == 200
    return html_lib.unescape(response.content.decode())


def test_it_withholds_every_interval_below_ten_pairs_in_json_markdown_html_and_dashboard(alice, bob, rachel, client):
    campaign = hand_dataset(alice, bob)
    report = build_report(campaign, rounds=100)
    assert_contract(report)  # checks the rule on every estimate of the JSON
    sharp = next(j for j in report["judges"] if j["name"] == "sharp")
    assert (sharp["par"], sharp["par_ci"], sharp["par_ci_note"], sharp["par_n_pairs"]) == (
        pytest.approx(10 / 12, abs=1e-6),
        None,
        TOO_FEW,
        2,
    )
    assert report["parameters"]["min_pairs_for_ci"] == 10 and TOO_FEW in report["parameters"]["interval_rule"]
    wiki = next(s for s in report["bradley_terry"]["humans"] if s["system"] == "wikipedia")
    assert (wiki["score"], wiki["ci"], wiki["ci_note"], wiki["n_pairs"]) == (1000.0, None, TOO_FEW, 2)
    rate = report["win_rates"]["humans"][ATLAS]["overall"]
    assert (rate["ci"], rate["ci_note"], rate["n_pairs"]) == (None, TOO_FEW, 1)
    cell = f"0.833 [{TOO_FEW}]† (n=12, 2 pairs)"
    md = render(report, "md")
    assert cell in md and "[0.8" not in md and "an estimate resting on fewer than 10 pairs has no interval" in md
    html = html_lib.unescape(render(report, "html"))
    assert cell in html
    assert cell in dashboard_html(client, rachel, campaign)


def test_it_gives_an_interval_from_ten_pairs_and_shows_the_pairs_beside_n(alice, bob):
    campaign = wide_dataset(alice, bob)
    report = build_report(campaign, rounds=100)
    assert_contract(report)
    sharp = next(j for j in report["judges"] if j["name"] == "sharp")
    assert sharp["par_n_pairs"] == 12 and sharp["par_ci"] is not None and sharp["par_ci_note"] is None
    # Each other system meets wikipedia in 6 of the 12 pairs: its win rate has no interval.
    for system in (ATLAS, QUILL):
        rate = report["win_rates"]["sharp"][system]["overall"]
        assert (rate["n_pairs"], rate["ci"], rate["ci_note"]) == (6, None, TOO_FEW)
    md = render(report, "md")
    lo, hi = sharp["par_ci"]
    # † marks it: 12 pairs are fewer than 30, whatever its 72 labels.
    assert f"{sharp['par']:.3f} [{lo:.3f}, {hi:.3f}]† (n={sharp['n_labels']}, 12 pairs)" in md
    assert f"| sharp | {ATLAS} | {report['win_rates']['sharp'][ATLAS]['overall']['rate']:.3f} [{TOO_FEW}]† | 18 | 6 |" in md


def test_it_brings_every_note_and_figure_of_the_json_to_markdown_html_and_the_dashboard(alice, bob, rachel, client):
    campaign = wide_dataset(alice, bob)
    report = build_report(campaign, rounds=100)
    h = report["humans"]
    sharp = next(j for j in report["judges"] if j["name"] == "sharp")
    powered = report["prediction_powered"]["judges"]["sharp"]
    assert powered["note"] and "humans' own" in powered["note"]  # every pair sharp judged has human labels
    loo = "Labels left out of the leave-one-out PAR (the other annotators split, or there are none)"
    texts = [*report["notes"], powered["note"], report["parameters"]["convention"], f"{sharp['par_no_ties']:.3f} ["]
    md = render(report, "md")
    page = html_lib.unescape(render(report, "html"))
    dashboard = dashboard_html(client, rachel, campaign)
    for text in texts:
        assert text in md and text in page and text in dashboard, text
    assert f"| {loo} | {h['n_loo_excluded']:,} |" in md and f"| Items with ≥ 2 labels | {h['n_items_multi']:,} |" in md
    for html in (page, dashboard):
        assert f'<td>{loo}</td><td class="num">{h["n_loo_excluded"]:,}</td>' in html
        assert f'<td>Items with ≥ 2 labels</td><td class="num">{h["n_items_multi"]:,}</td>' in html
    assert json.loads(render(report, "json")) == report
