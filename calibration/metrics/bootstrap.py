"""Estimates and the pair bootstrap: seeded draw counts shared by every figure on the same pairs."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np
from scipy.sparse import csr_matrix, issparse

from calibration.metrics._common import MIN_PAIRS_FOR_CI, SMALL_N, as_float

# --------------------------------------------------------------------------
# estimates and the pair bootstrap
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A figure with its n, the pairs it rests on (the bootstrap's units) and its 95% bootstrap CI
    (None when undefined)."""

    value: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    n_pairs: int | None = None  # None: not counted
    small_n: bool = field(init=False)

    def __post_init__(self) -> None:
        # The bootstrap resamples pairs: what makes an estimate shaky is how few pairs it rests on.
        object.__setattr__(self, "small_n", (self.n if self.n_pairs is None else self.n_pairs) < SMALL_N)

    @property
    def ci(self) -> tuple[float, float] | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_low, self.ci_high)

    @property
    def too_few_pairs(self) -> bool:
        """A figure whose interval is withheld: it rests on fewer than MIN_PAIRS_FOR_CI pairs."""
        return self.value is not None and self.n_pairs is not None and self.n_pairs < MIN_PAIRS_FOR_CI

    @property
    def shown_ci(self) -> tuple[float, float] | None:
        """The CI as the report shows it: None when there are too few pairs for an interval."""
        return None if self.too_few_pairs else self.ci

    def as_dict(self) -> dict:
        return asdict(self)


CACHE_CELLS = 8_000_000  # rounds x units up to which the draw counts are kept as floats (64 MB)
_COMPACT_CELLS = 64_000_000  # up to which they are kept as bytes (64 MB), in blocks of rounds
CHUNK_CELLS = 4_000_000  # otherwise they are regenerated in blocks of rounds of this size
_SMALL_CELLS = 256_000  # up to which (and 255 units, so that a count fits a byte) many sizes are kept, as bytes
_SPARSE_MIN_COLUMNS = 32  # per-unit statistics this wide and mostly zero are resampled as a sparse matrix
_DENSE_MAX_COLUMNS = 256  # ... unless they are at most this wide and their sums exact (`PairBootstrap.resample`)
_FILL_CELLS = 1 << 18  # draws turned into counts this many at a time (2 MB of indices: they stay in the cache)
_KEPT_BYTES = 64_000_000  # the draw counts of up to CACHE_CELLS cells also kept as bytes, this many in all


def _fill_counts(rng: np.random.Generator, out: np.ndarray) -> np.ndarray:
    """Fills `out` (rounds x n_units) with draw counts: round r draws ``n_units`` units uniformly
    with replacement. The index matrix is drawn a few rows at a time (the generator gives the same
    numbers in any split of one stream), and each block's counts go straight into `out`: no
    rounds x n_units temporaries, which cost more than the drawing itself at thousands of units."""
    rounds, n_units = out.shape
    step = max(1, _FILL_CELLS // max(n_units, 1))
    for start in range(0, rounds, step):
        size = min(step, rounds - start)
        draws = rng.integers(0, n_units, size=(size, n_units), dtype=np.int64)
        draws += (np.arange(size, dtype=np.int64) * n_units)[:, None]
        out[start : start + size].reshape(-1)[:] = np.bincount(draws.ravel(), minlength=size * n_units)
    return out


class _KeptCounts:
    """Draw counts as bytes, kept up to `_KEPT_BYTES` in all (the least recently used go first).

    A report bootstraps every judge's pairs in several places (its agreement, position and length
    figures, its Bradley-Terry fit, its win rates), on threads of their own: the eight float copies
    of `draw_counts` keep too few sizes for them, and regenerating a judge's counts took ten times as
    long as widening its bytes."""

    def __init__(self, budget: int) -> None:
        self.budget, self.size = budget, 0
        self.items: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple) -> np.ndarray | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def put(self, key: tuple, counts: np.ndarray) -> None:
        if counts.max(initial=0) > 255:
            return  # never at the sizes kept (a count is ~Poisson(1)); regenerated then
        packed = counts.astype(np.uint8)
        with self.lock:
            if key in self.items or packed.nbytes > self.budget:
                return
            self.items[key] = packed
            self.size += packed.nbytes
            while self.size > self.budget:
                self.size -= self.items.popitem(last=False)[1].nbytes

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.size = 0


_kept = _KeptCounts(_KEPT_BYTES)


