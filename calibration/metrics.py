"""Calibration metrics for pairwise article comparisons.

Human annotators and LLM judges compare two systems' articles on one topic
(a *pair*) for each of the writing criteria; one verdict of one rater on one
item ``(pair, criterion)`` is a *label*.  This module measures how well a judge
agrees with the humans, how biased it is (position, length), how well humans
agree among themselves (the ceiling), and ranks the systems (Bradley-Terry).

Pure Python + numpy/scipy/choix, no Django: the ORM layer converts its rows into
a :class:`LabelTable` (columnar, integer-coded) and calls the functions below.

Conventions
-----------
* Every estimate is an :class:`Estimate` (value, n, 95% CI, ``small_n`` when
  n < 30).  Undefined figures (nothing to compare) are ``None``, never NaN.
* Confidence intervals are percentile intervals of a bootstrap over whole
  pairs: the pairs are resampled with replacement and every label of a drawn
  pair comes along (criteria of one pair share the same two articles, so they
  are not independent).  Draws are seeded (``seed=0``) and identical for every
  figure computed on the same set of pairs, which makes paired comparisons
  (``paired_difference``) use the same resampled pairs for both judges.
* Speed: per-pair sufficient statistics are aggregated once; a bootstrap is a
  (rounds x pairs) matrix of draw counts times a (pairs x k) statistics matrix.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

import choix
import numpy as np
from scipy import optimize, stats
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

__all__ = [
    "TIE",
    "SMALL_N",
    "Label",
    "Vocab",
    "LabelTable",
    "as_table",
    "Estimate",
    "Agreement",
    "PairedDifference",
    "PositionBias",
    "LengthBias",
    "HumanCeiling",
    "SystemScore",
    "BTResult",
    "TauResult",
    "WinRates",
    "JudgePoint",
    "Recommendation",
    "agreement",
    "paired_difference",
    "position_consistency",
    "first_position_rate",
    "position_bias",
    "merge_swapped",
    "prefers_longer",
    "length_bias",
    "human_ceiling",
    "bradley_terry",
    "bradley_terry_by_category",
    "kendall_tau",
    "win_rate_vs_reference",
    "pareto_frontier",
    "recommend",
]

TIE = "tie"
SMALL_N = 30
KINDS = ("human", "judge")

# relative outcome codes (relative to the canonical order of the pair's systems)
A_WINS, B_WINS, TIED = 0, 1, 2
# position / length codes: which of the two canonical systems; -1 = unknown
SYS_A, SYS_B, UNKNOWN = 0, 1, -1


# --------------------------------------------------------------------------
# data model
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Label:
    """One rater's verdict on one item, in row form (convenience input)."""

    pair: str
    criterion: str
    category: str
    rater: str
    rater_kind: str  # 'human' | 'judge'
    system_a: str
    system_b: str
    winner: str  # a system name or 'tie'
    first_system: str | None = None  # system shown in position 1, if known
    longer_system: str | None = None  # system whose article is longer, if known


@dataclass(frozen=True)
class Vocab:
    """Names behind the integer codes of a :class:`LabelTable`."""

    pairs: tuple[str, ...]
    criteria: tuple[str, ...]
    categories: tuple[str, ...]
    raters: tuple[str, ...]
    rater_kinds: tuple[str, ...]  # aligned with ``raters``
    systems: tuple[str, ...]

    @property
    def tie_code(self) -> int:
        """Code of 'tie' among winner codes (systems are 0..S-1)."""
        return len(self.systems)

    def winner_names(self) -> tuple[str, ...]:
        return self.systems + (TIE,)


_INT_COLUMNS = ("pair", "criterion", "category", "rater", "sys_a", "sys_b")
_SMALL_COLUMNS = ("outcome", "first", "longer")
_COLUMNS = _INT_COLUMNS + _SMALL_COLUMNS


