"""Verdicts split by guess: a biased annotator is flagged, an unbiased one is not; kappa equals sklearn's."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from calibration.metrics.blinding import DONT_KNOW, RIGHT, WRONG
from calibration.metrics.guess_split import (
    DIFFERS,
    HI,
    LO,
    OVERALL,
    TIE,
    GuessedLabel,
    agreement_by_guess,
    reference_win_rate_by_guess,
)

CATEGORIES = ("clarity", "coverage")


def simulate(seed: int, *, biased: bool, pairs: int = 120, criteria: int = 6) -> list[GuessedLabel]:
    """One annotator, each pair guessed right or "don't know" half the time. The biased one favours the
    reference (80%) only when they named it rightly; otherwise (and always, unbiased) 50%."""
    rng = np.random.default_rng(seed)
    rows = []
    for pair in range(pairs):
        guess = RIGHT if rng.random() < 0.5 else DONT_KNOW
        reference = LO if rng.random() < 0.5 else HI
        favour = 0.8 if biased and guess == RIGHT else 0.5
        for c in range(criteria):
            won = rng.random() < favour
            outcome = reference if won else (HI if reference == LO else LO)
            rows.append(GuessedLabel(pair, f"c{c}", CATEGORIES[c % 2], guess, outcome, reference))
    return rows


def test_it_flags_an_annotator_who_favours_the_reference_only_when_recognising_it_in_every_seed():
    for seed in range(10):
        split = reference_win_rate_by_guess(simulate(seed, biased=True), rounds=500, seed=seed)[OVERALL]
        assert split.difference.ci_low > 0, seed
        assert split.note == DIFFERS


def test_it_does_not_flag_an_unbiased_annotator():
    flagged = []
    for seed in range(10):
        split = reference_win_rate_by_guess(simulate(seed, biased=False), rounds=500, seed=seed)[OVERALL]
        assert split.by_guess[RIGHT].n + split.by_guess[DONT_KNOW].n == 120 * 6
        if split.note:
            flagged.append(seed)
    assert flagged == []


def test_it_computes_win_rates_by_hand_with_ties_as_halves():
    rows = [
        GuessedLabel(1, "a", "clarity", RIGHT, LO, LO),
        GuessedLabel(1, "b", "clarity", RIGHT, TIE, LO),
        GuessedLabel(2, "a", "clarity", WRONG, LO, HI),
        GuessedLabel(3, "a", "coverage", DONT_KNOW, HI, HI),
        GuessedLabel(4, "a", "coverage", "", HI, HI),  # no answer: left out
        GuessedLabel(5, "a", "coverage", RIGHT, HI, None),  # no reference in the pair: left out
    ]
    result = reference_win_rate_by_guess(rows, rounds=50)

    overall = result[OVERALL]
    assert overall.by_guess[RIGHT].value == pytest.approx(0.75) and overall.by_guess[RIGHT].n == 2
    assert overall.by_guess[WRONG].value == 0.0
    assert overall.by_guess[DONT_KNOW].value == 1.0
    assert overall.difference.value == pytest.approx(-0.25)
    assert overall.difference.ci is None  # too few pairs for an interval
    assert list(result) == [OVERALL, "clarity", "coverage"]


def test_it_gives_judges_par_and_the_kappa_sklearn_gives():
    rng = np.random.default_rng(3)
    rows = simulate(3, biased=False, pairs=60)
    verdicts = {(row.pair, row.criterion): int(rng.choice(3, p=[0.45, 0.45, 0.1])) for row in rows}
    verdicts.pop((0, "c0"))  # a missing verdict: that label is left out

    result = agreement_by_guess(rows, verdicts, rounds=200)[OVERALL]

    for group in (RIGHT, DONT_KNOW):
        kept = [row for row in rows if row.guess == group and (row.pair, row.criterion) in verdicts]
        human = [row.outcome for row in kept]
        judge = [verdicts[row.pair, row.criterion] for row in kept]
        assert result.par.by_guess[group].value == pytest.approx(np.mean(np.equal(human, judge)))
        assert result.kappa.by_guess[group].value == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
        assert result.kappa.by_guess[group].n == len(kept)
    assert result.par.by_guess[WRONG].value is None
