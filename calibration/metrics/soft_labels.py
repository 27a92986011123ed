"""Soft labels: per item (pair, criterion), the annotators' distribution over the answers, and a
judge's answer distribution scored against it.

The human distribution of an item: the share of its annotators giving each answer (the first system
in name order wins, the second wins, a tie), each annotator's first verdict there
(:func:`raters.one_per_rater_item`).

A judge's distribution: from its confidence (:func:`ties.answer_distribution`). Its distance to the
humans on an item is the total-variation distance

    TV(p, q) = 1/2 * sum over the three answers |p - q|

(0: the same distribution; 1: no answer in common), averaged over the items both have; CI by the pair
bootstrap. Beside it, the same distance for the judge's verdicts taken whole (all mass on the answer
given): what the confidences add.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from calibration.metrics.agreement import item_counts
from calibration.metrics.bootstrap import Estimate, PairBootstrap
from calibration.metrics.labels import LabelTable
from calibration.metrics.raters import one_per_rater_item

RULE = (
    "TV = 1/2 * sum |p_judge - p_humans| over (first system in name order wins, second wins, tie), per item, averaged over "
    "the items with a confidence and a human label; p_humans: the share of the item's annotators giving each answer"
)


@dataclass(frozen=True)
class HumanDistributions:
    """One entry per item the annotators labelled, sorted by item key."""

    keys: np.ndarray  # item keys (LabelTable.item)
    pair: np.ndarray  # pair codes
    criterion: np.ndarray
    sys_lo: np.ndarray
    sys_hi: np.ndarray
    counts: np.ndarray  # items x 3: first wins, second wins, tie

    @property
    def shares(self) -> np.ndarray:
        return self.counts / self.counts.sum(axis=1, keepdims=True)


def human_distributions(humans: LabelTable) -> HumanDistributions:
    h = one_per_rater_item(humans)
    keys, _, first_row, counts = item_counts(h.item, h.outcome)
    return HumanDistributions(keys, h.pair[first_row], h.criterion[first_row], h.sys_lo[first_row], h.sys_hi[first_row], counts)


def soft_label_rows(humans: LabelTable) -> list[dict]:
    """The export: per item, its pair, criterion, the two systems in name order, n and the counts and
    shares of each answer."""
    d = human_distributions(humans)
    v = humans.vocab
    systems, pairs, criteria = np.asarray(v.systems, dtype=object), np.asarray(v.pairs, dtype=object), np.asarray(v.criteria, dtype=object)
    columns = {
        "pair": pairs[d.pair].tolist(),
        "criterion": criteria[d.criterion].tolist(),
        "system_1": systems[d.sys_lo].tolist(),
        "system_2": systems[d.sys_hi].tolist(),
        "n": d.counts.sum(axis=1).tolist(),
        "count_1": d.counts[:, 0].tolist(),
        "count_2": d.counts[:, 1].tolist(),
        "count_tie": d.counts[:, 2].tolist(),
    }
    shares = np.round(d.shares, 6) if len(d.keys) else np.zeros((0, 3))
    columns.update(share_1=shares[:, 0].tolist(), share_2=shares[:, 1].tolist(), share_tie=shares[:, 2].tolist())
    names = list(columns)
    return [dict(zip(names, row)) for row in zip(*columns.values())]


@dataclass(frozen=True)
class SoftScore:
    judge: str
    tv: Estimate  # mean TV of the judge's distribution; n: items
    tv_hard: Estimate  # mean TV of its verdicts taken whole, on the same items
    rule: str = RULE

    def as_dict(self) -> dict:
        return asdict(self)


def soft_score(
    judge: str, keys: np.ndarray, dist: np.ndarray, outcome: np.ndarray, humans: HumanDistributions, rounds: int, seed: int
) -> SoftScore:
    """The judge's mean TV to the humans: `keys` its items (LabelTable.item), `dist` (n x 3) its answer
    distributions there (NaN rows: no confidence, left out), `outcome` its verdicts."""
    keys, dist, outcome = np.asarray(keys), np.asarray(dist, dtype=np.float64), np.asarray(outcome, dtype=np.int64)
    known = np.isfinite(dist).all(axis=1)
    found = np.isin(keys, humans.keys) & known
    pos = np.searchsorted(humans.keys, keys[found])
    q = humans.shares[pos]
    tv = 0.5 * np.abs(dist[found] - q).sum(axis=1)
    hard = np.zeros((int(found.sum()), 3))
    hard[np.arange(len(hard)), outcome[found]] = 1.0
    tv_hard = 0.5 * np.abs(hard - q).sum(axis=1)
    pairs = humans.pair[pos]
    boot = PairBootstrap(pairs, rounds, seed)
    ones = np.ones(len(pairs))
    (soft,), (whole,) = boot.ratios_many([(pairs, tv, ones, None, 1), (pairs, tv_hard, ones, None, 1)])
    return SoftScore(judge, soft, whole)
