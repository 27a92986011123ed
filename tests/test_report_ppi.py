"""The report's prediction-powered section on an imported campaign in progress: humans have labelled
40 of 200 battles, judges all of them. Its human-only and judge-only figures must equal what the rest
of the report (and a hand count) says; the prediction-powered ones must be narrower for a good judge."""

import json

import numpy as np
import pytest

from calibration.report.formats import render
from tests.calibration_builders import assert_contract
from tests.helpers import RUBRIC, run
from tests.test_labels_only import COLUMNS, write_csv

pytestmark = pytest.mark.django_db

SYSTEMS = ("gpt-4.1", "qwen2.5-72b", "claude-3.5-sonnet", "llama-3.1-8b")
STRENGTH = {"gpt-4.1": 1.0, "qwen2.5-72b": 0.3, "claude-3.5-sonnet": 0.6, "llama-3.1-8b": -0.8}
JUDGES = {"gpt-4.1-mini": 0.9, "coin.flip": 0.0}  # P(copies the truth); else a random side
CRITERIA = ("ww_cc_1", "ww_wtw_1", "n_1")
LABELLED = 40


def dataset(seed: int = 3, n_battles: int = 200) -> tuple[list[dict], dict]:
    """Rows of the labels file, and each rater's verdicts as {(battle, criterion): (left, right, winner)}."""
    rng = np.random.default_rng(seed)
    rows, verdicts = [], {}
    for k in range(n_battles):
        left, right = (str(s) for s in rng.choice(SYSTEMS, size=2, replace=False))
        topic = f"Schlacht {k}: Côte d’Azur"
        pair_effect = rng.normal(0, 0.5)  # criteria of one battle lean together
        for criterion in CRITERIA:
            p_left = 1 / (1 + np.exp(STRENGTH[right] - STRENGTH[left] - pair_effect))
            truth = left if rng.random() < p_left else right
            common = {"campaign": "ppi", "topic": topic, "left_system": left, "right_system": right, "criterion": criterion}
            if k < LABELLED:
                rows.append(
                    {**common, "rater_kind": "human", "rater": "ann.one", "winner_system": truth, "saved_at": "2025-02-01T09:00:00Z"}
                )
                verdicts.setdefault("humans", {})[(k, criterion)] = (left, right, truth)
            for judge, copies in JUDGES.items():
                winner = truth if rng.random() < copies else str(rng.choice([left, right]))
                rows.append({**common, "rater_kind": "judge", "rater": judge, "winner_system": winner, "model": f"vendor/{judge}"})
                verdicts.setdefault(judge, {})[(k, criterion)] = (left, right, winner)
    return rows, verdicts


@pytest.fixture
def report(tmp_path):
    criteria = tmp_path / "tiny.json"
    criteria.write_text(json.dumps(RUBRIC), encoding="utf-8")
    assert run("import_criteria", str(criteria)).code == 0
    assert run("create_campaign", "--name", "ppi", "--criteria", "tiny", "--labels-only").code == 0
    rows, verdicts = dataset()
    result = run("import_labels", "--campaign", "ppi", str(write_csv(tmp_path / "votes.csv", rows, COLUMNS)))
    assert result.code == 0, result.err
    out = tmp_path / "report.json"
    assert run("calibration_report", "--campaign", "ppi", "--rounds", "100", "--out", str(out)).code == 0
    return json.loads(out.read_text(encoding="utf-8")), verdicts


def field_rate(verdicts: dict, system: str) -> tuple[float, int]:
    """A system's share of wins (no ties here) over every verdict it is in."""
    wins = [winner == system for left, right, winner in verdicts.values() if system in (left, right)]
    return float(np.mean(wins)), len(wins)


def test_it_counts_the_labelled_and_the_judged_items(report):
    report, _ = report
    assert_contract(report)
    for judge in JUDGES:
        f = report["prediction_powered"]["judges"][judge]
        assert (f["n_human"], f["n_human_pairs"]) == (LABELLED * 3, LABELLED)
        assert (f["n_judge"], f["n_unlabelled"], f["n_unlabelled_pairs"]) == (600, 600 - LABELLED * 3, 200 - LABELLED)
        assert f["note"] is None


def test_it_gives_the_human_only_and_judge_only_rates_the_rest_of_the_report_gives(report):
    report, verdicts = report
    f = report["prediction_powered"]["judges"]["gpt-4.1-mini"]
    for system in SYSTEMS:
        rates = f["win_rates"][system]
        assert rates["human"]["rate"] == pytest.approx(report["win_rates"]["humans"][system]["overall"]["rate"], abs=1e-6)
        assert rates["human"]["rate"] == pytest.approx(field_rate(verdicts["humans"], system)[0], abs=1e-6)
        rate, n = field_rate(verdicts["gpt-4.1-mini"], system)
        assert rates["judge"]["rate"] == pytest.approx(rate, abs=1e-6) and rates["judge"]["n"] == n
        assert rates["human"]["n"] == field_rate(verdicts["humans"], system)[1] == rates["ppi"]["n"]
        for method in ("ppi", "human", "judge"):
            lo, hi = rates[method]["ci"]
            assert lo < rates[method]["rate"] < hi


