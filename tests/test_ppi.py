"""Prediction-powered estimates (calibration.metrics.ppi) against the reference implementation
ppi_py, and their behaviour with useless and perfect judges. No database."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.metrics.ppi import Z95, bt_design, informative, ppi_logistic, ppi_mean, rank_sets, with_dropped

ppi_py = pytest.importorskip("ppi_py")  # a dev dependency (pyproject [dev]); absent only in a bare install

TOL = 1e-6
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # ppi_py passes scikit-learn a deprecated argument


def _binary_sample(seed: int, n: int, N: int, accuracy: float):
    """Human labels, a judge right with probability `accuracy`, on n labelled + N unlabelled items."""
    rng = np.random.default_rng(seed)
    truth = (rng.random(n + N) < 0.6).astype(float)
    judge = np.where(rng.random(n + N) < accuracy, truth, 1 - truth)
    return truth[:n], judge[:n], judge[n:]


def _bt_sample(seed: int, n: int, N: int, accuracy: float, k: int = 5):
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.6, k)
    a = rng.integers(0, k, n + N)
    b = (a + rng.integers(1, k, n + N)) % k
    truth = (rng.random(n + N) < 1 / (1 + np.exp(-(strength[a] - strength[b])))).astype(float)
    judge = np.where(rng.random(n + N) < accuracy, truth, 1 - truth)
    X = bt_design(a, b, k, 0)
    return X[:n], truth[:n], judge[:n], X[n:], judge[n:]


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.35])
@pytest.mark.parametrize("seed,n,N,accuracy", [(1, 300, 3000, 0.8), (2, 60, 900, 0.6), (3, 500, 500, 0.95)])
def test_it_equals_ppi_py_mean_ci(lam, seed, n, N, accuracy):
    y, yhat, yu = _binary_sample(seed, n, N, accuracy)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=0.05, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yu, lam=lam)
    fit = ppi_mean(y, yhat, yu, lam=lam)
    mine_lo, mine_hi = fit.ci(0.05)
    assert abs(fit.estimate[0] - float(np.ravel(point)[0])) < TOL
    assert abs(mine_lo[0] - float(np.ravel(lo)[0])) < TOL
    assert abs(mine_hi[0] - float(np.ravel(hi)[0])) < TOL


@pytest.mark.parametrize("lam", [None, 1.0, 0.0])
@pytest.mark.parametrize("seed,n,N,accuracy", [(4, 400, 4000, 0.8), (5, 250, 1500, 0.65)])
def test_it_equals_ppi_py_logistic_ci_on_bradley_terry_rows(lam, seed, n, N, accuracy):
    X, y, yhat, Xu, yu = _bt_sample(seed, n, N, accuracy)
    lo, hi = ppi_py.ppi_logistic_ci(X, y, yhat, Xu, yu, alpha=0.05, lam=lam)
    fit = ppi_logistic(X, y, yhat, Xu, yu, lam=lam)
    mine_lo, mine_hi = fit.ci(0.05)
    assert np.max(np.abs(mine_lo - lo)) < TOL
    assert np.max(np.abs(mine_hi - hi)) < TOL
    assert np.max(np.abs(fit.estimate - (lo + hi) / 2)) < TOL


def test_it_tunes_lam_as_ppi_py_does():
    X, y, yhat, Xu, yu = _bt_sample(6, 300, 3000, 0.75)
    fit = ppi_logistic(X, y, yhat, Xu, yu)
    # ppi_py picks the last lam from the statistics at the fit with the previous one
    first = ppi_py.ppi_logistic_pointestimate(X, y, yhat, Xu, yu, lam=None)
    stats = ppi_py.ppi._logistic_get_stats(first, X, y, yhat, Xu, yu, np.ones(len(y)), np.ones(len(yu)))
    assert abs(fit.lam - ppi_py.ppi._calc_lam_glm(*stats, clip=True)) < TOL
    assert 0 < fit.lam < 1


def test_it_gives_a_useless_judge_no_credit():
    """Random verdicts: tuned PPI falls back to (about) the humans alone; plain PPI is wider."""
    rng = np.random.default_rng(7)
    widths = []
    for _ in range(20):
        y = (rng.random(200) < 0.6).astype(float)
        yhat = (rng.random(200) < 0.5).astype(float)
        yu = (rng.random(5000) < 0.5).astype(float)
        human = ppi_mean(y, yhat, [], lam=0.0)
        tuned = ppi_mean(y, yhat, yu)
        plain = ppi_mean(y, yhat, yu, lam=1.0)
        widths.append(tuned.se[0] / human.se[0])
        assert tuned.lam < 0.3
        assert plain.se[0] > human.se[0]
    # the estimated optimum can shave a hair off by chance, never more
    assert min(widths) > 0.97
    assert np.median(widths) > 0.99


def test_it_gates_a_useless_judge_out_on_few_pairs():
    """20 pairs of 3 items: the tuned lam alone narrows a coin's CI by chance; the gate leaves it
    out in about 95% of samples, and then the CI is the humans' own."""
    rng = np.random.default_rng(12)
    clusters = np.repeat(np.arange(20), 3)
    narrowed_tuned = passed = 0
    for _ in range(400):
        y = (np.repeat(rng.normal(0, 1, 20), 3) + rng.normal(0, 1, 60) > 0).astype(float)
        yhat = (rng.random(60) < 0.5).astype(float)
        yu = (rng.random(600) < 0.5).astype(float)
        cu = np.repeat(np.arange(20, 220), 3)
        human = ppi_mean(y, yhat, [], lam=0.0, clusters=clusters)
        tuned = ppi_mean(y, yhat, yu, clusters=clusters, clusters_unlabeled=cu)
        narrowed_tuned += tuned.se[0] < 0.97 * human.se[0]
        passed += informative(y, yhat, clusters)
    assert narrowed_tuned > 40  # the problem the gate is for
    assert passed <= 0.09 * 400
    good_y = (rng.random(60) < 0.5).astype(float)
    good_hat = np.where(rng.random(60) < 0.85, good_y, 1 - good_y)
    assert informative(good_y, good_hat, clusters)
    assert not informative(good_y, np.full(60, 0.5), clusters)  # a constant judge says nothing
    assert not informative(good_y[:6], good_hat[:6], clusters[:6])  # two pairs: no test