@dataclass(frozen=True, eq=False)
class LabelTable:
    """Columnar, integer-coded labels.

    ``sys_a < sys_b`` is the canonical (name-sorted when built from names)
    order of the pair's systems.  ``outcome`` is 0 when ``sys_a`` wins, 1 when
    ``sys_b`` wins, 2 for a tie; ``first``/``longer`` are 0 (``sys_a``), 1
    (``sys_b``) or -1 (unknown).  All tables passed together to a metric must
    share a vocabulary; they are re-encoded onto a common one when they do not.
    """

    vocab: Vocab
    pair: np.ndarray
    criterion: np.ndarray
    category: np.ndarray
    rater: np.ndarray
    sys_a: np.ndarray
    sys_b: np.ndarray
    outcome: np.ndarray
    first: np.ndarray
    longer: np.ndarray

    def __post_init__(self) -> None:
        n = None
        for name in _COLUMNS:
            dtype = np.int32 if name in _INT_COLUMNS else np.int8
            arr = np.asarray(getattr(self, name))
            if arr.ndim != 1:
                arr = arr.reshape(-1)
            arr = arr.astype(dtype, copy=False)
            object.__setattr__(self, name, arr)
            if n is None:
                n = arr.shape[0]
            elif arr.shape[0] != n:
                raise ValueError(f"column {name!r} has {arr.shape[0]} rows, expected {n}")
        if n:
            self._check_range("pair", len(self.vocab.pairs))
            self._check_range("criterion", len(self.vocab.criteria))
            self._check_range("category", len(self.vocab.categories))
            self._check_range("rater", len(self.vocab.raters))
            self._check_range("sys_a", len(self.vocab.systems))
            self._check_range("sys_b", len(self.vocab.systems))
            if (self.sys_a == self.sys_b).any():
                raise ValueError("a pair must compare two different systems")
            if ((self.outcome < 0) | (self.outcome > 2)).any():
                raise ValueError("outcome codes must be 0 (a), 1 (b) or 2 (tie)")
            for name in ("first", "longer"):
                arr = getattr(self, name)
                if ((arr < -1) | (arr > 1)).any():
                    raise ValueError(f"{name} codes must be -1, 0 or 1")
        if len(self.vocab.rater_kinds) != len(self.vocab.raters):
            raise ValueError("rater_kinds must align with raters")
        bad = set(self.vocab.rater_kinds) - set(KINDS)
        if bad:
            raise ValueError(f"unknown rater kinds {sorted(bad)}")
        if TIE in self.vocab.systems:
            raise ValueError("'tie' cannot be a system name")

    def _check_range(self, name: str, size: int) -> None:
        arr = getattr(self, name)
        if arr.min() < 0 or arr.max() >= size:
            raise ValueError(f"column {name!r} has codes outside its vocabulary")

    # -- construction -----------------------------------------------------

    @classmethod
    def empty(cls, vocab: Vocab | None = None) -> "LabelTable":
        vocab = vocab or Vocab((), (), (), (), (), ())
        z = np.zeros(0, dtype=np.int32)
        return cls(vocab, *([z] * len(_COLUMNS)))

    @classmethod
    def from_labels(cls, labels: Iterable[Label]) -> "LabelTable":
        """Convert :class:`Label` rows into a table (vocabularies name-sorted)."""
        labels = list(labels)
        cols = {
            "pair": [x.pair for x in labels],
            "criterion": [x.criterion for x in labels],
            "category": [x.category for x in labels],
            "rater": [x.rater for x in labels],
            "rater_kind": [x.rater_kind for x in labels],
            "system_a": [x.system_a for x in labels],
            "system_b": [x.system_b for x in labels],
            "winner": [x.winner for x in labels],
            "first_system": [x.first_system for x in labels],
            "longer_system": [x.longer_system for x in labels],
        }
        return cls.from_columns(**cols)

    @classmethod
    def from_columns(
        cls,
        pair: Sequence[str],
        criterion: Sequence[str],
        category: Sequence[str],
        rater: Sequence[str],
        rater_kind: Sequence[str],
        system_a: Sequence[str],
        system_b: Sequence[str],
        winner: Sequence[str],
        first_system: Sequence[str | None] | None = None,
        longer_system: Sequence[str | None] | None = None,
    ) -> "LabelTable":
        """Build a table from string columns (vectorized; None = unknown)."""
        n = len(pair)

        def strings(values: Sequence[str | None] | None) -> np.ndarray:
            if values is None:
                return np.full(n, "", dtype=str)
            if len(values) != n:
                raise ValueError("all columns must have the same length")
            if not n:
                return np.zeros(0, dtype=str)
            return np.array(["" if x is None else str(x) for x in values], dtype=str)

        s_pair, s_crit, s_cat = strings(pair), strings(criterion), strings(category)
        s_rater, s_kind = strings(rater), strings(rater_kind)
        s_a, s_b, s_win = strings(system_a), strings(system_b), strings(winner)
        s_first, s_longer = strings(first_system), strings(longer_system)
        if n == 0:
            return cls.empty()
        lo = np.where(s_a <= s_b, s_a, s_b)
        hi = np.where(s_a <= s_b, s_b, s_a)
        if (lo == "").any():
            raise ValueError("system names must be non-empty")

        outcome = np.full(n, -1, dtype=np.int8)
        outcome[s_win == lo] = A_WINS
        outcome[s_win == hi] = B_WINS
        outcome[s_win == TIE] = TIED
        if (outcome < 0).any():
            i = int(np.flatnonzero(outcome < 0)[0])
            raise ValueError(f"winner {s_win[i]!r} is neither {lo[i]!r}, {hi[i]!r} nor 'tie'")

        def position(values: np.ndarray, what: str) -> np.ndarray:
            out = np.full(n, UNKNOWN, dtype=np.int8)
            out[values == lo] = SYS_A
            out[values == hi] = SYS_B
            bad = (out == UNKNOWN) & (values != "")
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{what} {values[i]!r} is not one of the pair's systems")
            return out

        systems, sys_codes = np.unique(np.concatenate([lo, hi]), return_inverse=True)
        pairs, pair_codes = np.unique(s_pair, return_inverse=True)
        crits, crit_codes = np.unique(s_crit, return_inverse=True)
        cats, cat_codes = np.unique(s_cat, return_inverse=True)
        raters, first_idx, rater_codes = np.unique(s_rater, return_index=True, return_inverse=True)
        kinds = s_kind[first_idx]
        if (s_kind != kinds[rater_codes]).any():
            raise ValueError("a rater must always have the same rater_kind")
        vocab = Vocab(
            tuple(pairs.tolist()),
            tuple(crits.tolist()),
            tuple(cats.tolist()),
            tuple(raters.tolist()),
            tuple(kinds.tolist()),
            tuple(systems.tolist()),
        )
        table = cls(
            vocab,
            pair_codes,
            crit_codes,
            cat_codes,
            rater_codes,
            sys_codes[:n],
            sys_codes[n:],
            outcome,
            position(s_first, "first_system"),
            position(s_longer, "longer_system"),
        )
        table.check_pairs()
        return table

    def check_pairs(self) -> None:
        """Raise if one pair id is used for two different system pairs."""
        if not len(self):
            return
        pa, pb = self.pair_systems()
        if (pa[self.pair] != self.sys_a).any() or (pb[self.pair] != self.sys_b).any():
            raise ValueError("a pair id must always compare the same two systems")

    @staticmethod
    def concat(*tables: "LabelTable") -> "LabelTable":
        tables = _align(*tables)
        if not tables:
            return LabelTable.empty()
        return LabelTable(
            tables[0].vocab,
            *[np.concatenate([getattr(t, c) for t in tables]) for c in _COLUMNS],
        )

    def to_labels(self) -> list[Label]:
        v = self.vocab
        out = []
        names = v.systems
        for i in range(len(self)):
            a, b = names[self.sys_a[i]], names[self.sys_b[i]]
            o = self.outcome[i]
            f, g = self.first[i], self.longer[i]
            out.append(
                Label(
                    pair=v.pairs[self.pair[i]],
                    criterion=v.criteria[self.criterion[i]],
                    category=v.categories[self.category[i]],
                    rater=v.raters[self.rater[i]],
                    rater_kind=v.rater_kinds[self.rater[i]],
                    system_a=a,
                    system_b=b,
                    winner=a if o == A_WINS else b if o == B_WINS else TIE,
                    first_system=None if f == UNKNOWN else (a if f == SYS_A else b),
                    longer_system=None if g == UNKNOWN else (a if g == SYS_A else b),
                )
            )
        return out

    # -- views ------------------------------------------------------------

    def __len__(self) -> int:
        return int(self.pair.shape[0])

    def select(self, mask: np.ndarray) -> "LabelTable":
        """Rows selected by a boolean mask or an index array (same vocabulary)."""
        return LabelTable(self.vocab, *[getattr(self, c)[mask] for c in _COLUMNS])

    def kind_mask(self, kind: str) -> np.ndarray:
        kinds = np.array([k == kind for k in self.vocab.rater_kinds], dtype=bool)
        return kinds[self.rater] if len(kinds) else np.zeros(len(self), dtype=bool)

    def humans(self) -> "LabelTable":
        return self.select(self.kind_mask("human"))

    def judges(self) -> "LabelTable":
        return self.select(self.kind_mask("judge"))

    def for_rater(self, name: str) -> "LabelTable":
        try:
            code = self.vocab.raters.index(name)
        except ValueError:
            return self.select(np.zeros(len(self), dtype=bool))
        return self.select(self.rater == code)

    def rater_names(self) -> list[str]:
        """Raters present in the table, in code order."""
        return [self.vocab.raters[i] for i in np.unique(self.rater)]

    @property
    def item(self) -> np.ndarray:
        """Integer item key: pair * n_criteria + criterion."""
        return self.pair.astype(np.int64) * max(len(self.vocab.criteria), 1) + self.criterion

    @property
    def winner(self) -> np.ndarray:
        """Winner as a global category: a system code, or ``vocab.tie_code``."""
        return _winner_codes(self.outcome, self.sys_a, self.sys_b, self.vocab.tie_code)

    def pair_systems(self) -> tuple[np.ndarray, np.ndarray]:
        """Per pair code, its (sys_a, sys_b) codes (-1 for pairs not present)."""
        pa = np.full(len(self.vocab.pairs), -1, dtype=np.int64)
        pb = np.full(len(self.vocab.pairs), -1, dtype=np.int64)
        pa[self.pair] = self.sys_a
        pb[self.pair] = self.sys_b
        return pa, pb


