"""Checklist figures against the human majority (issue 39, item 12): balanced accuracy, precision,
recall, F1 and phi equal scikit-learn's on the same (majority, judge) pairs to 1e-6, each with n and a
CI; the majority's yes rate beside the pooled one; the same figures for the leave-one-out ceiling."""

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score, matthews_corrcoef, precision_score, recall_score

from calibration.metrics.pointwise import BINARY
from calibration.metrics.pointwise_agreement import human_ceiling, judge_figures
from tests.test_pointwise_references import _answers

TOL = 1e-6


def _majority_pairs(values, rater, others):
    """(the strict majority of `others` on each item, `rater`'s answer) where both exist (no N/A)."""
    y, x = [], []
    for a, c in np.ndindex(values.shape[:2]):
        v = values[a, c, rater]
        ref = [values[a, c, o] for o in others if not np.isnan(values[a, c, o])]
        if np.isnan(v) or not ref or sum(ref) * 2 == len(ref):
            continue
        y.append(int(sum(ref) * 2 > len(ref)))
        x.append(int(v))
    return np.array(y), np.array(x)


def _check(figures, y, x):
    expected = {
        "balanced_accuracy": balanced_accuracy_score(y, x),
        "precision": precision_score(y, x),
        "recall": recall_score(y, x),
        "f1": f1_score(y, x),
        "phi": matthews_corrcoef(y, x),
        "majority_yes_rate": y.mean(),
    }
    for name, value in expected.items():
        assert abs(figures[name].value - value) < TOL, (name, figures[name].value, value)
        assert figures[name].n == len(y)


@pytest.mark.parametrize("seed", [5, 8, 13])
def test_it_equals_sklearn_against_the_human_majority(seed):
    values, _, table = _answers(BINARY, seed=seed)
    for j, name in ((4, "gpt-4.1"), (5, "judge.b")):
        fig = judge_figures(table, name, rounds=200, seed=1).figures
        y, x = _majority_pairs(values, j, range(4))
        _check(fig, y, x)
        for figure in ("balanced_accuracy", "f1", "phi"):
            low, high = fig[figure].ci_low, fig[figure].ci_high
            assert low is not None and low <= fig[figure].value <= high, figure
    # The pooled humans' yes rate is every human answer's, not the majority's.
    assert "human_mean" in fig and "majority_yes_rate" in fig


def test_it_gives_the_ceiling_the_same_figures():
    values, _, table = _answers(BINARY, seed=5)
    pooled, _ = human_ceiling(table, rounds=0)
    ys, xs = [], []
    for r in range(4):
        y, x = _majority_pairs(values, r, [o for o in range(4) if o != r])
        ys.append(y)
        xs.append(x)
    _check(pooled.figures, np.concatenate(ys), np.concatenate(xs))
