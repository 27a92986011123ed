"""Agreement among raters as dataset papers report it: Cohen's kappa for every two raters,
Fleiss' kappa, and each rater against the majority of the others.

Works for any raters of a table: annotators (``table.humans()``) or judges (merged swapped
runs), which gives the judge-vs-judge matrix. A rater's verdict on an item is its first one
there. Kappa categories are: the first of the pair's systems in name order wins, the second wins, a tie (as in
:func:`agreement`; see ``_common.OUTCOME_CATEGORIES`` for why not the system's name). CIs are
percentile intervals of the pair bootstrap, as everywhere in this package.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable

import numpy as np

from calibration.metrics._common import OUTCOME_CATEGORIES, as_float
from calibration.metrics.agreement import item_counts, kappa_value, strict_majority
from calibration.metrics.bootstrap import CHUNK_CELLS, Estimate, PairBootstrap, draw_count_blocks, grouped_ratios, percentile_ci
from calibration.metrics.labels import LabelRow, LabelTable, as_table


@dataclass(frozen=True)
class RaterPair:
    """Two raters on the items both rated: Cohen's kappa and the share of items they agree on."""

    rater_a: str
    rater_b: str
    kappa: Estimate
    agreement: Estimate

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FleissKappa:
    """Fleiss' kappa over the items rated by exactly ``raters_per_item`` raters (the most common
    number, at least 2; the larger on a tie); ``n_items_left_out`` items had another number of raters."""

    kappa: Estimate
    raters_per_item: int | None
    n_items_left_out: int

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RaterVsOthers:
    """One rater against the strict majority of the other raters, on items where they have one.

    ``outlier``: the CI's upper end is below the median agreement of all raters, i.e. this
    rater agrees with the rest clearly less than a typical rater does.
    """

    rater: str
    agreement: Estimate
    outlier: bool

    def as_dict(self) -> dict:
        return asdict(self)


def one_per_rater_item(t: LabelTable) -> LabelTable:
    span = int(t.item.max()) + 1 if len(t) else 1
    _, first = np.unique(t.rater.astype(np.int64) * span + t.item, return_index=True)
    return t.select(np.isin(np.arange(len(t)), first))


