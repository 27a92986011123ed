"""Orderings of k articles of one item (issue 38's ranking protocol): how far raters agree on them, the
systems' Plackett-Luce strengths, and how a judge's orderings follow the humans'.

An ordering is one rater's answer on one item: the item's systems, best first, in groups of those tied
(`Ordering.groups`). Every interval resamples items (the bootstrap's unit: a rater's orderings of one
item are not independent of another rater's), 95% percentile, and every figure carries the number of
items and orderings it rests on.

Conventions, stated where a figure is shown:
- ranks are 1 for the best; tied systems share the mean of the ranks they span (mid-ranks);
- Kendall's W is corrected for ties (the sum over raters of t^3 - t, t each group's size);
- the Plackett-Luce fit takes strict orderings only: one with a tie is left out and counted
  (`PlackettLuce.n_skipped_tied`); strengths are log-scale, centred on their mean;
- a judge's agreement with the humans is Kendall's tau-b between its ranks and the humans' mean ranks,
  averaged over items; the share of pairs ordered alike counts the pairs of systems of an item that
  the humans' mean ranks order (a tie there is left out and counted), a judge's tie never alike.

Pure: numpy, scipy and choix only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from calibration.metrics.bootstrap import Estimate, percentile_ci
from calibration.metrics.distributions import kendall_tau_b

ROUNDS = 1000
SEED = 0
# choix's ILSR with a small ridge: without it, a system that won (or lost) every comparison has no
# finite strength. The same value in the fit and in every bootstrap round.
ALPHA = 0.01


@dataclass(frozen=True)
class Ordering:
    """One rater's ordering of one item's systems: `groups` best first, each a group of tied systems."""

    item: str
    rater: str
    groups: tuple[tuple[str, ...], ...]

    @property
    def strict(self) -> bool:
        return all(len(group) == 1 for group in self.groups)

    @property
    def systems(self) -> tuple[str, ...]:
        return tuple(system for group in self.groups for system in group)


def ordering_of(item: str, rater: str, groups: Sequence[Sequence[str]], systems: Mapping[str, str]) -> Ordering:
    """The metrics' ordering of one stored answer: `groups` of slots best first (the ranking protocol's
    `metric_outcome`), each slot named by its system (`systems`, slot -> system key)."""
    return Ordering(item, rater, tuple(tuple(systems[slot] for slot in group) for group in groups))


def pairs_of(ordering: Ordering) -> list[tuple[str, str, str]]:
    """The pairs of systems an ordering decides, as pairwise outcomes (first, second, winner or "tie"),
    each pair once, its systems in name order: k systems give k(k-1)/2 pairs. They come from one
    rater's answer on one item and are not independent: a figure that uses them resamples by item."""
    ranks = mid_ranks(ordering.groups)
    pairs = []
    for first, second in itertools.combinations(sorted(ranks), 2):
        winner = "tie" if ranks[first] == ranks[second] else (first if ranks[first] < ranks[second] else second)
        pairs.append((first, second, winner))
    return pairs


def mid_ranks(groups: Sequence[Sequence[str]]) -> dict[str, float]:
    """Each system's rank, 1 for the best; a tied group shares the mean of the ranks it spans."""
    ranks, start = {}, 1
    for group in groups:
        shared = start + (len(group) - 1) / 2
        ranks.update((system, shared) for system in group)
        start += len(group)
    return ranks


def kendalls_w(ranks: np.ndarray) -> float:
    """Kendall's W of an m x n array of ranks (m raters, each ranking the same n objects; mid-ranks
    for ties), corrected for ties. NaN when it is undefined (fewer than 2 raters or objects, or every
    rater tying everything)."""
    ranks = np.asarray(ranks, dtype=float)
    m, n = ranks.shape
    if m < 2 or n < 2:
        return math.nan
    totals = ranks.sum(axis=0)
    spread = float(((totals - totals.mean()) ** 2).sum())
    ties = 0.0
    for row in ranks:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts**3 - counts).sum())
    denominator = m * m * (n**3 - n) - m * ties
    return 12 * spread / denominator if denominator > 0 else math.nan


@dataclass(frozen=True)
class PlackettLuce:
    """The systems' Plackett-Luce strengths (log-scale, mean 0) with item-bootstrap CIs."""

    strengths: dict[str, Estimate]
    n_items: int
    n_rankings: int
    n_skipped_tied: int