def test_it_narrows_the_cis_with_a_good_judge_and_not_with_a_coin(report):
    report, _ = report
    good, coin = (report["prediction_powered"]["judges"][j] for j in JUDGES)
    for system in SYSTEMS:
        g = good["win_rates"][system]
        width = lambda entry: entry["ci"][1] - entry["ci"][0]  # noqa: E731
        assert width(g["ppi"]) < 0.8 * width(g["human"]), system
        assert g["n_effective"] > g["human"]["n"] and 0.3 < g["lam"] <= 1
    # The coin gets no weight unless its sample correlation passes the one-sided 5% gate by chance
    # (here it does for one system of four: gpt-4.1, r = 0.16 over 21 pairs).
    coin_rates = coin["win_rates"].values()
    ignored = [c for c in coin_rates if c["lam"] == 0]
    assert len(ignored) >= 3
    for c in ignored:
        assert c["ppi"]["ci"] == c["human"]["ci"] and c["n_effective"] == c["human"]["n"]
    assert good["gain"] > 1.5 and good["n_effective"] == pytest.approx(good["n_human"] * good["gain"], rel=1e-3)
    assert coin["gain"] == 1.0


def test_it_scores_the_systems_as_the_humans_bradley_terry_does(report):
    """The humans-only logistic fit is the Bradley-Terry MLE the report fits with choix: same
    differences between systems (the report anchors on the mean, so compare differences)."""
    report, _ = report
    bt = report["prediction_powered"]["judges"]["gpt-4.1-mini"]["bradley_terry"]
    human = {s["system"]: s["human"]["score"] for s in bt["scores"]}
    choix = {s["system"]: s["score"] for s in report["bradley_terry"]["humans"]}
    assert set(human) == set(choix) == set(SYSTEMS) and not bt["left_out"]
    for a in SYSTEMS:
        for b in SYSTEMS:
            assert human[a] - human[b] == pytest.approx(choix[a] - choix[b], abs=0.05)
    assert sum(human.values()) / len(human) == pytest.approx(1000, abs=1e-6)
    ppi = [s["ppi"]["score"] for s in bt["scores"]]
    assert ppi == sorted(ppi, reverse=True)  # best first
    for s in bt["scores"]:
        for method in ("ppi", "human", "judge"):
            lo, hi = s[method]["rank_set"]
            assert 1 <= lo <= hi <= len(SYSTEMS)
        rank = 1 + ppi.index(s["ppi"]["score"])
        assert s["ppi"]["rank_set"][0] <= rank <= s["ppi"]["rank_set"][1]
    # llama is far below the others: every method should say it is last
    llama = next(s for s in bt["scores"] if s["system"] == "llama-3.1-8b")
    assert llama["ppi"]["rank_set"] == [4, 4]


def test_it_shows_the_tables_in_markdown_and_html(report):
    report, _ = report
    md = render(report, "md")
    assert "## Prediction-powered win rates against the field" in md
    assert "## Prediction-powered Bradley–Terry scores and rank-sets" in md
    assert "gpt-4.1-mini: 120 human labels worth" in md
    assert "· rank 4" in md
    html = render(report, "html")
    assert 'id="ppi_bradley_terry"' in html and "PPI++" in html


def test_it_says_why_a_judge_without_labelled_pairs_has_no_figures(tmp_path):
    criteria = tmp_path / "tiny.json"
    criteria.write_text(json.dumps(RUBRIC), encoding="utf-8")
    assert run("import_criteria", str(criteria)).code == 0
    assert run("create_campaign", "--name", "ppi", "--criteria", "tiny", "--labels-only").code == 0
    rows, _ = dataset(n_battles=60)
    rows = [r for r in rows if r["rater_kind"] == "human" or not r["topic"].startswith(("Schlacht 1:", "Schlacht 2:"))]
    rows = [r for r in rows if r["rater_kind"] == "judge" or r["topic"].startswith("Schlacht 1:")]
    assert run("import_labels", "--campaign", "ppi", str(write_csv(tmp_path / "votes.csv", rows, COLUMNS))).code == 0
    out = tmp_path / "report.json"
    assert run("calibration_report", "--campaign", "ppi", "--rounds", "0", "--out", str(out)).code == 0
    f = json.loads(out.read_text(encoding="utf-8"))["prediction_powered"]["judges"]["gpt-4.1-mini"]
    assert f["win_rates"] == {} and f["bradley_terry"] is None
    assert f["note"] == "needs human labels on at least two pairs this judge judged"
    assert "gpt-4.1-mini: needs human labels" in render(json.loads(out.read_text(encoding="utf-8")), "md")


def test_it_names_in_every_format_the_systems_left_without_a_win_rate(tmp_path):
    criteria = tmp_path / "tiny.json"
    criteria.write_text(json.dumps(RUBRIC), encoding="utf-8")
    assert run("import_criteria", str(criteria)).code == 0
    assert run("create_campaign", "--name", "ppi", "--criteria", "tiny", "--labels-only").code == 0
    rows, _ = dataset(n_battles=60)
    # Humans labelled three battles: a system in only one of them has no interval to give.
    rows = [r for r in rows if r["rater_kind"] == "judge" or r["topic"].startswith(("Schlacht 0:", "Schlacht 1:", "Schlacht 2:"))]
    assert run("import_labels", "--campaign", "ppi", str(write_csv(tmp_path / "votes.csv", rows, COLUMNS))).code == 0
    out = tmp_path / "report.json"
    assert run("calibration_report", "--campaign", "ppi", "--rounds", "0", "--out", str(out)).code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    left_out = report["prediction_powered"]["judges"]["gpt-4.1-mini"]["win_rates_left_out"]
    assert left_out, "the data should leave a system out"
    for fmt in ("md", "html"):
        text = render(report, fmt)
        for system, reason in left_out.items():
            assert reason.split(" … ")[0].split("(")[0].strip()[:40] in text, (fmt, system)
    # The systems that keep a rate rest on fewer than 10 labelled pairs: no interval, and the note says why.
    for rate in report["prediction_powered"]["judges"]["gpt-4.1-mini"]["win_rates"].values():
        assert rate["ppi"]["ci"] is None and rate["ppi"]["ci_note"] == "too few pairs for an interval"
