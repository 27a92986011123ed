"""Weighted estimates under active sampling (issue 27, item 2), pure: PAR, the prediction-powered
win rate and the Bradley-Terry fit each weight a label by 1 / its pair's inclusion probability.
Hand-computed examples, the uniform forms when every probability is equal, and choix on replicated data."""

from __future__ import annotations

import math

import choix
import numpy as np
import pytest

from calibration import metrics as M
from calibration.metrics import LabelTable, powered
from calibration.metrics.active import active_ppi_logistic, active_ppi_mean, inverse_probability_weights, unequal_inclusion
from calibration.metrics.ppi import bt_design, ppi_logistic
from calibration.report.design import ceiling_interval, correlation_interval
from tests.metrics_helpers import ELO, G, J, L, S, W


def _par_example():
    # p1: both humans agree with the judge; p2: one of two; p3: none (one human).
    humans = [
        L("p1", "c", "h1", W), L("p1", "c", "h2", W),
        L("p2", "c", "h1", W), L("p2", "c", "h2", S),
        L("p3", "c", "h1", S),
    ]  # fmt: skip
    judge = [J("p1", "c", W), J("p2", "c", W), J("p3", "c", W)]
    return LabelTable.from_labels(judge), LabelTable.from_labels(humans)


def test_it_weights_par_by_the_inverse_inclusion_probability_of_each_label():
    judge, humans = _par_example()
    inclusion = {"p1": 0.5, "p2": 0.25, "p3": 0.1}
    ag = M.agreement(judge, humans, rounds=50, seed=0, inclusion=inclusion)
    # weights 2, 2 | 4, 4 | 10; agreements 1, 1 | 1, 0 | 0
    assert ag.par.value == pytest.approx((2 + 2 + 4) / (2 + 2 + 4 + 4 + 10), abs=1e-12)
    # the majority form: p1 agrees (weight 2), p2 has no strict majority, p3 disagrees (weight 10)
    assert ag.par_majority.value == pytest.approx(2 / 12, abs=1e-12)
    assert ag.par.ci_low <= ag.par.value <= ag.par.ci_high
    unweighted = M.agreement(judge, humans, rounds=50, seed=0)
    assert unweighted.par.value == pytest.approx(3 / 5, abs=1e-12)


def test_it_gives_the_uniform_par_when_every_probability_is_equal():
    judge, humans = _par_example()
    equal = M.agreement(judge, humans, rounds=200, seed=3, inclusion={"p1": 0.3, "p2": 0.3, "p3": 0.3})
    uniform = M.agreement(judge, humans, rounds=200, seed=3)
    for a, b in ((equal.par, uniform.par), (equal.par_majority, uniform.par_majority), (equal.par_no_ties, uniform.par_no_ties)):
        assert a.value == pytest.approx(b.value, abs=1e-9)
        assert a.ci_low == pytest.approx(b.ci_low, abs=1e-9) and a.ci_high == pytest.approx(b.ci_high, abs=1e-9)
    assert unequal_inclusion({"p1": 0.3, "p2": 0.3}) is None and unequal_inclusion({}) is None
    assert unequal_inclusion({"p1": 0.3, "p2": 0.4}) == {"p1": 0.3, "p2": 0.4}


def test_it_counts_a_pair_without_a_stored_probability_as_certain():
    assert inverse_probability_weights(["p1", "calib", "p1"], {"p1": 0.25}).tolist() == [4.0, 1.0, 4.0]
    with pytest.raises(ValueError):
        inverse_probability_weights(["p1"], {"p1": 0.0})


def _rate_items(pi):
    """Four pairs of W against S: two labelled, two not (one criterion each)."""
    return powered.Items(
        systems=(S, W),
        sys_lo=np.zeros(4, dtype=np.int64),
        sys_hi=np.ones(4, dtype=np.int64),
        cluster=np.arange(4),
        y=np.array([1.0, 0.0, np.nan, np.nan]),  # S's share of the win
        yhat=np.array([1.0, 1.0, 0.0, 1.0]),
        labelled=np.array([True, True, False, False]),
        unlabelled=np.array([False, False, True, True]),
        pi=None if pi is None else np.asarray(pi, dtype=np.float64),
    )


def test_it_weights_the_prediction_powered_win_rate_as_computed_by_hand():
    items = _rate_items([0.5, 0.25, 0.2, 0.6])
    rate = powered.win_rates(items, reference=W, lam=0.5)[S]
    # S's side: y = 1, 0 and yhat = 1, 1 on the labelled (w = 2, 4); yhat = 0, 1 on the others (v = 1.25, 2.5)
    b = (2 * (1 - 0.5) + 4 * (0 - 0.5)) / 6  # Hajek mean of y - lam yhat
    a = (1.25 * 0 + 2.5 * 1) / 3.75  # Hajek mean of the judge on the unlabelled
    assert rate.ppi.value == pytest.approx(0.5 * a + b, abs=1e-12)
    assert rate.lam == 0.5
    # the human-only figure: the weighted mean of y
    assert rate.human.value == pytest.approx(2 / 6, abs=1e-12)
    # its variance: the cluster sums of the weighted influences, over W^2
    var = ((2 * (0.5 - b)) ** 2 + (4 * (-0.5 - b)) ** 2) / 36 + 0.25 * ((1.25 * (0 - a)) ** 2 + (2.5 * (1 - a)) ** 2) / 3.75**2
    assert rate.ppi.se == pytest.approx(math.sqrt(var), abs=1e-12)


