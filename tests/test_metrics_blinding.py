"""Bang's and James' blinding indices: hand examples, the published example, and the bootstrap's coverage."""

import numpy as np
import pytest

from calibration.metrics.blinding import (
    DONT_KNOW,
    FIRST,
    MISSING,
    SECOND,
    Guess,
    bang_index,
    blinding,
    blinding_by,
    james_index,
)


def guesses(arm_first: tuple[int, int, int], arm_second: tuple[int, int, int], *, missing: int = 0) -> list[Guess]:
    """(right, wrong, don't know) per arm, each guess on a pair of its own."""
    out = []
    for reference_first, (right, wrong, dont_know) in ((True, arm_first), (False, arm_second)):
        right_answer, wrong_answer = (FIRST, SECOND) if reference_first else (SECOND, FIRST)
        for answer, n in ((right_answer, right), (wrong_answer, wrong), (DONT_KNOW, dont_know)):
            out += [Guess(pair=len(out), reference_first=reference_first, answer=answer) for _ in range(n)]
    out += [Guess(pair=len(out) + i, reference_first=True, answer=MISSING) for i in range(missing)]
    return out


def test_it_gives_one_and_zero_when_everyone_is_right():
    result = blinding(guesses((10, 0, 0), (10, 0, 0)), rounds=200)

    assert result.bang[FIRST].value == 1.0 and result.bang[SECOND].value == 1.0
    assert result.james.value == 0.0
    assert (result.counts.right, result.counts.wrong, result.counts.dont_know) == (20, 0, 0)


def test_it_gives_minus_one_and_one_when_everyone_is_wrong():
    result = blinding(guesses((0, 10, 0), (0, 10, 0)), rounds=200)

    assert result.bang[FIRST].value == -1.0 and result.bang[SECOND].value == -1.0
    # Weighted disagreement 1/2 against 1/4 by chance: kappa 1, and James' index cannot tell it from blindness.
    assert result.james.value == 1.0


def test_it_gives_zero_and_one_when_everyone_says_dont_know():
    result = blinding(guesses((0, 0, 10), (0, 0, 10)), rounds=200)

    assert result.bang[FIRST].value == 0.0 and result.bang[SECOND].value == 0.0
    assert result.james.value == 1.0
    assert result.counts.guesses == 0 and result.counts.dont_know == 20


def test_it_computes_a_mixed_case_by_hand():
    # Arm "reference first": 6 right, 2 wrong, 2 don't know; arm "second": 3, 3, 4.
    result = blinding(guesses((6, 2, 2), (3, 3, 4), missing=3), rounds=200)

    assert result.bang[FIRST].value == pytest.approx((2 * 6 / 8 - 1) * 8 / 10)  # 0.4
    assert result.bang[SECOND].value == pytest.approx(0.0)
    # Among the 14 guessers: weighted disagreement 0.5 * 5/14; by chance 0.5 * (9/14 * 6/14 + 5/14 * 8/14) = 47/196;
    # kappa = (35/196 - 47/196) / (47/196) = -12/47; p_dk = 6/20.
    assert result.james.value == pytest.approx((1 + 0.3 + 0.7 * (-12 / 47)) / 2)
    assert result.counts.missing == 3 and result.counts.dont_know == 6  # missing is not don't know
    assert result.bang_counts[FIRST].missing == 3
    assert result.notes and "not as don't know" in result.notes[0]


def test_it_matches_the_formulas_on_a_published_table():
    # The example table of the R package BI's documentation (answers x arms): 0.896 for James, 0.115 and 0.022 for Bang.
    table = [[48, 22], [4, 30], [330, 319]]
    assert james_index(table) == pytest.approx(0.896, abs=5e-4)
    assert bang_index(48, 4, 330) == pytest.approx(0.115, abs=5e-4)
    assert bang_index(30, 22, 319) == pytest.approx(0.022, abs=5e-4)


def test_it_leaves_undefined_figures_empty():
    assert bang_index(0, 0, 0) is None
    assert james_index([[0, 0], [0, 0], [0, 0]]) is None
    result = blinding([], rounds=100)
    assert result.bang[FIRST].value is None and result.james.value is None and result.n_pairs == 0


def test_it_resamples_whole_pairs_and_groups_by_system():
    pairs = [Guess(pair=p, reference_first=p % 2 == 0, answer=FIRST, system="atlas" if p < 20 else "quill", rater=r)
             for p in range(40) for r in ("ann", "bob")]  # fmt: skip

    result = blinding(pairs, rounds=300)
    by_system = blinding_by(pairs, lambda g: g.system, rounds=300)

    assert result.n_pairs == 40 and result.james.n == 80
    assert result.bang[FIRST].value == 1.0 and result.bang[SECOND].value == -1.0
    assert list(by_system) == ["atlas", "quill"] and by_system["atlas"].n_pairs == 20
    assert result.james.ci_low <= result.james.value <= result.james.ci_high


def _draw(rng, n_pairs: int, probabilities) -> list[Guess]:
    out = []
    for pair in range(n_pairs):
        reference_first = bool(rng.random() < 0.5)
        for _ in range(2):  # two annotators per pair
            outcome = rng.choice(3, p=probabilities)
            right, wrong = (FIRST, SECOND) if reference_first else (SECOND, FIRST)
            out.append(Guess(pair=pair, reference_first=reference_first, answer=(right, wrong, DONT_KNOW)[outcome]))
    return out


def test_it_covers_the_true_indices_at_least_93_times_in_100_with_50_pairs():
    rng = np.random.default_rng(7)
    probabilities = np.array([0.55, 0.2, 0.25])  # right, wrong, don't know in either arm
    true_bang = probabilities[0] - probabilities[1]
    # James' index of the expected table (equal arms).
    expected = [[probabilities[0] / 2, probabilities[1] / 2], [probabilities[1] / 2, probabilities[0] / 2], [0.125, 0.125]]
    true_james = james_index(expected)
    hits = {"first": 0, "second": 0, "james": 0}
    runs = 600
    for run in range(runs):
        result = blinding(_draw(rng, 50, probabilities), rounds=1000, seed=run)
        for arm in (FIRST, SECOND):
            hits[arm] += result.bang[arm].ci_low <= true_bang <= result.bang[arm].ci_high
        hits["james"] += result.james.ci_low <= true_james <= result.james.ci_high
    coverage = {name: n / runs for name, n in hits.items()}
    assert min(coverage.values()) >= 0.93, coverage
