"""Clustered bootstrap of statistics that are functions of sums: the engine of the pointwise figures.

A figure is computed from per-row *terms* (a row is one comparison: a rater's answer against its
reference, or one item of a panel), summed within each cluster (an article or a topic: the answers
of one article are not independent) and group (a criterion, an annotator). The bootstrap draws
clusters with replacement with the seeded draw counts of :mod:`.bootstrap` (the same draws for
every figure on the same clusters, so differences of two figures get a paired interval), sums the
terms of the drawn clusters and applies the figure's function to every round at once
(:mod:`.pointwise_math`). CIs are the 2.5/97.5 percentiles; rounds where a figure is undefined are
ignored.

Every figure comes per group and pooled over the groups (the sum of all groups' terms).

Pure numpy/scipy, no Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np
from scipy.sparse import csc_matrix, csr_matrix, issparse

from calibration.metrics._common import as_float
from calibration.metrics.bootstrap import Estimate, PairBootstrap, draw_count_blocks

CHUNK_CELLS = 4_000_000  # rounds x groups x terms resampled at once


def cluster_bootstrap(cluster_codes: np.ndarray, rounds: int, seed: int) -> PairBootstrap:
    """The bootstrap over every cluster code given (pass all clusters of a table, so that all its
    figures share one set of draws)."""
    return PairBootstrap(np.asarray(cluster_codes, dtype=np.int64), rounds, seed)


def percentile_ci(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2.5/97.5 percentiles of each column of (rounds x k), ignoring NaN rounds: the same numbers as
    ``bootstrap.percentile_ci`` (numpy's linear interpolation), by one sort of the whole array
    rather than nanpercentile's column-by-column loop."""
    rounds, k = samples.shape
    if rounds == 0:
        return np.full(k, np.nan), np.full(k, np.nan)
    ordered = np.sort(samples, axis=0)  # NaN last
    valid = rounds - np.isnan(samples).sum(axis=0)
    columns = np.arange(k)
    out = []
    for q in (0.025, 0.975):
        position = np.maximum(valid - 1, 0) * q
        below = np.floor(position).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(valid - 1, 0))
        frac = position - below
        low, high = ordered[below, columns], ordered[above, columns]
        value = np.where(frac > 0, low + (high - low) * frac, low)
        out.append(np.where(valid > 0, value, np.nan))
    return out[0], out[1]


@dataclass(frozen=True, eq=False)
class Computed:
    """One figure per group and pooled (last entry): point values, finalized bootstrap rounds
    (rounds x groups + 1), the comparisons each rests on and the clusters holding them."""

    values: np.ndarray
    samples: np.ndarray
    n: np.ndarray
    clusters: np.ndarray

    @cached_property
    def _ci(self) -> tuple[np.ndarray, np.ndarray]:
        return percentile_ci(self.samples)

    def estimate(self, g: int = -1) -> Estimate:
        value = as_float(self.values[g])
        n, clusters = int(round(self.n[g])), int(self.clusters[g])
        if value is None or n == 0:
            return Estimate(None, n, n_pairs=clusters)
        lo, hi = self._ci
        return Estimate(value, n, as_float(lo[g]), as_float(hi[g]), clusters)

    def minus(self, other: Computed) -> Computed:
        """This figure minus ``other`` round by round (same draws): a paired difference."""
        return Computed(self.values - other.values, self.samples - other.samples, self.n, self.clusters)


def _resample(boot: PairBootstrap, per_unit) -> np.ndarray:
    """(rounds x k) sums of the drawn clusters' rows of ``per_unit`` (units x k, dense or sparse)."""
    if not issparse(per_unit):
        return boot.resample(per_unit)
    transposed = per_unit.T.tocsr()
    blocks = [np.asarray((transposed @ c.T).T) for c in draw_count_blocks(boot.n_units, boot.rounds, boot.seed)]
    return blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=0)


def compute(
    boot: PairBootstrap,
    cluster_codes: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    terms,
    count: np.ndarray,
    figures: dict[str, Callable[[np.ndarray], np.ndarray]],
) -> dict[str, Computed]:
    """Each of ``figures`` (a function of summed terms (..., k) -> (...)) per group and pooled.

    ``terms``: (rows x k), dense or sparse; ``count``: per row, what the figure's n counts
    (comparisons, items); ``group``: per row, its group code in [0, n_groups)."""
    rows = len(count)
    units, n_units = boot.unit_index(np.asarray(cluster_codes, dtype=np.int64)), boot.n_units
    key = units * n_groups + np.asarray(group, dtype=np.int64)
    indicator = csr_matrix((np.ones(rows), (key, np.arange(rows))), shape=(n_units * n_groups, rows))
    summed = indicator @ terms
    k = summed.shape[1]
    # (units x groups * k): a contingency table per cluster and group stays sparse (it can be wide:
    # a scale's points times the distinct means of the others' answers)
    if issparse(summed):
        per_unit = csc_matrix(summed.reshape((n_units, n_groups * k)))
        total = np.asarray(per_unit.sum(axis=0)).reshape(n_groups, k)
    else:
        per_unit = np.asarray(summed).reshape(n_units, n_groups * k)
        total = per_unit.sum(axis=0).reshape(n_groups, k)
    counts = np.bincount(key, weights=np.asarray(count, dtype=np.float64), minlength=n_units * n_groups).reshape(n_units, n_groups)
    pooled_total = total.sum(axis=0)
    values = {name: np.append(fn(total), fn(pooled_total)) for name, fn in figures.items()}
    n = np.append(counts.sum(axis=0), counts.sum())
    clusters = np.append((counts > 0).sum(axis=0), (counts.sum(axis=1) > 0).sum())
    rounds = boot.rounds if n_units else 0
    samples = {name: np.zeros((rounds, n_groups + 1)) for name in figures}
    if rounds:
        pooled = np.zeros((rounds, k))
        step = max(1, CHUNK_CELLS // (rounds * max(k, 1)))
        for start in range(0, n_groups, step):
            stop = min(n_groups, start + step)
            drawn = _resample(boot, per_unit[:, start * k : stop * k]).reshape(rounds, stop - start, k)
            pooled += drawn.sum(axis=1)
            for name, fn in figures.items():
                samples[name][:, start:stop] = fn(drawn)
        for name, fn in figures.items():
            samples[name][:, -1] = fn(pooled)
    return {name: Computed(values[name], samples[name], n, clusters) for name in figures}


def by_group(computed: dict[str, Computed], names: tuple[str, ...], present: np.ndarray) -> tuple[dict, dict]:
    """(pooled figures, {group name: figures}) from :func:`compute`'s result, for the groups whose
    flag in ``present`` is set (groups with no comparison are left out)."""
    pooled = {key: c.estimate(-1) for key, c in computed.items()}
    groups = {}
    for g, name in enumerate(names):
        if present[g]:
            groups[name] = {key: c.estimate(g) for key, c in computed.items()}
    return pooled, groups


def sparse_cells(cells: np.ndarray, weights: np.ndarray, n_cells: int) -> csr_matrix:
    """(rows x n_cells) terms with ``weights[r, j]`` in column ``cells[r, j]`` (a contingency-table
    contribution per row; ``cells`` and ``weights`` are (rows,) or (rows x j))."""
    cells, weights = np.atleast_2d(cells.T).T, np.atleast_2d(np.asarray(weights, dtype=np.float64).T).T
    rows = np.repeat(np.arange(cells.shape[0]), cells.shape[1])
    return csr_matrix((weights.ravel(), (rows, cells.ravel())), shape=(cells.shape[0], n_cells))