def test_it_gives_the_uniform_win_rate_when_every_probability_is_equal():
    rng = np.random.default_rng(4)
    n = 60
    y = rng.integers(0, 2, n).astype(float)
    yhat = np.where(rng.random(n) < 0.8, y, 1 - y)
    labelled = np.arange(n) < 26  # whole pairs in one set
    items = powered.Items(
        (S, W), np.zeros(n, np.int64), np.ones(n, np.int64), np.arange(n) // 2, np.where(labelled, y, np.nan), yhat, labelled, ~labelled
    )
    weighted = powered.Items(
        *[getattr(items, f) for f in ("systems", "sys_lo", "sys_hi", "cluster", "y", "yhat", "labelled", "unlabelled")], np.full(n, 0.4)
    )
    for a, b in zip(powered.win_rates(weighted, W).values(), powered.win_rates(items, W).values(), strict=True):
        assert (a.ppi.value, a.ppi.se, a.lam) == pytest.approx((b.ppi.value, b.ppi.se, b.lam), abs=1e-9)
        assert a.human.value == pytest.approx(b.human.value, abs=1e-9) and a.human.se == pytest.approx(b.human.se, abs=1e-9)


def test_it_fits_weighted_bradley_terry_as_choix_on_the_labels_replicated():
    rng = np.random.default_rng(7)
    systems = (W, S, G)
    rows, replicated, weights = [], [], []
    for k in range(40):
        a, b = rng.choice(systems, size=2, replace=False)
        winner = a if rng.random() < 0.6 else b if rng.random() < 0.8 else "tie"
        copies = int(rng.integers(1, 5))  # 1 / pi for pi in {1, 1/2, 1/3, 1/4}
        rows.append(L(f"p{k}", "c", "h1", winner, a=a, b=b))
        replicated += [L(f"p{k}-{i}", "c", "h1", winner, a=a, b=b) for i in range(copies)]
        weights.append(copies)
    table = LabelTable.from_labels(rows)
    fit = M.bradley_terry(table, reference=W, rounds=0, weights=np.array(weights, dtype=float))
    same = M.bradley_terry(LabelTable.from_labels(replicated), reference=W, rounds=0)
    # choix on the replicated win counts, a tie half a win each way
    index = {s: i for i, s in enumerate(systems)}
    counts = np.zeros((3, 3))
    for x in replicated:
        i, j = index[x.system_a], index[x.system_b]
        if x.winner == "tie":
            counts[i, j] += 0.5
            counts[j, i] += 0.5
        else:
            w, lo = (i, j) if x.winner == x.system_a else (j, i)
            counts[w, lo] += 1
    theta = choix.ilsr_pairwise_dense(counts, alpha=0)
    for s in systems:
        expected = 1000 + ELO * (theta[index[s]] - theta[index[W]])
        assert fit.scores[s].score == pytest.approx(same.scores[s].score, abs=1e-6)
        assert fit.scores[s].score == pytest.approx(expected, abs=1e-6)
    unweighted = M.bradley_terry(table, reference=W, rounds=0)
    assert any(abs(unweighted.scores[s].score - fit.scores[s].score) > 1 for s in (S, G))


def test_it_gives_the_unweighted_bradley_terry_fit_with_equal_weights():
    rows = [L(f"p{k}", "c", "h1", (W, S, "tie")[k % 3], a=W, b=S) for k in range(12)]
    rows += [L(f"q{k}", "c", "h1", (G, S)[k % 2], a=G, b=S) for k in range(10)]
    table = LabelTable.from_labels(rows)
    plain = M.bradley_terry(table, reference=W, rounds=100, seed=2)
    weighted = M.bradley_terry(table, reference=W, rounds=100, seed=2, weights=np.full(len(table), 2.5))
    for s in (W, S, G):
        a, b = plain.scores[s], weighted.scores[s]
        assert (a.score, a.ci_low, a.ci_high) == pytest.approx((b.score, b.ci_low, b.ci_high), abs=1e-6)
    with pytest.raises(ValueError):
        M.bradley_terry(table, reference=W, rounds=0, weights=np.zeros(len(table)))


