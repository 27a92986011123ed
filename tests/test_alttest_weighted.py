"""The alt-test weighted by 1 / the inclusion probability of each pair (issue 27, item 2): a
hand-computed example, statsmodels' WLS with HC1 errors as the reference for the weighted t-test,
the unweighted test when every probability is equal, and the report's section. No database but
the last test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from calibration import metrics as M
from calibration.metrics.alttest import Ratings, alt_test, alt_test_by_criterion
from calibration.report import alttest as report_alttest

sm = pytest.importorskip("statsmodels.api")  # a dev dependency (pyproject [dev])

TOL = 1e-9

# Four items labelled by three annotators; item 3 was labelled with certainty (no probability: pi = 1).
#   item 1: A x, B x, C x, judge x  -> a tie for everyone            (d = W_h - W_f = 0, W_f = 1)
#   item 2: A x, B y, C y, judge y  -> A: the judge matches both others, A none (d = -1); B, C: ties
#   item 3: A x, B x, C y, judge y  -> ties for everyone (each matches one other, or none)
#   item 4: A x, B x, C x, judge y  -> everyone beats the judge      (d = 1, W_f = 0)
HAND = {
    "A": {1: "x", 2: "x", 3: "x", 4: "x"},
    "B": {1: "x", 2: "y", 3: "x", 4: "x"},
    "C": {1: "x", 2: "y", 3: "y", 4: "x"},
}
HAND_JUDGE = {1: "x", 2: "y", 3: "y", 4: "y"}
HAND_PI = {1: 0.5, 2: 0.25, 4: 0.5}  # weights 2, 4, 1, 2: sum 9


def test_it_matches_a_hand_computed_weighted_example():
    humans, judge = Ratings.from_annotations(HAND), Ratings.from_verdicts(HAND_JUDGE)
    epsilon = 0.1
    result = alt_test(humans, judge, epsilon=epsilon, unit="item", min_items=2, inclusion=HAND_PI, rounds=0)
    assert result.ran and result.n_annotators == 3
    tests = {a.annotator: a for a in result.annotators}
    # A: d = (0, -1, 0, 1), W_f = (1, 1, 1, 0); weighted: mean d = (-4 + 2) / 9, mean W_f = 7 / 9, mean W_h = 5 / 9
    # sum w^2 (d - mean)^2 = (4 * 4 + 16 * 49 + 1 * 4 + 4 * 121) / 81 = 1288 / 81; SE^2 = 4/3 * 1288/81 / 81 = 5152 / 19683
    # B and C: d = (0, 0, 0, 1): mean 2 / 9; sum w^2 (d - mean)^2 = (16 + 64 + 4 + 196) / 81 = 280 / 81; SE^2 = 1120 / 19683
    hand = {"A": (-2 / 9, 5152 / 19683, 5 / 9), "B": (2 / 9, 1120 / 19683, 1.0), "C": (2 / 9, 1120 / 19683, 1.0)}
    for name, (mean_d, se2, mean_wh) in hand.items():
        a = tests[name]
        assert a.n == 4 and not a.degenerate
        assert a.mean_diff == pytest.approx(mean_d, abs=TOL)
        assert a.mean_wf == pytest.approx(7 / 9, abs=TOL)
        assert a.mean_wh == pytest.approx(mean_wh, abs=TOL)
        t = (mean_d - epsilon) / math.sqrt(se2)
        assert a.t == pytest.approx(t, abs=TOL)
        assert a.p == pytest.approx(stats.t.cdf(t, 3), abs=TOL)
        half = stats.t.ppf(0.975, 3) * math.sqrt(se2)
        assert a.diff_ci == pytest.approx((mean_d - half, mean_d + half), abs=TOL)
    assert result.rho.value == pytest.approx(7 / 9, abs=TOL)
    unweighted = alt_test(humans, judge, epsilon=epsilon, unit="item", min_items=2, rounds=0)
    assert unweighted.rho.value == pytest.approx(3 / 4, abs=TOL)  # the weights matter here
    assert {a.annotator: a.mean_diff for a in unweighted.annotators} == pytest.approx({"A": 0.0, "B": 0.25, "C": 0.25}, abs=TOL)


def _design(seed: int, n_pairs: int = 90, n_annotators: int = 4):
    """Two criteria per pair; each annotator labels most pairs; a judge right 70% of the time; pi in [0.1, 1]."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, (n_pairs, 2))
    rows = []
    for a in range(n_annotators):
        for p in np.flatnonzero(rng.random(n_pairs) < 0.85):
            for c in range(2):
                value = truth[p, c] if rng.random() < 0.65 else rng.integers(0, 3)
                rows.append((f"pair {p}", f"crit {c}", f"ann {a}", int(value)))
    judged = np.where(rng.random((n_pairs, 2)) < 0.7, truth, rng.integers(0, 3, (n_pairs, 2)))
    judge = Ratings.from_rows((f"pair {p}", f"crit {c}", "judge", int(judged[p, c])) for p in range(n_pairs) for c in range(2))
    pi = {f"pair {p}": float(v) for p, v in enumerate(rng.uniform(0.1, 1.0, n_pairs)) if p % 7}  # every 7th: certain
    return Ratings.from_rows(rows), judge, pi


