"""calibration.metrics.davidson: Bradley-Terry with Davidson's tie parameter (issue 40, item 4b), checked
against scipy.optimize's maximum-likelihood solution and against today's Bradley-Terry without ties."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from calibration.metrics import LabelTable, bradley_terry
from calibration.metrics.davidson import davidson

SYSTEMS = ["alpha", "beta", "gamma", "delta"]


def simulated(seed: int, nu: float, n_pairs: int = 300, strengths=(0.8, 0.2, 0.0, -0.5)) -> LabelTable:
    rng = np.random.default_rng(seed)
    cols = {k: [] for k in ("pair", "criterion", "category", "rater", "rater_kind", "system_a", "system_b", "winner")}
    for p in range(n_pairs):
        i, j = rng.choice(len(SYSTEMS), size=2, replace=False)
        pi, pj = math.exp(strengths[i]), math.exp(strengths[j])
        d = pi + pj + nu * math.sqrt(pi * pj)
        for r in range(2):
            u = rng.random() * d
            winner = SYSTEMS[i] if u < pi else SYSTEMS[j] if u < pi + pj else "tie"
            for key, value in zip(cols, (f"p{p}", "c", "cat", f"human:h{r}", "human", SYSTEMS[i], SYSTEMS[j], winner)):
                cols[key].append(value)
    return LabelTable.from_columns(**cols)


def scipy_fit(table: LabelTable):
    """theta (by system name, mean 0) and nu maximising Davidson's likelihood, by BFGS on (theta[1:], ln nu)."""
    names = list(table.vocab.systems)
    lo, hi, out = table.sys_lo, table.sys_hi, table.outcome

    def negative_ll(x):
        theta = np.concatenate([[0.0], x[:-1]])
        lam = x[-1]
        ta, tb = theta[lo], theta[hi]
        eta = np.stack([ta, tb, lam + (ta + tb) / 2], axis=1)
        log_d = np.logaddexp.reduce(eta, axis=1)
        return -(eta[np.arange(len(out)), out] - log_d).sum()

    res = minimize(negative_ll, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-10, "maxiter": 10000})
    theta = np.concatenate([[0.0], res.x[:-1]])
    return dict(zip(names, theta - theta.mean())), math.exp(res.x[-1])


def test_it_equals_scipy_optimizes_maximum_likelihood():
    table = simulated(1, nu=0.8)
    fit = davidson(table, reference=None, rounds=0)
    theta, nu = scipy_fit(table)
    assert fit.nu == pytest.approx(nu, abs=1e-6)
    scale = 400 / math.log(10)
    for name, value in theta.items():
        assert (fit.scores[name].score - 1000) / scale == pytest.approx(value, abs=1e-6)
    assert 0 < fit.tie_share < 1 and fit.n_comparisons == len(table)


def test_it_reduces_to_todays_bradley_terry_without_ties():
    table = simulated(2, nu=0.0)
    assert not (table.outcome == 2).any()
    fit = davidson(table, reference="alpha", rounds=0)
    today = bradley_terry(table, reference="alpha", rounds=0)
    assert fit.nu == 0.0
    for name, score in today.scores.items():
        assert fit.scores[name].score == pytest.approx(score.score, abs=1e-6)
        assert fit.scores[name].rank == score.rank


def test_it_gives_bootstrap_intervals_that_hold_the_point():
    table = simulated(3, nu=0.5)
    fit = davidson(table, rounds=200, seed=4)
    assert fit.rounds == 200 and fit.rounds_dropped == 0
    assert fit.nu_ci[0] < fit.nu < fit.nu_ci[1]
    assert 0.2 < fit.nu < 0.9
    for score in fit.scores.values():
        assert score.ci_low <= score.score <= score.ci_high
    assert [s.system for s in fit.scores.values()] == SYSTEMS  # strongest first, as simulated


def test_it_leaves_a_system_without_a_chain_out():
    cols = {"pair": ["p0", "p1", "p2", "p3"], "criterion": ["c"] * 4, "category": ["x"] * 4, "rater": ["human:h"] * 4,
            "rater_kind": ["human"] * 4, "system_a": ["a", "a", "b", "a"], "system_b": ["b", "b", "c", "b"],
            "winner": ["a", "tie", "b", "b"]}  # fmt: skip
    fit = davidson(LabelTable.from_columns(**cols), rounds=0)
    assert fit.scores["c"].score is None and "c" in fit.note
    assert fit.scores["a"].score is not None


def test_it_flags_a_ranking_that_changes_with_ties_modelled():
    from calibration.report.ties import ranking_change

    fits = {"humans": {"scores": [{"system": "a", "rank": 1}, {"system": "b", "rank": 2}]}, "j": {"scores": [{"system": "a", "rank": 1}]}}
    today = {"humans": [{"system": "b", "rank": 1}, {"system": "a", "rank": 2}], "j": [{"system": "a", "rank": 1}]}
    out = ranking_change(fits, today)
    assert out["humans"]["changed"] and out["humans"]["half_wins"] == {"b": 1, "a": 2}
    assert not out["j"]["changed"]


def tiny(outcomes) -> LabelTable:
    cols = {k: [] for k in ("pair", "criterion", "category", "rater", "rater_kind", "system_a", "system_b", "winner")}
    for p, (first, second, winner) in enumerate(outcomes):
        for key, value in zip(cols, (f"p{p}", "c", "cat", "judge:x", "judge", first, second, winner)):
            cols[key].append(value)
    return LabelTable.from_columns(**cols)


def test_it_reports_no_fit_where_the_likelihood_has_no_finite_maximum():
    # b and c tie once and c beats b once; c and d tie: linked both ways, yet the likelihood rises for ever
    # as nu and c's lead over b grow together. (It raised "Singular matrix" from the report before.)
    fit = davidson(tiny([("c", "d", "tie"), ("a", "d", "a"), ("b", "c", "c"), ("b", "c", "tie")]), rounds=100, seed=0)

    assert fit.nu is None and fit.note.startswith("no finite fit")
    assert all(score.score is None and score.rank is None for score in fit.scores.values())


def test_it_leaves_out_and_counts_the_bootstrap_rounds_without_a_finite_fit():
    rng = np.random.default_rng(3)
    rows = [(str(x), str(y), str(rng.choice([x, y, "tie"]))) for x, y in (("a", "b"), ("b", "c"), ("a", "c")) for _ in range(2)]
    fit = davidson(tiny(rows), rounds=200, seed=0)  # six pairs: many resampled rounds have no finite maximum

    assert fit.rounds == 200 and 0 < fit.rounds_dropped < 200
    finite = [s for s in fit.scores.values() if s.score is not None]
    assert finite and all(math.isfinite(s.ci_low) and math.isfinite(s.ci_high) for s in finite)