def test_it_bounds_the_correlation_and_the_ceiling_with_fishers_interval():
    lo, hi = correlation_interval(0.5, np.ones(28))  # Kish's n = 28
    half = 1.959963984540054 / 5
    assert (lo, hi) == pytest.approx((math.tanh(math.atanh(0.5) - half), math.tanh(math.atanh(0.5) + half)), abs=1e-12)
    # unequal weights count as fewer pairs: a wider interval
    lo_w, hi_w = correlation_interval(0.5, np.array([1.0] * 14 + [5.0] * 14))
    assert lo_w < lo and hi_w > hi
    assert ceiling_interval(lo, hi) == pytest.approx((1 / (1 - lo**2), 1 / (1 - hi**2)), abs=1e-12)
    assert ceiling_interval(-0.2, 0.4)[0] == 1.0


def test_it_estimates_without_bias_where_the_draw_favours_the_hard_items():
    """The weighted win rate covers the population's rate when the draw labels the items the judge gets
    wrong far more often (here those where the humans say S won); the labelled items' plain mean is
    biased (what the report warned about before)."""
    rng = np.random.default_rng(11)
    m, reps = 400, 300
    truth_y = (rng.random(m) < 0.35).astype(float)
    wrong = rng.random(m) < np.where(truth_y == 1, 0.5, 0.1)
    yhat = np.where(wrong, 1 - truth_y, truth_y)
    pi = np.where(wrong, 0.6, 0.15)  # a perfect error predictor, mixed with a uniform share
    target = truth_y.mean()
    hits, weighted, plain = 0, [], []
    for _ in range(reps):
        drawn = rng.random(m) < pi
        fit = active_ppi_mean(truth_y[drawn], yhat[drawn], yhat[~drawn], pi[drawn], pi[~drawn])
        lo, hi = fit.ci()
        hits += lo[0] <= target <= hi[0]
        weighted.append(fit.estimate[0])
        plain.append(truth_y[drawn].mean())
    assert hits / reps >= 0.92
    assert abs(np.mean(weighted) - target) < 0.01
    assert np.mean(plain) - target > 0.1


def _bt_data(seed: int, n: int, N: int):
    rng = np.random.default_rng(seed)
    k = 4
    strength = np.array([0.0, 0.5, -0.4, 1.0])
    lo = rng.integers(0, k, n + N)
    hi = (lo + rng.integers(1, k, n + N)) % k
    truth = (rng.random(n + N) < 1 / (1 + np.exp(strength[hi] - strength[lo]))).astype(float)
    judge = np.where(rng.random(n + N) < 0.8, truth, 1 - truth)
    X = bt_design(lo, hi, k, 0)
    clusters = np.arange(n + N) // 2
    return X, truth, judge, clusters


@pytest.mark.parametrize("lam", [None, 0.0, 0.6])
def test_it_gives_the_uniform_prediction_powered_bradley_terry_fit_when_every_probability_is_equal(lam):
    X, y, yhat, cl = _bt_data(5, 120, 400)
    n = 120
    plain = ppi_logistic(X[:n], y[:n], yhat[:n], X[n:], yhat[n:], lam=lam, clusters=cl[:n], clusters_unlabeled=cl[n:])
    equal = active_ppi_logistic(
        X[:n], y[:n], yhat[:n], X[n:], yhat[n:], np.full(n, 0.3), np.full(400, 0.3), lam=lam, clusters=cl[:n], clusters_unlabeled=cl[n:]
    )
    assert equal.lam == pytest.approx(plain.lam, abs=1e-9)
    assert equal.estimate == pytest.approx(plain.estimate, abs=1e-9)
    assert equal.cov == pytest.approx(plain.cov, abs=1e-9)


def test_it_weights_the_prediction_powered_bradley_terry_fit_as_the_labels_replicated():
    """With lam = 0 the weighted fit is the logistic MLE on the labels each repeated 1 / pi times
    (statsmodels' GLM with frequency weights, no intercept)."""
    import statsmodels.api as sm

    X, y, yhat, cl = _bt_data(8, 150, 0)
    pi = np.where(np.arange(150) % 3 == 0, 0.25, 0.5)
    fit = active_ppi_logistic(X, y, yhat, X[:0], yhat[:0], pi, [], lam=0.0)
    glm = sm.GLM(y, X, family=sm.families.Binomial(), freq_weights=1 / pi).fit()
    assert fit.estimate == pytest.approx(glm.params, abs=1e-7)
    # and its covariance is the sandwich: the weighted score's spread over the weighted information
    mu = 1 / (1 + np.exp(-X @ fit.estimate))
    w = (1 / pi) / (1 / pi).sum()
    info = (X.T * (w * mu * (1 - mu))) @ X
    score = w[:, None] * X * (mu - y)[:, None]
    score = score - w[:, None] * (w @ (X * (mu - y)[:, None]))
    inv = np.linalg.inv(info)
    assert fit.cov == pytest.approx(inv @ (score.T @ score * 150 / 149) @ inv, rel=1e-9)