def clear_draw_caches() -> None:
    """Forgets every kept draw count (benchmarks time them cold)."""
    draw_counts.cache_clear()
    _small_draw_counts.cache_clear()
    _compact_blocks.cache_clear()
    _kept.clear()


@lru_cache(maxsize=8)
def draw_counts(n_units: int, rounds: int, seed: int) -> np.ndarray:
    """(rounds x n_units) how often each unit is drawn in each bootstrap round.

    Round r draws ``n_units`` units uniformly with replacement (an index
    matrix of shape rounds x n_units); the index matrix is turned into counts
    so that any per-unit statistic X (n_units x k) is resampled as ``C @ X``.
    """
    key = (n_units, rounds, seed)
    kept = _kept.get(key) if rounds * n_units <= CACHE_CELLS else None
    if kept is not None:
        counts = kept.astype(np.float64)
    else:
        counts = _fill_counts(np.random.default_rng(seed), np.empty((rounds, n_units)))
        if rounds * n_units <= CACHE_CELLS:
            _kept.put(key, counts)
    counts.flags.writeable = False
    return counts


@lru_cache(maxsize=256)
def _small_draw_counts(n_units: int, rounds: int, seed: int) -> np.ndarray:
    """`draw_counts` as bytes (a unit is drawn at most ``n_units`` <= 255 times in a round), kept for
    many sizes at once: every two raters of a table have their own number of shared pairs, and
    regenerating the draws took longer than the figures (at most 256 x 256 KB)."""
    counts = _fill_counts(np.random.default_rng(seed), np.empty((rounds, n_units), dtype=np.uint8))
    counts.flags.writeable = False
    return counts


