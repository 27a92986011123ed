"""Position bias (swapped runs, and merging them into one verdict) and length bias (prefers the longer article)."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from calibration.metrics._common import TIED, UNKNOWN, sorted_lookup
from calibration.metrics.bootstrap import Estimate, bootstrap_ratio, grouped_ratios
from calibration.metrics.labels import LabelRow, LabelTable, as_table

# --------------------------------------------------------------------------
# position bias (swapped runs)
# --------------------------------------------------------------------------


def _orders(table: LabelTable):
    """Per (rater, item) unit: the first verdict shown each way round.

    Returns (unit keys, rater, item row index, outcome with sys_lo first or -1,
    outcome with sys_hi first or -1).
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


def position_consistency(judge_labels: LabelTable | Iterable[LabelRow], rounds: int = 1000, seed: int = 0) -> Estimate:
    """Share of swapped items (one verdict with each system first) on which the
    judge gives the same verdict in both orders (tie/tie counts as the same)."""
    t, rows, outs = _orders(as_table(judge_labels))
    both = (outs[:, 0] >= 0) & (outs[:, 1] >= 0)
    same = (outs[:, 0] == outs[:, 1]) & both
    pairs = t.pair[rows] if len(rows) else np.zeros(0, dtype=np.int64)
    return bootstrap_ratio(pairs[both], same[both].astype(float), np.ones(int(both.sum())), rounds, seed)


def first_position_rate(judge_labels: LabelTable | Iterable[LabelRow], rounds: int = 1000, seed: int = 0) -> Estimate:
    """Share of non-tie verdicts (with known order) that pick the system shown
    first; 0.5 means no position preference."""
    t = as_table(judge_labels)
    m = (t.first != UNKNOWN) & (t.outcome != TIED)
    return bootstrap_ratio(t.pair[m], (t.outcome[m] == t.first[m]).astype(float), np.ones(int(m.sum())), rounds, seed)


def position_figures_by_rater(table: LabelTable, raters: list[int], rounds: int = 1000, seed: int = 0) -> list[tuple[Estimate, Estimate]]:
    """(:func:`position_consistency`, :func:`first_position_rate`) of each rater's labels alone
    (``raters``: their codes, in the order wanted), every rater computed together
    (`bootstrap.grouped_ratios`)."""
    slot = np.full(len(table.vocab.raters), -1, dtype=np.int64)
    slot[raters] = np.arange(len(raters))
    t, rows, outs = _orders(table)
    both = (outs[:, 0] >= 0) & (outs[:, 1] >= 0)
    same = ((outs[:, 0] == outs[:, 1]) & both).astype(float)
    unit_rater = slot[t.rater[rows]] if len(rows) else np.zeros(0, dtype=np.int64)
    pairs = t.pair[rows] if len(rows) else np.zeros(0, dtype=np.int64)
    keep = both & (unit_rater >= 0)
    consistency = grouped_ratios(unit_rater[keep], pairs[keep], same[keep], np.ones(int(keep.sum())), len(raters), rounds, seed)
    m = (table.first != UNKNOWN) & (table.outcome != TIED) & (slot[table.rater] >= 0)
    first = (table.outcome[m] == table.first[m]).astype(float)
    rate = grouped_ratios(slot[table.rater[m]], table.pair[m], first, np.ones(int(m.sum())), len(raters), rounds, seed)
    return list(zip(consistency, rate))


def merge_swapped(judge_labels: LabelTable | Iterable[LabelRow], require_both: bool = False) -> LabelTable:
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
        t.sys_lo[r],
        t.sys_hi[r],
        merged[keep],
        np.full(len(r), UNKNOWN),
        t.longer[r],
    )
    unordered = table.select(table.first == UNKNOWN)
    if len(unordered) and len(t):
        span = int(max(table.item.max(), 0)) + 1
        k_ord = np.unique(t.rater.astype(np.int64) * span + t.item)
        k_un = unordered.rater.astype(np.int64) * span + unordered.item
        found, _ = sorted_lookup(k_ord, k_un)
        unordered = unordered.select(~found)
    if not len(unordered):
        return ordered
    return LabelTable.concat(ordered, unordered)


# --------------------------------------------------------------------------
# length bias
# --------------------------------------------------------------------------


def prefers_longer(labels: LabelTable | Iterable[LabelRow], rounds: int = 1000, seed: int = 0) -> Estimate:
    """Share of non-tie verdicts (longer system known) choosing the longer article."""
    t = as_table(labels)
    m = (t.longer != UNKNOWN) & (t.outcome != TIED)
    return bootstrap_ratio(t.pair[m], (t.outcome[m] == t.longer[m]).astype(float), np.ones(int(m.sum())), rounds, seed)
