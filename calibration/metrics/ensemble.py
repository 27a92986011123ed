"""Virtual ensemble judges: the majority vote of several judges' verdicts, evaluated like a judge.

Benchmarks judge with ensembles (LiveResearchBench averages two judges). An ensemble's verdict
on an item is the one more than half of its members give; without a strict majority (two
members who disagree, three who all differ) it is a tie, which is what averaging two judges'
scores gives too. Only items every member has a verdict on are judged, so that the ensemble
never rests on fewer judges than it names. Its cost is the sum of its members' costs (the
caller adds them; nothing here knows prices).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

import numpy as np

from calibration.metrics._common import TIED, UNKNOWN
from calibration.metrics.agreement import item_counts, strict_majority
from calibration.metrics.labels import LabelRow, LabelTable, align_tables

TIE_RULE = "no strict majority of the members: tie"


def ensemble_verdicts(members: Iterable[LabelTable | Iterable[LabelRow]], name: str) -> LabelTable:
    """One verdict per item for the ensemble `name` (a judge in the returned table's vocabulary).

    Each member must hold one verdict per item (merge swapped runs first); at least two members.
    """
    tables = align_tables(*members)
    if len(tables) < 2:
        raise ValueError("an ensemble needs at least two judges")
    for t in tables:
        if len(np.unique(t.rater)) > 1:
            raise ValueError("each member must be one judge's verdicts")
        if len(np.unique(t.item)) != len(t):
            raise ValueError("each member must hold one verdict per item (merge swapped runs first)")
    both = LabelTable.concat(*tables)
    keys, _, first_row, counts = item_counts(both.item, both.outcome)
    everyone = counts.sum(axis=1) == len(tables)
    has, majority = strict_majority(counts)
    outcome = np.where(has, majority, TIED)[everyone]
    rows = first_row[everyone]
    vocab = replace(both.vocab, raters=(name,), rater_kinds=("judge",))
    return LabelTable(
        vocab,
        both.pair[rows],
        both.criterion[rows],
        both.category[rows],
        np.zeros(len(rows), dtype=np.int32),
        both.sys_lo[rows],
        both.sys_hi[rows],
        outcome,
        np.full(len(rows), UNKNOWN),
        both.longer[rows],
    )
