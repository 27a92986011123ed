"""Judge selection under two readings of the human answers (issue 40): the annotator's single choice,
and every verdict the annotator found acceptable (campaigns that ask for sets).

A comparison is one judge verdict against one human label of the same item (pair x criterion).
Under the single reading it agrees when the verdict is the human's winner (PAR as the report
computes it); under the set reading when the verdict is in the human's set, the winner among it.
Each reading picks its best judge (the highest PAR; a tie in value goes to the name first in
alphabetical order), and `changed` says whether the two readings pick different judges.

Pure: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from calibration.metrics.bootstrap import Estimate, PairBootstrap


@dataclass(frozen=True)
class SetComparison:
    pair: int  # the bootstrap's unit: comparisons of one pair are resampled together
    judge: str
    verdict: str  # the judge's, by side or tie
    winner: str  # the human's single choice
    accepted: tuple[str, ...]  # every verdict the human accepts, the winner among them


@dataclass(frozen=True)
class JudgeByReading:
    judge: str
    single: Estimate
    in_set: Estimate


@dataclass(frozen=True)
class Selection:
    judges: list[JudgeByReading]
    best_single: str | None
    best_set: str | None
    changed: bool
    n_labels_with_sets: int  # human labels (counted once per judge compared) whose set holds more than the winner


def _best(judges: list[JudgeByReading], reading: str) -> str | None:
    scored = [(getattr(j, reading).value, j.judge) for j in judges if getattr(j, reading).value is not None]
    if not scored:
        return None
    top = max(value for value, _ in scored)
    return min(name for value, name in scored if value == top)


def judge_selection(comparisons: Iterable[SetComparison], *, rounds: int = 1000, seed: int = 0) -> Selection:
    """Each judge's PAR under the single and the set reading, with pair-bootstrap 95% CIs, and the
    best judge under each."""
    rows = list(comparisons)
    names = sorted({row.judge for row in rows})
    if not rows:
        return Selection([], None, None, False, 0)
    index = {name: i for i, name in enumerate(names)}
    pair = np.array([row.pair for row in rows], dtype=np.int64)
    group = np.array([index[row.judge] for row in rows], dtype=np.int64)
    single = np.array([row.verdict == row.winner for row in rows], dtype=np.float64)
    in_set = np.array([row.verdict in row.accepted for row in rows], dtype=np.float64)
    ones = np.ones(len(rows))
    boot = PairBootstrap(pair, rounds, seed)
    by_single, by_set = boot.ratios_many([(pair, single, ones, group, len(names)), (pair, in_set, ones, group, len(names))])
    judges = [JudgeByReading(name, by_single[i], by_set[i]) for i, name in enumerate(names)]
    best_single, best_set = _best(judges, "single"), _best(judges, "in_set")
    with_sets = sum(len(row.accepted) > 1 for row in rows)
    return Selection(judges, best_single, best_set, best_single != best_set, with_sets)
