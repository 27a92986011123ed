"""The alt-test's input and its comparisons: labels in long form (:class:`Ratings`) and, for every
usable human label, whether the judge scores at least as well as its annotator (W_f) and the
reverse (W_h), against the item's other annotators. Rules in ``calibration.metrics.alttest``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

SCORINGS = ("categorical", "numeric")
_NUMERIC_TIE = 1e-9

# --------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Ratings:
    """Labels in long form, one row per (pair, criterion, rater).

    ``pair`` and ``criterion`` name the item (any hashable values: strings or integer codes);
    ``rater`` names the annotator (ignored for a judge, which has one verdict per item); ``value``
    is the label: any values compared for equality under categorical scoring (e.g. the winning
    system's code or name, or "tie"), numbers under numeric scoring.
    """

    pair: np.ndarray
    criterion: np.ndarray
    rater: np.ndarray
    value: np.ndarray

    def __post_init__(self) -> None:
        n = None
        for name in ("pair", "criterion", "rater", "value"):
            arr = np.asarray(getattr(self, name))
            if arr.ndim != 1:
                raise ValueError(f"{name} must be one-dimensional")
            object.__setattr__(self, name, arr)
            if n is None:
                n = arr.shape[0]
            elif arr.shape[0] != n:
                raise ValueError(f"{name} has {arr.shape[0]} rows, expected {n}")

    def __len__(self) -> int:
        return int(self.pair.shape[0])

    @classmethod
    def from_rows(cls, rows: Iterable[tuple]) -> "Ratings":
        """From ``(pair, criterion, rater, value)`` tuples."""
        rows = list(rows)
        if not rows:
            return cls(np.zeros(0, dtype=object), np.zeros(0, dtype=object), np.zeros(0, dtype=object), np.zeros(0))
        pair, criterion, rater, value = (list(col) for col in zip(*rows, strict=True))
        return cls(np.array(pair), np.array(criterion), np.array(rater), np.array(value))

    @classmethod
    def from_annotations(cls, annotations: Mapping) -> "Ratings":
        """From the paper's shape: ``{annotator: {item: label}}`` (one criterion; the item is the pair)."""
        rows = [(item, "", rater, label) for rater, labels in annotations.items() for item, label in labels.items()]
        return cls.from_rows(rows)

    @classmethod
    def from_verdicts(cls, verdicts: Mapping) -> "Ratings":
        """A judge's ``{item: label}`` (one criterion; the item is the pair)."""
        return cls.from_rows((item, "", "judge", label) for item, label in verdicts.items())


# --------------------------------------------------------------------------
# W_f and W_h per label
# --------------------------------------------------------------------------


def _codes(*arrays: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """(the distinct values, one integer coding per array): np.unique over the arrays joined. Numbers
    stay numbers; anything else is compared as text."""
    sizes = [len(a) for a in arrays]
    if all(np.asarray(a).dtype.kind in "iubf" for a in arrays):
        joined = np.concatenate(arrays)
    else:
        joined = np.concatenate([np.asarray(a).astype(str) for a in arrays])
    values, inverse = np.unique(joined, return_inverse=True)
    return values, np.split(inverse.astype(np.int64), np.cumsum(sizes)[:-1])


@dataclass(frozen=True)
class Wins:
    """Per usable human label: its annotator, pair and criterion codes, W_f and W_h; ``pair_names``
    the pair values the codes stand for (the keys of an ``inclusion`` mapping)."""

    rater: np.ndarray
    pair: np.ndarray
    criterion: np.ndarray
    wf: np.ndarray
    wh: np.ndarray
    rater_names: np.ndarray
    criterion_names: np.ndarray
    humans_per_item_max: int
    pair_names: np.ndarray


def wins_of(humans: Ratings, judge: Ratings, scoring: str, min_humans_per_item: int) -> Wins:
    if scoring not in SCORINGS:
        raise ValueError(f"unknown scoring {scoring!r} (choose {', '.join(SCORINGS)})")
    pair_names, (pair_h, pair_j) = _codes(humans.pair, judge.pair)
    crit_names, (crit_h, crit_j) = _codes(humans.criterion, judge.criterion)
    n_crit = int(max(crit_h.max(initial=-1), crit_j.max(initial=-1))) + 1
    item_h, item_j = pair_h * n_crit + crit_h, pair_j * n_crit + crit_j
    rater_names, (rater,) = _codes(humans.rater)
    if len(np.unique(item_h * (len(rater_names) + 1) + rater)) != len(humans):
        raise ValueError("an annotator has two labels on one item: keep one label per (pair, criterion, annotator)")
    judge_items, judge_pos = np.unique(item_j, return_index=True)
    if len(judge_items) != len(judge):
        raise ValueError("the judge has two verdicts on one item: merge them first (one verdict per item)")

    if scoring == "categorical":
        _, (val_h, val_j) = _codes(humans.value, judge.value)
    else:
        try:
            val_h, val_j = np.asarray(humans.value, dtype=float), np.asarray(judge.value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError("numeric scoring needs numbers as labels (use scoring='categorical' for answers)") from None
        if not (np.isfinite(val_h).all() and np.isfinite(val_j).all()):
            raise ValueError("numeric labels must be finite numbers")

    items, item_of, per_item = np.unique(item_h, return_inverse=True, return_counts=True)
    pos = np.minimum(np.searchsorted(judge_items, items), max(len(judge_items) - 1, 0))
    judged = judge_items[pos] == items if len(judge_items) else np.zeros(len(items), bool)
    z = np.asarray(val_j)[judge_pos[pos]] if len(judge_items) else np.zeros(len(items), val_h.dtype)
    usable = (per_item >= min_humans_per_item) & judged
    keep = usable[item_of]
    i, y, zi = item_of[keep], val_h[keep], z[item_of[keep]]
    others = (per_item[i] - 1).astype(float)

    if scoring == "categorical":
        n_values = int(max(val_h.max(initial=-1), np.asarray(val_j).max(initial=-1))) + 1
        counts = np.bincount(item_of * n_values + val_h, minlength=len(items) * n_values)
        human_hits = counts[i * n_values + y] - 1  # the others who gave j's label
        judge_hits = counts[i * n_values + zi] - (zi == y)  # the others who gave the judge's label
        wf, wh = judge_hits >= human_hits, human_hits >= judge_hits
    else:
        s1 = np.bincount(item_of, weights=val_h, minlength=len(items))
        s2 = np.bincount(item_of, weights=val_h * val_h, minlength=len(items))
        n_i = per_item.astype(float)
        # sum over the others k of (x - h_k)^2 = sum over all - (x - y)^2
        mse_h = (n_i[i] * y * y - 2 * y * s1[i] + s2[i]) / others
        mse_f = (n_i[i] * zi * zi - 2 * zi * s1[i] + s2[i] - (zi - y) ** 2) / others
        mse_h, mse_f = np.maximum(mse_h, 0.0), np.maximum(mse_f, 0.0)
        tie = np.abs(mse_f - mse_h) <= _NUMERIC_TIE * (1.0 + np.maximum(mse_f, mse_h))
        wf, wh = tie | (mse_f < mse_h), tie | (mse_h < mse_f)
    return Wins(
        rater[keep],
        pair_h[keep],
        crit_h[keep],
        wf.astype(float),
        wh.astype(float),
        rater_names,
        crit_names,
        int(per_item.max(initial=0)),
        pair_names,
    )


def _recode(names: list[np.ndarray], codes: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One vocabulary for several groups' (names, codes): the names joined, each group's codes mapped into it."""
    values, parts = _codes(*names)
    return values, [part[code] for part, code in zip(parts, codes)]


def pooled_wins(groups: Sequence[tuple[Ratings, Ratings, str]], min_humans_per_item: int) -> Wins:
    """W_f and W_h of several groups of criteria, each ``(humans, judge, scoring)`` scored its own way,
    as one :class:`Wins`: a comparison is made within one item (the judge and an annotator against the
    item's other annotators), so criteria of different scales or response types pool without a common
    scale. Pairs and annotators of the same name are the same across groups; give each group its own
    criterion names (an item is (pair, criterion))."""
    if not groups:
        raise ValueError("pooled_wins needs at least one group of criteria")
    parts = [wins_of(humans, judge, scoring, min_humans_per_item) for humans, judge, scoring in groups]
    raters, rater = _recode([w.rater_names for w in parts], [w.rater for w in parts])
    pairs, pair = _recode([w.pair_names for w in parts], [w.pair for w in parts])
    criteria, criterion = _recode([w.criterion_names for w in parts], [w.criterion for w in parts])
    return Wins(
        np.concatenate(rater),
        np.concatenate(pair),
        np.concatenate(criterion),
        np.concatenate([w.wf for w in parts]),
        np.concatenate([w.wh for w in parts]),
        raters,
        criteria,
        max(w.humans_per_item_max for w in parts),
        pairs,
    )
