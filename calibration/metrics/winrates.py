"""Win rates: each system's share of wins (a tie counting 1/2) against the reference system, or
against the field when there is none, with pair-bootstrap CIs."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable

import numpy as np

from calibration.metrics._common import HI_WINS, LO_WINS, TIED
from calibration.metrics.bootstrap import Estimate, PairBootstrap
from calibration.metrics.labels import LabelRow, LabelTable, as_table
from common.names import REFERENCE_SYSTEM


@dataclass(frozen=True)
class WinRates:
    """Each system's share of wins (tie = 1/2) against the reference, or, when ``reference`` is
    None, against the field (every comparison it is in)."""

    reference: str | None
    overall: dict[str, Estimate]
    by_category: dict[str, dict[str, Estimate]]

    def as_dict(self) -> dict:
        return asdict(self)


def win_rate_vs_reference(
    labels: LabelTable | Iterable[LabelRow], reference: str = REFERENCE_SYSTEM, rounds: int = 1000, seed: int = 0
) -> WinRates:
    t = as_table(labels)
    v = t.vocab
    if reference not in v.systems:
        return WinRates(reference, {}, {})
    ref = v.systems.index(reference)
    m = (t.sys_lo == ref) | (t.sys_hi == ref)
    t = t.select(m)
    other = np.where(t.sys_lo == ref, t.sys_hi, t.sys_lo)
    other_wins = np.where(t.sys_lo == ref, t.outcome == HI_WINS, t.outcome == LO_WINS)
    score = other_wins + 0.5 * (t.outcome == TIED)
    s = len(v.systems)
    boot = PairBootstrap(t.pair, rounds, seed)
    ones = np.ones(len(t))
    overall_est, cat_est = boot.ratios_many(
        [(t.pair, score, ones, other, s), (t.pair, score, ones, t.category.astype(np.int64) * s + other, len(v.categories) * s)]
    )
    present = np.unique(other)
    overall = {v.systems[i]: overall_est[i] for i in present}
    by_cat: dict[str, dict[str, Estimate]] = {}
    for c in np.unique(t.category):
        sys_here = np.unique(other[t.category == c])
        by_cat[v.categories[c]] = {v.systems[i]: cat_est[c * s + i] for i in sys_here}
    return WinRates(reference, overall, by_cat)


def win_rate_vs_field(labels: LabelTable | Iterable[LabelRow], rounds: int = 1000, seed: int = 0) -> WinRates:
    """Each system's share of wins (tie = 1/2) over all its comparisons, for benchmarks without
    a reference. Every label counts once for each of its two systems."""
    t = as_table(labels)
    v = t.vocab
    s = len(v.systems)
    system = np.concatenate([t.sys_lo, t.sys_hi]).astype(np.int64)
    half = 0.5 * (t.outcome == TIED)
    score = np.concatenate([(t.outcome == LO_WINS) + half, (t.outcome == HI_WINS) + half])
    pairs = np.concatenate([t.pair, t.pair])
    category = np.concatenate([t.category, t.category]).astype(np.int64)
    boot = PairBootstrap(t.pair, rounds, seed)
    ones = np.ones(len(score))
    overall_est, cat_est = boot.ratios_many(
        [(pairs, score, ones, system, s), (pairs, score, ones, category * s + system, len(v.categories) * s)]
    )
    overall = {v.systems[i]: overall_est[i] for i in np.unique(system)}
    by_cat: dict[str, dict[str, Estimate]] = {}
    for c in np.unique(t.category):
        by_cat[v.categories[c]] = {v.systems[i]: cat_est[c * s + i] for i in np.unique(system[category == c])}
    return WinRates(None, overall, by_cat)
