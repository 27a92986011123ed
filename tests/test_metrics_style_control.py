"""Style-controlled Bradley-Terry: equal to statsmodels' logistic regression, and it finds a judge's taste for length."""

import numpy as np
import pytest
import statsmodels.api as sm

from calibration.metrics.style_control import StyleVerdict, design, normalised_difference, style_fit

FEATURES = ("length", "headings", "list_items", "bold")
STRENGTH = {"atlas": -0.4, "quill": 0.1, "wikipedia": 0.5}


def simulate(seed: int, *, length_taste: float, pairs: int = 150, criteria: int = 4) -> list[StyleVerdict]:
    """Pairs of two of three systems, each article of a random length and style; the rater weighs the
    systems' strengths and, with `length_taste`, the normalised length difference."""
    rng = np.random.default_rng(seed)
    systems = sorted(STRENGTH)
    rows = []
    for pair in range(pairs):
        lo, hi = sorted(rng.choice(systems, size=2, replace=False))
        style = {side: [rng.uniform(100, 4000), rng.integers(0, 12), rng.uniform(0, 0.6), rng.integers(0, 20)] for side in ("lo", "hi")}
        x = tuple(normalised_difference(float(a), float(b)) for a, b in zip(style["lo"], style["hi"], strict=True))
        logit = STRENGTH[lo] - STRENGTH[hi] + length_taste * x[0]
        for _ in range(criteria):
            rows.append(StyleVerdict(pair, lo, hi, bool(rng.random() < 1 / (1 + np.exp(-logit))), x))
    return rows


def test_it_equals_a_statsmodels_logistic_regression_of_the_same_design():
    verdicts = simulate(1, length_taste=1.5)
    fit = style_fit(verdicts, FEATURES)
    x, y = design(verdicts, fit.systems)
    clusters = np.array([v.pair for v in verdicts])

    reference = sm.Logit(y, x).fit(disp=0, method="newton", cov_type="cluster", cov_kwds={"groups": clusters})

    ours = [fit.strengths[s] for s in fit.systems[1:]] + [fit.coefficients[f].value for f in FEATURES]
    assert np.allclose(ours, reference.params, atol=1e-6, rtol=0)
    assert np.allclose([fit.coefficients[f].se for f in FEATURES], reference.bse[2:], atol=1e-6, rtol=0)
    without = sm.Logit(y, design(verdicts, fit.systems, with_style=False)[0]).fit(disp=0, method="newton")
    assert np.allclose([fit.strengths_without[s] for s in fit.systems[1:]], without.params, atol=1e-6, rtol=0)
    assert fit.converged and fit.n == len(verdicts) and fit.n_pairs == 150


def test_it_finds_the_judges_taste_for_length_and_not_the_humans():
    for seed in range(5):
        judge = style_fit(simulate(seed, length_taste=2.0), FEATURES)
        humans = style_fit(simulate(100 + seed, length_taste=0.0), FEATURES)
        assert judge.coefficients["length"].ci[0] > 0, seed
        assert not humans.coefficients["length"].excludes_zero, (seed, humans.coefficients["length"])


def test_it_ranks_with_and_without_style_and_refuses_a_single_system():
    fit = style_fit(simulate(2, length_taste=0.0, pairs=300), FEATURES)
    assert fit.ranking() == ["wikipedia", "quill", "atlas"] == fit.ranking(with_style=False)
    assert fit.strengths["atlas"] == 0.0  # the baseline
    assert style_fit([StyleVerdict(1, "a", "a", True, (0.0,))], ("length",)) is None
    assert style_fit([], FEATURES) is None


@pytest.mark.parametrize(("lo", "hi", "expected"), [(3, 1, 0.5), (0, 0, 0.0), (0, 5, -1.0)])
def test_it_normalises_differences(lo, hi, expected):
    assert normalised_difference(lo, hi) == expected


def test_it_says_when_a_system_that_never_wins_leaves_the_fit_unconverged():
    verdicts = [StyleVerdict(p, "atlas", "quill", False, (0.1 * (p % 3), 0.0, 0.0, 0.0)) for p in range(40)]
    fit = style_fit(verdicts, FEATURES)
    assert not fit.converged
    assert fit.strengths["quill"] > 5  # growing without bound, stopped once the likelihood stopped moving
