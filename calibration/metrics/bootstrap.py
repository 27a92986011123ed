"""Estimates and the pair bootstrap: seeded draw counts shared by every figure on the same pairs."""

from __future__ import annotations

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


def _counts_from_draws(draws: np.ndarray, n_units: int, dtype=np.float64) -> np.ndarray:
    rounds = draws.shape[0]
    flat = draws + (np.arange(rounds, dtype=np.int64) * n_units)[:, None]
    counts = np.bincount(flat.ravel(), minlength=rounds * n_units)
    return counts.reshape(rounds, n_units).astype(dtype)


@lru_cache(maxsize=8)
def draw_counts(n_units: int, rounds: int, seed: int) -> np.ndarray:
    """(rounds x n_units) how often each unit is drawn in each bootstrap round.

    Round r draws ``n_units`` units uniformly with replacement (an index
    matrix of shape rounds x n_units); the index matrix is turned into counts
    so that any per-unit statistic X (n_units x k) is resampled as ``C @ X``.
    """
    rng = np.random.default_rng(seed)
    counts = _counts_from_draws(rng.integers(0, n_units, size=(rounds, n_units), dtype=np.int64), n_units)
    counts.flags.writeable = False
    return counts


@lru_cache(maxsize=256)
def _small_draw_counts(n_units: int, rounds: int, seed: int) -> np.ndarray:
    """`draw_counts` as bytes (a unit is drawn at most ``n_units`` <= 255 times in a round), kept for
    many sizes at once: every two raters of a table have their own number of shared pairs, and
    regenerating the draws took longer than the figures (at most 256 x 256 KB)."""
    rng = np.random.default_rng(seed)
    counts = _counts_from_draws(rng.integers(0, n_units, size=(rounds, n_units), dtype=np.int64), n_units, np.uint8)
    counts.flags.writeable = False
    return counts


def _generated_blocks(n_units: int, rounds: int, seed: int, dtype=np.float64):
    rng = np.random.default_rng(seed)
    step = max(1, CHUNK_CELLS // n_units)
    for start in range(0, rounds, step):
        size = min(step, rounds - start)
        yield _counts_from_draws(rng.integers(0, n_units, size=(size, n_units), dtype=np.int64), n_units, dtype)


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
        if wide and np.count_nonzero(per_unit) * 8 < per_unit.size:
            transposed = csr_matrix(per_unit.T)
            blocks = [(transposed @ c.T).T for c in draw_count_blocks(self.n_units, self.rounds, self.seed)]
        else:
            blocks = [c @ per_unit for c in draw_count_blocks(self.n_units, self.rounds, self.seed)]
        return blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=0)

    def ratios(self, pair_codes, numer, denom, group=None, n_groups: int = 1) -> list[Estimate]:
        """Ratio-of-sums estimates (one per group) with pair-bootstrap CIs."""
        num = self.per_unit(pair_codes, numer, group, n_groups)
        den = self.per_unit(pair_codes, denom, group, n_groups)
        num_t, den_t = num.sum(axis=0), den.sum(axis=0)
        pairs_t = (den > 0).sum(axis=0)
        if self.rounds > 0:
            bn, bd = self.resample(num), self.resample(den)
            with np.errstate(invalid="ignore", divide="ignore"):
                lo, hi = percentile_ci(np.where(bd > 0, bn / np.where(bd > 0, bd, 1), np.nan))
        else:
            lo = hi = np.full(n_groups, np.nan)
        out = []
        for g in range(n_groups):
            n = int(round(den_t[g]))
            if den_t[g] <= 0:
                out.append(Estimate(None, 0, n_pairs=0))
            else:
                out.append(Estimate(float(num_t[g] / den_t[g]), n, as_float(lo[g]), as_float(hi[g]), int(pairs_t[g])))
        return out


def bootstrap_ratio(pair_codes, numer, denom, rounds: int, seed: int) -> Estimate:
    return PairBootstrap(pair_codes, rounds, seed).ratios(pair_codes, numer, denom)[0]
