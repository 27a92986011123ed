"""How a judge's verdicts count against the humans: the conventions published papers use.

Two choices, each with this project's own convention as the default:

Swap policy: how an item judged in both orders counts.

* ``tie`` (the default): one verdict per item, the verdict both orders agree on, else a tie
  (:func:`bias.merge_swapped`).
* ``half``: each order counts as half a verdict. Two orders that disagree are half right
  when one of them matches the human; accuracy is the mean over the two orders.
* ``both``: the verdict both orders agree on, else a wrong one: an item is right only when both
  orders agree with the human.

Unparsable verdicts: the items a judge was asked about and gave no usable verdict for (its units
left in ERROR: an answer it could not read, a request that failed, an error row of an imported file).

* ``drop`` (the default): left out, as if the judge had not been asked.
* ``wrong``: a verdict that agrees with no human label. Under ``tie`` and ``both`` an item with an
  unparsable order is wrong; under ``half`` that order is half a wrong verdict.

An item in one order only counts as its one verdict under every swap policy. The result is a
:class:`Votes`: the judge's share of each answer per item, which :func:`agreement.agreement` and
:func:`agreement.paired_difference` take as ``share``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calibration.metrics._common import TIED, UNKNOWN, WRONG
from calibration.metrics.bias import merge_swapped
from calibration.metrics.labels import LabelTable, align_tables, as_table

SWAP_POLICIES = ("tie", "half", "both")
UNPARSABLE_POLICIES = ("drop", "wrong")
DEFAULT_SWAP_POLICY = "tie"
DEFAULT_UNPARSABLE = "drop"
SWAP_RULES = {
    "tie": "an item judged in both orders counts once: the verdict both orders agree on, else a tie",
    "half": "an item judged in both orders counts each order as half a verdict (the mean over the two orders)",
    "both": "an item judged in both orders is right only when both orders agree with the human",
}
UNPARSABLE_RULES = {
    "drop": "verdicts the judge failed to give (units left in error) are left out",
    "wrong": "verdicts the judge failed to give (units left in error) count as wrong",
}
_SLOTS = 3  # sys_lo shown first, sys_hi shown first, order unknown


def convention_text(swap_policy: str, unparsable: str) -> str:
    """The convention in words, as the report states it."""
    return f"{SWAP_RULES[swap_policy]}; {UNPARSABLE_RULES[unparsable]}"


def check_convention(swap_policy: str, unparsable: str) -> None:
    if swap_policy not in SWAP_POLICIES:
        raise ValueError(f"unknown swap policy '{swap_policy}' (choose {', '.join(SWAP_POLICIES)})")
    if unparsable not in UNPARSABLE_POLICIES:
        raise ValueError(f"unknown unparsable policy '{unparsable}' (choose {', '.join(UNPARSABLE_POLICIES)})")


@dataclass(frozen=True)
class Votes:
    """One judge's verdicts on its items, as a convention counts them.

    ``items`` has one row per item. Under the default convention ``share`` is None and ``items``
    is ``merge_swapped`` of the verdicts: each row's outcome counts, whole. Otherwise ``share``
    (items x 4: lo wins, hi wins, tie, wrong; rows sum to 1) says how much of the judge's verdict on
    each item goes to each answer, and the rows' outcomes are placeholders. ``n_unparsable``:
    verdicts (item and order) the judge failed to give, whatever the convention.
    """

    items: LabelTable
    share: np.ndarray | None
    n_unparsable: int


def _slot(t: LabelTable) -> np.ndarray:
    return np.where(t.first == UNKNOWN, 2, t.first).astype(np.int64)


def _entries(raw: LabelTable, failed: LabelTable, keep_failed: bool):
    """(table, verdict per row, kept rows): the first verdict of each (item, order), verdicts before
    failures; a failure where the same order has a verdict is no failure; an unknown order only
    where the item has no known one (as in merge_swapped)."""
    both = LabelTable.concat(raw, failed) if len(failed) else raw
    verdict = np.concatenate([raw.outcome.astype(np.int64), np.full(len(failed), WRONG)])
    key = both.item * _SLOTS + _slot(both)
    _, first = np.unique(key, return_index=True)  # the first row of each (item, order): a verdict when there is one
    first = np.sort(first)
    known_items = np.unique(both.item[first][_slot(both)[first] < 2])
    first = first[(_slot(both)[first] < 2) | ~np.isin(both.item[first], known_items)]
    n_failed = int((verdict[first] == WRONG).sum())
    if not keep_failed:
        first = first[verdict[first] != WRONG]
    return both, verdict, first, n_failed


def judge_votes(
    raw: LabelTable,
    failed: LabelTable | None = None,
    *,
    swap_policy: str = DEFAULT_SWAP_POLICY,
    unparsable: str = DEFAULT_UNPARSABLE,
) -> Votes:
    """One judge's :class:`Votes` from its raw verdicts (both orders) and the items it failed on.

    ``raw``: one judge's verdicts; ``failed``: rows of the same judge, one per (item, order) it
    was asked about and gave no usable verdict for (their outcome is ignored).
    """
    check_convention(swap_policy, unparsable)
    original = as_table(raw)
    failed = as_table(failed) if failed is not None else LabelTable.empty(original.vocab)
    raw = original
    if len(failed) and len(raw):
        raw, failed = align_tables(raw, failed)
    elif len(failed):
        raw = LabelTable.empty(failed.vocab)
    both, verdict, rows, n_failed = _entries(raw, failed, unparsable == "wrong")
    if swap_policy == DEFAULT_SWAP_POLICY and unparsable == DEFAULT_UNPARSABLE:
        # Today's verdicts, on the table as it came (no other vocabulary to align with the humans').
        return Votes(merge_swapped(original) if len(original) else original, None, n_failed)
    items, inverse = np.unique(both.item[rows], return_inverse=True)
    slots = np.full((len(items), _SLOTS), -1, dtype=np.int64)
    slots[inverse, _slot(both)[rows]] = verdict[rows]
    share = np.zeros((len(items), WRONG + 1))
    given = slots >= 0
    counts = given.sum(axis=1)
    lone = counts == 1
    lone_verdict = slots.max(axis=1)  # the one slot given (the others are -1)
    share[np.flatnonzero(lone), lone_verdict[lone]] = 1.0
    pairs = np.flatnonzero(counts == 2)  # both orders (an unknown order never sits beside a known one)
    first, second = slots[pairs, 0], slots[pairs, 1]
    if swap_policy == "half":
        np.add.at(share, (pairs, first), 0.5)
        np.add.at(share, (pairs, second), 0.5)
    else:
        disagree = TIED if swap_policy == "tie" else WRONG
        merged = np.where(first == second, first, np.where((first == WRONG) | (second == WRONG), WRONG, disagree))
        share[pairs, merged] = 1.0
    _, representative = np.unique(both.item[rows], return_index=True)
    table = both.select(rows[representative])
    placeholder = np.full(len(table), TIED)  # not read: `share` counts instead
    items_table = LabelTable(
        table.vocab, table.pair, table.criterion, table.category, table.rater, table.sys_lo, table.sys_hi,
        placeholder, np.full(len(table), UNKNOWN), table.longer,
    )  # fmt: skip
    return Votes(items_table, share, n_failed)