def _strengths(rankings: Sequence[tuple[int, ...]], n_systems: int, alpha: float) -> np.ndarray:
    import choix  # imported when first fitted: the report command starts without it (tests/test_metrics_distributions.py)

    params = choix.ilsr_rankings(n_systems, rankings, alpha=alpha)
    return params - params.mean()


def plackett_luce(orderings: Iterable[Ordering], *, alpha: float = ALPHA, rounds: int = ROUNDS, seed: int = SEED) -> PlackettLuce:
    """Plackett-Luce strengths of every system named, fitted with choix on the strict orderings."""
    orderings = list(orderings)
    systems = sorted({system for ordering in orderings for system in ordering.systems})
    index = {system: i for i, system in enumerate(systems)}
    strict = [ordering for ordering in orderings if ordering.strict]
    by_item: dict[str, list[tuple[int, ...]]] = {}
    for ordering in strict:
        by_item.setdefault(ordering.item, []).append(tuple(index[system] for system in ordering.systems))
    items = sorted(by_item)
    skipped = len(orderings) - len(strict)
    if not strict or len(systems) < 2:
        empty = {system: Estimate(None, 0, n_pairs=len(items)) for system in systems}
        return PlackettLuce(empty, len(items), len(strict), skipped)
    point = _strengths([r for item in items for r in by_item[item]], len(systems), alpha)
    rng = np.random.default_rng(seed)
    samples = np.full((rounds, len(systems)), np.nan)
    for r in range(rounds):
        drawn = rng.integers(0, len(items), len(items))
        rankings = [ranking for i in drawn for ranking in by_item[items[i]]]
        named = {s for ranking in rankings for s in ranking}
        if len(named) == len(systems):  # a round that leaves a system out cannot place it: undefined
            samples[r] = _strengths(rankings, len(systems), alpha)
    low, high = percentile_ci(samples)
    strengths = {
        system: Estimate(float(point[i]), len(strict), _finite(low[i]), _finite(high[i]), n_pairs=len(items)) for system, i in index.items()
    }
    return PlackettLuce(strengths, len(items), len(strict), skipped)


def _finite(value) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


@dataclass(frozen=True)
class OrderAgreement:
    """A judge's orderings against the humans' mean ranks, over the items both ordered."""

    tau: Estimate  # mean Kendall's tau-b over items
    pairs_alike: Estimate  # share of the pairs the humans order that the judge orders the same way
    n_items: int
    n_pairs: int
    n_pairs_humans_tied: int  # pairs left out: the humans' mean ranks tie them


def _mean_ranks(orderings: Sequence[Ordering]) -> dict[str, float]:
    ranks = [mid_ranks(ordering.groups) for ordering in orderings]
    systems = sorted(set().union(*ranks)) if ranks else []
    return {system: float(np.mean([r[system] for r in ranks if system in r])) for system in systems}


def _item_figures(judge: Ordering, humans: Sequence[Ordering]) -> tuple[float, int, int, int]:
    """(tau-b, pairs alike, pairs the humans order, pairs they tie) on one item."""
    mean = _mean_ranks(humans)
    mine = mid_ranks(judge.groups)
    systems = sorted(set(mean) & set(mine))
    tau, _ = kendall_tau_b([mine[s] for s in systems], [mean[s] for s in systems])
    alike = ordered = tied = 0
    for i, first in enumerate(systems):
        for second in systems[i + 1 :]:
            human = np.sign(mean[first] - mean[second])
            if human == 0:
                tied += 1
                continue
            ordered += 1
            alike += int(np.sign(mine[first] - mine[second]) == human)
    return tau, alike, ordered, tied


def _by_item(orderings: Iterable[Ordering]) -> dict[str, list[Ordering]]:
    out: dict[str, list[Ordering]] = {}
    for ordering in orderings:
        out.setdefault(ordering.item, []).append(ordering)
    return out