def _winner_codes(outcome, sys_a, sys_b, tie_code) -> np.ndarray:
    return np.where(outcome == A_WINS, sys_a, np.where(outcome == B_WINS, sys_b, tie_code)).astype(np.int64)


def as_table(labels: "LabelTable | Iterable[Label]") -> LabelTable:
    """A :class:`LabelTable` as is; an iterable of :class:`Label` converted."""
    if isinstance(labels, LabelTable):
        return labels
    return LabelTable.from_labels(labels)


def _union(*name_lists: tuple[str, ...]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for names in name_lists:
        for name in names:
            seen.setdefault(name, None)
    return tuple(seen)


def _align(*tables: "LabelTable | Iterable[Label]") -> tuple[LabelTable, ...]:
    """Re-encode tables onto one common vocabulary (no-op when shared)."""
    tables = tuple(as_table(t) for t in tables)
    if len(tables) <= 1 or all(t.vocab == tables[0].vocab for t in tables[1:]):
        return tables
    v = [t.vocab for t in tables]
    raters = _union(*[x.raters for x in v])
    kinds: dict[str, str] = {}
    for x in v:
        for r, k in zip(x.raters, x.rater_kinds):
            if kinds.setdefault(r, k) != k:
                raise ValueError(f"rater {r!r} has two kinds")
    vocab = Vocab(
        _union(*[x.pairs for x in v]),
        _union(*[x.criteria for x in v]),
        _union(*[x.categories for x in v]),
        raters,
        tuple(kinds[r] for r in raters),
        _union(*[x.systems for x in v]),
    )

    def remap(old: tuple[str, ...], new: tuple[str, ...]) -> np.ndarray:
        index = {name: i for i, name in enumerate(new)}
        return np.array([index[name] for name in old], dtype=np.int64)

    out = []
    for t in tables:
        m_pair = remap(t.vocab.pairs, vocab.pairs)
        m_crit = remap(t.vocab.criteria, vocab.criteria)
        m_cat = remap(t.vocab.categories, vocab.categories)
        m_rater = remap(t.vocab.raters, vocab.raters)
        m_sys = remap(t.vocab.systems, vocab.systems)
        a, b = m_sys[t.sys_a], m_sys[t.sys_b]
        # keep the canonical order (sys_a < sys_b) in the new coding
        swap = a > b
        outcome = t.outcome.copy()
        outcome[swap & (t.outcome == A_WINS)] = B_WINS
        outcome[swap & (t.outcome == B_WINS)] = A_WINS
        first, longer = t.first.copy(), t.longer.copy()
        for arr in (first, longer):
            known = swap & (arr != UNKNOWN)
            arr[known] = 1 - arr[known]
        out.append(
            LabelTable(
                vocab,
                m_pair[t.pair],
                m_crit[t.criterion],
                m_cat[t.category],
                m_rater[t.rater],
                np.where(swap, b, a),
                np.where(swap, a, b),
                outcome,
                first,
                longer,
            )
        )
    return tuple(out)


# --------------------------------------------------------------------------
# estimates and the pair bootstrap
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A figure with its n and 95% bootstrap CI (None when undefined)."""

    value: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    small_n: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "small_n", self.n < SMALL_N)

    @property
    def ci(self) -> tuple[float, float] | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_low, self.ci_high)

    def as_dict(self) -> dict:
        return asdict(self)


def _f(x) -> float | None:
    """float, or None for NaN/inf/None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


_CACHE_CELLS = 8_000_000  # rounds x units up to which the draw counts are kept (64 MB)
_CHUNK_CELLS = 4_000_000  # otherwise they are regenerated in blocks of rounds of this size


def _counts_from_draws(draws: np.ndarray, n_units: int) -> np.ndarray:
    rounds = draws.shape[0]
    flat = draws + (np.arange(rounds, dtype=np.int64) * n_units)[:, None]
    counts = np.bincount(flat.ravel(), minlength=rounds * n_units)
    return counts.reshape(rounds, n_units).astype(np.float64)


@lru_cache(maxsize=8)
def _draw_counts(n_units: int, rounds: int, seed: int) -> np.ndarray:
    """(rounds x n_units) how often each unit is drawn in each bootstrap round.

    Round r draws ``n_units`` units uniformly with replacement (an index
    matrix of shape rounds x n_units); the index matrix is turned into counts
    so that any per-unit statistic X (n_units x k) is resampled as ``C @ X``.
    """
    rng = np.random.default_rng(seed)
    counts = _counts_from_draws(rng.integers(0, n_units, size=(rounds, n_units), dtype=np.int64), n_units)
    counts.flags.writeable = False
    return counts


def _draw_count_blocks(n_units: int, rounds: int, seed: int):
    """The draw counts in blocks of rounds (cached whole when small enough)."""
    if rounds * n_units <= _CACHE_CELLS:
        yield _draw_counts(n_units, rounds, seed)
        return
    rng = np.random.default_rng(seed)
    step = max(1, _CHUNK_CELLS // n_units)
    for start in range(0, rounds, step):
        size = min(step, rounds - start)
        yield _counts_from_draws(rng.integers(0, n_units, size=(size, n_units), dtype=np.int64), n_units)


def _percentile_ci(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2.5/97.5 percentiles along axis 0, ignoring NaN rounds (undefined)."""
    if samples.shape[0] == 0:
        nan = np.full(samples.shape[1:], np.nan)
        return nan, nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(samples, [2.5, 97.5], axis=0)
    return lo, hi


class _PairBootstrap:
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
        """(rounds x k) sums of a (units x k) per-unit statistic."""
        if self.rounds <= 0:
            return np.zeros((0,) + per_unit.shape[1:])
        blocks = [c @ per_unit for c in _draw_count_blocks(self.n_units, self.rounds, self.seed)]
        return blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=0)

    def ratios(self, pair_codes, numer, denom, group=None, n_groups: int = 1) -> list[Estimate]:
        """Ratio-of-sums estimates (one per group) with pair-bootstrap CIs."""
        num = self.per_unit(pair_codes, numer, group, n_groups)
        den = self.per_unit(pair_codes, denom, group, n_groups)
        num_t, den_t = num.sum(axis=0), den.sum(axis=0)
        if self.rounds > 0:
            bn, bd = self.resample(num), self.resample(den)
            with np.errstate(invalid="ignore", divide="ignore"):
                lo, hi = _percentile_ci(np.where(bd > 0, bn / np.where(bd > 0, bd, 1), np.nan))
        else:
            lo = hi = np.full(n_groups, np.nan)
        out = []
        for g in range(n_groups):
            n = int(round(den_t[g]))
            if den_t[g] <= 0:
                out.append(Estimate(None, 0))
            else:
                out.append(Estimate(float(num_t[g] / den_t[g]), n, _f(lo[g]), _f(hi[g])))
        return out


def _ratio(pair_codes, numer, denom, rounds: int, seed: int) -> Estimate:
    return _PairBootstrap(pair_codes, rounds, seed).ratios(pair_codes, numer, denom)[0]


# --------------------------------------------------------------------------
# judge vs humans
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Agreement:
    """One judge against the humans on the items both labelled.

    * ``par``: every matched human label counts once (judge winner == human
      winner, tie == tie); n = matched human labels.
    * ``par_majority``: judge vs the strict human majority of each item (tie is
      a category); items without a majority are excluded (``n_no_majority``).
    * ``par_no_ties``: ``par`` without the (judge, human label) comparisons in
      which either side says tie; ``share_kept`` = kept / matched.
    * ``kappa``: Cohen's kappa of the judge vs the human majority, categories =
      winner system names + tie, on the items with a majority.
    * breakdowns: ``par`` per category and per criterion (same pair bootstrap).
    """

    judge: str
    n_items: int
    n_pairs: int
    par: Estimate
    par_majority: Estimate
    n_no_majority: int
    par_no_ties: Estimate
    share_kept: float | None
    kappa: Estimate
    by_category: dict[str, Estimate]
    by_criterion: dict[str, Estimate]

    def as_dict(self) -> dict:
        return asdict(self)


def _single_rater_name(table: LabelTable, what: str) -> str:
    names = table.rater_names()
    if len(names) > 1:
        raise ValueError(f"{what} holds {len(names)} raters ({', '.join(names[:5])}); pass one")
    return names[0] if names else ""


def _judge_index(judge: LabelTable) -> tuple[np.ndarray, np.ndarray]:
    """Sorted item keys of a judge and its outcome per item (one verdict per item)."""
    items = judge.item
    order = np.argsort(items, kind="stable")
    keys = items[order]
    if keys.size > 1:
        dup = keys[1:] == keys[:-1]
        if dup.any():
            raise ValueError(
                f"the judge has several verdicts on {int(np.unique(keys[1:][dup]).size)} items; "
                "merge swapped runs first (merge_swapped)"
            )
    return keys, judge.outcome[order]


def _lookup(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(found mask, position) of ``keys`` in ``sorted_keys``."""
    if sorted_keys.size == 0:
        return np.zeros(keys.shape, dtype=bool), np.zeros(keys.shape, dtype=np.int64)
    pos = np.searchsorted(sorted_keys, keys)
    pos = np.minimum(pos, sorted_keys.size - 1)
    return sorted_keys[pos] == keys, pos


def _matched(judge: LabelTable, humans: LabelTable):
    """Human labels on items the judge labelled, with the judge's outcome."""
    keys, j_out = _judge_index(judge)
    found, pos = _lookup(keys, humans.item)
    h = humans.select(found)
    return h, j_out[pos[found]]


def _item_counts(items: np.ndarray, outcome: np.ndarray):
    """Per distinct item: (keys, inverse per row, first row, counts n_items x 3)."""
    keys, first_row, inv = np.unique(items, return_index=True, return_inverse=True)
    counts = np.bincount(inv * 3 + outcome, minlength=3 * len(keys)).reshape(len(keys), 3)
    return keys, inv, first_row, counts


def _strict_majority(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(has strict majority, majority outcome) per row of a (n x 3) count matrix."""
    total = counts.sum(axis=1)
    best = counts.argmax(axis=1)
    has = counts.max(axis=1) * 2 > total
    return has, best


def _kappa_value(agree, n, marg_j, marg_h) -> np.ndarray:
    """Cohen's kappa from agreement count, n and the two marginal count vectors."""
    agree, n = np.asarray(agree, float), np.asarray(n, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = agree / n
        pe = (np.asarray(marg_j, float) * np.asarray(marg_h, float)).sum(axis=-1) / (n * n)
        k = (po - pe) / (1.0 - pe)
    return np.where((n > 0) & (pe < 1.0 - 1e-15), k, np.nan)


def agreement(
    judge_labels: LabelTable | Iterable[Label],
    human_labels: LabelTable | Iterable[Label],
    rounds: int = 1000,
    seed: int = 0,
) -> Agreement:
    """Agreement of one judge (one verdict per item) with the humans.

    ``judge_labels``: one rater, at most one verdict per item (merge swapped
    runs first with :func:`merge_swapped`).  ``human_labels`` are used as given
    (pass ``table.humans()``).  Only items present in both are used.  CIs: bootstrap over the pairs that
    have at least one matched item (all figures share the same draws).
    """
    judge, humans = _align(judge_labels, human_labels)
    name = _single_rater_name(judge, "judge_labels")
    v = judge.vocab
    h, j_out = _matched(judge, humans)
    boot = _PairBootstrap(h.pair, rounds, seed)
    ones = np.ones(len(h))

    # PAR: every human label once
    agree = (h.outcome == j_out).astype(float)
    par = boot.ratios(h.pair, agree, ones)[0]

    # PAR without ties on either side
    keep = (h.outcome != TIED) & (j_out != TIED)
    par_nt = boot.ratios(h.pair, agree * keep, keep.astype(float))[0]
    share_kept = float(keep.mean()) if len(h) else None

    # majority of the humans per item
    keys, inv, first_row, counts = _item_counts(h.item, h.outcome)
    has, maj = _strict_majority(counts)
    it_pair = h.pair[first_row]
    it_a, it_b = h.sys_a[first_row], h.sys_b[first_row]
    it_judge = j_out[first_row]
    agree_maj = (it_judge == maj) & has
    par_maj = boot.ratios(it_pair, agree_maj.astype(float), has.astype(float))[0]

    # Cohen's kappa on items with a majority, global winner categories
    k_cat = v.tie_code + 1
    jw = _winner_codes(it_judge, it_a, it_b, v.tie_code)[has]
    hw = _winner_codes(maj, it_a, it_b, v.tie_code)[has]
    onehot_j = np.zeros((int(has.sum()), k_cat))
    onehot_j[np.arange(len(jw)), jw] = 1.0
    onehot_h = np.zeros((len(hw), k_cat))
    onehot_h[np.arange(len(hw)), hw] = 1.0
    stat = np.column_stack([(jw == hw).astype(float), np.ones(len(jw)), onehot_j, onehot_h])
    per_unit = boot.per_unit(it_pair[has], stat)
    tot = per_unit.sum(axis=0)
    n_k = int(tot[1])
    kappa_point = _f(_kappa_value(tot[0], tot[1], tot[2 : 2 + k_cat], tot[2 + k_cat :]))
    if boot.rounds > 0 and n_k > 0:
        b = boot.resample(per_unit)
        lo, hi = _percentile_ci(_kappa_value(b[:, 0], b[:, 1], b[:, 2 : 2 + k_cat], b[:, 2 + k_cat :]))
        k_ci = (_f(lo), _f(hi)) if kappa_point is not None else (None, None)
    else:
        k_ci = (None, None)
    kappa = Estimate(kappa_point, n_k, *k_ci)

    # breakdowns
    n_cat, n_crit = len(v.categories), len(v.criteria)
    cat_est = boot.ratios(h.pair, agree, ones, h.category, n_cat)
    crit_est = boot.ratios(h.pair, agree, ones, h.criterion, n_crit)
    present_cat = set(np.unique(h.category).tolist())
    present_crit = set(np.unique(h.criterion).tolist())
    return Agreement(
        judge=name,
        n_items=int(len(keys)),
        n_pairs=boot.n_units,
        par=par,
        par_majority=par_maj,
        n_no_majority=int((~has).sum()),
        par_no_ties=par_nt,
        share_kept=share_kept,
        kappa=kappa,
        by_category={v.categories[c]: cat_est[c] for c in sorted(present_cat)},
        by_criterion={v.criteria[c]: crit_est[c] for c in sorted(present_crit)},
    )


@dataclass(frozen=True)
class PairedDifference:
    """PAR(A) - PAR(B) on the items both judges labelled (and humans too).

    CI: bootstrap over pairs, the same resampled pairs for both judges;
    ``significant`` when the CI excludes 0.
    """

    judge_a: str
    judge_b: str
    difference: Estimate
    par_a: float | None
    par_b: float | None
    n_pairs: int
    significant: bool

    def as_dict(self) -> dict:
        return asdict(self)


def paired_difference(
    judge_a: LabelTable | Iterable[Label],
    judge_b: LabelTable | Iterable[Label],
    humans: LabelTable | Iterable[Label],
    rounds: int = 1000,
    seed: int = 0,
) -> PairedDifference:
    ja, jb, hu = _align(judge_a, judge_b, humans)
    name_a, name_b = _single_rater_name(ja, "judge_a"), _single_rater_name(jb, "judge_b")
    keys_a, out_a = _judge_index(ja)
    keys_b, out_b = _judge_index(jb)
    items = hu.item
    fa, pa = _lookup(keys_a, items)
    fb, pb = _lookup(keys_b, items)
    both = fa & fb
    ag_a = (hu.outcome[both] == out_a[pa[both]]).astype(float)
    ag_b = (hu.outcome[both] == out_b[pb[both]]).astype(float)
    pairs = hu.pair[both]
    boot = _PairBootstrap(pairs, rounds, seed)
    diff = boot.ratios(pairs, ag_a - ag_b, np.ones(len(pairs)))[0]
    n = len(pairs)
    significant = diff.ci is not None and (diff.ci[0] > 0 or diff.ci[1] < 0)
    return PairedDifference(
        judge_a=name_a,
        judge_b=name_b,
        difference=diff,
        par_a=float(ag_a.mean()) if n else None,
        par_b=float(ag_b.mean()) if n else None,
        n_pairs=boot.n_units,
        significant=bool(significant),
    )


# --------------------------------------------------------------------------
# position bias (swapped runs)
# --------------------------------------------------------------------------


def _orders(table: LabelTable):
    """Per (rater, item) unit: the first verdict shown each way round.

    Returns (unit keys, rater, item row index, outcome with sys_a first or -1,
    outcome with sys_b first or -1).
    """
    known = table.first != UNKNOWN
    t = table.select(known)
    unit = t.rater.astype(np.int64) * (int(t.item.max()) + 1 if len(t) else 1) + t.item
    keys, rows, inv = np.unique(unit, return_index=True, return_inverse=True)
    outs = np.full((len(keys), 2), -1, dtype=np.int64)
    # first verdict per (unit, order)
    _, first_of = np.unique(inv.astype(np.int64) * 2 + t.first, return_index=True)
    outs[inv[first_of], t.first[first_of]] = t.outcome[first_of]
    return t, rows.astype(np.int64), outs


def position_consistency(
    judge_labels: LabelTable | Iterable[Label], rounds: int = 1000, seed: int = 0
) -> Estimate:
    """Share of swapped items (one verdict with each system first) on which the
    judge gives the same verdict in both orders (tie/tie counts as the same)."""
    t, rows, outs = _orders(as_table(judge_labels))
    both = (outs[:, 0] >= 0) & (outs[:, 1] >= 0)
    same = (outs[:, 0] == outs[:, 1]) & both
    pairs = t.pair[rows] if len(rows) else np.zeros(0, dtype=np.int64)
    return _ratio(pairs[both], same[both].astype(float), np.ones(int(both.sum())), rounds, seed)


def first_position_rate(
    judge_labels: LabelTable | Iterable[Label], rounds: int = 1000, seed: int = 0
) -> Estimate:
    """Share of non-tie verdicts (with known order) that pick the system shown
    first; 0.5 means no position preference."""
    t = as_table(judge_labels)
    m = (t.first != UNKNOWN) & (t.outcome != TIED)
    return _ratio(t.pair[m], (t.outcome[m] == t.first[m]).astype(float), np.ones(int(m.sum())), rounds, seed)


@dataclass(frozen=True)
class PositionBias:
    consistency: Estimate
    first_position_rate: Estimate

    def as_dict(self) -> dict:
        return asdict(self)


def position_bias(judge_labels, rounds: int = 1000, seed: int = 0) -> PositionBias:
    t = as_table(judge_labels)
    return PositionBias(position_consistency(t, rounds, seed), first_position_rate(t, rounds, seed))


def merge_swapped(judge_labels: LabelTable | Iterable[Label], require_both: bool = False) -> LabelTable:
    """One verdict per (rater, item): the verdict both orders agree on, else tie.

    Items seen in one order only keep that verdict (dropped when
    ``require_both``); labels with unknown order are kept as they are unless
    the same (rater, item) also has ordered verdicts.  The merged rows have
    ``first = -1`` (no single position).
    """
    table = as_table(judge_labels)
    t, rows, outs = _orders(table)
    both = (outs[:, 0] >= 0) & (outs[:, 1] >= 0)
    merged = np.where(outs[:, 0] >= 0, outs[:, 0], outs[:, 1])
    merged = np.where(both & (outs[:, 0] != outs[:, 1]), TIED, merged)
    keep = both if require_both else np.ones(len(rows), dtype=bool)
    r = rows[keep]
    ordered = LabelTable(
        t.vocab,
        t.pair[r],
        t.criterion[r],
        t.category[r],
        t.rater[r],
        t.sys_a[r],
        t.sys_b[r],
        merged[keep],
        np.full(len(r), UNKNOWN),
        t.longer[r],
    )
    unordered = table.select(table.first == UNKNOWN)
    if len(unordered) and len(t):
        span = int(max(table.item.max(), 0)) + 1
        k_ord = np.unique(t.rater.astype(np.int64) * span + t.item)
        k_un = unordered.rater.astype(np.int64) * span + unordered.item
        found, _ = _lookup(k_ord, k_un)
        unordered = unordered.select(~found)
    if not len(unordered):
        return ordered
    return LabelTable.concat(ordered, unordered)


# --------------------------------------------------------------------------
# length bias
# --------------------------------------------------------------------------


def prefers_longer(labels: LabelTable | Iterable[Label], rounds: int = 1000, seed: int = 0) -> Estimate:
    """Share of non-tie verdicts (longer system known) choosing the longer article."""
    t = as_table(labels)
    m = (t.longer != UNKNOWN) & (t.outcome != TIED)
    return _ratio(t.pair[m], (t.outcome[m] == t.longer[m]).astype(float), np.ones(int(m.sum())), rounds, seed)


@dataclass(frozen=True)
class LengthBias:
    judge: Estimate
    humans: Estimate

    def as_dict(self) -> dict:
        return asdict(self)


def length_bias(judge_labels, human_labels, rounds: int = 1000, seed: int = 0) -> LengthBias:
    """``prefers_longer`` for the judge and for the humans on the same items
    (items labelled by both)."""
    judge, humans = _align(judge_labels, human_labels)
    j_items = np.unique(judge.item)
    h_items = np.unique(humans.item)
    common = np.intersect1d(j_items, h_items, assume_unique=True)
    j = judge.select(_lookup(common, judge.item)[0])
    h = humans.select(_lookup(common, humans.item)[0])
    return LengthBias(prefers_longer(j, rounds, seed), prefers_longer(h, rounds, seed))


# --------------------------------------------------------------------------
# human ceiling
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class HumanCeiling:
    """How well humans agree with each other.

    * ``loo_par``: each human label vs the strict majority of the OTHER humans
      on its item; labels whose others have no majority (including items with
      a single human) are excluded and counted in ``n_loo_excluded``.
    * ``all_pairs_par``: share of agreeing pairs among all pairs of human labels
      on the same item (n = number of label pairs).
    * ``alpha``: Krippendorff's alpha, nominal (categories = winner system
      names + tie); n = items with at least two labels.
    """

    loo_par: Estimate
    n_loo_excluded: int
    all_pairs_par: Estimate
    alpha: Estimate
    n_items: int
    n_items_multi: int

    def as_dict(self) -> dict:
        return asdict(self)


def _alpha_value(occ, n, nc) -> np.ndarray:
    """Krippendorff's nominal alpha from sum_c o_cc, n (pairable values) and n_c."""
    occ, n, nc = np.asarray(occ, float), np.asarray(n, float), np.asarray(nc, float)
    de = n * n - (nc * nc).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = 1.0 - (n - 1.0) * (n - occ) / de
    return np.where((n > 1) & (de > 1e-9), a, np.nan)


def human_ceiling(human_labels: LabelTable | Iterable[Label], rounds: int = 1000, seed: int = 0) -> HumanCeiling:
    h = as_table(human_labels)
    v = h.vocab
    keys, inv, first_row, counts = _item_counts(h.item, h.outcome)
    m = counts.sum(axis=1)
    boot = _PairBootstrap(h.pair, rounds, seed)

    # leave-one-out: others = item counts minus the label itself
    others = counts[inv].copy()
    others[np.arange(len(h)), h.outcome] -= 1
    has, maj = _strict_majority(others)
    has &= others.sum(axis=1) > 0
    loo = boot.ratios(h.pair, ((maj == h.outcome) & has).astype(float), has.astype(float))[0]

    # all pairs of labels on one item
    it_pair = h.pair[first_row]
    agree_pairs = (counts * (counts - 1) / 2).sum(axis=1)
    all_pairs = m * (m - 1) / 2
    ap = boot.ratios(it_pair, agree_pairs, all_pairs)[0]

    # Krippendorff's alpha (nominal) on items with >= 2 values
    multi = m >= 2
    k_cat = v.tie_code + 1
    occ = np.where(multi, (counts * (counts - 1)).sum(axis=1) / np.maximum(m - 1, 1), 0.0)
    row_multi = multi[inv]
    nc = np.zeros((len(h), k_cat))
    nc[np.arange(len(h)), h.winner] = row_multi
    occ_pu = boot.per_unit(it_pair, occ)
    n_pu = boot.per_unit(it_pair, np.where(multi, m, 0).astype(float))
    nc_pu = boot.per_unit(h.pair, nc)
    a_point = _f(_alpha_value(occ_pu.sum(), n_pu.sum(), nc_pu.sum(axis=0)))
    if boot.rounds > 0 and a_point is not None:
        b = boot.resample(np.column_stack([occ_pu, n_pu, nc_pu]))
        lo, hi = _percentile_ci(_alpha_value(b[:, 0], b[:, 1], b[:, 2:]))
        a_ci = (_f(lo), _f(hi))
    else:
        a_ci = (None, None)
    alpha = Estimate(a_point, int(multi.sum()), *a_ci)
    return HumanCeiling(
        loo_par=loo,
        n_loo_excluded=int((~has).sum()),
        all_pairs_par=ap,
        alpha=alpha,
        n_items=int(len(keys)),
        n_items_multi=int(multi.sum()),
    )


# --------------------------------------------------------------------------
# Bradley-Terry
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemScore:
    system: str
    score: float | None
    ci_low: float | None
    ci_high: float | None
    n: int  # comparisons involving the system
    small_n: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "small_n", self.n < SMALL_N)


@dataclass(frozen=True)
class BTResult:
    """Elo-like Bradley-Terry scores, best first; the reference scores ``anchor``.

    ``regularized`` is True when the maximum-likelihood estimate does not exist
    (see :func:`bradley_terry`) and the small tie prior was added;
    ``rounds_regularized`` counts bootstrap rounds where that happened.
    """

    reference: str
    anchor: float
    scale: float
    base: float
    scores: dict[str, SystemScore]
    n_comparisons: int
    regularized: bool
    rounds_regularized: int

    def ranking(self) -> list[str]:
        return list(self.scores)

    def score_map(self) -> dict[str, float]:
        return {k: s.score for k, s in self.scores.items()}

    def as_dict(self) -> dict:
        return asdict(self)


DEGENERATE_PRIOR = 1.0


def _strongly_connected(w: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Per (R, S, S) win matrix: is the "beat" graph strongly connected on the
    present systems?  (Edge i -> j when i has a win or a tie against j.)  This
    is the condition for the BT maximum-likelihood estimate to exist."""
    s = w.shape[-1]
    reach = ((w > 0) | np.eye(s, dtype=bool)).astype(np.float64)
    for _ in range(max(1, math.ceil(math.log2(max(s, 2))))):
        reach = (reach @ reach > 0).astype(np.float64)
    pm = present[:, :, None] & present[:, None, :]
    return ((reach > 0) | ~pm).all(axis=(1, 2))


def _fit_choix(w: np.ndarray) -> np.ndarray:
    """ML log-strengths (centred) from a win matrix with choix's I-LSR.

    ``w[i, j]`` = wins of i over j, ties counted as 1/2 each way.  The I-LSR
    fixed point solves the likelihood equations for any non-negative
    (fractional) counts, so this is the exact MLE of the 1/2-tie likelihood.
    """
    return choix.ilsr_pairwise_dense(w, alpha=0.0, max_iter=10_000, tol=1e-11)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _fit_degenerate(w: np.ndarray, prior: float) -> np.ndarray:
    """Log-strengths when the MLE does not exist (graph not strongly connected).

    1. Within each strongly connected component the MLE exists: fit it with
       choix on that component's comparisons alone (exactly what the full MLE
       tends to within a component as the gaps between components diverge).
    2. The components' offsets come from the cross-component comparisons plus
       ``prior`` virtual tied comparisons (prior/2 win each way) between every
       two systems of different components, maximized with scipy.
    Systems within a component keep their exact MLE differences.
    """
    s = w.shape[0]
    k, comp = connected_components(csr_matrix(w > 0), directed=True, connection="strong")
    theta = np.zeros(s)
    for c in range(k):
        idx = np.flatnonzero(comp == c)
        if idx.size > 1:
            theta[idx] = _fit_choix(w[np.ix_(idx, idx)])
    cross = comp[:, None] != comp[None, :]
    wc = np.where(cross, w + prior / 2.0, 0.0)
    nc = wc + wc.T

    def neg_ll(free: np.ndarray) -> tuple[float, np.ndarray]:
        t = theta + np.concatenate([[0.0], free])[comp]
        d = t[:, None] - t[None, :]
        ll = -(wc * np.logaddexp(0.0, -d)).sum()
        g_t = wc.sum(axis=1) - (nc * _sigmoid(d)).sum(axis=1)
        g_c = np.bincount(comp, weights=g_t, minlength=k)
        return -ll, -g_c[1:]

    res = optimize.minimize(neg_ll, np.zeros(k - 1), jac=True, method="BFGS", options={"gtol": 1e-10})
    return theta + np.concatenate([[0.0], res.x])[comp]


def _fit_newton(w: np.ndarray, ref: int, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Batched Newton-Raphson ML fit of log-strengths with theta[ref] = 0.

    ``w``: (R, S, S) win matrices, each strongly connected over all S systems.
    Used for the bootstrap rounds (verified against choix in the tests);
    steps are capped at 2 (log scale) so that far-off starts cannot overshoot.
    """
    r_n, s, _ = w.shape
    n = w + np.swapaxes(w, 1, 2)
    wins = w.sum(axis=2)
    theta = np.zeros((r_n, s))
    free = np.ones(s, dtype=bool)
    free[ref] = False
    eye = np.eye(s - 1)
    active = np.ones(r_n, dtype=bool)
    for _ in range(max_iter):
        ia = np.flatnonzero(active)
        if ia.size == 0:
            break
        th, nn = theta[ia], n[ia]
        p = _sigmoid(th[:, :, None] - th[:, None, :])
        g = (wins[ia] - (nn * p).sum(axis=2))[:, free]
        vv = (nn * p * (1.0 - p))[:, free][:, :, free]
        info = eye * (nn * p * (1.0 - p)).sum(axis=2)[:, free][:, :, None] - vv  # minus the Hessian
        step = np.linalg.solve(info, g[:, :, None])[:, :, 0]
        big = np.abs(step).max(axis=1)
        step *= np.minimum(1.0, 2.0 / np.maximum(big, 1e-300))[:, None]
        theta[np.ix_(ia, np.flatnonzero(free))] = th[:, free] + step
        active[ia[big < tol]] = False
    for r in np.flatnonzero(active):  # did not settle: let choix finish it
        th = _fit_choix(w[r])
        theta[r] = th - th[ref]
    return theta


def _fit_rounds(w: np.ndarray, present: np.ndarray, ref: int, prior: float) -> tuple[np.ndarray, int]:
    """Log-strengths (theta[ref] = 0, NaN for absent systems) for bootstrap
    win matrices; returns (thetas, number of degenerate rounds)."""
    r_n, s, _ = w.shape
    theta = np.full((r_n, s), np.nan)
    ok = _strongly_connected(w, present)
    full = ok & present.all(axis=1)
    if full.any():
        theta[full] = _fit_newton(w[full], ref)
    # These rounds are fitted one by one (degenerate ones with scipy, ~ms each). On small
    # campaigns most rounds are such and many are the same resample: fit each distinct one once.
    fitted: dict[bytes, np.ndarray] = {}
    for r in np.flatnonzero(~full):
        key = present[r].tobytes() + w[r].tobytes()
        if key not in fitted:
            idx = np.flatnonzero(present[r])
            sub = w[r][np.ix_(idx, idx)]
            th = _fit_choix(sub) if ok[r] else _fit_degenerate(sub, prior)
            fitted[key] = th - th[int(np.flatnonzero(idx == ref)[0])]
        theta[r, present[r]] = fitted[key]
    return theta, int((~ok).sum())


def _bt_inputs(t: LabelTable, reference: str):
    """Per-row win statistics over the systems present in ``t``."""
    v = t.vocab
    present_codes = np.unique(np.concatenate([t.sys_a, t.sys_b]))
    if reference not in v.systems or v.systems.index(reference) not in present_codes:
        raise ValueError(f"reference system {reference!r} is not among the compared systems")
    ref_code = v.systems.index(reference)
    local = np.full(len(v.systems), -1, dtype=np.int64)
    local[present_codes] = np.arange(len(present_codes))
    s = len(present_codes)
    a, b = local[t.sys_a], local[t.sys_b]
    win_a = (t.outcome == A_WINS) + 0.5 * (t.outcome == TIED)
    win_b = (t.outcome == B_WINS) + 0.5 * (t.outcome == TIED)
    # one column per ordered system pair: (winner, loser) -> winner * s + loser
    col = np.concatenate([a * s + b, b * s + a])
    vals = np.concatenate([win_a, win_b])
    pairs = np.concatenate([t.pair, t.pair])
    return present_codes, int(local[ref_code]), s, col, vals, pairs


def bradley_terry(
    labels: LabelTable | Iterable[Label],
    reference: str = "wikipedia",
    base: float = 10,
    scale: float = 400,
    anchor: float = 1000,
    rounds: int = 1000,
    seed: int = 0,
    degenerate_prior: float = DEGENERATE_PRIOR,
) -> BTResult:
    """Bradley-Terry scores: each label is one comparison of its two systems
    (win 1, tie 1/2 each way), fitted by maximum likelihood with choix's I-LSR
    (``ilsr_pairwise_dense``, alpha=0) on the win-count matrix, shown as
    ``scale * theta / ln(base)`` and shifted so the reference scores ``anchor``.

    Regularization: none whenever the MLE exists (the "beat" graph is strongly
    connected), so well-posed data get the exact MLE.  When it does not exist
    (a system that never wins or never loses, groups never compared), each
    strongly connected component is fitted exactly on its own and the
    components are placed relative to each other with ``degenerate_prior`` (1)
    virtual tied comparison between every two systems of different components
    (the Haldane-Anscombe 1/2 correction), which keeps every score finite;
    ``regularized`` is then True.  Bootstrap rounds follow the same rule.

    CI: pair bootstrap; rounds are fitted from per-round win-count matrices with
    a batched Newton solver (matches choix to ~1e-9); rounds in which a system
    does not appear leave that system out, and a system compared in one pair
    only gets no CI.  ``n`` = comparisons involving the system.
    """
    t = as_table(labels)
    codes, ref, s, col, vals, pairs = _bt_inputs(t, reference)
    boot = _PairBootstrap(t.pair, rounds, seed)
    per_unit = boot.per_unit(pairs, vals, col, s * s)
    w = per_unit.sum(axis=0).reshape(s, s)
    regularized = not bool(_strongly_connected(w[None], np.ones((1, s), dtype=bool))[0])
    theta = _fit_degenerate(w, degenerate_prior) if regularized else _fit_choix(w)
    k = scale / math.log(base)
    elo = k * (theta - theta[ref]) + anchor

    rounds_reg = 0
    lo = hi = np.full(s, np.nan)
    if boot.rounds > 0:
        wb = boot.resample(per_unit).reshape(-1, s, s)
        present = (wb + np.swapaxes(wb, 1, 2)).sum(axis=2) > 0
        keep = present[:, ref]
        th_b, rounds_reg = _fit_rounds(wb[keep], present[keep], ref, degenerate_prior)
        lo, hi = _percentile_ci(k * th_b + anchor)
        # A system seen in one pair only: every round that has it has that same pair, and the
        # zero-width interval would claim a certainty the data cannot give. No CI then.
        local = np.full(len(t.vocab.systems), -1, dtype=np.int64)
        local[codes] = np.arange(s)
        _, first = np.unique(t.pair, return_index=True)  # a pair compares the same two systems in all its rows
        pairs_of = np.bincount(local[t.sys_a[first]], minlength=s) + np.bincount(local[t.sys_b[first]], minlength=s)
        lone = (pairs_of < 2) & (np.arange(s) != ref)
        lo, hi = np.where(lone, np.nan, lo), np.where(lone, np.nan, hi)

    n_sys = np.bincount(np.concatenate([t.sys_a, t.sys_b]), minlength=len(t.vocab.systems))
    scores = {}
    for i in np.argsort(-elo, kind="stable"):
        name = t.vocab.systems[codes[i]]
        scores[name] = SystemScore(name, float(elo[i]), _f(lo[i]), _f(hi[i]), int(n_sys[codes[i]]))
    return BTResult(
        reference=reference,
        anchor=float(anchor),
        scale=float(scale),
        base=float(base),
        scores=scores,
        n_comparisons=len(t),
        regularized=regularized,
        rounds_regularized=rounds_reg,
    )


def bradley_terry_by_category(labels, reference: str = "wikipedia", **kwargs) -> dict[str, BTResult | None]:
    """:func:`bradley_terry` per category (None where the reference is absent)."""
    t = as_table(labels)
    out: dict[str, BTResult | None] = {}
    for c in np.unique(t.category):
        sub = t.select(t.category == c)
        try:
            out[t.vocab.categories[c]] = bradley_terry(sub, reference=reference, **kwargs)
        except ValueError:
            out[t.vocab.categories[c]] = None
    return out


@dataclass(frozen=True)
class TauResult:
    tau: float | None
    p_value: float | None
    n: int
    systems: tuple[str, ...]


def kendall_tau(scores_a: BTResult | Mapping[str, float], scores_b: BTResult | Mapping[str, float]) -> TauResult:
    """Kendall's tau-b (scipy) between two score sets on their common systems."""
    a = scores_a.score_map() if isinstance(scores_a, BTResult) else dict(scores_a)
    b = scores_b.score_map() if isinstance(scores_b, BTResult) else dict(scores_b)
    common = tuple(sorted(k for k in a if k in b and a[k] is not None and b[k] is not None))
    if len(common) < 2:
        return TauResult(None, None, len(common), common)
    res = stats.kendalltau([a[k] for k in common], [b[k] for k in common])
    return TauResult(_f(res.statistic), _f(res.pvalue), len(common), common)


@dataclass(frozen=True)
class WinRates:
    """Each system's share of wins (tie = 1/2) against the reference."""

    reference: str
    overall: dict[str, Estimate]
    by_category: dict[str, dict[str, Estimate]]

    def as_dict(self) -> dict:
        return asdict(self)


def win_rate_vs_reference(
    labels: LabelTable | Iterable[Label], reference: str = "wikipedia", rounds: int = 1000, seed: int = 0
) -> WinRates:
    t = as_table(labels)
    v = t.vocab
    if reference not in v.systems:
        return WinRates(reference, {}, {})
    ref = v.systems.index(reference)
    m = (t.sys_a == ref) | (t.sys_b == ref)
    t = t.select(m)
    other = np.where(t.sys_a == ref, t.sys_b, t.sys_a)
    other_wins = np.where(t.sys_a == ref, t.outcome == B_WINS, t.outcome == A_WINS)
    score = other_wins + 0.5 * (t.outcome == TIED)
    s = len(v.systems)
    boot = _PairBootstrap(t.pair, rounds, seed)
    ones = np.ones(len(t))
    overall_est = boot.ratios(t.pair, score, ones, other, s)
    present = np.unique(other)
    overall = {v.systems[i]: overall_est[i] for i in present}
    cat_est = boot.ratios(t.pair, score, ones, t.category.astype(np.int64) * s + other, len(v.categories) * s)
    by_cat: dict[str, dict[str, Estimate]] = {}
    for c in np.unique(t.category):
        sys_here = np.unique(other[t.category == c])
        by_cat[v.categories[c]] = {v.systems[i]: cat_est[c * s + i] for i in sys_here}
    return WinRates(reference, overall, by_cat)


# --------------------------------------------------------------------------
# cost vs agreement
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgePoint:
    name: str
    cost: float
    par: float
    n: int = 0


def _points(points) -> list[JudgePoint]:
    out = []
    for p in points:
        out.append(p if isinstance(p, JudgePoint) else JudgePoint(*p))
    return out


def pareto_frontier(points: Iterable[JudgePoint | tuple]) -> list[JudgePoint]:
    """Judges not dominated by another judge that is cheaper-or-equal and
    higher-or-equal in PAR with at least one strict; sorted by cost."""
    pts = _points(points)
    front = []
    for p in pts:
        dominated = any(
            q.cost <= p.cost and q.par >= p.par and (q.cost < p.cost or q.par > p.par) for q in pts if q is not p
        )
        if not dominated:
            front.append(p)
    return sorted(front, key=lambda p: (p.cost, -p.par, p.name))


@dataclass(frozen=True)
class Recommendation:
    judge: str
    best: str
    sentence: str
    difference: PairedDifference | None


def _fmt_ci(est: Estimate) -> str:
    if est.ci is None:
        return "no CI"
    return f"95% CI {est.ci_low:+.3f} to {est.ci_high:+.3f}"


def recommend(judges: Iterable[JudgePoint | tuple], differences: Iterable[PairedDifference]) -> Recommendation:
    """The cheapest judge whose PAR is not significantly below the best judge's.

    "Not significantly below" = the paired-bootstrap CI of PAR(best) - PAR(judge)
    reaches 0 or below.  Judges without a paired difference against the best
    judge cannot be cleared and are skipped.
    """
    pts = _points(judges)
    if not pts:
        raise ValueError("no judges to recommend from")
    best = max(pts, key=lambda p: (p.par, -p.cost))
    diffs = list(differences)

    def against_best(name: str) -> tuple[Estimate, PairedDifference] | None:
        for d in diffs:
            est = d.difference
            if est.value is None:
                continue
            if d.judge_a == best.name and d.judge_b == name:
                return est, d
            if d.judge_a == name and d.judge_b == best.name:
                flipped = Estimate(
                    -est.value,
                    est.n,
                    None if est.ci_high is None else -est.ci_high,
                    None if est.ci_low is None else -est.ci_low,
                )
                return flipped, d
        return None

    for p in sorted(pts, key=lambda q: (q.cost, -q.par, q.name)):
        if p.name == best.name:
            break
        found = against_best(p.name)
        if found is None:
            continue
        est, d = found
        if est.ci_low is not None and est.ci_low <= 0:
            sentence = (
                f"Use {p.name} (cost {p.cost:g} vs {best.cost:g}): its PAR {p.par:.3f} (n={p.n:,}) is not "
                f"significantly below the best judge {best.name}'s {best.par:.3f} (n={best.n:,}); "
                f"difference {est.value:+.3f}, {_fmt_ci(est)}, paired bootstrap over {d.n_pairs:,} pairs "
                f"(n={est.n:,} human labels)."
            )
            return Recommendation(p.name, best.name, sentence, d)
    sentence = (
        f"Use {best.name} (cost {best.cost:g}): it has the best PAR {best.par:.3f} (n={best.n:,}) and every "
        f"cheaper judge is significantly below it or has no paired comparison."
    )
    return Recommendation(best.name, best.name, sentence, None)