@pytest.mark.parametrize("unit", ["pair", "item"])
def test_it_equals_statsmodels_weighted_least_squares_with_hc1_errors(unit):
    humans, judge, pi = _design(1)
    result = alt_test(humans, judge, epsilon=0.1, unit=unit, inclusion=pi, rounds=0)
    plain = alt_test(humans, judge, epsilon=0.1, unit=unit, rounds=0)
    assert result.ran and result.n_annotators == 4
    # the reference: per annotator, the units' d and W_f (criteria averaged within a pair in the pair form)
    by_unit: dict = {}
    for p, c, a, value in zip(humans.pair, humans.criterion, humans.rater, humans.value):
        by_unit.setdefault(a, {}).setdefault((p,) if unit == "pair" else (p, c), []).append((p, c, value))
    on_item: dict = {}
    for p, c, a, value in zip(humans.pair, humans.criterion, humans.rater, humans.value):
        on_item.setdefault((p, c), []).append((a, value))
    verdict = dict(zip(zip(judge.pair, judge.criterion), judge.value))
    for test, plain_test in zip(result.annotators, plain.annotators):
        d, wf, w = [], [], []
        for key, labels in sorted(by_unit[test.annotator].items()):
            ds, fs = [], []
            for p, c, value in labels:
                others = [v for a, v in on_item[(p, c)] if a != test.annotator]
                if not others:
                    continue
                human = sum(v == value for v in others)
                machine = sum(v == verdict[(p, c)] for v in others)
                ds.append(float(human >= machine) - float(machine >= human))
                fs.append(float(machine >= human))
            if ds:
                d.append(np.mean(ds))
                wf.append(np.mean(fs))
                w.append(1 / pi.get(key[0], 1.0))
        d, wf, w = np.array(d), np.array(wf), np.array(w)
        fit = sm.WLS(d, np.ones((len(d), 1)), weights=w).fit(cov_type="HC1", use_t=True)
        assert test.n == len(d)
        assert test.mean_diff == pytest.approx(fit.params[0], abs=TOL)
        assert test.diff_ci == pytest.approx(tuple(fit.conf_int()[0]), abs=TOL)
        assert test.t == pytest.approx((fit.params[0] - 0.1) / fit.bse[0], abs=TOL)
        assert test.p == pytest.approx(stats.t.cdf(test.t, len(d) - 1), abs=TOL)
        assert test.mean_wf == pytest.approx(np.average(wf, weights=w), abs=TOL)
        assert abs(test.mean_diff - plain_test.mean_diff) > 1e-4  # the weights matter here


def _close(a, b, where=""):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, abs=TOL, nan_ok=True), where
    else:
        assert a == b, where


@pytest.mark.parametrize("unit", ["pair", "item"])
def test_it_equals_the_unweighted_test_when_every_probability_is_equal(unit):
    humans, judge, _ = _design(2)
    equal = {p: 0.35 for p in np.unique(humans.pair)}
    _close(
        alt_test(humans, judge, epsilon=0.1, unit=unit, inclusion=equal, rounds=200, seed=4).as_dict(),
        alt_test(humans, judge, epsilon=0.1, unit=unit, rounds=200, seed=4).as_dict(),
    )
    _close(
        alt_test_by_criterion(humans, judge, epsilon=0.1, inclusion=equal, min_items=20, rounds=200, seed=4).as_dict(),
        alt_test_by_criterion(humans, judge, epsilon=0.1, min_items=20, rounds=200, seed=4).as_dict(),
    )


def test_it_weights_rho_in_its_pair_bootstrap():
    humans, judge, pi = _design(3)
    result = alt_test(humans, judge, epsilon=0.1, inclusion=pi, rounds=400, seed=1)
    plain = alt_test(humans, judge, epsilon=0.1, rounds=400, seed=1)
    assert result.rho.value == pytest.approx(np.mean([a.mean_wf for a in result.annotators]), abs=TOL)
    assert result.rho.ci_low < result.rho.value < result.rho.ci_high
    assert result.rho.ci != pytest.approx(plain.rho.ci, abs=1e-4)
    assert result.rho.n == plain.rho.n and result.rho.n_pairs == plain.rho.n_pairs


def test_it_refuses_a_probability_outside_zero_one():
    humans, judge, _ = _design(4)
    for bad in (0.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="inclusion probabilities"):
            alt_test(humans, judge, epsilon=0.1, inclusion={"pair 3": bad})


def test_it_weights_the_report_section_by_the_stored_probabilities():
    rows = []
    humans, judge, pi = _design(5)
    for p, c, a, value in zip(humans.pair, humans.criterion, humans.rater, humans.value):
        rows.append(M.LabelRow(str(p), str(c), "general", str(a), "human", "s0", "s1", ("s0", "s1", "tie")[value], "s0"))
    for p, c, value in zip(judge.pair, judge.criterion, judge.value):
        rows.append(M.LabelRow(str(p), str(c), "general", "judge", "judge", "s0", "s1", ("s0", "s1", "tie")[value], "s0"))
    table = M.as_table(rows)
    h, j = table.humans(), table.for_rater("judge")
    weighted = report_alttest.section(h, {"judge": j}, epsilon=0.1, reason="crowd", source="given", rounds=100, inclusion=pi)
    plain = report_alttest.section(h, {"judge": j}, epsilon=0.1, reason="crowd", source="given", rounds=100)
    assert weighted["weighted"] is True and plain["weighted"] is False and "1 / pi" in weighted["method"]
    direct = alt_test(report_alttest.human_ratings(h), report_alttest.judge_ratings(j), epsilon=0.1, unit="pair", rounds=100,
                      inclusion={code: pi[key] for code, key in enumerate(h.vocab.pairs) if key in pi})  # fmt: skip
    pooled = weighted["judges"]["judge"]["pooled"]
    assert pooled["rho"]["value"] == pytest.approx(direct.rho.value, abs=1e-6)
    assert [a["mean_diff"] for a in pooled["annotators"]] == pytest.approx([a.mean_diff for a in direct.annotators], abs=1e-6)
    assert pooled["rho"]["value"] != pytest.approx(plain["judges"]["judge"]["pooled"]["rho"]["value"], abs=1e-4)
