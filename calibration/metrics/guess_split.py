"""Verdicts split by what the rater guessed: do verdicts differ when annotators recognise the reference?

Each human label is put in the group of its assignment's answer to the guess question, against the
arm (`blinding`): the reference named rightly (``right``), wrongly (``wrong``), or ``dont_know``;
labels of assignments without an answer are left out and counted. Per criterion category and over
all of them, each group gets:

* the reference's human win rate: the share of its labels the reference won, a tie counting one
  half (pairs without the reference are left out);
* each judge's agreement with those labels (PAR: the share of (judge verdict, human label) matches
  on the same pair and criterion) and Cohen's kappa over the three outcomes (the pair's first
  system in name order wins, the second, a tie);

and the difference "right minus don't know" of each, with its CI. Intervals are 95% percentile
intervals of a bootstrap over pairs (`bootstrap`'s seeded draws). A difference whose interval
excludes 0 gets the note `DIFFERS`.

Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from calibration.metrics._common import MIN_PAIRS_FOR_CI, as_float
from calibration.metrics.blinding import DONT_KNOW, RIGHT, WRONG
from calibration.metrics.bootstrap import Estimate, draw_count_blocks, percentile_ci

GROUPS = (RIGHT, WRONG, DONT_KNOW)
OVERALL = "overall"
DIFFERS = "verdicts differ when annotators recognise the reference"
# Outcome codes of a verdict: the pair's first system (in name order) wins, the second, a tie.
LO, HI, TIE = 0, 1, 2


@dataclass(frozen=True)
class GuessedLabel:
    """One label (or verdict) with the guess outcome it is grouped by (RIGHT, WRONG, DONT_KNOW).

    `order` says which of a judge's verdicts on the pair and criterion the label is compared with,
    when the judge was shown the pair in both orders and guessed in each (None: the judge's one
    verdict); the bootstrap still resamples pairs."""

    pair: object
    criterion: str
    category: str
    guess: str
    outcome: int  # LO, HI, TIE
    reference: int | None  # LO or HI: which of the pair's systems is the reference (None: neither)
    order: object = None

    @property
    def verdict_key(self) -> tuple:
        """The key of the judge's verdict this label is compared with (`agreement_by_guess`)."""
        return (self.pair, self.criterion) if self.order is None else (self.pair, self.criterion, self.order)


@dataclass(frozen=True)
class Split:
    """A figure per guess group, and "right minus don't know"."""

    by_guess: dict[str, Estimate]
    difference: Estimate
    note: str = ""

    def as_dict(self) -> dict:
        return {
            "by_guess": {g: e.as_dict() for g, e in self.by_guess.items()},
            "right_minus_dont_know": self.difference.as_dict(),
            "note": self.note,
        }


def _note(difference: Estimate) -> str:
    ci = difference.shown_ci
    return DIFFERS if ci is not None and (ci[0] > 0 or ci[1] < 0) else ""


