"""Active sampling for prediction-powered estimates (calibration.metrics.active): the design's
probabilities, the inverse-probability-weighted PPI++ mean against a hand computation and against
today's ppi_mean, and seeded simulations of its coverage and width. No database."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from calibration.metrics.active import (
    active_ppi_mean,
    design_cost,
    effective_sample_size,
    error_model_fit,
    ess_ceiling,
    inclusion_probabilities,
    judge_human_correlation,
)
from calibration.metrics.ppi import Z95, ppi_mean


def test_it_equals_a_hand_computed_example():
    """Labelled y = (1, 0), judge (1, 1), pi = (1/2, 1/4); unlabelled judge (0, 1), pi = (1/2, 1/2); lam = 1/2.

    w = 1/pi = (2, 4), sum 6; r = y - lam yhat = (1/2, -1/2); B = (2 * 1/2 - 4 * 1/2) / 6 = -1/6.
    v = 1/(1 - pi) = (2, 2), sum 4; A = (2 * 0 + 2 * 1) / 4 = 1/2.  theta = lam A + B = 1/4 - 1/6 = 1/12.
    Var B: w (r - B) = (2 * 2/3, 4 * -1/3) = (4/3, -4/3); (16/9 + 16/9) / 6^2 = 8/81.
    Var A: v (yhat - A) = (-1, 1); lam^2 (1 + 1) / 4^2 = 1/32.  Variance 8/81 + 1/32 = 337/2592."""
    fit = active_ppi_mean([1, 0], [1, 1], [0, 1], [0.5, 0.25], [0.5, 0.5], lam=0.5)
    assert fit.estimate[0] == pytest.approx(1 / 12, abs=1e-12)
    assert fit.cov[0, 0] == pytest.approx(337 / 2592, abs=1e-12)
    lo, hi = fit.ci()
    assert hi[0] - lo[0] == pytest.approx(2 * Z95 * math.sqrt(337 / 2592), abs=1e-12)
    assert (fit.n, fit.N, fit.lam) == (2, 2, 0.5)


def test_it_counts_an_item_drawn_with_certainty_as_it_is():
    """A third labelled item with pi = 1 (yhat 0, y 1) joins B with weight 1 and A as a known value:
    w = (2, 4, 1), r = (1/2, -1/2, 1): B = (1 - 2 + 1) / 7 = 0; A = (0 + 2 * 0 + 2 * 1) / (1 + 4) = 2/5;
    theta = 1/2 * 2/5 = 1/5."""
    fit = active_ppi_mean([1, 0, 1], [1, 1, 0], [0, 1], [0.5, 0.25, 1.0], [0.5, 0.5], lam=0.5)
    assert fit.estimate[0] == pytest.approx(1 / 5, abs=1e-12)
    with pytest.raises(ValueError, match="probability 1"):
        active_ppi_mean([1, 0], [1, 1], [0, 1], [0.5, 0.25], [0.5, 1.0])
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        active_ppi_mean([1, 0], [1, 1], [0, 1], [0.0, 0.25], [0.5, 0.5])


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 60),
    N=st.integers(0, 300),
    p=st.floats(0.01, 0.99),
    lam=st.sampled_from([None, 0.0, 1.0, 0.37]),
    clustered=st.booleans(),
)
def test_it_equals_ppi_mean_when_every_probability_is_equal(seed, n, N, p, lam, clustered):
    rng = np.random.default_rng(seed)
    y = rng.choice([0.0, 0.5, 1.0], n)
    yhat = np.where(rng.random(n) < 0.7, y, rng.choice([0.0, 0.5, 1.0], n))
    yu = rng.choice([0.0, 0.5, 1.0], N)
    cl = rng.integers(0, max(n // 2, 1), n) if clustered else None
    cu = rng.integers(1000, 1000 + max(N // 2, 1), N) if clustered else None
    # With a single labelled cluster the cluster sums of centred values are zero up to rounding, so
    # both implementations tune lam from a ratio of rounding noise: nothing there to compare.
    assume(cl is None or len(np.unique(cl)) > 1)
    today = ppi_mean(y, yhat, yu, lam=lam, clusters=cl, clusters_unlabeled=cu)
    weighted = active_ppi_mean(y, yhat, yu, np.full(n, p), np.full(N, p), lam=lam, clusters=cl, clusters_unlabeled=cu)
    assert abs(weighted.lam - today.lam) < 1e-9
    assert abs(weighted.estimate[0] - today.estimate[0]) < 1e-9
    assert abs(weighted.cov[0, 0] - today.cov[0, 0]) < 1e-9
    for mine, theirs in zip(weighted.ci(), today.ci(), strict=True):
        assert abs(mine[0] - theirs[0]) < 1e-9
    se = float(today.se[0])
    if se > 0 and lam is None and N:
        human = ppi_mean(y, yhat, [], lam=0.0, clusters=cl)
        # powered's n_effective: n (human se / ppi se)^2
        expected = n * (float(human.se[0]) / se) ** 2
        got = effective_sample_size(y, np.full(n, p), se, cl)
        assert got is None if expected == 0 else got == pytest.approx(expected, rel=1e-9)


def test_it_spends_the_budget_in_proportion_to_the_root_of_the_error():
    error = np.array([0.0, 1.0, 4.0, 9.0, 16.0, 0.25])
    pi = inclusion_probabilities(error, 2.0, uniform_share=0.5)
    assert pi.sum() == pytest.approx(2.0)
    # half the budget equally (1/6 each), half by sqrt: sqrt sums to 10.5
    assert pi == pytest.approx(1 / 6 + np.sqrt(error) / 10.5)
    capped = inclusion_probabilities(error, 4.0, uniform_share=0.1)
    assert capped.max() == 1.0 and capped.sum() == pytest.approx(4.0)
    assert np.all(np.diff(capped[[0, 5, 1, 2, 3, 4]]) >= 0) and capped[0] > 0
    # a pair twice as dear to label is drawn less often: score sqrt(error / cost)
    costly = inclusion_probabilities([1.0, 1.0], 1.0, uniform_share=0.2, human_cost=[1.0, 4.0])
    assert costly[0] > costly[1] and float(costly @ [1.0, 4.0]) == pytest.approx(1.0)
    assert design_cost(costly, human_cost=[1.0, 4.0], judge_cost=0.01) == pytest.approx(1.02)
    assert np.all(inclusion_probabilities(error, 6.0) == 1.0)
    with pytest.raises(ValueError, match="uniform share"):
        inclusion_probabilities(error, 2.0, uniform_share=0.0)


def test_it_states_the_ceiling_of_a_judge():
    assert ess_ceiling(0.0) == 1.0
    assert ess_ceiling(0.5) == pytest.approx(4 / 3)
    assert ess_ceiling(-1.0) == math.inf
    rng = np.random.default_rng(3)
    y = rng.normal(size=5000)
    yhat = 0.6 * y + 0.8 * rng.normal(size=5000)
    assert judge_human_correlation(y, yhat) == pytest.approx(0.6, abs=0.03)


def test_it_keeps_a_perfect_correlation_inside_one_whatever_the_rounding():
    # A judge whose values are an exact linear function of the humans': the unclipped quotient is
    # 1.0000000000000002 here (tests/test_ppi_properties.py met such a case through the planner,
    # and the ceiling refused it).
    y = np.array([0.25, 0.25, 0.5, -1.0, 0.25])
    rho = judge_human_correlation(y, 0.1 * y - 0.25)
    assert rho == 1.0
    assert ess_ceiling(rho) == math.inf
    assert judge_human_correlation(y, -0.1 * y + 0.25) == -1.0


# --------------------------------------------------------------------------
# seeded simulations: a finite population, many draws, the truth known
# --------------------------------------------------------------------------


def _population(seed: int, m: int, informative_feature: bool):
    """Human values in {0, 1/2, 1}, lower on the hard items (30%), where the judge is a coin; right on
    90% of the others. With ``informative_feature`` False the features are noise. (Hard items have
    other values, so a design that oversamples them and forgets its weights is biased.)"""
    rng = np.random.default_rng(seed)
    hard = rng.random(m) < 0.3
    y = np.where(hard, rng.choice([0.0, 0.5, 1.0], m, p=[0.6, 0.2, 0.2]), rng.choice([0.0, 0.5, 1.0], m, p=[0.25, 0.2, 0.55]))
    yhat = np.where(hard, rng.choice([0.0, 0.5, 1.0], m), np.where(rng.random(m) < 0.9, y, 0.5))
    features = np.column_stack([hard.astype(float), rng.random(m)]) if informative_feature else rng.random((m, 2))
    return y, yhat, features


def _draws(y, yhat, features, budget: int, reps: int, seed: int):
    """Per repetition: (uniform fit, active fit). Uniform: ``budget`` items without replacement.
    Active: one draw per item; the first 20% of items (in a random order) at the uniform rate, an
    error model fitted on their labels, the others with pi from its predictions."""
    rng = np.random.default_rng(seed)
    m = len(y)
    out = []
    for _ in range(reps):
        lab = np.zeros(m, dtype=bool)
        lab[rng.choice(m, budget, replace=False)] = True
        uniform = ppi_mean(y[lab], yhat[lab], yhat[~lab])

        early = rng.random(m) < 0.2
        pi = np.full(m, budget / m)
        drawn = early & (rng.random(m) < pi)
        model = error_model_fit(features[drawn], (y[drawn] - yhat[drawn]) ** 2)
        pi[~early] = inclusion_probabilities(model.predict(features[~early]), budget - pi[early].sum(), uniform_share=0.2)
        drawn[~early] = rng.random(int((~early).sum())) < pi[~early]
        active = active_ppi_mean(y[drawn], yhat[drawn], yhat[~drawn], pi[drawn], pi[~drawn])
        out.append((uniform, active))
    return out


def _coverage_and_width(fits, truth: float) -> tuple[float, float]:
    lo = np.array([f.ci()[0][0] for f in fits])
    hi = np.array([f.ci()[1][0] for f in fits])
    return float(np.mean((lo <= truth) & (truth <= hi))), float(np.median(hi - lo))


def test_it_is_no_worse_than_uniform_with_a_useless_predictor():
    """Features of pure noise: the error model's F-test keeps pi flat (almost always), so coverage
    and width match the uniform design's within simulation noise."""
    y, yhat, features = _population(21, 3000, informative_feature=False)
    runs = _draws(y, yhat, features, 300, 300, seed=22)
    cov_u, width_u = _coverage_and_width([u for u, _ in runs], float(y.mean()))
    cov_a, width_a = _coverage_and_width([a for _, a in runs], float(y.mean()))
    assert cov_a >= cov_u - 0.03  # 300 draws: coverage's standard error is about 0.013
    assert width_a / width_u < 1.02


def test_it_covers_the_truth_and_narrows_with_a_predictor_that_finds_the_hard_items():
    """The judge is a coin on 30% of the items and the features say which: the active design keeps
    the nominal 95% (>= 0.93 over 400 draws) and its CIs are narrower than the uniform design's."""
    y, yhat, features = _population(31, 3000, informative_feature=True)
    runs = _draws(y, yhat, features, 300, 400, seed=32)
    cov_u, width_u = _coverage_and_width([u for u, _ in runs], float(y.mean()))
    cov_a, width_a = _coverage_and_width([a for _, a in runs], float(y.mean()))
    assert cov_a >= 0.93
    assert width_a < 0.97 * width_u
