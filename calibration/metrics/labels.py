"""The data model: labels as rows (:class:`LabelRow`) and as an integer-coded columnar table
(:class:`LabelTable`), plus re-encoding several tables onto one vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from calibration.metrics._common import HI_WINS, KINDS, LO_WINS, SYS_HI, SYS_LO, TIE, TIED, UNKNOWN, winner_codes

# --------------------------------------------------------------------------
# data model
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelRow:
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


_INT_COLUMNS = ("pair", "criterion", "category", "rater", "sys_lo", "sys_hi")
_SMALL_COLUMNS = ("outcome", "first", "longer")
_COLUMNS = _INT_COLUMNS + _SMALL_COLUMNS


@dataclass(frozen=True, eq=False)
class LabelTable:
    """Columnar, integer-coded labels.

    ``sys_lo < sys_hi`` is the canonical (name-sorted when built from names)
    order of the pair's systems.  ``outcome`` is 0 when ``sys_lo`` wins, 1 when
    ``sys_hi`` wins, 2 for a tie; ``first``/``longer`` are 0 (``sys_lo``), 1
    (``sys_hi``) or -1 (unknown).  All tables passed together to a metric must
    share a vocabulary; they are re-encoded onto a common one when they do not.
    """

    vocab: Vocab
    pair: np.ndarray
    criterion: np.ndarray
    category: np.ndarray
    rater: np.ndarray
    sys_lo: np.ndarray
    sys_hi: np.ndarray
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
            self._check_range("sys_lo", len(self.vocab.systems))
            self._check_range("sys_hi", len(self.vocab.systems))
            if (self.sys_lo == self.sys_hi).any():
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
    def from_labels(cls, labels: Iterable[LabelRow]) -> "LabelTable":
        """Convert :class:`LabelRow` rows into a table (vocabularies name-sorted)."""
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
        outcome[s_win == lo] = LO_WINS
        outcome[s_win == hi] = HI_WINS
        outcome[s_win == TIE] = TIED
        if (outcome < 0).any():
            i = int(np.flatnonzero(outcome < 0)[0])
            raise ValueError(f"winner {s_win[i]!r} is neither {lo[i]!r}, {hi[i]!r} nor 'tie'")

        def position(values: np.ndarray, what: str) -> np.ndarray:
            out = np.full(n, UNKNOWN, dtype=np.int8)
            out[values == lo] = SYS_LO
            out[values == hi] = SYS_HI
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
        if (pa[self.pair] != self.sys_lo).any() or (pb[self.pair] != self.sys_hi).any():
            raise ValueError("a pair id must always compare the same two systems")

    @staticmethod
    def concat(*tables: "LabelTable") -> "LabelTable":
        tables = align_tables(*tables)
        if not tables:
            return LabelTable.empty()
        return LabelTable(
            tables[0].vocab,
            *[np.concatenate([getattr(t, c) for t in tables]) for c in _COLUMNS],
        )

    def to_labels(self) -> list[LabelRow]:
        v = self.vocab
        out = []
        names = v.systems
        for i in range(len(self)):
            a, b = names[self.sys_lo[i]], names[self.sys_hi[i]]
            o = self.outcome[i]
            f, g = self.first[i], self.longer[i]
            out.append(
                LabelRow(
                    pair=v.pairs[self.pair[i]],
                    criterion=v.criteria[self.criterion[i]],
                    category=v.categories[self.category[i]],
                    rater=v.raters[self.rater[i]],
                    rater_kind=v.rater_kinds[self.rater[i]],
                    system_a=a,
                    system_b=b,
                    winner=a if o == LO_WINS else b if o == HI_WINS else TIE,
                    first_system=None if f == UNKNOWN else (a if f == SYS_LO else b),
                    longer_system=None if g == UNKNOWN else (a if g == SYS_LO else b),
                )
            )
        return out

    # -- views ------------------------------------------------------------

    def __len__(self) -> int:
        return int(self.pair.shape[0])

    def select(self, mask: np.ndarray) -> "LabelTable":
        """Rows selected by a boolean mask or an index array (same vocabulary). Rows of a checked
        table need no checking again: the columns are taken as they are (a report selects
        thousands of times)."""
        out = object.__new__(LabelTable)
        object.__setattr__(out, "vocab", self.vocab)
        for c in _COLUMNS:
            column = getattr(self, c)[mask]
            if column.ndim != 1:  # a scalar index: let the constructor say what is wrong
                return LabelTable(self.vocab, *[getattr(self, c)[mask] for c in _COLUMNS])
            object.__setattr__(out, c, column)
        return out

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
        return winner_codes(self.outcome, self.sys_lo, self.sys_hi, self.vocab.tie_code)

    def pair_systems(self) -> tuple[np.ndarray, np.ndarray]:
        """Per pair code, its (sys_lo, sys_hi) codes (-1 for pairs not present)."""
        pa = np.full(len(self.vocab.pairs), -1, dtype=np.int64)
        pb = np.full(len(self.vocab.pairs), -1, dtype=np.int64)
        pa[self.pair] = self.sys_lo
        pb[self.pair] = self.sys_hi
        return pa, pb


def as_table(labels: "LabelTable | Iterable[LabelRow]") -> LabelTable:
    """A :class:`LabelTable` as is; an iterable of :class:`LabelRow` converted."""
    if isinstance(labels, LabelTable):
        return labels
    return LabelTable.from_labels(labels)


def _union(*name_lists: tuple[str, ...]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for names in name_lists:
        for name in names:
            seen.setdefault(name, None)
    return tuple(seen)


def align_tables(*tables: "LabelTable | Iterable[LabelRow]") -> tuple[LabelTable, ...]:
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
        a, b = m_sys[t.sys_lo], m_sys[t.sys_hi]
        # keep the canonical order (sys_lo < sys_hi) in the new coding
        swap = a > b
        outcome = t.outcome.copy()
        outcome[swap & (t.outcome == LO_WINS)] = HI_WINS
        outcome[swap & (t.outcome == HI_WINS)] = LO_WINS
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
