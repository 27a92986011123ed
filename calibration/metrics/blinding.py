"""Blinding indices: how well raters could tell which article was the reference, as a trial measures it.

After each pair the annotator may answer "Which article do you think is the reference?" (the
guess question): the article shown first, the one shown second, or "don't know"; an unanswered
question is *missing* and counts in no index. The two randomised display orders play the part
of a trial's two arms: the reference shown first (arm ``first``), or second (arm ``second``).

* **Bang's index** (Bang, Ni and Davis 2004), within one arm, from its right (``c``) and wrong
  (``w``) guesses and don't-knows (``d``):
  ``BI = (2 c / (c + w) - 1) * (c + w) / (c + w + d)``, which is ``(c - w) / (c + w + d)``.
  0: no better than chance (or everyone said don't know); 1: everyone right; -1: everyone wrong.
* **James' index** (James, Bloch, Lee, Kraemer and Fuller 1996), over both arms: a weighted,
  kappa-like disagreement between arm and guess among those who guessed (a right guess weighs 0,
  a wrong one 1/2), chance-corrected with the guessers' margins (``kappa = (P_o - P_e) / P_e``),
  then averaged with the don't-knows, which count as fully blind:
  ``BI = (1 + p_dk + (1 - p_dk) * kappa) / 2``. 1: everyone said don't know; 0: everyone right;
  0.5: guesses no better than chance. It rises above 0.5 when guesses are systematically wrong
  too, so it is read beside Bang's.

Each figure carries its counts and a 95% interval of a bootstrap over pairs (every guess on a
drawn pair comes along), with the pair bootstrap's seeded draws (`bootstrap`). The interval is
Hesterberg's *expanded percentile* interval: the percentiles are taken further out, at the level
``2 * Phi(-sqrt(n / (n - 1)) * t_{0.975, n - 1})`` for a figure resting on ``n`` pairs, which
corrects the plain percentile interval's narrowness on the few dozen pairs an arm often has
(with 25 pairs: the 1.8th and 98.2nd percentiles). In tests/test_metrics_blinding.py's simulation
(50 pairs, 600 runs) it covered the true index 93.2% and 95.7% of the time per arm and 94.7% for
James', where the plain percentile interval covered 91.7%, 93.7% and 93.2%.

Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from calibration.metrics._common import as_float
from calibration.metrics.bootstrap import Estimate, draw_count_blocks
from calibration.metrics.distributions import normal_cdf, t_quantile

# The answers, relative to the display order (`annotate.services.guesses`); "" is missing.
FIRST, SECOND, DONT_KNOW, MISSING = "first", "second", "unknown", ""
ANSWERS = (FIRST, SECOND, DONT_KNOW)
# The arms: the reference was shown first, or second.
ARMS = (FIRST, SECOND)
# What a guess was, against the arm.
RIGHT, WRONG = "right", "wrong"
OUTCOMES = (RIGHT, WRONG, DONT_KNOW)
# James' weights: a right guess 0, a wrong one 1/2 (the don't-knows enter through p_dk).
JAMES_WRONG_WEIGHT = 0.5


@dataclass(frozen=True)
class Guess:
    """One answer to the guess question: on which pair (the bootstrap's unit), in which arm, what it
    said, and the groups it belongs to (the generated system, the rater, the kind of assignment)."""

    pair: object
    reference_first: bool
    answer: str
    system: str = ""
    rater: str = ""
    kind: str = "original"  # "original", "gold" or "repeat"

    @property
    def outcome(self) -> str:
        """RIGHT, WRONG, DONT_KNOW, or MISSING."""
        if self.answer in (DONT_KNOW, MISSING):
            return self.answer
        return RIGHT if (self.answer == FIRST) == self.reference_first else WRONG


def outcome_of(answer: str, reference_first: bool) -> str:
    return Guess(pair=None, reference_first=reference_first, answer=answer).outcome


def bang_index(right: float, wrong: float, dont_know: float) -> float | None:
    """Bang's index of one arm; None when the arm has no answer."""
    total = right + wrong + dont_know
    if total <= 0:
        return None
    return (right - wrong) / total


def james_index(table) -> float | None:
    """James' index of a 3 x 2 table of counts: rows the answer (first, second, don't know), columns
    the arm (reference first, second). None when undefined (no answer, or guesses whose margins
    leave no chance disagreement, such as one arm only, all guessed alike)."""
    value = _james(np.asarray(table, dtype=np.float64).reshape(1, 3, 2))[0]
    return None if np.isnan(value) else float(value)


def _james(tables: np.ndarray) -> np.ndarray:
    """James' index of each (3 x 2) table of ``tables`` (k x 3 x 2); NaN where undefined."""
    total = tables.sum(axis=(1, 2))
    dont_know = tables[:, 2, :].sum(axis=1)
    guessed = total - dont_know
    weights = np.array([[0.0, JAMES_WRONG_WEIGHT], [JAMES_WRONG_WEIGHT, 0.0]])
    guesses = tables[:, :2, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (guesses * weights).sum(axis=(1, 2)) / guessed
        rows = guesses.sum(axis=2) / guessed[:, None]  # answer margins among guessers
        columns = guesses.sum(axis=1) / guessed[:, None]  # arm margins among guessers
        expected = np.einsum("ki,ij,kj->k", rows, weights, columns)
        kappa = (observed - expected) / expected
        p_dk = dont_know / total
        value = (1 + p_dk + (1 - p_dk) * kappa) / 2
    value = np.where(guessed == 0, 1.0, value)  # only don't-knows: fully blind
    value = np.where(total == 0, np.nan, value)
    return np.where(np.isfinite(value), value, np.nan)


@dataclass(frozen=True)
class Counts:
    """The answers behind a figure: right, wrong, don't know, and the questions left unanswered."""

    right: int = 0
    wrong: int = 0
    dont_know: int = 0
    missing: int = 0

    @property
    def guesses(self) -> int:
        """Answers that named an article (right or wrong)."""
        return self.right + self.wrong

    @property
    def answered(self) -> int:
        return self.right + self.wrong + self.dont_know


@dataclass(frozen=True)
class Blinding:
    """Bang's index per arm and James' index over both, each with its counts."""

    bang: dict[str, Estimate]
    bang_counts: dict[str, Counts]
    james: Estimate
    counts: Counts
    n_pairs: int
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "bang": {arm: {**self.bang[arm].as_dict(), **_counts_dict(self.bang_counts[arm])} for arm in ARMS},
            "james": {**self.james.as_dict(), **_counts_dict(self.counts)},
            "n_pairs": self.n_pairs,
            "notes": list(self.notes),
        }


def _counts_dict(counts: Counts) -> dict:
    return {
        "right": counts.right,
        "wrong": counts.wrong,
        "dont_know": counts.dont_know,
        "missing": counts.missing,
        "guesses": counts.guesses,
    }


# Cells of a pair's counts: (answer row, arm column) flattened as the 3 x 2 table is.
def _cell(guess: Guess) -> int | None:
    if guess.answer == MISSING:
        return None
    row = ANSWERS.index(guess.answer)
    return row * 2 + (0 if guess.reference_first else 1)


def _table_counts(table: np.ndarray) -> tuple[dict[str, Counts], Counts]:
    """Per arm and overall counts of a 3 x 2 table (without the missing)."""
    t = table.reshape(3, 2)
    arm_first = Counts(right=int(t[0, 0]), wrong=int(t[1, 0]), dont_know=int(t[2, 0]))
    arm_second = Counts(right=int(t[1, 1]), wrong=int(t[0, 1]), dont_know=int(t[2, 1]))
    overall = Counts(
        right=arm_first.right + arm_second.right,
        wrong=arm_first.wrong + arm_second.wrong,
        dont_know=arm_first.dont_know + arm_second.dont_know,
    )
    return {FIRST: arm_first, SECOND: arm_second}, overall


def _arm_pairs(per_pair: np.ndarray, column: int) -> int:
    """The pairs with an answer in the arm of `column` (0: reference first, 1: second)."""
    return int((per_pair[:, [column, 2 + column, 4 + column]].sum(axis=1) > 0).sum())


def _bang_rounds(tables: np.ndarray) -> np.ndarray:
    """(k x 2) Bang's index of each arm of each table (NaN for an empty arm)."""
    t = tables.reshape(-1, 3, 2)
    right = np.stack([t[:, 0, 0], t[:, 1, 1]], axis=1)
    wrong = np.stack([t[:, 1, 0], t[:, 0, 1]], axis=1)
    total = t.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (right - wrong) / np.where(total > 0, total, 1), np.nan)


