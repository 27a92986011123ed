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
from scipy.sparse import csr_matrix
from scipy.sparse import triu as sparse_triu

from calibration.metrics._common import OUTCOME_CATEGORIES, as_float
from calibration.metrics.agreement import item_counts, kappa_estimate, strict_majority
from calibration.metrics.bootstrap import Estimate, PairBootstrap, percentile_ci
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


def _one_per_rater_item(t: LabelTable) -> LabelTable:
    span = int(t.item.max()) + 1 if len(t) else 1
    _, first = np.unique(t.rater.astype(np.int64) * span + t.item, return_index=True)
    return t.select(np.isin(np.arange(len(t)), first))


def _sharing_pairs(rater: np.ndarray, item: np.ndarray, order: list[int]) -> list[tuple[int, int]]:
    """The two raters (in ``order``, as ``combinations(order, 2)`` gives them) of every pair with an
    item in common: the rater x item incidence matrix times its transpose, instead of a set
    intersection for each of the n(n-1)/2 pairs (80,000 of them for 400 crowd raters)."""
    position = np.full(int(rater.max()) + 1, -1, dtype=np.int64)
    position[order] = np.arange(len(order))
    _, item_code = np.unique(item, return_inverse=True)
    incidence = csr_matrix((np.ones(len(item)), (position[rater], item_code.reshape(-1))), shape=(len(order), int(item_code.max()) + 1))
    shared = sparse_triu(incidence @ incidence.T, k=1).tocoo()
    return [(order[a], order[b]) for a, b in sorted(zip(shared.row.tolist(), shared.col.tolist()))]


def rater_pairs(labels: LabelTable | Iterable[LabelRow], rounds: int = 1000, seed: int = 0) -> list[RaterPair]:
    """Cohen's kappa and raw agreement for every two raters with items in common (names in order)."""
    t = _one_per_rater_item(as_table(labels))
    if not len(t):
        return []
    v = t.vocab
    codes = t.outcome.astype(np.int64)
    item = t.item
    present = sorted(np.unique(t.rater).tolist(), key=lambda r: v.raters[r])
    # Each rater's rows in the order of their items (a rater has one row per item).
    by_rater = np.lexsort((item, t.rater))
    bounds = np.searchsorted(t.rater[by_rater], np.arange(int(t.rater.max()) + 2))
    rows = {r: by_rater[bounds[r] : bounds[r + 1]] for r in present}
    out = []
    for x, y in _sharing_pairs(t.rater, item, present):
        rx, ry = rows[x], rows[y]
        ix, iy = rx[np.isin(item[rx], item[ry])], ry[np.isin(item[ry], item[rx])]
        pairs = t.pair[ix]
        boot = PairBootstrap(pairs, rounds, seed)
        same = (codes[ix] == codes[iy]).astype(float)
        out.append(
            RaterPair(
                v.raters[x],
                v.raters[y],
                kappa_estimate(pairs, codes[ix], codes[iy], OUTCOME_CATEGORIES, boot),
                boot.ratios(pairs, same, np.ones(len(same)))[0],
            )
        )
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
    t = _one_per_rater_item(as_table(labels))
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
    t = _one_per_rater_item(as_table(labels))
    v = t.vocab
    _, inv, _, counts = item_counts(t.item, t.outcome)
    others = counts[inv].copy()
    others[np.arange(len(t)), t.outcome] -= 1  # the item's counts without this rater's own verdict
    has, majority = strict_majority(others)
    present = sorted(np.unique(t.rater).tolist(), key=lambda r: v.raters[r])
    estimates = []
    for r in present:
        m = (t.rater == r) & has
        boot = PairBootstrap(t.pair[m], rounds, seed)
        same = (t.outcome[m] == majority[m]).astype(float)
        estimates.append((v.raters[r], boot.ratios(t.pair[m], same, np.ones(len(same)))[0]))
    values = [e.value for _, e in estimates if e.value is not None]
    median = float(np.median(values)) if values else None
    return [RaterVsOthers(name, e, median is not None and e.ci_high is not None and e.ci_high < median) for name, e in estimates]
