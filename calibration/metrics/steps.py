"""Fine-grained votes: up or down on an agent's steps and on passages, per system (issue 42).

Pure numpy. A vote row is (item, rater, system, unit, kind, up): the pair it was given on (the
bootstrap's unit, as everywhere in the report), the annotator, the system whose step or passage it
is, the step (or passage) voted on, the step's kind, and whether it was up.

- `upvote_rates`: per system (or per system and kind), the share of votes that are up, with a 95%
  bootstrap interval resampling pairs, n votes and n pairs.
- `vote_kappa`: chance-corrected agreement among annotators on the units two or more voted on:
  Fleiss' kappa in its form for a varying number of raters per unit (equal to Fleiss' own when
  every unit has as many).
- `vote_ceiling`: the leave-one-out human ceiling: how often a vote matches the strict majority of
  the other annotators' votes on the same unit (units where the others tie are left out).
- `ranking_tau`: Kendall's tau-b between two scorings of the same systems
  (`distributions.kendall_tau_b`, equal to scipy's in its tests; scipy.stats stays unimported).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calibration.metrics.bootstrap import Estimate, bootstrap_ratio, grouped_ratios
from calibration.metrics.distributions import kendall_tau_b


@dataclass(frozen=True)
class Votes:
    item: np.ndarray  # int: the pair
    rater: np.ndarray  # str
    system: np.ndarray  # str
    unit: np.ndarray  # int: the step or passage voted on
    kind: np.ndarray  # str: the step's kind ("" for a passage)
    up: np.ndarray  # bool

    @classmethod
    def of(cls, rows: list[tuple]) -> Votes:
        columns = list(zip(*rows)) if rows else [[]] * 6
        return cls(
            np.asarray(columns[0], dtype=np.int64),
            np.asarray(columns[1], dtype=object),
            np.asarray(columns[2], dtype=object),
            np.asarray(columns[3], dtype=np.int64),
            np.asarray(columns[4], dtype=object),
            np.asarray(columns[5], dtype=bool),
        )

    def __len__(self) -> int:
        return len(self.item)


def upvote_rates(votes: Votes, *, by_kind: bool = False, rounds: int = 1000, seed: int = 0) -> dict:
    """{system: Estimate} (or {(system, kind): Estimate}): the share of up votes, CI by pair."""
    if not len(votes):
        return {}
    keys = list(zip(votes.system, votes.kind)) if by_kind else list(votes.system)
    names = sorted(set(keys))
    index = {name: i for i, name in enumerate(names)}
    group = np.asarray([index[k] for k in keys], dtype=np.int64)
    estimates = grouped_ratios(group, votes.item, votes.up.astype(np.float64), np.ones(len(votes)), len(names), rounds, seed)
    return dict(zip(names, estimates))


def vote_kappa(votes: Votes) -> tuple[float | None, int]:
    """(kappa, units): Fleiss' kappa over the units with two or more votes (None when there are none,
    or when every vote is the same, so chance agreement is 1)."""
    units, inverse = np.unique(votes.unit, return_inverse=True)
    n = np.bincount(inverse, minlength=len(units)).astype(np.float64)
    ups = np.bincount(inverse, weights=votes.up.astype(np.float64), minlength=len(units))
    keep = n >= 2
    if not keep.any():
        return None, 0
    n, ups = n[keep], ups[keep]
    downs = n - ups
    agreement = (ups * (ups - 1) + downs * (downs - 1)) / (n * (n - 1))
    p_up = ups.sum() / n.sum()
    chance = p_up**2 + (1 - p_up) ** 2
    if chance >= 1:
        return None, int(keep.sum())
    return float((agreement.mean() - chance) / (1 - chance)), int(keep.sum())


def vote_ceiling(votes: Votes, *, rounds: int = 1000, seed: int = 0) -> Estimate:
    """The share of votes equal to the strict majority of the other annotators' votes on the same unit."""
    units, inverse = np.unique(votes.unit, return_inverse=True)
    n = np.bincount(inverse, minlength=len(units))
    ups = np.bincount(inverse, weights=votes.up.astype(np.float64), minlength=len(units))
    others_n = n[inverse] - 1
    others_up = ups[inverse] - votes.up
    others_down = others_n - others_up
    decided = (others_n >= 1) & (others_up != others_down)
    if not decided.any():
        return Estimate(None, 0, n_pairs=0)
    majority_up = others_up > others_down
    agree = (majority_up == votes.up)[decided].astype(np.float64)
    return bootstrap_ratio(votes.item[decided], agree, np.ones(int(decided.sum())), rounds, seed)


def ranking_tau(first: dict[str, float], second: dict[str, float]) -> tuple[float | None, int]:
    """(tau, systems) between two scorings, over the systems both score (None below two, or when
    either scoring gives every system the same score)."""
    common = sorted(set(first) & set(second))
    if len(common) < 2:
        return None, len(common)
    a, b = [first[s] for s in common], [second[s] for s in common]
    if len(set(a)) < 2 or len(set(b)) < 2:
        return None, len(common)
    return float(kendall_tau_b(a, b)[0]), len(common)