def expanded_percentile_ci(samples: np.ndarray, n_units) -> tuple[np.ndarray, np.ndarray]:
    """The expanded percentile interval of each column of ``samples`` (rounds x k; NaN rounds left
    out), column j resting on ``n_units[j]`` units (NaN ends below 2 units)."""
    samples = np.atleast_2d(samples)
    n = np.asarray(n_units, dtype=np.float64).reshape(-1)
    low, high = np.full(samples.shape[1], np.nan), np.full(samples.shape[1], np.nan)
    for j in range(samples.shape[1]):
        column = samples[:, j][~np.isnan(samples[:, j])]
        if n[j] < 2 or not column.size:
            continue
        tail = float(normal_cdf(-np.sqrt(n[j] / (n[j] - 1)) * t_quantile(0.975, n[j] - 1)))
        low[j], high[j] = np.quantile(column, [tail, 1 - tail])
    return low, high


def blinding(guesses: Iterable[Guess], *, rounds: int = 1000, seed: int = 0) -> Blinding:
    """Bang's index per arm and James' index over the guesses, with bootstrap CIs over pairs."""
    guesses = list(guesses)
    missing_by_arm = {FIRST: 0, SECOND: 0}
    pair_index: dict[object, int] = {}
    cells, units = [], []
    for guess in guesses:
        cell = _cell(guess)
        if cell is None:
            missing_by_arm[FIRST if guess.reference_first else SECOND] += 1
            continue
        units.append(pair_index.setdefault(guess.pair, len(pair_index)))
        cells.append(cell)
    n_pairs = len(pair_index)
    per_pair = np.zeros((n_pairs, 6))
    if cells:
        np.add.at(per_pair, (np.asarray(units), np.asarray(cells)), 1.0)
    table = per_pair.sum(axis=0)
    by_arm, overall = _table_counts(table)
    by_arm = {arm: Counts(c.right, c.wrong, c.dont_know, missing_by_arm[arm]) for arm, c in by_arm.items()}
    overall = Counts(overall.right, overall.wrong, overall.dont_know, sum(missing_by_arm.values()))
    bang_point = _bang_rounds(table[None, :])[0]
    james_point = _james(table.reshape(1, 3, 2))[0]
    low, high = np.full(3, np.nan), np.full(3, np.nan)
    if n_pairs and rounds > 0:
        resampled = np.concatenate([counts @ per_pair for counts in draw_count_blocks(n_pairs, rounds, seed)])
        figures = np.concatenate([_bang_rounds(resampled), _james(resampled.reshape(-1, 3, 2))[:, None]], axis=1)
        low, high = expanded_percentile_ci(figures, [*(_arm_pairs(per_pair, column) for column in (0, 1)), n_pairs])
    pairs_of_arm = {arm: _arm_pairs(per_pair, column) for column, arm in enumerate(ARMS)}
    bang = {
        arm: Estimate(as_float(bang_point[i]), by_arm[arm].answered, as_float(low[i]), as_float(high[i]), pairs_of_arm[arm])
        for i, arm in enumerate(ARMS)
    }
    james = Estimate(as_float(james_point), overall.answered, as_float(low[2]), as_float(high[2]), n_pairs)
    notes = []
    if overall.missing:
        notes.append(f"{overall.missing} question(s) left unanswered: counted as missing, not as don't know")
    return Blinding(bang=bang, bang_counts=by_arm, james=james, counts=overall, n_pairs=n_pairs, notes=notes)


def blinding_by(guesses: Sequence[Guess], key: Callable[[Guess], str], *, rounds: int = 1000, seed: int = 0) -> dict[str, Blinding]:
    """`blinding` of each group of the guesses (`key`: a guess's group, such as its system or rater),
    in the groups' name order."""
    groups: dict[str, list[Guess]] = {}
    for guess in guesses:
        groups.setdefault(key(guess), []).append(guess)
    return {name: blinding(groups[name], rounds=rounds, seed=seed) for name in sorted(groups)}
