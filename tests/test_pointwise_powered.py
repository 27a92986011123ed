"""Prediction-powered mean scores per system (calibration/metrics/pointwise_powered.py) against
ppi_py, and the alt-test's inputs and scoring functions against scikit-learn. No database."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, root_mean_squared_error

from calibration.metrics.pointwise import BINARY, COUNT, RATING, pointwise_table
from calibration.metrics.pointwise_powered import (
    ACCURACY,
    NEG_RMSE,
    SCORING,
    alt_test_inputs,
    alt_test_long_form,
    neg_rmse_score,
    powered_means,
)
from calibration.metrics.pointwise_powered import (
    accuracy_score as alt_accuracy,
)

ppi_py = pytest.importorskip("ppi_py")
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # ppi_py passes scikit-learn a deprecated argument
TOL = 1e-6


def _columns(rows):
    keys = ("article", "system", "topic", "criterion", "rater", "value", "is_judge")
    return {k: [r[i] for r in rows] for i, k in enumerate(keys)}


def _campaign(seed: int, response: str, labelled: int = 40, unlabelled: int = 200, judge_noise: float = 0.6):
    """Two systems; every article has one criterion (one item: its own cluster, as ppi_py assumes);
    two annotators answer the first `labelled` articles of each system, the judge every article.
    Returns the table and, per system, (y, yhat, yhat_unlabelled) as ppi_py takes them."""
    rng = np.random.default_rng(seed)
    rows, arrays = [], {}
    for s, shift in (("sys.a", 0.0), ("sys.b", 0.8)):
        y, yhat, yu = [], [], []
        for a in range(labelled + unlabelled):
            art = f"{s}-art-{a}"
            quality = 3 + shift + rng.normal(0, 1)
            judged = quality + rng.normal(0, judge_noise)
            if response == BINARY:
                j = float(judged > 3.4)
                answers = [float(quality + rng.normal(0, 0.5) > 3.4) for _ in range(2)]
            else:
                j = float(np.clip(np.rint(judged), 1, 5))
                answers = [float(np.clip(np.rint(quality + rng.normal(0, 0.5)), 1, 5)) for _ in range(2)]
            rows.append((art, s, f"topic-{a}", "depth", "judge.v1", j, True))
            if a < labelled:
                for h, v in zip(("ann", "bea"), answers):
                    rows.append((art, s, f"topic-{a}", "depth", h, v, False))
                y.append(np.mean(answers))
                yhat.append(j)
            else:
                yu.append(j)
        arrays[s] = tuple(np.asarray(v) for v in (y, yhat, yu))
    table = pointwise_table(**_columns(rows), response=response, scale=(1, 5) if response == RATING else None)
    return table, arrays


@pytest.mark.parametrize("seed", [1, 2])
def test_it_equals_ppi_py_for_each_systems_mean_rating(seed):
    table, arrays = _campaign(seed, RATING)
    means, left_out = powered_means(table, "judge.v1")
    assert left_out == {} and sorted(means) == ["sys.a", "sys.b"]
    for system, (y, yhat, yu) in arrays.items():
        lo, hi = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=0.05)
        point = ppi_py.ppi_mean_pointestimate(y, yhat, yu)
        m = means[system]
        assert 0 < m.lam <= 1  # a judge that tracks the humans gets a weight
        assert abs(m.ppi.value - float(np.ravel(point)[0])) < TOL
        assert abs(m.ppi.ci[0] - float(np.ravel(lo)[0])) < TOL and abs(m.ppi.ci[1] - float(np.ravel(hi)[0])) < TOL
        assert abs(m.human.value - y.mean()) < TOL
        assert abs(m.judge.value - np.concatenate([yhat, yu]).mean()) < TOL
        assert m.ppi.n == len(y) == m.ppi.n_pairs and m.judge.n == len(yhat) + len(yu)
        assert m.ppi.ci[1] - m.ppi.ci[0] < m.human.ci[1] - m.human.ci[0]
        assert m.n_effective > len(y)


def test_it_keeps_a_checklist_rate_inside_zero_and_one():
    table, arrays = _campaign(3, BINARY)
    means, _ = powered_means(table, "judge.v1")
    for system, (y, yhat, yu) in arrays.items():
        m = means[system]
        point = ppi_py.ppi_mean_pointestimate(y, yhat, yu, lam=m.lam)
        assert abs(m.ppi.value - min(max(float(np.ravel(point)[0]), 0.0), 1.0)) < TOL
        for interval in (m.ppi, m.human, m.judge):
            assert 0.0 <= interval.ci[0] <= interval.value <= interval.ci[1] <= 1.0


def test_it_gives_a_useless_judge_no_weight():
    table, _ = _campaign(4, RATING, judge_noise=50.0)
    means, _ = powered_means(table, "judge.v1")
    assert all(m.lam == 0.0 for m in means.values())
    assert all(abs(m.ppi.value - m.human.value) < TOL for m in means.values())


def test_it_names_the_systems_it_cannot_estimate():
    rows = [
        ("x-1", "lonely.sys", "t1", "c", "ann", 3.0, False), ("x-1", "lonely.sys", "t1", "c", "j", 4.0, True),
        ("x-2", "lonely.sys", "t2", "c", "j", 2.0, True),
    ]  # fmt: skip
    table = pointwise_table(**_columns(rows), response=COUNT)
    means, left_out = powered_means(table, "j")
    assert means == {}
    assert left_out == {"lonely.sys": "not estimable: human and judge answers in 1 of its articles (2 needed)"}
    with pytest.raises(ValueError, match="'ann' is an annotator, not a judge"):
        powered_means(table, "ann")


def test_it_never_splits_an_article_between_labelled_and_unlabelled_items():
    rows = []
    for a in range(6):
        for c in ("c1", "c2"):
            rows.append((f"art-{a}", "s", f"t{a}", c, "j", float(a % 3 + (c == "c2")), True))
        if a < 4:  # humans answered c1 only on the first four articles
            rows.append((f"art-{a}", "s", f"t{a}", "c1", "ann", float(a % 3), False))
    table = pointwise_table(**_columns(rows), response=COUNT)
    m = powered_means(table, "j", lam=1.0)[0]["s"]
    # labelled: the four articles' c1 items; their c2 items are left out; unlabelled: 2 articles x 2 criteria
    assert m.ppi.n == 4 and m.judge.n == 12
    y = np.array([0, 1, 2, 0], dtype=float)
    yhat = y.copy()
    yu = np.array([1, 2, 2, 3], dtype=float)  # articles 4 and 5: c1 = a % 3, c2 = a % 3 + 1
    assert abs(m.ppi.value - (yu.mean() + (y - yhat).mean())) < TOL


def test_it_scores_like_sklearn_for_the_alt_test():
    rng = np.random.default_rng(0)
    others = rng.integers(1, 6, (50, 4)).astype(float)
    others[rng.random(others.shape) < 0.3] = np.nan
    others[0] = [2, np.nan, np.nan, np.nan]
    candidate = rng.integers(1, 6, 50).astype(float)
    acc, rmse = alt_accuracy(candidate, others), neg_rmse_score(candidate, others)
    for i in range(50):
        row = others[i][~np.isnan(others[i])]
        if len(row) == 0:
            assert math.isnan(acc[i]) and math.isnan(rmse[i])
            continue
        assert abs(acc[i] - accuracy_score(row, np.full(len(row), candidate[i]))) < TOL
        assert abs(rmse[i] + root_mean_squared_error(row, np.full(len(row), candidate[i]))) < TOL
    assert SCORING[BINARY] == (ACCURACY, alt_accuracy) and SCORING[RATING][0] == SCORING[COUNT][0] == NEG_RMSE


def test_it_builds_the_alt_test_inputs_against_the_other_annotators():
    # one checklist question on two articles; on a1 ann says yes, bea no, cem N/A; the judge says yes
    rows = [
        ("a1", "s", "t", "q", "ann", 1.0, False), ("a1", "s", "t", "q", "bea", 0.0, False), ("a1", "s", "t", "q", "cem", math.nan, False),
        ("a1", "s", "t", "q", "judge", 1.0, True),
        ("a2", "s", "t", "q", "ann", 1.0, False), ("a2", "s", "t", "q", "bea", 1.0, False), ("a2", "s", "t", "q", "cem", 1.0, False),
        ("a2", "s", "t", "q", "judge", math.nan, True),  # the judge's N/A: no score on a2
    ]  # fmt: skip
    table = pointwise_table(**_columns(rows), response=BINARY)
    inputs = alt_test_inputs(table, "judge")
    assert inputs.scoring == ACCURACY and inputs.annotators == ("ann", "bea", "cem")
    assert len(inputs) == 2  # ann and bea on a1; cem's N/A is no answer
    ann, bea = inputs.of("ann"), inputs.of("bea")
    # against ann's others (bea: no) the judge's yes scores 0, ann's own yes 0; against bea's others (ann: yes)
    # the judge scores 1 and bea's no 0
    assert inputs.judge_score[ann].tolist() == [0.0] and inputs.human_score[ann].tolist() == [0.0]
    assert inputs.judge_score[bea].tolist() == [1.0] and inputs.human_score[bea].tolist() == [0.0]
    assert inputs.n_others.tolist() == [1, 1]
    assert table.articles[inputs.article[0]] == "a1" and table.criteria[inputs.criterion[0]] == "q"


def test_it_uses_negative_rmse_for_ratings_in_the_alt_test():
    table, _ = _campaign(5, RATING, labelled=5, unlabelled=0)
    inputs = alt_test_inputs(table, "judge.v1")
    assert inputs.scoring == NEG_RMSE and len(inputs) == 20  # 10 articles x 2 annotators, one other each
    grid = table.grid
    for r in range(len(inputs)):
        item = np.flatnonzero((grid.article == inputs.article[r]) & (grid.criterion == inputs.criterion[r]))[0]
        mine = table.human_codes[inputs.annotator[r]]
        other = [c for c in table.human_codes if c != mine][0]
        assert inputs.judge_score[r] == -abs(grid.value[item, table.rater_code("judge.v1")] - grid.value[item, other])
        assert inputs.human_score[r] == -abs(grid.value[item, mine] - grid.value[item, other])


def test_it_gives_the_alt_test_module_its_long_form():
    rows = [
        ("a.1", "s", "t", "q", "ann", 1.0, False), ("a.1", "s", "t", "q", "bea", math.nan, False),
        ("a.1", "s", "t", "q", "judge", 0.0, True), ("a.1", "s", "t", "q", "other.judge", 1.0, True),
        ("b.2", "s", "t", "q", "ann", 0.0, False), ("b.2", "s", "t", "q", "judge", math.nan, True),
    ]  # fmt: skip
    humans, judge, scoring = alt_test_long_form(pointwise_table(**_columns(rows), response=BINARY), "judge")
    assert scoring == "categorical"
    assert humans["pair"].tolist() == ["a.1", "b.2"] and humans["rater"].tolist() == ["ann", "ann"]  # bea's N/A left out
    assert humans["value"].tolist() == [1.0, 0.0] and humans["criterion"].tolist() == ["q", "q"]
    assert judge["pair"].tolist() == ["a.1"] and judge["value"].tolist() == [0.0]  # its N/A on b.2 left out
    table, _ = _campaign(6, RATING, labelled=3, unlabelled=1)
    humans, judge, scoring = alt_test_long_form(table, "judge.v1")
    assert scoring == "numeric" and len(humans["pair"]) == 12 and len(judge["pair"]) == 8
