"""A human-judgment dataset as it comes from another group: several annotators and LLM judges with
dotted model names, verdicts only (no texts), no reference system. Imported through the real
commands into a labels-only campaign; the report must hold what dataset papers publish, each
figure equal to the reference implementation (scikit-learn, statsmodels) on the same data.
"""

import json
from itertools import combinations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

from tests.helpers import RUBRIC, run
from tests.test_labels_only import COLUMNS, write_csv

pytestmark = pytest.mark.django_db

SYSTEMS = ("gpt-4.1", "qwen2.5-72b", "claude-3.5-sonnet", "llama-3.1-8b")
STRENGTH = {"gpt-4.1": 1.0, "qwen2.5-72b": 0.6, "claude-3.5-sonnet": 0.8, "llama-3.1-8b": -0.4}
ANNOTATORS = ("ann.one", "ann.two", "ann.three")
JUDGES = {"gpt-4.1-mini": 0.85, "claude-3.5-haiku": 0.7, "qwen2.5-7b-instruct": 0.55}  # P(copies the truth)
CRITERIA = ("ww_cc_1", "ww_wtw_1", "n_1")
ENSEMBLE = "ensemble:gpt-4.1-mini+claude-3.5-haiku+qwen2.5-7b-instruct"


def side(winner: str, left: str, right: str) -> str:
    """A verdict as the report's agreement coefficients see it: the first of the two systems in
    name order wins ("1"), the second ("2"), or a tie."""
    first, second = sorted((left, right))
    return "1" if winner == first else "2" if winner == second else "tie"


def dataset(seed: int = 5, n_battles: int = 60) -> tuple[list[dict], dict]:
    """Rows of the labels file, and each rater's verdicts by item ((topic, criterion) -> side)."""
    rng = np.random.default_rng(seed)
    rows, verdicts = [], {}
    for k in range(n_battles):
        left, right = rng.choice(SYSTEMS, size=2, replace=False)
        topic = f"Frage {k}: Wie hoch ist der Turm?"
        for criterion in CRITERIA:
            p_left = 1 / (1 + np.exp(STRENGTH[right] - STRENGTH[left]))
            truth = left if rng.random() < p_left else right
            common = {"campaign": "arena", "topic": topic, "left_system": left, "right_system": right, "criterion": criterion}
            # every battle has two or three annotators, so Fleiss' kappa must pick the modal number
            raters = ANNOTATORS if k % 4 else ANNOTATORS[:2]
            for rater in raters:
                u = rng.random()
                winner = truth if u < 0.7 else ("tie" if u < 0.8 else (right if truth == left else left))
                rows.append({**common, "rater_kind": "human", "rater": rater, "winner_system": winner, "saved_at": "2025-02-01T09:00:00Z"})
                verdicts.setdefault(rater, {})[(topic, criterion)] = side(winner, left, right)
            for judge, copies in JUDGES.items():
                winner = truth if rng.random() < copies else str(rng.choice([left, right, "tie"]))
                rows.append({**common, "rater_kind": "judge", "rater": judge, "winner_system": winner, "model": f"vendor/{judge}"})
                verdicts.setdefault(judge, {})[(topic, criterion)] = side(winner, left, right)
    return rows, verdicts


@pytest.fixture
def report(tmp_path):
    criteria = tmp_path / "tiny.json"
    criteria.write_text(json.dumps(RUBRIC), encoding="utf-8")
    assert run("import_criteria", str(criteria)).code == 0
    assert run("create_campaign", "--name", "arena", "--criteria", "tiny", "--labels-only", "--allow-tie").code == 0
    rows, verdicts = dataset()
    result = run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "votes.csv", rows, COLUMNS)))
    assert result.code == 0, result.err
    out = tmp_path / "report.json"
    result = run(
        "calibration_report", "--campaign", "arena", "--rounds", "200", "--out", str(out),
        "--ensemble", ",".join(JUDGES),
    )  # fmt: skip
    assert result.code == 0, result.err
    return json.loads(out.read_text(encoding="utf-8")), verdicts


def common_items(a: dict, b: dict) -> list:
    return sorted(set(a) & set(b))


