"""calibration.metrics.ties: tie-aware accuracy with a calibrated tie threshold (issue 40, item 4a)."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from calibration.metrics._common import HI_WINS, LO_WINS, TIED
from calibration.metrics.ties import answer_distribution, best_threshold, held_out, predicted, preference, tie_accuracy


def test_it_equals_a_hand_example():
    # six human labels; d of their items and the humans' verdicts
    pref = np.array([0.9, 0.05, -0.1, 0.2, -0.6, 0.0])
    human = np.array([LO_WINS, TIED, TIED, LO_WINS, HI_WINS, TIED])
    # by hand: eps 0 -> right on 0.9, 0.2, -0.6 and the d = 0 tie: 4/6; eps 0.05 -> + the 0.05 tie: 5/6;
    # eps 0.1 -> + the -0.1 tie: 6/6; eps 0.2 -> the 0.2 win turns tie: 5/6; eps 0.6: 3/6 + ... = 4/6
    epsilon, accuracy, tried = best_threshold(pref, human)
    assert epsilon == pytest.approx(0.1) and accuracy == pytest.approx(1.0) and tried == 6
    epsilon, accuracy, _ = best_threshold(pref[:5], np.array([LO_WINS, TIED, LO_WINS, LO_WINS, HI_WINS]))
    # eps 0: 0.9, 0.2, -0.6 right = 3/5; eps 0.05: + the tie = 4/5; eps 0.1: the -0.1 'win' (a loss to the human) tie: still 4/5
    assert epsilon == pytest.approx(0.05) and accuracy == pytest.approx(0.8)


def test_it_reads_a_confidence_as_a_distribution():
    dist = answer_distribution(np.array([LO_WINS, TIED, HI_WINS]), np.array([0.7, 0.9, 1.0]))
    assert np.allclose(dist, [[0.7, 0.15, 0.15], [0.05, 0.05, 0.9], [0.0, 1.0, 0.0]])
    assert preference(dist).tolist() == pytest.approx([0.55, 0.0, -1.0])


def test_it_finds_a_known_best_threshold_in_a_simulation():
    # The humans tie when the true margin is within 0.3; the judge's d is the margin plus a little noise.
    rng = np.random.default_rng(5)
    n = 4000
    margin = rng.uniform(-1, 1, n)
    human = np.where(np.abs(margin) <= 0.3, TIED, np.where(margin > 0, LO_WINS, HI_WINS))
    pref = margin + rng.normal(0, 0.02, n)
    pairs = np.arange(n)
    held = held_out([str(p) for p in pairs])
    assert 0.45 < held.mean() < 0.55
    result = tie_accuracy("j", pairs, pref, human, held, rounds=200, seed=1)
    assert result.epsilon == pytest.approx(0.3, abs=0.02)
    assert result.held_out.value > 0.97 and result.held_out.n == int(held.sum())
    assert result.held_out.value == pytest.approx(accuracy_score(human[held], predicted(pref[held], result.epsilon)), abs=1e-12)
    assert result.held_out.ci_low <= result.held_out.value <= result.held_out.ci_high
    # the judge's own verdicts never tie: right on the decided items only
    assert result.held_out_own.value == pytest.approx(1 - result.human_tie_share, abs=0.02)
    assert result.held_out.value > result.held_out_own.ci_high


def test_it_says_when_a_split_is_empty():
    result = tie_accuracy("j", np.array([0, 1]), np.array([0.2, np.nan]), np.array([TIED, LO_WINS]), np.array([False, True]))
    assert result.epsilon is None and "held-out" in result.note
