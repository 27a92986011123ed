"""Weighted kappa and the ICC on small tables worked out by hand (the arithmetic is in the comments),
through the public functions and through the formulas of calibration/metrics/pointwise_math.py.
No database."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from calibration.metrics import pointwise_math as pm
from calibration.metrics.pointwise import RATING, pointwise_table
from calibration.metrics.pointwise_agreement import judge_figures
from calibration.metrics.pointwise_panel import panel_figures

TOL = 1e-12

# Ten articles rated 1-3 by one annotator (columns) and one judge (rows):
#
#             ann=1  ann=2  ann=3 | judge's total
#   judge=1     3      1      0   |  4
#   judge=2     1      2      1   |  4
#   judge=3     0      0      2   |  2
#   ann total   4      3      3   | 10
KAPPA_TABLE = np.array([[3, 1, 0], [1, 2, 1], [0, 0, 2]], dtype=float)

# Expected counts under independence, row total x column total / 10:
#   judge=1: 1.6 1.2 1.2
#   judge=2: 1.6 1.2 1.2
#   judge=3: 0.8 0.6 0.6
#
# Linear weights |i - j|: the three disagreements are all one point apart, so the observed
# weighted disagreement is 1 + 1 + 1 = 3; the expected one is
#   1.2*1 + 1.2*2 + 1.6*1 + 1.2*1 + 0.8*2 + 0.6*1 = 1.2 + 2.4 + 1.6 + 1.2 + 1.6 + 0.6 = 8.6,
# so kappa = 1 - 3 / 8.6 = 5.6 / 8.6 = 28 / 43.
KAPPA_LINEAR = 28 / 43
# Quadratic weights (i - j)^2: observed still 3 (each disagreement weighs 1^2 = 1); expected
#   1.2*1 + 1.2*4 + 1.6*1 + 1.2*1 + 0.8*4 + 0.6*1 = 1.2 + 4.8 + 1.6 + 1.2 + 3.2 + 0.6 = 12.6,
# so kappa = 1 - 3 / 12.6 = 9.6 / 12.6 = 16 / 21.
KAPPA_QUADRATIC = 16 / 21
# Unweighted: observed agreement (3 + 2 + 2) / 10 = 0.7; chance (4*4 + 4*3 + 2*3) / 100 = 0.34;
# kappa = (0.7 - 0.34) / (1 - 0.34) = 0.36 / 0.66 = 6 / 11.
KAPPA_NOMINAL = 6 / 11
# Exact agreement 7 / 10; within one point: every cell but the two 2-apart corners (both 0): 10 / 10.


def _pairs_from_table(t: np.ndarray):
    judge, ann = [], []
    for i, j in np.ndindex(t.shape):
        judge += [i + 1] * int(t[i, j])
        ann += [j + 1] * int(t[i, j])
    return judge, ann


def _table(rows):
    """A rating table (scale 1-3) from (article, rater, value, is_judge) tuples, one criterion."""
    return pointwise_table(
        article=[r[0] for r in rows], system=["s"] * len(rows), topic=[f"t-{r[0]}" for r in rows], criterion=["clarity"] * len(rows),
        rater=[r[1] for r in rows], value=[r[2] for r in rows], is_judge=[r[3] for r in rows], response=RATING, scale=(1, 6),
    )  # fmt: skip


def test_it_computes_weighted_kappa_as_worked_out_by_hand():
    assert pm.kappa(KAPPA_TABLE, pm.disagreement_weights(3, pm.LINEAR)) == pytest.approx(KAPPA_LINEAR, abs=TOL)
    assert pm.kappa(KAPPA_TABLE, pm.disagreement_weights(3, pm.QUADRATIC)) == pytest.approx(KAPPA_QUADRATIC, abs=TOL)
    assert pm.kappa(KAPPA_TABLE, pm.disagreement_weights(3, pm.NOMINAL)) == pytest.approx(KAPPA_NOMINAL, abs=TOL)
    # the hand arithmetic is scikit-learn's too
    judge, ann = _pairs_from_table(KAPPA_TABLE)
    assert cohen_kappa_score(judge, ann, weights="linear") == pytest.approx(KAPPA_LINEAR, abs=TOL)
    assert cohen_kappa_score(judge, ann, weights="quadratic") == pytest.approx(KAPPA_QUADRATIC, abs=TOL)


def test_it_gives_a_judge_the_hand_worked_kappas():
    judge, ann = _pairs_from_table(KAPPA_TABLE)
    rows = [(f"a{i}", "ann", float(ann[i]), False) for i in range(10)] + [(f"a{i}", "judge.1", float(judge[i]), True) for i in range(10)]
    table = pointwise_table(
        article=[r[0] for r in rows], system=["s"] * 20, topic=["t"] * 20, criterion=["c"] * 20, rater=[r[1] for r in rows],
        value=[r[2] for r in rows], is_judge=[r[3] for r in rows], response=RATING, scale=(1, 3),
    )  # fmt: skip
    fig = judge_figures(table, "judge.1", rounds=0).figures
    assert fig["kappa_linear"].value == pytest.approx(KAPPA_LINEAR, abs=TOL)
    assert fig["kappa_quadratic"].value == pytest.approx(KAPPA_QUADRATIC, abs=TOL)
    assert fig["exact"].value == pytest.approx(0.7, abs=TOL)
    assert fig["within_one"].value == pytest.approx(1.0, abs=TOL)
    assert fig["kappa_linear"].n == 10


# Four articles rated by three annotators:
#
#   article  r1 r2 r3 | row sum  row mean
#     1       1  2  3 |    6        2
#     2       2  3  4 |    9        3
#     3       3  3  3 |    9        3
#     4       4  5  6 |   15        5
#   col sum  10 13 16 |   39   (grand mean 39 / 12 = 3.25)
#
# n = 4 articles, k = 3 raters, N = 12 answers.
# Sum of squares of the answers: 14 + 29 + 27 + 77 = 147; correction 39^2 / 12 = 126.75.
#   total    SST = 147 - 126.75 = 20.25
#   articles SSR = (36 + 81 + 81 + 225) / 3 - 126.75 = 141 - 126.75 = 14.25
#   raters   SSC = (100 + 169 + 256) / 4 - 126.75 = 131.25 - 126.75 = 4.5
#   error    SSE = 20.25 - 14.25 - 4.5 = 1.5
# Mean squares: MSR = 14.25 / 3 = 4.75, MSC = 4.5 / 2 = 2.25, MSE = 1.5 / (3 * 2) = 0.25.
# ICC(2,1) = (MSR - MSE) / (MSR + (k - 1) MSE + k (MSC - MSE) / n)
#          = 4.5 / (4.75 + 2 * 0.25 + 3 * 2 / 4) = 4.5 / 6.75 = 2 / 3
# ICC(2,k) = (MSR - MSE) / (MSR + (MSC - MSE) / n) = 4.5 / (4.75 + 2 / 4) = 4.5 / 5.25 = 6 / 7
ICC_GRID = np.array([[1, 2, 3], [2, 3, 4], [3, 3, 3], [4, 5, 6]], dtype=float)
ICC_SINGLE, ICC_AVERAGE = 2 / 3, 6 / 7


def test_it_computes_the_icc_as_worked_out_by_hand():
    single, average = pm.icc2(pm.icc_terms(ICC_GRID).sum(axis=0))
    assert single == pytest.approx(ICC_SINGLE, abs=TOL)
    assert average == pytest.approx(ICC_AVERAGE, abs=TOL)
    rows = [(f"a{i}", f"r{j}", ICC_GRID[i, j], False) for i in range(4) for j in range(3)]
    fig = panel_figures(_table(rows), rounds=0).figures
    assert fig["icc2_1"].value == pytest.approx(ICC_SINGLE, abs=TOL)
    assert fig["icc2_k"].value == pytest.approx(ICC_AVERAGE, abs=TOL)
    assert fig["icc2_1"].n == 4


def test_it_agrees_with_pingouin_on_the_hand_example():
    pingouin = pytest.importorskip("pingouin")
    long = pd.DataFrame([(i, j, ICC_GRID[i, j]) for i in range(4) for j in range(3)], columns=["item", "rater", "score"])
    res = pingouin.intraclass_corr(long, targets="item", raters="rater", ratings="score").set_index("Type")["ICC"]
    assert res["ICC(A,1)"] == pytest.approx(ICC_SINGLE, abs=1e-9)
    assert res["ICC(A,k)"] == pytest.approx(ICC_AVERAGE, abs=1e-9)


def test_it_leaves_items_out_of_the_icc_when_a_rater_skipped_them():
    rows = [(f"a{i}", f"r{j}", ICC_GRID[i, j], False) for i in range(4) for j in range(3)]
    rows.append(("a9", "r0", 2.0, False))  # an item only one rater answered: not fully crossed
    rows.append(("a9", "r1", 2.0, False))
    panel = panel_figures(_table(rows), rounds=0)
    assert panel.figures["icc2_1"].value == pytest.approx(ICC_SINGLE, abs=TOL)
    assert panel.counts == {"items": 5, "icc_items": 4, "icc_items_left_out": 1}