def _shared_rows(rater: np.ndarray, item: np.ndarray, position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows (x, y) of every two raters on one item, x's rater before y's in ``position`` (one row
    per rater and item): the rows sorted by item and position, each paired with those after it on
    the same item (one step of the offset at a time: a few dozen raters share an item at most)."""
    order = np.lexsort((position[rater], item))
    sorted_item = item[order]
    xs, ys = [], []
    for step in range(1, len(order)):
        same = sorted_item[step:] == sorted_item[:-step]
        if not same.any():
            break
        at = np.flatnonzero(same)
        xs.append(order[at])
        ys.append(order[at + step])
    if not xs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(xs), np.concatenate(ys)


def _resampled_ends(block: np.ndarray, rounds: int, seed: int, members: np.ndarray, kappa_ci: np.ndarray, agree_ci: np.ndarray) -> None:
    """The CI ends of the rater pairs `members`, each with the same number of units: `block`
    (members x units x columns) holds their per-unit sums, resampled side by side in one product."""
    k = OUTCOME_CATEGORIES
    members_n, size, columns = block.shape
    per_unit = block.transpose(1, 0, 2).reshape(size, members_n * columns)
    b = np.concatenate([c @ per_unit for c in draw_count_blocks(size, rounds, seed)], axis=0)
    b = b.reshape(len(b), members_n, columns)
    lo, hi = percentile_ci(kappa_value(b[..., 0], b[..., 1], b[..., 2 : 2 + k], b[..., 2 + k :]))
    kappa_ci[members, 0], kappa_ci[members, 1] = lo, hi
    with np.errstate(invalid="ignore", divide="ignore"):
        lo, hi = percentile_ci(np.where(b[..., 1] > 0, b[..., 0] / np.where(b[..., 1] > 0, b[..., 1], 1), np.nan))
    agree_ci[members, 0], agree_ci[members, 1] = lo, hi


def rater_pairs(labels: LabelTable | Iterable[LabelRow], rounds: int = 1000, seed: int = 0) -> list[RaterPair]:
    """Cohen's kappa and raw agreement for every two raters with items in common (names in order).

    All of them at once: the rows of every two raters on a shared item are found together, their
    per-pair sums (agreements, items, each side's categories: counts, so exact in any order) are
    taken in one pass, and the rater pairs sharing as many pairs resample them with one product of
    the same draw counts; each figure is the one `kappa_estimate` and `PairBootstrap.ratios` give
    for the two raters alone."""
    t = one_per_rater_item(as_table(labels))
    if not len(t):
        return []
    v = t.vocab
    item = t.item
    present = sorted(np.unique(t.rater).tolist(), key=lambda r: v.raters[r])
    position = np.full(len(v.raters), -1, dtype=np.int64)
    position[present] = np.arange(len(present))
    x, y = _shared_rows(t.rater, item, position)
    if not len(x):
        return []
    k = OUTCOME_CATEGORIES
    # One group per two raters, numbered in the order of combinations(present, 2); within it, its pairs (the units) in code order.
    combo = position[t.rater[x]] * len(present) + position[t.rater[y]]
    pair = t.pair[x].astype(np.int64)
    groups, group = np.unique(combo, return_inverse=True)
    units, unit = np.unique(group * (int(pair.max()) + 1) + pair, return_inverse=True)
    unit_group = units // (int(pair.max()) + 1)
    n_units = np.bincount(unit_group, minlength=len(groups))
    first_unit = np.concatenate([[0], np.cumsum(n_units)[:-1]])
    cx, cy = t.outcome[x].astype(np.int64), t.outcome[y].astype(np.int64)
    u = len(units)
    stats = np.empty((u, 2 + 2 * k))
    stats[:, 0] = np.bincount(unit, weights=(cx == cy).astype(float), minlength=u)
    stats[:, 1] = np.bincount(unit, minlength=u)
    stats[:, 2 : 2 + k] = np.bincount(unit * k + cx, minlength=u * k).reshape(u, k)
    stats[:, 2 + k :] = np.bincount(unit * k + cy, minlength=u * k).reshape(u, k)
    totals = np.zeros((len(groups), stats.shape[1]))
    np.add.at(totals, unit_group, stats)
    point = kappa_value(totals[:, 0], totals[:, 1], totals[:, 2 : 2 + k], totals[:, 2 + k :])
    kappa_ci = np.full((len(groups), 2), np.nan)
    agree_ci = np.full((len(groups), 2), np.nan)
    if rounds > 0:
        for size in np.unique(n_units).tolist():
            same_size = np.flatnonzero(n_units == size)
            # At most CHUNK_CELLS resampled sums at a time.
            for members in np.array_split(same_size, -(-len(same_size) * rounds * stats.shape[1] // CHUNK_CELLS)):
                _resampled_ends(stats[first_unit[members][:, None] + np.arange(size)], rounds, seed, members, kappa_ci, agree_ci)
    out = []
    for g, key in enumerate(groups.tolist()):
        a, b = present[key // len(present)], present[key % len(present)]
        n, pairs = int(totals[g, 1]), int(n_units[g])
        kappa = as_float(point[g])
        ci = (as_float(kappa_ci[g, 0]), as_float(kappa_ci[g, 1])) if rounds > 0 and kappa is not None else (None, None)
        agreement = Estimate(float(totals[g, 0] / totals[g, 1]), n, as_float(agree_ci[g, 0]), as_float(agree_ci[g, 1]), pairs)
        out.append(RaterPair(v.raters[a], v.raters[b], Estimate(kappa, n, *ci, pairs), agreement))
    return out


def _fleiss_value(p_bar_sum, n_items, column_sums, m: int) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        p_bar = p_bar_sum / n_items
        p_j = column_sums / (n_items * m)[..., None]
        p_e = (p_j**2).sum(axis=-1)
        k = (p_bar - p_e) / (1.0 - p_e)
    return np.where((n_items > 0) & (p_e < 1.0 - 1e-15), k, np.nan)


def fleiss_kappa(labels: LabelTable | Iterable[LabelRow], rounds: int = 1000, seed: int = 0) -> FleissKappa:
    """Fleiss' kappa on the items with the most common number m >= 2 of raters.

    Categories as for Cohen's kappa here: the first of the pair's systems in name order wins, the
    second wins, a tie.
    """
    t = one_per_rater_item(as_table(labels))
    codes = t.outcome.astype(np.int64)
    k = OUTCOME_CATEGORIES
    keys, first_row, inv = np.unique(t.item, return_index=True, return_inverse=True)
    counts = np.bincount(inv * k + codes, minlength=k * len(keys)).reshape(len(keys), k)
    raters = counts.sum(axis=1)
    several = raters[raters >= 2]
    if not len(several):
        return FleissKappa(Estimate(None, 0, n_pairs=0), None, int(len(keys)))
    counts_of_m = np.bincount(several)
    m = int(np.flatnonzero(counts_of_m == counts_of_m.max()).max())  # a tie: the larger number of raters
    keep = raters == m
    counts = counts[keep].astype(float)
    pairs = t.pair[first_row][keep]
    p_i = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    boot = PairBootstrap(pairs, rounds, seed)
    per_unit = boot.per_unit(pairs, np.column_stack([p_i, np.ones(len(p_i)), counts]))
    tot = per_unit.sum(axis=0)
    point = as_float(_fleiss_value(tot[0], np.asarray(tot[1]), tot[2:], m))
    ci = (None, None)
    if boot.rounds > 0 and point is not None:
        b = boot.resample(per_unit)
        lo, hi = percentile_ci(_fleiss_value(b[:, 0], b[:, 1], b[:, 2:], m))
        ci = (as_float(lo), as_float(hi))
    return FleissKappa(Estimate(point, int(tot[1]), *ci, int((per_unit[:, 1] > 0).sum())), m, int(len(keys) - keep.sum()))


def raters_vs_others(labels: LabelTable | Iterable[LabelRow], rounds: int = 1000, seed: int = 0) -> list[RaterVsOthers]:
    """Each rater's agreement with the strict majority of the other raters of the same item."""
    t = one_per_rater_item(as_table(labels))
    v = t.vocab
    _, inv, _, counts = item_counts(t.item, t.outcome)
    others = counts[inv].copy()
    others[np.arange(len(t)), t.outcome] -= 1  # the item's counts without this rater's own verdict
    has, majority = strict_majority(others)
    present = sorted(np.unique(t.rater).tolist(), key=lambda r: v.raters[r])
    # Every rater at once: each rater's labels where the others have a majority, bootstrapped as if alone.
    position = np.full(len(v.raters), -1, dtype=np.int64)
    position[present] = np.arange(len(present))
    same = (t.outcome[has] == majority[has]).astype(float)
    found = grouped_ratios(position[t.rater[has]], t.pair[has], same, np.ones(len(same)), len(present), rounds, seed)
    estimates = [(v.raters[r], e) for r, e in zip(present, found)]
    values = [e.value for _, e in estimates if e.value is not None]
    median = float(np.median(values)) if values else None
    return [RaterVsOthers(name, e, median is not None and e.ci_high is not None and e.ci_high < median) for name, e in estimates]