def _bootstrap(per_pair: np.ndarray, figures, rounds: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point figures of the summed per-pair statistics and their percentile ends over pair draws."""
    point = figures(per_pair.sum(axis=0)[None, :])[0]
    n_pairs = per_pair.shape[0]
    if not n_pairs or rounds <= 0:
        nan = np.full(point.shape, np.nan)
        return point, nan, nan
    resampled = np.concatenate([c @ per_pair for c in draw_count_blocks(n_pairs, rounds, seed)])
    low, high = percentile_ci(figures(resampled))
    return point, low, high


def _split(per_pair: np.ndarray, figures, counts: np.ndarray, rounds: int, seed: int) -> Split:
    """`figures` maps summed statistics (rounds x k) to (rounds x 3) figures per guess group; the
    fourth column returned is right minus don't know. `counts` (pairs x 3): labels per group."""

    def with_difference(totals):
        values = figures(totals)
        return np.concatenate([values, (values[:, 0] - values[:, 2])[:, None]], axis=1)

    point, low, high = _bootstrap(per_pair, with_difference, rounds, seed)
    n_labels = counts.sum(axis=0)
    n_pairs = (counts > 0).sum(axis=0)
    by_guess = {
        group: Estimate(as_float(point[i]), int(n_labels[i]), as_float(low[i]), as_float(high[i]), int(n_pairs[i]))
        for i, group in enumerate(GROUPS)
    }
    both = int(((counts[:, 0] > 0) | (counts[:, 2] > 0)).sum())
    n_both = int(n_labels[0] + n_labels[2])
    difference = Estimate(as_float(point[3]), n_both, as_float(low[3]), as_float(high[3]), both)
    if min(by_guess[RIGHT].n_pairs or 0, by_guess[DONT_KNOW].n_pairs or 0) < MIN_PAIRS_FOR_CI:
        difference = Estimate(difference.value, difference.n, None, None, difference.n_pairs)
    return Split(by_guess=by_guess, difference=difference, note=_note(difference))


def _pair_codes(rows: list) -> tuple[np.ndarray, int]:
    index: dict[object, int] = {}
    codes = np.array([index.setdefault(row.pair, len(index)) for row in rows], dtype=np.int64)
    return codes, len(index)


def _by_category(rows: Iterable[GuessedLabel]) -> dict[str, list[GuessedLabel]]:
    rows = [row for row in rows if row.guess in GROUPS]
    groups: dict[str, list[GuessedLabel]] = {OVERALL: rows}
    for row in rows:
        groups.setdefault(row.category, []).append(row)
    return {name: groups[name] for name in [OVERALL, *sorted(n for n in groups if n != OVERALL)]}


def reference_win_rate_by_guess(rows: Iterable[GuessedLabel], *, rounds: int = 1000, seed: int = 0) -> dict[str, Split]:
    """The reference's human win rate per guess group, per category and overall (`OVERALL`)."""
    out = {}
    for category, members in _by_category(r for r in rows if r.reference is not None).items():
        codes, n_pairs = _pair_codes(members)
        per_pair = np.zeros((n_pairs, 6))
        for code, row in zip(codes, members, strict=True):
            g = GROUPS.index(row.guess)
            won = 0.5 if row.outcome == TIE else float(row.outcome == row.reference)
            per_pair[code, g] += won
            per_pair[code, 3 + g] += 1

        def rates(totals):
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(totals[:, 3:] > 0, totals[:, :3] / np.where(totals[:, 3:] > 0, totals[:, 3:], 1), np.nan)

        out[category] = _split(per_pair, rates, per_pair[:, 3:], rounds, seed)
    return out


def _kappa(confusion: np.ndarray) -> np.ndarray:
    """Cohen's kappa of (k x 3 x 3) confusion counts (human x judge); NaN where undefined."""
    n = confusion.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.trace(confusion, axis1=1, axis2=2) / n
        expected = (confusion.sum(axis=2) * confusion.sum(axis=1)).sum(axis=1) / n**2
        kappa = (observed - expected) / (1 - expected)
    return np.where(np.isfinite(kappa), kappa, np.nan)


@dataclass(frozen=True)
class JudgeSplit:
    par: Split
    kappa: Split

    def as_dict(self) -> dict:
        return {"par": self.par.as_dict(), "kappa": self.kappa.as_dict()}


def agreement_by_guess(
    rows: Iterable[GuessedLabel], verdicts: dict[tuple[object, str], int], *, rounds: int = 1000, seed: int = 0
) -> dict[str, JudgeSplit]:
    """One judge's PAR and Cohen's kappa against the human labels of each guess group, per category and
    overall. `verdicts` maps each label's `verdict_key` ((pair, criterion), or (pair, criterion,
    order)) to the judge's outcome (LO, HI, TIE); labels the judge has no verdict for are left out."""
    out = {}
    kept = [row for row in rows if row.verdict_key in verdicts]
    for category, members in _by_category(kept).items():
        codes, n_pairs = _pair_codes(members)
        per_pair = np.zeros((n_pairs, 27))  # 3 guess groups x (3 x 3) confusion cells
        for code, row in zip(codes, members, strict=True):
            g = GROUPS.index(row.guess)
            per_pair[code, g * 9 + row.outcome * 3 + verdicts[row.verdict_key]] += 1
        counts = per_pair.reshape(n_pairs, 3, 9).sum(axis=2)

        def par(totals):
            cells = totals.reshape(-1, 3, 3, 3)
            n = cells.sum(axis=(2, 3))
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(n > 0, np.trace(cells, axis1=2, axis2=3) / np.where(n > 0, n, 1), np.nan)

        def kappa(totals):
            cells = totals.reshape(-1, 3, 3, 3)
            return np.stack([_kappa(cells[:, g]) for g in range(3)], axis=1)

        out[category] = JudgeSplit(par=_split(per_pair, par, counts, rounds, seed), kappa=_split(per_pair, kappa, counts, rounds, seed))
    return out
