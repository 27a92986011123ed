"""Selective judging with a guarantee (calibration.metrics.selective): the Clopper-Pearson bound
against statsmodels, the fixed-sequence threshold against brute force, the guarantee over 500
simulated calibration sets, cascades and held-out checks. No database."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from calibration.metrics.selective import (
    CascadeJudge,
    cascade_calibrate,
    cascade_holdout,
    cascade_route,
    clopper_pearson_upper,
    fixed_sequence,
    selective_calibrate,
    selective_holdout,
)

proportion = pytest.importorskip("statsmodels.stats.proportion")  # a dev dependency (pyproject [dev])


def test_it_bounds_as_statsmodels_clopper_pearson_does():
    for n, k, delta in [(20, 0, 0.1), (20, 3, 0.1), (100, 12, 0.05), (7, 6, 0.2), (500, 60, 0.1)]:
        # a one-sided bound at delta is the upper end of the two-sided interval at 2 delta
        _, upper = proportion.proportion_confint(k, n, alpha=2 * delta, method="beta")
        assert float(clopper_pearson_upper(k, n, delta)) == pytest.approx(upper, abs=1e-9)
    assert float(clopper_pearson_upper(5, 5, 0.1)) == 1.0


def brute_force(confidence, agree, alpha, delta, candidates, min_accepted=30):
    """The fixed sequence written plainly: each candidate from the highest, the binomial test of
    'disagreement > alpha' (reject when P(Bin(n, alpha) <= k) <= delta), candidates accepting fewer
    than `min_accepted` items or that could not pass with no disagreement skipped, stop at the first
    that is not rejected."""
    last = None
    for lam in sorted(set(candidates), reverse=True):
        accepted = [i for i in range(len(confidence)) if confidence[i] >= lam]
        n, k = len(accepted), sum(not agree[i] for i in accepted)
        if n < min_accepted or stats.binom.cdf(0, n, alpha) > delta:
            continue
        if stats.binom.cdf(k, n, alpha) > delta:
            return last
        last = lam
    return last


@pytest.mark.parametrize("seed", range(40))
def test_it_equals_a_brute_force_fixed_sequence_on_small_inputs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 250))
    confidence = np.round(rng.random(n), 1 + seed % 2)  # ties in confidence
    agree = rng.random(n) < (0.6 + 0.4 * confidence) ** (1 + seed % 3)
    alpha, delta = (0.1, 0.2, 0.3)[seed % 3], (0.05, 0.1, 0.2)[seed % 3]
    # every distinct confidence as a candidate
    threshold, steps = fixed_sequence(confidence, agree, alpha=alpha, delta=delta, candidates=np.unique(confidence))
    assert threshold == brute_force(confidence, agree, alpha, delta, confidence.tolist())
    low = fixed_sequence(confidence, agree, alpha=alpha, delta=delta, candidates=np.unique(confidence), min_accepted=1)[0]
    assert low == brute_force(confidence, agree, alpha, delta, confidence.tolist(), min_accepted=1)
    if threshold is not None:
        assert steps[-1].passed is False or steps[-1].threshold == threshold
    # the default grid: the confidences at which 1%, ..., 100% of the items are accepted
    ranked = sorted(confidence.tolist(), reverse=True)
    grid = [ranked[math.ceil(k * n / 100) - 1] for k in range(1, 101)]
    assert fixed_sequence(confidence, agree, alpha=alpha, delta=delta)[0] == brute_force(confidence, agree, alpha, delta, grid)


def test_it_stops_before_the_first_failing_threshold():
    # 30 items at 0.9, all agreeing; 30 at 0.5 with 15 disagreements; 30 at 0.8, all agreeing
    confidence = np.repeat([0.9, 0.5, 0.8], 30)
    agree = np.ones(90, bool)
    agree[30:45] = False
    threshold, steps = fixed_sequence(confidence, agree, alpha=0.2, delta=0.1)
    assert threshold == 0.8
    assert [(s.threshold, s.n_accepted, s.n_disagree, s.passed) for s in steps] == [
        (0.9, 30, 0, True),
        (0.8, 60, 0, True),
        (0.5, 90, 15, False),
    ]
    # a candidate accepting too few items to ever pass is skipped, not a stop: 10 items at 0.99
    threshold, steps = fixed_sequence(np.concatenate([[0.99] * 10, confidence]), np.concatenate([[True] * 10, agree]), alpha=0.2, delta=0.1)
    assert threshold == 0.8 and steps[0].threshold == 0.9 and steps[0].n_accepted == 40


def _population(rng, n):
    """Confidence uniform on [0, 1]; the judge agrees with the human with probability 0.5 + 0.5 c.
    Disagreement among items with confidence >= lambda: 0.25 (1 - lambda)."""
    confidence = rng.random(n)
    return confidence, rng.random(n) < 0.5 + 0.5 * confidence


def test_it_keeps_its_guarantee_over_500_calibration_sets():
    alpha, delta, n = 0.15, 0.1, 400
    rng = np.random.default_rng(2024)
    held, coverage = 0, []
    for _ in range(500):
        confidence, agree = _population(rng, n)
        threshold, _ = fixed_sequence(confidence, agree, alpha=alpha, delta=delta)
        true_risk = 0.0 if threshold is None else 0.25 * (1 - threshold)
        held += true_risk <= alpha
        coverage.append(0.0 if threshold is None else 1 - threshold)
    rate = held / 500
    print(f"guarantee held in {held} of 500 calibration sets ({rate:.3f}; at least {1 - delta:.2f} required)")
    assert rate >= 1 - delta
    # not by abstaining: the mean coverage (0.28; 0.6 at the threshold whose true disagreement is alpha)
    assert np.mean(coverage) > 0.25


def test_it_reports_coverage_agreement_and_the_guarantee():
    confidence, agree = _population(np.random.default_rng(3), 1000)
    result = selective_calibrate(confidence, agree, alpha=0.15, delta=0.1, judge="gpt-4.1-mini", rounds=200)
    accepted = confidence >= result.threshold
    assert result.n == 1000 and result.n_accepted == accepted.sum()
    assert result.coverage.value == pytest.approx(accepted.mean()) and result.coverage.n == 1000
    assert result.agreement.value == pytest.approx(agree[accepted].mean()) and result.agreement.n == accepted.sum()
    assert result.agreement.ci_low < result.agreement.value < result.agreement.ci_high
    assert result.bound <= 0.15 < result.stopped_at.bound
    assert result.guarantee == (
        f"With probability at least 90%, gpt-4.1-mini agrees with the humans on at least 85% of the items it accepts "
        f"(confidence >= {result.threshold:.4g})."
    )


def test_it_abstains_always_when_no_threshold_holds():
    result = selective_calibrate(np.linspace(0, 1, 200), np.arange(200) % 2 == 0, alpha=0.1, delta=0.1, judge="coin")
    assert result.threshold is None and result.n_accepted == 0 and result.agreement is None
    assert result.coverage.value == 0.0 and result.guarantee.startswith("No threshold meets the bound: coin abstains on every item")


def test_it_rejects_bad_arguments():
    with pytest.raises(ValueError, match="alpha and delta"):
        selective_calibrate([0.5], [True], alpha=0, delta=0.1)
    with pytest.raises(ValueError, match="same length"):
        selective_calibrate([0.5, 0.4], [True], alpha=0.1, delta=0.1)
    with pytest.raises(ValueError, match="booleans"):
        selective_calibrate([0.5], [0.7], alpha=0.1, delta=0.1)
    with pytest.raises(ValueError, match="costs"):
        cascade_calibrate([CascadeJudge("j", np.ones(3), np.ones(3, bool), -1)], alpha=0.1, delta=0.1, human_cost_per_item=1)


def test_it_never_accepts_an_item_without_confidence():
    confidence = np.concatenate([np.full(50, 0.9), [np.nan] * 5])
    result = selective_calibrate(confidence, np.ones(55, bool), alpha=0.1, delta=0.1)
    assert result.threshold == 0.9 and result.n_accepted == 50 and result.n == 55


def test_it_calibrates_a_cascade_cheapest_first_and_counts_its_cost():
    rng = np.random.default_rng(5)
    n = 1000
    c_cheap, c_dear = rng.random(n), rng.random(n)
    a_cheap, a_dear = rng.random(n) < 0.5 + 0.5 * c_cheap, rng.random(n) < 0.6 + 0.4 * c_dear
    judges = [CascadeJudge("dear", c_dear, a_dear, 0.02), CascadeJudge("cheap", c_cheap, a_cheap, 0.001)]
    result = cascade_calibrate(judges, alpha=0.15, delta=0.1, human_cost_per_item=0.5, rounds=100)
    cheap, dear = result.stages
    assert cheap.selective.judge == "cheap" and dear.selective.judge == "dear"
    # the cheap judge is calibrated on everything, the dear one on what the cheap one left
    solo = selective_calibrate(c_cheap, a_cheap, alpha=0.15, delta=0.1, rounds=0)
    assert cheap.selective.threshold == solo.threshold and cheap.n_reaching == n
    left = c_cheap < solo.threshold
    assert dear.n_reaching == left.sum()
    assert dear.selective.threshold == selective_calibrate(c_dear[left], a_dear[left], alpha=0.15, delta=0.1, rounds=0).threshold
    to_humans = left & (c_dear < dear.selective.threshold)
    assert result.n_to_humans == to_humans.sum()
    assert cheap.n_accepted + dear.n_accepted + result.n_to_humans == n
    assert min(cheap.n_accepted, dear.n_accepted, result.n_to_humans) > 200  # every stage has a share
    assert result.cost == pytest.approx(n * 0.001 + left.sum() * 0.02 + to_humans.sum() * 0.5)
    assert result.all_human_cost == n * 0.5 and result.saving == pytest.approx(1 - result.cost / (n * 0.5))
    assert cheap.cost_per_accepted == pytest.approx(n * 0.001 / cheap.n_accepted)
    decided = ~to_humans
    agree = np.where(~left, a_cheap, a_dear)
    assert result.agreement.value == pytest.approx(agree[decided].mean())
    route = cascade_route([c_cheap, c_dear], [cheap.selective.threshold, dear.selective.threshold])
    assert ((route == 0) == ~left).all() and ((route == -1) == to_humans).all()
    assert "with probability at least 80% every stage holds" in result.guarantee
    split = cascade_calibrate(judges, alpha=0.15, delta=0.1, human_cost_per_item=0.5, split_delta=True, rounds=0)
    assert split.stage_delta == 0.05 and "at least 90% every stage holds" in split.guarantee


def test_it_checks_thresholds_on_held_out_items():
    rng = np.random.default_rng(6)
    calib, held = _population(rng, 2000), _population(rng, 2000)
    result = selective_calibrate(*calib, alpha=0.15, delta=0.1, rounds=0)
    check = selective_holdout(*held, threshold=result.threshold, alpha=0.15, rounds=200)
    accepted = held[0] >= result.threshold
    assert check.n == 2000 and check.n_accepted == accepted.sum() and check.target == 0.85
    assert check.agreement.value == pytest.approx(held[1][accepted].mean())
    assert check.meets == (check.agreement.value >= 0.85)
    cascade = cascade_calibrate([CascadeJudge("only", *calib, 0.01)], alpha=0.15, delta=0.1, human_cost_per_item=1, rounds=0)
    out = cascade_holdout(cascade, [held[0]], [held[1]], rounds=0)
    assert out["stages"][0].n_accepted == accepted.sum() == out["overall"].n_accepted
    assert out["n_to_humans"] == (~accepted).sum()
    assert out["overall"].agreement.value == pytest.approx(check.agreement.value)