def test_it_shrinks_with_a_perfect_judge_as_if_every_item_were_labelled():
    """yhat == y: the tuned weight is about N/(n+N) and the variance about that of a mean of n+N labels."""
    rng = np.random.default_rng(8)
    n, N = 200, 1800
    truth = (rng.random(n + N) < 0.4).astype(float)
    y, yu = truth[:n], truth[n:]
    tuned = ppi_mean(y, y, yu)
    human = ppi_mean(y, y, [], lam=0.0)
    everything = ppi_mean(truth, truth, [], lam=0.0)
    # N/(n+N), up to the sampling difference between the labelled variance and the pooled one
    assert tuned.lam == pytest.approx(N / (n + N) * y.var() / truth.var(ddof=1), rel=1e-9)
    assert tuned.lam == pytest.approx(N / (n + N), rel=0.1)
    assert tuned.se[0] / human.se[0] == pytest.approx(np.sqrt(n / (n + N)), rel=0.03)
    assert tuned.se[0] == pytest.approx(everything.se[0], rel=0.03)
    # plain PPI with a perfect judge: only the judge's own sampling noise on the N items
    plain = ppi_mean(y, y, yu, lam=1.0)
    assert plain.se[0] == pytest.approx(yu.std() / np.sqrt(N), rel=1e-9)


def test_it_corrects_a_biased_judge():
    """A judge that says 'yes' too often: its own mean is off, the powered one covers the truth."""
    rng = np.random.default_rng(9)
    covered = 0
    for _ in range(200):
        truth = (rng.random(3000) < 0.5).astype(float)
        judge = np.where(truth == 1, 1.0, (rng.random(3000) < 0.3).astype(float))  # false positives
        fit = ppi_mean(truth[:150], judge[:150], judge[150:])
        lo, hi = fit.ci()
        covered += lo[0] <= 0.5 <= hi[0]
        assert judge.mean() > 0.6
    assert covered / 200 >= 0.9