def _item_bootstrap(per_item: np.ndarray, *, rounds: int, seed: int, ratio: bool) -> tuple[float | None, float | None]:
    """A CI by resampling items: of the mean of column 0 (`ratio` False, NaN items left out), or of the
    ratio of the sums of columns 0 and 1."""
    if len(per_item) < 2:
        return None, None
    rng = np.random.default_rng(seed)
    samples = np.full(rounds, np.nan)
    for r in range(rounds):
        drawn = per_item[rng.integers(0, len(per_item), len(per_item))]
        if ratio:
            samples[r] = drawn[:, 0].sum() / drawn[:, 1].sum() if drawn[:, 1].sum() else np.nan
        elif np.isfinite(drawn[:, 0]).any():
            samples[r] = np.nanmean(drawn[:, 0])
    low, high = percentile_ci(samples)
    return _finite(low), _finite(high)


def order_agreement(judge: Iterable[Ordering], humans: Iterable[Ordering], *, rounds: int = ROUNDS, seed: int = SEED) -> OrderAgreement:
    """How the judge's orderings (one per item) follow the humans' mean ranks, on the items both ordered."""
    people = _by_item(humans)
    rows = []
    for ordering in judge:
        if ordering.item in people:
            rows.append(_item_figures(ordering, people[ordering.item]))
    if not rows:
        return OrderAgreement(Estimate(None, 0), Estimate(None, 0), 0, 0, 0)
    figures = np.array(rows, dtype=float)
    taus = figures[:, 0]
    defined = np.isfinite(taus)
    tau_value = float(np.mean(taus[defined])) if defined.any() else None
    tau = Estimate(tau_value, int(defined.sum()), *_item_bootstrap(taus[:, None], rounds=rounds, seed=seed, ratio=False), n_pairs=len(rows))
    alike, ordered = figures[:, 1], figures[:, 2]
    share = float(alike.sum() / ordered.sum()) if ordered.sum() else None
    ci = _item_bootstrap(np.column_stack([alike, ordered]), rounds=rounds, seed=seed, ratio=True)
    pairs = Estimate(share, int(ordered.sum()), *ci, n_pairs=len(rows))
    return OrderAgreement(tau, pairs, len(rows), int(ordered.sum()), int(figures[:, 3].sum()))


def leave_one_out_ceiling(humans: Iterable[Ordering], *, rounds: int = ROUNDS, seed: int = SEED) -> Estimate:
    """The humans' own ceiling: each human's tau-b against the mean ranks of the item's other humans,
    averaged within an item and then over the items with at least two humans."""
    per_item = []
    for orderings in _by_item(humans).values():
        if len(orderings) < 2:
            continue
        taus = [_item_figures(one, [o for o in orderings if o is not one])[0] for one in orderings]
        taus = [tau for tau in taus if np.isfinite(tau)]
        per_item.append(float(np.mean(taus)) if taus else math.nan)
    values = np.array(per_item, dtype=float)
    defined = np.isfinite(values)
    if not defined.any():
        return Estimate(None, 0, n_pairs=len(per_item))
    low, high = _item_bootstrap(values[:, None], rounds=rounds, seed=seed, ratio=False)
    return Estimate(float(values[defined].mean()), int(defined.sum()), low, high, n_pairs=len(per_item))


def agreement_among(orderings: Iterable[Ordering]) -> Mapping[str, float]:
    """Kendall's W of each item's raters (items whose raters all ranked the same systems, two or more)."""
    out = {}
    for item, rows in _by_item(orderings).items():
        systems = sorted(rows[0].systems)
        if len(rows) < 2 or any(sorted(row.systems) != systems for row in rows):
            continue
        out[item] = kendalls_w(np.array([[mid_ranks(row.groups)[s] for s in systems] for row in rows]))
    return out


def mean_agreement(orderings: Iterable[Ordering], *, rounds: int = ROUNDS, seed: int = SEED) -> Estimate:
    """Kendall's W among raters, averaged over the items `agreement_among` measures (W undefined on an
    item, all its raters tying everything, is left out), with a CI by resampling those items."""
    values = np.array([w for w in agreement_among(orderings).values()], dtype=float)
    defined = values[np.isfinite(values)]
    if not len(defined):
        return Estimate(None, 0, n_pairs=len(values))
    low, high = _item_bootstrap(defined[:, None], rounds=rounds, seed=seed, ratio=False)
    return Estimate(float(defined.mean()), len(defined), low, high, n_pairs=len(defined))
