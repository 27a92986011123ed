"""Prediction-powered estimates (calibration.metrics.ppi) against the reference implementation
ppi_py, and their behaviour with useless and perfect judges. No database."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.metrics.powered import Items, bt_scores, rate_intervals, win_rates, win_rates_left_out
from calibration.metrics.ppi import (
    Z95,
    bt_design,
    effective_votes,
    informative,
    ppi_logistic,
    ppi_mean,
    rank_sets,
    wilson_interval,
    with_dropped,
)

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
    """Through ppi_py's public API: its CI with the weight it tunes itself equals its CI at our weight,
    and a weight 0.01 away would show."""
    X, y, yhat, Xu, yu = _bt_sample(6, 300, 3000, 0.75)
    fit = ppi_logistic(X, y, yhat, Xu, yu)
    assert 0 < fit.lam < 1
    tuned_lo, tuned_hi = ppi_py.ppi_logistic_ci(X, y, yhat, Xu, yu, alpha=0.05, lam=None)
    ours_lo, ours_hi = ppi_py.ppi_logistic_ci(X, y, yhat, Xu, yu, alpha=0.05, lam=fit.lam)
    assert np.max(np.abs(tuned_lo - ours_lo)) < TOL and np.max(np.abs(tuned_hi - ours_hi)) < TOL
    off_lo, _ = ppi_py.ppi_logistic_ci(X, y, yhat, Xu, yu, alpha=0.05, lam=fit.lam + 0.01)
    assert np.max(np.abs(off_lo - ours_lo)) > 100 * TOL


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
    corr = np.array([[sd**2, -(sd**2), 0, 0], [-(sd**2), sd**2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], dtype=float)
    assert rank_sets([1.0, 0.0, -20, -40], corr)[:2] == [(1, 2), (1, 2)]
    assert rank_sets([], np.zeros((0, 0))) == [] and rank_sets([3.0], [[1.0]]) == [(1, 1)]


def test_it_uses_the_normal_quantile():
    assert Z95 == pytest.approx(1.959964, abs=1e-6)


# --------------------------------------------------------------------------
# degenerate inputs (issue 22) and win rates inside [0, 1] (issue 21)
# --------------------------------------------------------------------------


def test_it_equals_statsmodels_wilson_interval():
    from statsmodels.stats.proportion import proportion_confint

    for count, votes in ((0, 1), (0, 7), (3, 7), (7, 7), (1, 40), (39, 40), (20, 40), (2.5, 9.0), (0.0, 12.75), (130.2, 161.7)):
        lo, hi = proportion_confint(count, votes, alpha=0.05, method="wilson")
        mine = wilson_interval(count / votes, votes)
        assert mine == pytest.approx((lo, hi), abs=1e-12), (count, votes)
    with pytest.raises(ValueError, match="positive number of votes"):
        wilson_interval(0.5, 0)


def test_it_counts_effective_votes():
    assert effective_votes(0.3, math.sqrt(0.3 * 0.7 / 50), 50) == pytest.approx(50)  # binary votes: themselves
    assert effective_votes(0.3, math.sqrt(0.3 * 0.7 / 25), 20) == pytest.approx(25)  # correlated: fewer
    assert effective_votes(0.5, math.sqrt(0.15 / 50), 50) == pytest.approx(50 / 0.6)  # 40% ties: more
    assert effective_votes(0.0, 0.0, 10) == 10 and effective_votes(0.5, 0.0, 10) == 10  # no spread: the pairs
    assert effective_votes(1.0, 0.2, 0) == 1 and effective_votes(0.5, 10.0, 5) == 1  # never below 1


def test_it_gives_binary_votes_the_textbook_wilson_interval():
    """Humans only, one binary vote per pair: the human-only rate's CI is statsmodels' Wilson interval."""
    from statsmodels.stats.proportion import proportion_confint

    y = np.array([1.0] * 3 + [0.0] * 14)
    fit = ppi_mean(y, y, [], lam=0.0, clusters=np.arange(17))
    ppi, human, judge = rate_intervals(fit, fit, fit)
    assert human.ci == pytest.approx(proportion_confint(3, 17, method="wilson"), abs=1e-12)
    assert ppi.ci == human.ci == judge.ci and human.value == pytest.approx(3 / 17)


def test_it_keeps_a_corrected_rate_and_its_ci_inside_zero_one():
    """A correction that takes the estimate below 0: the normal CI leaves [0, 1] (as the report's did,
    e.g. [-0.012, 0.087]); the reported rate is 0 and its CI holds it inside [0, 1]."""
    y = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    yhat = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    yu = np.zeros(30)
    fit = ppi_mean(y, yhat, yu, lam=1.0)
    assert fit.estimate[0] < 0 and fit.ci()[0][0] < 0  # the unbounded estimator, as ppi_py's
    human = ppi_mean(y, yhat, [], lam=0.0)
    judge = ppi_mean(np.concatenate([yhat, yu]), np.concatenate([yhat, yu]), [], lam=0.0)
    for interval in rate_intervals(fit, human, judge):
        lo, hi = interval.ci
        assert 0 <= lo <= interval.value <= hi <= 1
    assert rate_intervals(fit, human, judge)[0].value == 0


def test_it_covers_small_and_lopsided_rates_better_than_the_normal_ci():
    """20 pairs, a true win rate of 0.1, a judge right 85% of the time on ten times as many pairs: the
    normal CIs cover the rate in about 85% of samples, the report's Wilson CIs in about 95%."""
    rng = np.random.default_rng(21)
    wilson = normal = 0
    reps, n, big_n, p = 600, 20, 200, 0.1
    for _ in range(reps):
        truth = (rng.random(n + big_n) < p).astype(float)
        verdict = np.where(rng.random(n + big_n) < 0.85, truth, 1 - truth)
        y, yhat, yu = truth[:n], verdict[:n], verdict[n:]
        lam = None if informative(y, yhat) else 0.0
        fit = ppi_mean(y, yhat, yu, lam=lam)
        ppi, _, _ = rate_intervals(fit, ppi_mean(y, yhat, [], lam=0.0), ppi_mean(verdict, verdict, [], lam=0.0))
        wilson += ppi.ci[0] <= p <= ppi.ci[1]
        lo, hi = fit.ci()
        normal += lo[0] <= p <= hi[0]
    assert normal / reps < 0.9
    assert wilson / reps >= 0.93


