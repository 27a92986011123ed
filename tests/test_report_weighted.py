"""The report of an actively sampled campaign (issue 27, item 2): PAR, the prediction-powered win rates
and the humans' Bradley-Terry scores weight each human label by 1 / the inclusion probability stored
with its pair, the design section states the design, and equal probabilities give the uniform report.

The campaign is test_report_ppi's: 200 imported battles, humans on the first 40, two judges on all."""

from __future__ import annotations

import math

import choix
import numpy as np
import pytest
from django.urls import reverse

from annotate.models import Campaign, Pair, PairAdmission
from calibration.metrics.active import active_ppi_mean
from calibration.metrics.ppi import informative
from calibration.report.build import build_report
from calibration.report.formats import render
from tests.helpers import RUBRIC, run
from tests.metrics_helpers import ELO
from tests.test_labels_only import COLUMNS, write_csv
from tests.test_report_ppi import LABELLED, dataset

pytestmark = pytest.mark.django_db
JUDGE = "gpt-4.1-mini"
WAITING = 10  # the last battles have no admission yet: they are in no estimate


def unequal(k: int) -> float:
    return (0.2 if k % 2 else 0.6) if k < LABELLED else 0.3


@pytest.fixture
def campaign(tmp_path):
    import json

    criteria = tmp_path / "tiny.json"
    criteria.write_text(json.dumps(RUBRIC), encoding="utf-8")
    assert run("import_criteria", str(criteria)).code == 0
    assert run("create_campaign", "--name", "ppi", "--criteria", "tiny", "--labels-only").code == 0
    rows, verdicts = dataset()
    assert run("import_labels", "--campaign", "ppi", str(write_csv(tmp_path / "votes.csv", rows, COLUMNS))).code == 0
    return Campaign.objects.get(name="ppi"), verdicts


def battle_pairs(campaign) -> dict[int, Pair]:
    return {
        int(p.topic.title.split(":")[0].removeprefix("Schlacht ")): p
        for p in Pair.objects.filter(campaign=campaign).select_related("topic")
    }


def admit(campaign, probability, waiting: int = 0) -> dict[int, float]:
    """Stores an admission per battle (the labelled ones admitted), but for the last `waiting`; returns pi per battle."""
    pairs = battle_pairs(campaign)
    pi = {k: probability(k) for k in pairs if k < len(pairs) - waiting}
    PairAdmission.objects.bulk_create(
        PairAdmission(
            pair=pairs[k],
            probability=p,
            draw=p / 2 if k < LABELLED else (1 + p) / 2,
            admitted=k < LABELLED,
            phase="active",
            model_version="t",
        )
        for k, p in pi.items()
    )
    Campaign.objects.filter(pk=campaign.pk).update(sampling="active")
    campaign.refresh_from_db()
    return pi