def test_it_gives_cohen_kappa_for_every_two_annotators_equal_to_scikit_learn(report):
    report, verdicts = report
    pairs = {(p["a"], p["b"]): p for p in report["humans"]["annotator_pairs"]}
    assert set(pairs) == {tuple(sorted(x)) for x in combinations(ANNOTATORS, 2)}
    for (a, b), entry in pairs.items():
        items = common_items(verdicts[a], verdicts[b])
        want = cohen_kappa_score([verdicts[a][i] for i in items], [verdicts[b][i] for i in items])
        assert entry["kappa"]["value"] == pytest.approx(want, abs=1e-6)
        assert entry["kappa"]["n"] == len(items)
        assert entry["kappa"]["ci"][0] < want < entry["kappa"]["ci"][1]
        same = np.mean([verdicts[a][i] == verdicts[b][i] for i in items])
        assert entry["agreement"]["value"] == pytest.approx(same, abs=1e-6)


def test_it_gives_fleiss_kappa_equal_to_statsmodels(report):
    report, verdicts = report
    items = sorted(set.intersection(*[set(verdicts[a]) for a in ANNOTATORS]))  # three raters: the modal number
    categories = sorted({verdicts[a][i] for a in ANNOTATORS for i in items})
    table = [[sum(verdicts[a][i] == c for a in ANNOTATORS) for c in categories] for i in items]
    fleiss = report["humans"]["fleiss_kappa"]
    assert fleiss["value"] == pytest.approx(fleiss_kappa(table), abs=1e-6)
    assert (fleiss["raters_per_item"], fleiss["n"]) == (3, len(items))
    assert fleiss["n_items_left_out"] == len(verdicts[ANNOTATORS[0]]) - len(items)


def test_it_gives_each_annotator_agreement_with_the_others(report):
    report, verdicts = report
    annotators = {a["name"]: a for a in report["humans"]["annotators"]}
    assert set(annotators) == set(ANNOTATORS)
    for name in ANNOTATORS:
        same = total = 0
        for item, mine in verdicts[name].items():
            others = [verdicts[o][item] for o in ANNOTATORS if o != name and item in verdicts[o]]
            top = max(set(others), key=others.count)
            if others.count(top) * 2 > len(others):
                same, total = same + (mine == top), total + 1
        entry = annotators[name]["agreement_with_others"]
        assert (entry["value"], entry["n"]) == (pytest.approx(same / total, abs=1e-6), total)
        assert annotators[name]["seconds_per_pair"]["n"] == 0  # imported without times: nothing timed


def test_it_gives_the_judge_against_judge_matrix_and_an_ensemble(report):
    report, verdicts = report
    pairs = {(p["a"], p["b"]): p for p in report["judge_pairs"]}
    assert set(pairs) == {tuple(sorted(x)) for x in combinations(JUDGES, 2)}
    for (a, b), entry in pairs.items():
        items = common_items(verdicts[a], verdicts[b])
        assert entry["agreement"]["value"] == pytest.approx(np.mean([verdicts[a][i] == verdicts[b][i] for i in items]), abs=1e-6)
        want = cohen_kappa_score([verdicts[a][i] for i in items], [verdicts[b][i] for i in items])
        assert entry["kappa"]["value"] == pytest.approx(want, abs=1e-6)
    ensemble = next(j for j in report["judges"] if j["name"] == ENSEMBLE)
    assert ensemble["kind"] == "ensemble" and ensemble["members"] == list(JUDGES)
    # its verdict: the strict majority of the three, else a tie; PAR against every human label
    agree = total = 0
    for item in verdicts["gpt-4.1-mini"]:
        votes = [verdicts[j][item] for j in JUDGES]
        top = max(set(votes), key=votes.count)
        mine = top if votes.count(top) >= 2 else "tie"
        for a in ANNOTATORS:
            if item in verdicts[a]:
                agree, total = agree + (verdicts[a][item] == mine), total + 1
    assert (ensemble["par"], ensemble["n_labels"]) == (pytest.approx(agree / total, abs=1e-6), total)


def test_it_scores_every_system_without_a_reference(report):
    report, _ = report
    assert report["parameters"]["reference"] is None
    assert report["parameters"]["anchor"]["kind"] == "mean"
    for rater in ("humans", *JUDGES, ENSEMBLE):
        scores = {s["system"]: s for s in report["bradley_terry"][rater]}
        assert set(scores) == set(SYSTEMS), rater
        assert all(s["estimable"] and s["score"] is not None for s in scores.values()), rater
        anchors = report["bradley_terry_meta"][rater]["anchor_systems"]
        assert np.mean([scores[s]["score"] for s in anchors]) == pytest.approx(1000, abs=0.05)
        assert set(report["win_rates"][rater]) == set(SYSTEMS)
    humans = [s["system"] for s in report["bradley_terry"]["humans"]]
    assert humans[0] in ("gpt-4.1", "claude-3.5-sonnet") and humans[-1] == "llama-3.1-8b"
    assert not any("Nothing to show" in note for note in report["notes"])