def test_it_survives_judges_that_copy_or_contradict_the_humans():
    """Correlation exactly +1 or -1 on three pairs (1 - r^2 = 0): the gate answers instead of dividing by 0."""
    y = np.array([1.0, 0.0, 1.0])
    assert not informative(y, 1 - y)
    assert informative(y, y) and informative(np.array([1.0, 0.0, 1.0, 0.0]), np.array([1.0, 0.0, 1.0, 0.0]))
    assert not informative(y, np.full(3, 0.5))  # a constant judge: no spread
    assert not informative(np.full(3, 0.5), y)  # constant humans
    assert not informative(y[:1], y[:1]) and not informative(y[:2], 1 - y[:2])  # too few pairs to test


def _items(y, yhat, pairs, labelled, systems=("a", "b")) -> Items:
    """Items of two systems, one item per pair unless `pairs` repeats; `y` NaN where unlabelled."""
    y, yhat, pairs, labelled = (np.asarray(v) for v in (y, yhat, pairs, labelled))
    zeros = np.zeros(len(yhat), dtype=np.int64)
    return Items(
        tuple(systems),
        zeros,
        zeros + 1,
        pairs.astype(np.int64),
        y.astype(float),
        yhat.astype(float),
        labelled.astype(bool),
        ~labelled.astype(bool),
    )


@pytest.mark.parametrize(
    "case, y, yhat",
    [
        ("contradicts", [1, 0, 1, 0, 0], [0, 1, 0, 1, 1]),
        ("copies", [1, 0, 1, 0, 1], [1, 0, 1, 0, 1]),
        ("humans all agree", [1, 1, 1, 1, 1], [1, 0, 1, 0, 1]),
        ("judge constant", [1, 0, 1, 0, 1], [1, 1, 1, 1, 1]),
        ("all ties", [0.5] * 5, [0.5] * 5),
        ("one pair", [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]),
    ],
)
def test_it_estimates_or_leaves_out_with_a_reason_on_degenerate_items(case, y, yhat):
    """Three labelled pairs (one with two items: criteria), two judged only; every figure in bounds."""
    pairs = [0, 1, 2, 3, 4] if case != "one pair" else [0, 0, 0, 3, 4]
    labelled = [True, True, True, False, False]
    y = [v if lab else np.nan for v, lab in zip(y, labelled)]
    items = _items(y, yhat, pairs, labelled)
    rates = win_rates(items, None)
    left_out = win_rates_left_out(items, None)
    assert set(rates) | set(left_out) == {"a", "b"} and not set(rates) & set(left_out)
    if case == "one pair":
        assert left_out["a"].startswith("not estimable: human labels on 1 of its pairs")
    for rate in rates.values():
        for interval in (rate.ppi, rate.human, rate.judge):
            lo, hi = interval.ci
            assert 0 <= lo <= interval.value <= hi <= 1 and lo < hi, (case, interval)
        assert 0 <= rate.lam <= 1
    scores = bt_scores(items, None)
    assert scores.ppi is None or np.all(np.isfinite(scores.ppi.cov))