def close(a, b, path="report"):
    """Every number of `a` within 1e-9 of `b`'s, the same keys and strings."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, abs=1e-9), path
    else:
        assert a == b, path


def without(report: dict) -> dict:
    return {k: v for k, v in report.items() if k not in ("generated_at", "notes", "design")}


def test_it_gives_the_uniform_report_when_every_probability_is_equal(campaign):
    campaign, _ = campaign
    uniform = build_report(campaign, rounds=100)
    admit(campaign, lambda k: 0.25)
    active = build_report(campaign, rounds=100)
    close(without(active), without(uniform))
    assert "design" not in uniform and active["design"]["weighted"] is False
    assert any("every inclusion probability stored so far is equal" in note for note in active["notes"])


def test_it_weights_par_win_rates_and_scores_by_the_stored_probabilities(campaign):
    campaign, verdicts = campaign
    pi = admit(campaign, unequal, waiting=WAITING)
    report = build_report(campaign, rounds=100)
    assert report["design"]["weighted"] is True
    humans, judge = verdicts["humans"], verdicts[JUDGE]

    # PAR: each human label weighted by 1 / pi of its battle
    w = np.array([1 / pi[k] for (k, _) in humans])
    agree = np.array([judge[key][2] == humans[key][2] for key in humans], dtype=float)
    par = next(j for j in report["judges"] if j["name"] == JUDGE)["par"]
    assert par == pytest.approx(float(w @ agree / w.sum()), abs=1e-6)
    assert abs(par - agree.mean()) > 1e-3  # the weights matter here

    # the prediction-powered win rate of one system against the field, as active_ppi_mean on the raw verdicts
    system = "claude-3.5-sonnet"
    lab, unl = [], []
    for key, (left, right, winner) in judge.items():
        if system not in (left, right) or key[0] not in pi:
            continue
        row = (float(humans[key][2] == system) if key in humans else None, float(winner == system), pi[key[0]], key[0])
        (lab if key[0] < LABELLED else unl).append(row)
    y, yhat, p, cl = (np.array([r[i] for r in lab]) for i in range(4))
    yu, pu, cu = (np.array([r[i] for r in unl]) for i in (1, 2, 3))
    lam = None if informative(y, yhat, cl) else 0.0
    fit = active_ppi_mean(y, yhat, yu, p, pu, lam=lam, clusters=cl, clusters_unlabeled=cu)
    rate = report["prediction_powered"]["judges"][JUDGE]["win_rates"][system]
    assert rate["ppi"]["rate"] == pytest.approx(min(max(fit.estimate[0], 0), 1), abs=1e-6)
    assert rate["lam"] == pytest.approx(fit.lam, abs=1e-6)
    human = active_ppi_mean(y, yhat, [], p, [], lam=0.0, clusters=cl)
    assert rate["human"]["rate"] == pytest.approx(human.estimate[0], abs=1e-6)

    # the humans' Bradley-Terry scores: choix on the win counts weighted by 1 / pi
    systems = sorted({s for (left, right, _) in humans.values() for s in (left, right)})
    index = {s: i for i, s in enumerate(systems)}
    counts = np.zeros((len(systems), len(systems)))
    for (k, _), (left, right, winner) in humans.items():
        loser = right if winner == left else left
        counts[index[winner], index[loser]] += 1 / pi[k]
    theta = choix.ilsr_pairwise_dense(counts, alpha=0)
    scores = {row["system"]: row["score"] for row in report["bradley_terry"]["humans"]}
    first, *others = systems
    for s in others:
        assert scores[s] - scores[first] == pytest.approx(ELO * (theta[index[s]] - theta[index[first]]), abs=0.02)
    # the prediction-powered section's human-only scores are the same weighted fit, on the pairs this judge judged
    bt = {row["system"]: row for row in report["prediction_powered"]["judges"][JUDGE]["bradley_terry"]["scores"]}
    for s in others:
        assert bt[s]["human"]["score"] - bt[first]["human"]["score"] == pytest.approx(scores[s] - scores[first], abs=0.02)
        assert bt[s]["ppi"]["ci"][0] <= bt[s]["ppi"]["score"] <= bt[s]["ppi"]["ci"][1]


def test_it_weights_the_alt_test_of_an_active_campaign_only_when_probabilities_differ(campaign):
    campaign, _ = campaign
    alt = dict(rounds=50, alt_epsilon=0.15, alt_epsilon_reason="crowd workers")
    admit(campaign, lambda k: 0.25)
    assert build_report(campaign, **alt)["alt_test"]["weighted"] is False
    PairAdmission.objects.filter(pair__campaign=campaign).delete()
    admit(campaign, unequal, waiting=WAITING)
    report = build_report(campaign, **alt)
    assert report["alt_test"]["weighted"] is True and "1 / pi" in report["alt_test"]["method"]
    assert "the alt-test" in report["design"]["weighted_figures"].split("not yet weighted")[0]


def test_it_states_the_design_the_effective_sample_size_and_the_ceiling_in_every_format(campaign):
    campaign, verdicts = campaign
    pi = admit(campaign, unequal, waiting=WAITING)
    report = build_report(campaign, rounds=100)
    design = report["design"]
    assert design["n_pairs_drawn"] == 200 - WAITING and design["n_labelled_pairs"] == LABELLED
    assert (design["probability_min"], design["probability_max"]) == (0.2, 0.6)
    figures = design["judges"][JUDGE]
    assert figures["n_labelled_pairs"] == LABELLED and figures["n_labelled_items"] == 3 * LABELLED
    # rho: the weighted correlation of the human and judge values, each item's sys_lo (by name) side
    humans, judge = verdicts["humans"], verdicts[JUDGE]
    y, yhat, w = [], [], []
    for key, (left, right, winner) in humans.items():
        lo = min(left, right)
        y.append(float(winner == lo))
        yhat.append(float(judge[key][2] == lo))
        w.append(1 / pi[key[0]])
    c = np.cov(y, yhat, aweights=w)
    rho = c[0, 1] / math.sqrt(c[0, 0] * c[1, 1])
    assert figures["rho"] == pytest.approx(rho, abs=1e-6)
    assert figures["ceiling"] == pytest.approx(1 / (1 - rho**2), abs=1e-3)
    assert figures["rho_ci"][0] < figures["rho"] < figures["rho_ci"][1]
    assert figures["ceiling_ci"][0] <= figures["ceiling"] <= figures["ceiling_ci"][1]
    assert figures["n_effective"] == report["prediction_powered"]["judges"][JUDGE]["n_effective"] > 0
    assert design["judges"]["coin.flip"]["rho"] < figures["rho"]

    md, html, csv = (render(report, fmt) for fmt in ("md", "html", "csv"))
    for text in (md, html):
        assert "Sampling design" in text and "Effective sample size" in text and "1/(1 − ρ²)" in text
    header, *rows = csv.splitlines()
    assert "design_n_effective" in header and "design_ceiling_ci_high" in header
    row = next(r for r in rows if r.startswith(JUDGE))
    assert f"{figures['rho']}" in row and f"{figures['ceiling']}" in row
    uniform = render({k: v for k, v in report.items() if k != "design"}, "csv")
    assert "design" not in uniform.splitlines()[0]


def test_it_shows_the_design_on_the_dashboard_of_an_active_campaign_only(campaign, client, rachel, settings):
    campaign, _ = campaign
    settings.CALIBRATION_ROUNDS = 20
    client.force_login(rachel)
    table_url = reverse("calibration-table", args=[campaign.pk, "design"])
    page = client.get(reverse("calibration-dashboard", args=[campaign.pk]))
    assert page.status_code == 200 and 'id="table-design"' not in page.content.decode()
    assert client.get(table_url).status_code == 404
    admit(campaign, unequal, waiting=WAITING)
    page = client.get(reverse("calibration-dashboard", args=[campaign.pk]))
    text = page.content.decode()
    assert page.status_code == 200 and 'id="table-design"' in text and "Sampling design" in text and JUDGE in text
    assert client.get(table_url).status_code == 200