def test_it_clusters_correlated_items():
    """Items of one cluster share an effect: the clustered SE is larger than the naive one, and
    with one item per cluster it is the naive one exactly."""
    rng = np.random.default_rng(10)
    clusters = np.repeat(np.arange(100), 10)
    effect = np.repeat(rng.normal(0, 1, 100), 10)
    y = (effect + rng.normal(0, 0.5, 1000) > 0).astype(float)
    yhat = np.where(rng.random(1000) < 0.8, y, 1 - y)
    cu = np.repeat(np.arange(100, 400), 10)
    yu = (np.repeat(rng.normal(0, 1, 300), 10) + rng.normal(0, 0.5, 3000) > 0).astype(float)
    naive = ppi_mean(y, yhat, yu, lam=0.7)
    clustered = ppi_mean(y, yhat, yu, lam=0.7, clusters=clusters, clusters_unlabeled=cu)
    singletons = ppi_mean(y, yhat, yu, lam=0.7, clusters=np.arange(1000), clusters_unlabeled=np.arange(1000, 4000))
    assert clustered.se[0] > 1.8 * naive.se[0]
    assert singletons.se[0] == pytest.approx(naive.se[0], rel=1e-12)
    assert clustered.estimate[0] == pytest.approx(naive.estimate[0], rel=1e-12)
    assert (clustered.n_clusters, clustered.N_clusters) == (100, 300)


def test_it_refuses_mismatched_inputs():
    with pytest.raises(ValueError, match="one entry per item"):
        ppi_mean([1, 0, 1], [1, 0], [0, 1])
    with pytest.raises(ValueError, match="at least one labelled item"):
        ppi_mean([], [], [0, 1])


def test_it_reports_no_fit_when_a_system_never_loses():
    X = bt_design([0, 0, 1, 0], [1, 2, 2, 1], 3, 0)
    y = np.array([1.0, 1.0, 0.0, 1.0])  # system 0 wins everything: no finite strength
    assert ppi_logistic(X, y, y, X[:0], y[:0], lam=0.0) is None


def test_it_centres_on_the_mean_of_the_anchors():
    X, y, yhat, Xu, yu = _bt_sample(11, 300, 2000, 0.8, k=4)
    fit = ppi_logistic(X, y, yhat, Xu, yu)
    theta, cov = with_dropped(fit, 0, anchors=np.arange(4))
    assert abs(theta.mean()) < 1e-12
    assert abs(cov.sum()) < 1e-12  # the mean is fixed, so it has no variance
    theta0, cov0 = with_dropped(fit, 0)
    assert theta0[0] == 0 and cov0[0, 0] == 0
    assert np.allclose(theta - theta.mean(), theta0 - theta0.mean())


def test_it_builds_rank_sets_from_the_pairwise_differences():
    est = np.array([10.0, 9.9, 5.0, 0.0])
    cov = np.diag([0.01, 0.01, 0.01, 0.0])
    assert rank_sets(est, cov) == [(1, 2), (1, 2), (3, 3), (4, 4)]
    wide = np.diag([100.0, 100.0, 100.0, 100.0])
    assert rank_sets(est, wide) == [(1, 4)] * 4
    # a difference of 4.5 standard errors separates two systems with Bonferroni over 6 pairs (z = 2.87)...
    sd = 1 / 4.5
    assert rank_sets([1.0, 0.0, -20, -40], np.diag([sd**2 / 2, sd**2 / 2, 0.0, 0.0]))[:2] == [(1, 1), (2, 2)]
    # ...but not when the two estimates are positively correlated the other way round: covariance matters
    corr = np.array([[sd**2, -sd**2, 0, 0], [-sd**2, sd**2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], dtype=float)
    assert rank_sets([1.0, 0.0, -20, -40], corr)[:2] == [(1, 2), (1, 2)]
    assert rank_sets([], np.zeros((0, 0))) == [] and rank_sets([3.0], [[1.0]]) == [(1, 1)]


def test_it_uses_the_normal_quantile():
    assert Z95 == pytest.approx(1.959964, abs=1e-6)
