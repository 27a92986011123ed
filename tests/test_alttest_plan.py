"""The alt-test planner (calibration.metrics.alttest_plan): its simulated test is the real test,
its model's kappa is what it says, and its pass probabilities behave. No database."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from calibration.metrics.alttest import Ratings, alt_test
from calibration.metrics.alttest_plan import (
    alt_test_items_needed,
    alt_test_power,
    judge_keep_probability,
    keep_probability,
    passes_simulated,
    simulate_labels,
)


@pytest.mark.parametrize("n_annotators", [3, 4])
def test_it_simulates_the_same_verdict_as_the_alt_test(n_annotators):
    rng = np.random.default_rng(7)
    humans, judge = simulate_labels(rng, campaigns=40, n_items=45, n_annotators=n_annotators, n_categories=3, s=0.7, s_judge=0.62)
    fast = passes_simulated(humans, judge, epsilon=0.15, n_categories=3)
    slow = []
    for c in range(40):
        h = Ratings.from_rows((i, "", a, int(humans[c, a, i])) for a in range(n_annotators) for i in range(45))
        j = Ratings.from_rows((i, "", "judge", int(judge[c, i])) for i in range(45))
        slow.append(alt_test(h, j, epsilon=0.15, unit="item", rounds=0).passes)
    assert fast.tolist() == slow
    assert 0 < fast.sum() < 40  # both outcomes occur, so the comparison means something


def test_it_gives_annotators_the_kappa_it_was_asked_for():
    s, kappa = keep_probability(kappa=0.5, n_categories=3)
    assert s == pytest.approx(math.sqrt(0.5)) and kappa == 0.5
    humans, _ = simulate_labels(np.random.default_rng(0), campaigns=1, n_items=200_000, n_annotators=2, n_categories=3, s=s, s_judge=s)
    assert cohen_kappa_score(humans[0, 0], humans[0, 1]) == pytest.approx(0.5, abs=0.01)
    # raw agreement 2/3 with three answers is kappa 0.5
    assert keep_probability(agreement=2 / 3, n_categories=3)[1] == pytest.approx(0.5)


def test_it_places_a_worse_judge_margin_below_in_agreement_with_an_annotator():
    s = math.sqrt(0.5)
    s_judge = judge_keep_probability(s, 0.05, 3)
    humans, judge = simulate_labels(
        np.random.default_rng(1), campaigns=1, n_items=300_000, n_annotators=2, n_categories=3, s=s, s_judge=s_judge
    )
    human_human = (humans[0, 0] == humans[0, 1]).mean()
    judge_human = (judge[0] == humans[0, 0]).mean()
    assert human_human - judge_human == pytest.approx(0.05, abs=0.005)


def test_it_estimates_pass_probabilities_with_their_n_and_interval():
    power = alt_test_power(n_items=100, epsilon=0.2, kappa=0.5, margin=0.1, simulations=400)
    for p in (power.equal, power.worse):
        assert p.n == 400 and p.ci_low <= p.value <= p.ci_high
    assert power.equal.value > 0.9 and power.worse.value < 0.5
    assert "human kappa 0.50" in power.model and power.epsilon == 0.2
    assert alt_test_power(n_items=100, epsilon=0.2, kappa=0.5, simulations=50).worse is None
    much_worse = alt_test_power(n_items=100, epsilon=0.2, kappa=0.5, margin=0.25, simulations=200)
    assert much_worse.worse.value < 0.02


def test_it_reproduces_the_issues_claim_for_a_slightly_noisier_judge():
    # Three annotators, A/B/tie, human kappa 0.5 (noise 0.29), epsilon 0.2, 100 items: a judge with
    # noise 0.35 (agreement with an annotator 2.7 points lower) passes about 9 times in 10.
    s = math.sqrt(0.5)
    margin = (2 / 3) * s * (s - 0.65)
    power = alt_test_power(n_items=100, epsilon=0.2, kappa=0.5, margin=margin, simulations=2000)
    assert 0.85 <= power.worse.value <= 0.92
    assert power.equal.value >= 0.95


def test_it_finds_the_items_needed_for_a_target():
    needed = alt_test_items_needed(target=0.8, epsilon=0.2, kappa=0.5, margin=0.05, sizes=(30, 50, 70, 100, 150), simulations=300)
    values = [p.equal.value for p in needed.curve]
    first = next(p.n_items for p in needed.curve if p.equal.value >= 0.8)
    assert needed.n_items == first and values[0] < 0.8 <= values[-1]
    assert needed.at(needed.n_items).equal.value >= 0.8
    none = alt_test_items_needed(target=0.99, epsilon=0.05, kappa=0.3, sizes=(30, 40), simulations=100)
    assert none.n_items is None and len(none.curve) == 2


def test_it_rejects_a_plan_it_cannot_model():
    with pytest.raises(ValueError, match="kappa or its agreement"):
        keep_probability(n_categories=3)
    with pytest.raises(ValueError, match="at or below chance"):
        keep_probability(agreement=0.3, n_categories=3)
    with pytest.raises(ValueError, match="outside"):
        judge_keep_probability(0.5, 0.5, 3)
    with pytest.raises(ValueError, match="epsilon"):
        alt_test_power(n_items=50, epsilon=None, kappa=0.5)
    with pytest.raises(TypeError):
        alt_test_power(n_items=50, kappa=0.5)