def _generated_blocks(n_units: int, rounds: int, seed: int, dtype=np.float64):
    rng = np.random.default_rng(seed)
    step = max(1, CHUNK_CELLS // n_units)
    for start in range(0, rounds, step):
        size = min(step, rounds - start)
        yield _fill_counts(rng, np.empty((size, n_units), dtype=dtype))


@lru_cache(maxsize=2)
def _compact_blocks(n_units: int, rounds: int, seed: int) -> tuple[np.ndarray, ...]:
    """The blocks of `_generated_blocks` as bytes: a unit is drawn far fewer than 256 times in a
    round of at least `CACHE_CELLS / rounds` draws (a count is ~Poisson(1))."""
    blocks = tuple(_generated_blocks(n_units, rounds, seed, np.uint16))
    if max(int(b.max()) for b in blocks) > 255:
        raise OverflowError("a unit drawn more than 255 times in one round")
    return tuple(b.astype(np.uint8) for b in blocks)


def draw_count_blocks(n_units: int, rounds: int, seed: int):
    """The draw counts in blocks of rounds: cached whole when small, cached as bytes when
    middling (campaigns of tens of thousands of pairs), regenerated when larger. The same
    counts whichever way."""
    cells = rounds * n_units
    if cells <= min(_SMALL_CELLS, CACHE_CELLS) and n_units <= 255:
        yield _small_draw_counts(n_units, rounds, seed).astype(np.float64)
    elif cells <= CACHE_CELLS:
        yield draw_counts(n_units, rounds, seed)
    elif cells <= _COMPACT_CELLS:
        for block in _compact_blocks(n_units, rounds, seed):
            yield block.astype(np.float64)
    else:
        yield from _generated_blocks(n_units, rounds, seed)


def percentile_ci(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2.5/97.5 percentiles along axis 0, ignoring NaN rounds (undefined)."""
    if samples.shape[0] == 0:
        nan = np.full(samples.shape[1:], np.nan)
        return nan, nan
    # numpy's nanpercentile takes the columns one at a time, in Python; a column without NaN gets the
    # same ends from percentile, which takes them all at once. A column with no defined round gets
    # NaN without asking numpy, which would warn (and silencing a warning changes the process's
    # warning filters: not safe while other threads compute).
    if samples.ndim == 1:
        if np.isnan(samples).all():
            return np.float64(np.nan), np.float64(np.nan)
        lo, hi = np.nanpercentile(samples, [2.5, 97.5], axis=0)
        return lo, hi
    nan = np.isnan(samples)
    whole, empty = ~nan.any(axis=0), nan.all(axis=0)
    lo, hi = np.full(samples.shape[1:], np.nan), np.full(samples.shape[1:], np.nan)
    if whole.any():
        lo[whole], hi[whole] = np.percentile(samples[:, whole], [2.5, 97.5], axis=0)
    partial = ~whole & ~empty
    if partial.any():
        lo[partial], hi[partial] = np.nanpercentile(samples[:, partial], [2.5, 97.5], axis=0)
    return lo, hi


def exact_sums(per_unit: np.ndarray, n_units: int) -> bool:
    """Whether every resampled sum of this per-unit statistic is exact whatever the order of its
    terms: multiples of 1/64 (counts, halves: the labels' statistics without weights) small enough
    that a round's sum, n_units draws of them, stays an integer number of 64ths below 2**52."""
    scaled = np.asarray(per_unit, dtype=np.float64) * 64.0
    if not scaled.size:
        return True
    return bool(np.abs(scaled).max() * max(n_units, 1) < 2.0**52 and np.array_equal(scaled, np.rint(scaled)))


class PairBootstrap:
    """Bootstrap over a fixed set of pair codes (the units)."""

    def __init__(self, pair_codes: np.ndarray, rounds: int, seed: int) -> None:
        self.units = np.unique(pair_codes)
        self.rounds = int(rounds) if len(self.units) else 0
        self.seed = seed

    @property
    def n_units(self) -> int:
        return int(len(self.units))

    def unit_index(self, pair_codes: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.units, pair_codes)

    def per_unit(self, pair_codes: np.ndarray, values: np.ndarray, group=None, n_groups: int = 1) -> np.ndarray:
        """Sum ``values`` (rows, or rows x k) into (units x n_groups[*k])."""
        u = self.unit_index(pair_codes)
        key = u * n_groups + (0 if group is None else np.asarray(group, dtype=np.int64))
        size = self.n_units * n_groups
        values = np.asarray(values, dtype=np.float64)
        if values.ndim == 1:
            out = np.bincount(key, weights=values, minlength=size)
            return out.reshape(self.n_units, n_groups)
        cols = [np.bincount(key, weights=values[:, j], minlength=size) for j in range(values.shape[1])]
        return np.stack(cols, axis=1).reshape(self.n_units, n_groups * values.shape[1])

    def resample(self, per_unit: np.ndarray) -> np.ndarray:
        """(rounds x k) sums of a (units x k) per-unit statistic.

        A wide statistic that is mostly zero (a Bradley-Terry win matrix per pair: two cells of
        S x S) is multiplied as a sparse matrix, in time proportional to its non-zero cells; it may
        come as a scipy sparse matrix already.
        """
        if self.rounds <= 0:
            return np.zeros((0,) + per_unit.shape[1:])
        if issparse(per_unit):
            transposed = csr_matrix(per_unit.T)
            blocks = [(transposed @ c.T).T for c in draw_count_blocks(self.n_units, self.rounds, self.seed)]
            return blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=0)
        wide = per_unit.ndim == 2 and per_unit.shape[1] >= _SPARSE_MIN_COLUMNS
        # Up to _DENSE_MAX_COLUMNS columns the dense product is the quicker (the sparse one copies the
        # draw counts transposed); taken only when the sums are exact, so that no figure moves.
        narrow_exact = wide and per_unit.shape[1] <= _DENSE_MAX_COLUMNS and exact_sums(per_unit, self.n_units)
        if wide and not narrow_exact and np.count_nonzero(per_unit) * 8 < per_unit.size:
            transposed = csr_matrix(per_unit.T)
            blocks = [(transposed @ c.T).T for c in draw_count_blocks(self.n_units, self.rounds, self.seed)]
        else:
            blocks = [c @ per_unit for c in draw_count_blocks(self.n_units, self.rounds, self.seed)]
        return blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=0)

    def resample_together(self, per_units: list[np.ndarray]) -> list[np.ndarray]:
        """`resample` of each (units x k) statistic, in one product when every sum of theirs is exact
        in any order (`exact_sums`: then each gets the very figures of its own product), else one
        product each."""
        if len(per_units) > 1 and self.rounds > 0 and all(exact_sums(p, self.n_units) for p in per_units):
            joined = self.resample(np.concatenate(per_units, axis=1))
            return np.split(joined, np.cumsum([p.shape[1] for p in per_units])[:-1], axis=1)
        return [self.resample(p) for p in per_units]

    def ratios(self, pair_codes, numer, denom, group=None, n_groups: int = 1) -> list[Estimate]:
        """Ratio-of-sums estimates (one per group) with pair-bootstrap CIs."""
        return self.ratios_many([(pair_codes, numer, denom, group, n_groups)])[0]

    def ratios_many(self, specs: list[tuple]) -> list[list[Estimate]]:
        """`ratios` of each ``(pair_codes, numer, denom, group, n_groups)`` on these units, their
        resampled sums taken together (`resample_together`) and their percentiles at once."""
        nums = [self.per_unit(codes, numer, group, n_groups) for codes, numer, _, group, n_groups in specs]
        dens = [self.per_unit(codes, denom, group, n_groups) for codes, _, denom, group, n_groups in specs]
        widths = [n_groups for *_, n_groups in specs]
        if self.rounds > 0:
            resampled = self.resample_together(nums + dens)
            bn, bd = np.concatenate(resampled[: len(specs)], axis=1), np.concatenate(resampled[len(specs) :], axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                lo, hi = percentile_ci(np.where(bd > 0, bn / np.where(bd > 0, bd, 1), np.nan))
        else:
            lo = hi = np.full(sum(widths), np.nan)
        out, start = [], 0
        for num, den, width in zip(nums, dens, widths):
            num_t, den_t = num.sum(axis=0), den.sum(axis=0)
            pairs_t = (den > 0).sum(axis=0)
            estimates = []
            for g in range(width):
                if den_t[g] <= 0:
                    estimates.append(Estimate(None, 0, n_pairs=0))
                else:
                    ends = as_float(lo[start + g]), as_float(hi[start + g])
                    estimates.append(Estimate(float(num_t[g] / den_t[g]), int(round(den_t[g])), *ends, int(pairs_t[g])))
            out.append(estimates)
            start += width
        return out


def grouped_ratios(group, pair_codes, numer, denom, n_groups: int, rounds: int, seed: int) -> list[Estimate]:
    """For each group g < ``n_groups`` (a rater, say), the ratio estimate of its rows alone,
    ``bootstrap_ratio(pair_codes[group == g], ...)``, computed together: the per-pair sums of all
    groups in one pass, and one product for the groups with as many pairs. When the sums are not
    exact in any order (`exact_sums`), one group at a time, as before."""
    group, pair = np.asarray(group, dtype=np.int64), np.asarray(pair_codes, dtype=np.int64)
    numer, denom = np.asarray(numer, dtype=np.float64), np.asarray(denom, dtype=np.float64)
    span = int(pair.max()) + 1 if len(pair) else 1
    units, unit = np.unique(group * span + pair, return_inverse=True)
    per_unit = np.stack(
        [np.bincount(unit, weights=numer, minlength=len(units)), np.bincount(unit, weights=denom, minlength=len(units))], axis=1
    )
    unit_group = units // span
    n_units = np.bincount(unit_group, minlength=n_groups)
    if not exact_sums(per_unit, int(n_units.max(initial=1))):
        return [bootstrap_ratio(pair[group == g], numer[group == g], denom[group == g], rounds, seed) for g in range(n_groups)]
    first_unit = np.concatenate([[0], np.cumsum(n_units)[:-1]]).astype(np.int64)
    totals = np.stack([np.bincount(unit_group, weights=per_unit[:, k], minlength=n_groups) for k in (0, 1)], axis=1)
    with_pairs = np.bincount(unit_group, weights=per_unit[:, 1] > 0, minlength=n_groups)
    ends = np.full((n_groups, 2), np.nan)
    for size in np.unique(n_units).tolist() if rounds > 0 else []:
        if size == 0:
            continue
        members = np.flatnonzero(n_units == size)
        at = first_unit[members][None, :] + np.arange(size)[:, None]  # units x members
        columns = np.concatenate([per_unit[at, 0], per_unit[at, 1]], axis=1)
        b = np.concatenate([c @ columns for c in draw_count_blocks(size, rounds, seed)])
        bn, bd = b[:, : len(members)], b[:, len(members) :]
        with np.errstate(invalid="ignore", divide="ignore"):
            ends[members, 0], ends[members, 1] = percentile_ci(np.where(bd > 0, bn / np.where(bd > 0, bd, 1), np.nan))
    out = []
    for g in range(n_groups):
        num_t, den_t = totals[g]
        if den_t <= 0:
            out.append(Estimate(None, 0, n_pairs=0))
        else:
            out.append(Estimate(float(num_t / den_t), int(round(den_t)), as_float(ends[g, 0]), as_float(ends[g, 1]), int(with_pairs[g])))
    return out


def bootstrap_ratio(pair_codes, numer, denom, rounds: int, seed: int) -> Estimate:
    return PairBootstrap(pair_codes, rounds, seed).ratios(pair_codes, numer, denom)[0]
