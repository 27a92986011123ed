"""calibration.metrics.distributions against scipy.stats (the reference) on shared inputs, and the
report's start-up without scipy.stats."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from calibration.metrics import distributions as dist

ROOT = Path(__file__).resolve().parents[1]
probabilities = st.floats(min_value=1e-12, max_value=1 - 1e-12)
degrees = st.one_of(st.integers(min_value=1, max_value=500), st.floats(min_value=0.5, max_value=1e4))


@settings(max_examples=300, deadline=None)
@given(q=probabilities, df=degrees, x=st.floats(min_value=-50, max_value=50))
def test_it_gives_the_quantiles_and_tails_of_scipy_stats_bit_for_bit(q, df, x):
    assert dist.normal_quantile(q) == stats.norm.ppf(q)
    assert dist.normal_cdf(x) == stats.norm.cdf(x)
    assert dist.t_quantile(q, df) == stats.t.ppf(q, df)
    assert dist.t_cdf(x, df) == stats.t.cdf(x, df)
    assert dist.f_sf(abs(x), df, df + 3) == stats.f.sf(abs(x), df, df + 3)
    assert dist.beta_quantile(q, df, 2.5) == pytest.approx(stats.beta.ppf(q, df, 2.5), rel=1e-12, abs=1e-300)


def test_it_works_on_arrays_as_the_report_calls_it():
    q, df = np.array([0.9, 0.975, 0.995]), np.array([1.0, 4.0, 60.0])
    assert np.array_equal(dist.t_quantile(q, df), stats.t.ppf(q, df))
    k, n = np.array([0.0, 3.0, 10.0]), np.array([10.0, 10.0, 40.0])
    assert np.allclose(dist.beta_quantile(0.9, k + 1, n - k), stats.beta.ppf(0.9, k + 1, n - k), rtol=1e-12)


def st_max(n: int) -> int:
    return max(1, n // 3)


sequences = st.integers(min_value=2, max_value=45).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(min_value=0, max_value=st_max(n)), min_size=n, max_size=n),
        st.lists(st.integers(min_value=0, max_value=st_max(n)), min_size=n, max_size=n),
    )
)


def _same(ours: float, reference: float) -> bool:
    if np.isnan(reference):
        return bool(np.isnan(ours))
    return ours == pytest.approx(reference, rel=1e-9, abs=1e-15)


@settings(max_examples=400, deadline=None)
@given(pair=sequences)
def test_it_gives_scipys_kendall_tau_b_and_p_value_with_ties(pair):
    x, y = pair
    tau, p = dist.kendall_tau_b(x, y)
    reference = stats.kendalltau(x, y)
    assert _same(tau, reference.statistic) and _same(p, reference.pvalue)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(min_value=2, max_value=60), seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_it_gives_scipys_exact_p_value_without_ties(n, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.permutation(n), rng.permutation(n)
    if seed % 5 == 0:  # one or no discordant pair: exact even above 33 systems
        y = x.copy()
        y[[0, 1]] = y[[1, 0]] if seed % 2 else y[[0, 1]]
    tau, p = dist.kendall_tau_b(x, y)
    reference = stats.kendalltau(x, y)
    assert _same(tau, reference.statistic) and _same(p, reference.pvalue)


def test_it_gives_nan_for_a_constant_or_too_short_sequence():
    assert all(np.isnan(v) for v in dist.kendall_tau_b([1, 1, 1], [1, 2, 3]))
    assert all(np.isnan(v) for v in dist.kendall_tau_b([1], [2]))


@settings(max_examples=200, deadline=None)
@given(
    p=st.lists(st.floats(min_value=0, max_value=1), min_size=0, max_size=40),
    families=st.integers(min_value=1, max_value=3),
)
def test_it_adjusts_p_values_as_scipys_benjamini_yekutieli(p, families):
    grid = np.array([p] * families)
    grid[1:] = grid[1:] ** 2  # different families
    for axis in (1, -1):
        ours = dist.by_adjusted(grid, axis=axis)
        reference = stats.false_discovery_control(grid, axis=axis, method="by") if len(p) else grid
        assert ours.shape == grid.shape and np.allclose(ours, reference, rtol=1e-12, atol=1e-300)
    if len(p):
        column = dist.by_adjusted(grid.T, axis=0)
        assert np.allclose(column, stats.false_discovery_control(grid.T, axis=0, method="by"), rtol=1e-12, atol=1e-300)


def test_it_refuses_p_values_outside_zero_and_one():
    for bad in ([0.2, 1.5], [0.2, np.nan], [-0.1]):
        with pytest.raises(ValueError, match="between 0 and 1"):
            dist.by_adjusted(np.array(bad))


def test_it_starts_the_report_command_without_importing_scipy_stats_or_choix():
    code = (
        "import django, sys; django.setup(); "
        "import calibration.report.build, calibration.metrics.rater_fits, calibration.management.commands.calibration_report; "
        "print(sorted(m for m in ('scipy.stats', 'choix') if m in sys.modules))"
    )
    env = {"DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "test-only-not-secret", "DEBUG": "0", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
