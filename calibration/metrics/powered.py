"""Prediction-powered system scores of one judge: win rates and Bradley-Terry scores estimated
from all of the judge's verdicts plus the items that have human labels (:mod:`.ppi`), next to the
human-only and judge-only estimates, with rank-sets.

The unit is an *item* (pair, criterion) the judge has a verdict on. Its human value ``y`` is the
share of its human labels that the pair's first system (in name order) wins, a tie counting 1/2
(several annotators are averaged); the judge's value ``yhat`` likewise from its verdict (both
orders merged). A pair with any human label is *labelled*: its items with a human label form the
labelled set (its items without one are left out, so that a pair is never split between the
sets); the items of pairs without human labels form the unlabelled set. Pairs are the clusters.

The judge's weight ``lam`` is PPI++'s data-tuned one when the judge's values are correlated with
the humans' on the labelled pairs (:func:`.ppi.informative`, one-sided 5%), else 0 (humans only).

Estimands are what the humans would say: a system's win rate against the reference (or, without
one, against every system it meets), and Bradley-Terry scores fitted to the human outcomes. The
judge-only figures are the same quantities computed from the judge's verdicts on every item, as
if it were a human: their CIs are honest about noise, not about the judge's bias.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from calibration.metrics._common import LO_WINS, TIED
from calibration.metrics.active import active_ppi_logistic, active_ppi_mean, effective_sample_size
from calibration.metrics.labels import LabelTable, align_tables
from calibration.metrics.ppi import (
    Z95,
    Clusters,
    PPIFit,
    bt_design,
    effective_votes,
    informative,
    ppi_logistic,
    ppi_mean,
    rank_sets,
    wilson_interval,
    with_dropped,
)

PPI, HUMAN, JUDGE = "ppi", "human", "judge"
METHODS = (PPI, HUMAN, JUDGE)


@dataclass(frozen=True)
class Items:
    """Items of one judge, with human values where they exist (``NaN`` elsewhere)."""

    systems: tuple[str, ...]
    sys_lo: np.ndarray  # system codes, sys_lo < sys_hi
    sys_hi: np.ndarray
    cluster: np.ndarray  # pair code
    y: np.ndarray  # human share of wins of sys_lo (NaN: no human label)
    yhat: np.ndarray  # judge's share of wins of sys_lo
    labelled: np.ndarray  # bool: in the labelled set
    unlabelled: np.ndarray  # bool: in the unlabelled set
    # Active sampling: each item's inclusion probability (its pair's); None: a uniform sample.
    pi: np.ndarray | None = None

    @property
    def n_labelled(self) -> int:
        return int(self.labelled.sum())

    @property
    def n_unlabelled(self) -> int:
        return int(self.unlabelled.sum())

    @property
    def n_labelled_pairs(self) -> int:
        return int(np.unique(self.cluster[self.labelled]).size)

    @property
    def n_judged(self) -> int:
        return len(self.yhat)


def _share_of_a(t: LabelTable) -> tuple[np.ndarray, np.ndarray]:
    """(item keys, mean share of wins of sys_lo) per item of ``t``."""
    value = (t.outcome == LO_WINS) + 0.5 * (t.outcome == TIED)
    keys, inverse = np.unique(t.item, return_inverse=True)
    total = np.bincount(inverse, weights=value, minlength=len(keys))
    count = np.bincount(inverse, minlength=len(keys))
    return keys, total / count


def build_items(humans: LabelTable, judge: LabelTable, inclusion: dict[str, float] | None = None) -> Items:
    """The items of ``judge`` (one verdict per item, e.g. from ``merge_swapped``) with the human
    values of ``humans`` (re-encoded onto one vocabulary when theirs differ).

    ``inclusion`` (active sampling): each drawn pair's inclusion probability, keyed as the tables'
    pairs. A labelled pair that was never drawn (a calibration pair every annotator labels) counts
    as certain (pi = 1); an unlabelled pair not drawn yet, or drawn with certainty and not yet
    labelled, is in neither set: it has no probability of being unlabelled."""
    humans, judge = align_tables(humans, judge)
    j_keys, yhat = _share_of_a(judge)
    _, first = np.unique(judge.item, return_index=True)
    sys_lo, sys_hi, cluster = judge.sys_lo[first].astype(np.int64), judge.sys_hi[first].astype(np.int64), judge.pair[first].astype(np.int64)
    y = np.full(len(j_keys), np.nan)
    if len(humans):
        h_keys, h_share = _share_of_a(humans)
        pos = np.searchsorted(h_keys, j_keys)
        pos = np.minimum(pos, max(len(h_keys) - 1, 0))
        found = h_keys[pos] == j_keys if len(h_keys) else np.zeros(len(j_keys), dtype=bool)
        y[found] = h_share[pos[found]]
        human_pairs = np.unique(humans.pair)
    else:
        human_pairs = np.zeros(0, dtype=np.int64)
    pair_labelled = np.isin(cluster, human_pairs)
    labelled = pair_labelled & ~np.isnan(y)
    unlabelled = ~pair_labelled
    pi = None
    if inclusion is not None:
        pi = np.array([inclusion.get(judge.vocab.pairs[c], np.nan) for c in cluster], dtype=np.float64)
        pi[labelled & np.isnan(pi)] = 1.0
        unlabelled &= np.isfinite(pi) & (pi < 1.0)
    return Items(judge.vocab.systems, sys_lo, sys_hi, cluster, y, yhat, labelled, unlabelled, pi)


# --------------------------------------------------------------------------
# win rates
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """One estimate with its standard error and 95% CI: the normal one, value +- z se, unless
    ``bounds`` gives another (a win rate's, inside [0, 1]: :func:`rate_interval`)."""

    value: float
    se: float
    n: int  # items it rests on (labelled items for ppi/human, judged items for judge)
    n_pairs: int
    bounds: tuple[float, float] | None = None

    @property
    def ci(self) -> tuple[float, float]:
        if self.bounds is not None:
            return self.bounds
        return (self.value - Z95 * self.se, self.value + Z95 * self.se)

    @property
    def halfwidth(self) -> float:
        """The normal half-width z se (what the planner predicts; a bounded CI approaches it as n grows)."""
        return Z95 * self.se


@dataclass(frozen=True)
class PoweredRate:
    """A system's win rate three ways; ``lam`` is the weight given to the judge and
    ``n_effective`` the number of human-labelled items the human-only estimate would need for
    the prediction-powered CI's width."""

    system: str
    ppi: Interval
    human: Interval
    judge: Interval
    lam: float
    n_effective: float | None


def _effective(n: int, human_se: float, ppi_se: float) -> float | None:
    if not (ppi_se > 0 and math.isfinite(human_se)):
        return None
    return n * (human_se / ppi_se) ** 2


def _rate_interval(fit: PPIFit, votes: float) -> Interval:
    value = min(max(float(fit.estimate[0]), 0.0), 1.0)
    return Interval(value, float(fit.se[0]), fit.n, fit.n_clusters, wilson_interval(value, votes))


def rate_intervals(ppi: PPIFit, human: PPIFit, judge: PPIFit) -> tuple[Interval, Interval, Interval]:
    """A win rate's three estimates with CIs inside [0, 1]: each estimate moved into [0, 1] (the
    prediction-powered one can leave it) and a Wilson score interval with an effective number of
    votes (:func:`.ppi.effective_votes`). Humans and judge: their own, p(1-p)/se^2. Prediction-powered:
    the humans' times the variance ratio human/ppi (what the judge's verdicts add, as ``n_effective``),
    a ratio of at most (labelled + unlabelled items) / labelled items (as if the judge's items were all
    labelled); the humans' own when lam is 0. Binary votes, one per pair, get the textbook Wilson
    interval; every CI holds its estimate and stays in [0, 1]."""
    h_se, p_se = float(human.se[0]), float(ppi.se[0])
    h_votes = effective_votes(float(human.estimate[0]), h_se, human.n_clusters)
    j_votes = effective_votes(float(judge.estimate[0]), float(judge.se[0]), judge.n_clusters)
    p_votes = h_votes
    if ppi.lam != 0 and h_se > 0:
        most = (ppi.n + ppi.N) / ppi.n
        p_votes = max(h_votes * (min((h_se / p_se) ** 2, most) if p_se > 0 else most), 1.0)
    return _rate_interval(ppi, p_votes), _rate_interval(human, h_votes), _rate_interval(judge, j_votes)


def _rate(
    items: Items, rows: np.ndarray, y: np.ndarray, yhat: np.ndarray, name: str, lam: float | None, clusters: Clusters
) -> PoweredRate | None:
    """``clusters``: the clusters of all the items (coded once per judge; each estimate takes its subset)."""
    lab, unl = rows & items.labelled, rows & items.unlabelled
    if lab.sum() < 2:
        return None
    cl = clusters.subset(lab)  # coded once for the gate and the three estimates
    if cl.k < 2:
        return None
    judged = rows
    if lam is None and not informative(y[lab], yhat[lab], cl):
        lam = 0.0
    cu = clusters.subset(unl)
    judge = ppi_mean(yhat[judged], yhat[judged], [], lam=0.0, clusters=clusters.subset(judged))
    if items.pi is None:
        ppi = ppi_mean(y[lab], yhat[lab], yhat[unl], lam=lam, clusters=cl, clusters_unlabeled=cu)
        human = ppi_mean(y[lab], yhat[lab], [], lam=0.0, clusters=cl)
        p, h, j = rate_intervals(ppi, human, judge)
        return PoweredRate(name, p, h, j, ppi.lam, _effective(h.n, h.se, p.se))
    # Active sampling: inverse-probability weighted (metrics.active); the worth in uniform labels
    # comes from the population's variance, as the labelled items are not a uniform sample.
    pl, pu, cl, cu = items.pi[lab], items.pi[unl], items.cluster[lab], items.cluster[unl]
    ppi = active_ppi_mean(y[lab], yhat[lab], yhat[unl], pl, pu, lam=lam, clusters=cl, clusters_unlabeled=cu)
    human = active_ppi_mean(y[lab], yhat[lab], [], pl, [], lam=0.0, clusters=cl)
    p, h, j = rate_intervals(ppi, human, judge)
    return PoweredRate(name, p, h, j, ppi.lam, effective_sample_size(y[lab], pl, p.se, cl))


def system_rows(items: Items, reference: str | None):
    """Per system other than ``reference``: (name, its items -- against the reference, or all of
    them without one --, and the human and judge values from its side: its share of the win)."""
    ref = items.systems.index(reference) if reference is not None else None
    for code in np.unique(np.concatenate([items.sys_lo, items.sys_hi])):
        if code == ref:
            continue
        is_a = items.sys_lo == code
        rows = is_a | (items.sys_hi == code)
        if ref is not None:
            rows &= (items.sys_lo == ref) | (items.sys_hi == ref)
        yield items.systems[code], rows, np.where(is_a, items.y, 1 - items.y), np.where(is_a, items.yhat, 1 - items.yhat)


def win_rates(items: Items, reference: str | None, lam: float | None = None) -> dict[str, PoweredRate]:
    """Each system's win rate (tie = 1/2) against ``reference``, or against the field when it is
    None; systems with fewer than two labelled pairs are left out."""
    out: dict[str, PoweredRate] = {}
    clusters = Clusters.of(items.cluster)
    for name, rows, y, yhat in system_rows(items, reference):
        rate = _rate(items, rows, y, yhat, name, lam, clusters)
        if rate is not None:
            out[rate.system] = rate
    return dict(sorted(out.items()))


def win_rates_left_out(items: Items, reference: str | None) -> dict[str, str]:
    """Why :func:`win_rates` leaves a system out: human labels on fewer than two of the pairs it
    has in this judge's items (a CI needs the spread between pairs)."""
    out = {}
    clusters = Clusters.of(items.cluster)
    for name, rows, _, _ in system_rows(items, reference):
        pairs = clusters.subset(rows & items.labelled).k
        if pairs < 2:
            against = f"against {reference}" if reference is not None else "in its comparisons"
            out[name] = f"not estimable: human labels on {pairs} of its pairs {against} that this judge judged (2 needed)"
    return dict(sorted(out.items()))


# --------------------------------------------------------------------------
# Bradley-Terry
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Scores:
    """Bradley-Terry scores of the estimable systems by one method, with covariance and rank-sets."""

    systems: tuple[str, ...]
    scores: np.ndarray
    cov: np.ndarray
    rank_sets: list[tuple[int, int]]
    lam: float
    n: int
    n_pairs: int

    def interval(self, i: int) -> Interval:
        return Interval(float(self.scores[i]), float(math.sqrt(max(self.cov[i, i], 0.0))), self.n, self.n_pairs)


@dataclass(frozen=True)
class PoweredScores:
    """Bradley-Terry scores three ways on the same systems; ``left_out`` maps a system to why it
    has no score (it never wins or never loses in the human labels or the judge's verdicts)."""

    reference: str | None
    anchor: float
    systems: tuple[str, ...]
    ppi: Scores | None
    human: Scores | None
    judge: Scores | None
    left_out: dict[str, str]

    def n_effective(self, i: int) -> float | None:
        if self.ppi is None or self.human is None:
            return None
        return _effective(self.human.n, self.human.interval(i).se, self.ppi.interval(i).se)


def _wins_losses(sys_lo, sys_hi, value, k):
    wins = np.bincount(sys_lo, weights=value, minlength=k) + np.bincount(sys_hi, weights=1 - value, minlength=k)
    losses = np.bincount(sys_lo, weights=1 - value, minlength=k) + np.bincount(sys_hi, weights=value, minlength=k)
    return wins, losses


def bt_scores(
    items: Items,
    reference: str | None,
    *,
    anchor: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    lam: float | None = None,
    alpha: float = 0.05,
) -> PoweredScores:
    """Elo-like Bradley-Terry scores (``anchor + scale * theta / ln(base)``) three ways.

    Anchored on ``reference`` (score ``anchor``), else on the mean of the scored systems. A system
    that never wins or never loses -- in the human labels or in the judge's verdicts -- has no
    finite score and is left out of all three fits (with the reason), so that they score the
    same systems."""
    k = len(items.systems)
    lab, unl = items.labelled, items.unlabelled
    present = np.unique(np.concatenate([items.sys_lo, items.sys_hi]))
    hw, hl = _wins_losses(items.sys_lo[lab], items.sys_hi[lab], items.y[lab], k)
    jw, jl = _wins_losses(items.sys_lo, items.sys_hi, items.yhat, k)
    left_out: dict[str, str] = {}
    keep = []
    for code in present:
        name = items.systems[code]
        if code == (items.systems.index(reference) if reference is not None else -1):
            keep.append(code)
            continue
        problems = []
        for who, w, lo in (("the human labels", hw, hl), ("the judge's verdicts", jw, jl)):
            if w[code] == 0 or lo[code] == 0:
                problems.append(f"{'0 wins' if w[code] == 0 else '0 losses'} in {who} ({w[code] + lo[code]:g} comparisons)")
        if problems:
            left_out[name] = "not estimable: " + "; ".join(problems)
        else:
            keep.append(code)
    keep = np.array(sorted(keep), dtype=np.int64)
    if reference is not None and items.systems.index(reference) not in keep:
        raise ValueError(f"reference system {reference!r} is not among the judged systems")
    systems = tuple(items.systems[c] for c in keep)
    empty = PoweredScores(reference, anchor, systems, None, None, None, left_out)
    if len(keep) < 2:
        return empty
    local = np.full(k, -1, dtype=np.int64)
    local[keep] = np.arange(len(keep))
    rows = np.isin(items.sys_lo, keep) & np.isin(items.sys_hi, keep)
    lab, unl = lab & rows, unl & rows
    if lab.sum() < 2 or np.unique(items.cluster[lab]).size < 2:
        return empty
    dropped = int(local[items.systems.index(reference)]) if reference is not None else 0
    anchors = None if reference is not None else np.arange(len(keep))
    X = bt_design(local[items.sys_lo[rows]], local[items.sys_hi[rows]], len(keep), dropped)
    lab_r, unl_r = lab[rows], unl[rows]
    y, yhat, cl = items.y[rows], items.yhat[rows], items.cluster[rows]
    factor = scale / math.log(base)

    def scores(fit: PPIFit | None, n: int, n_pairs: int) -> Scores | None:
        if fit is None or not np.all(np.isfinite(fit.cov)):
            return None
        theta, cov = with_dropped(fit, dropped, anchors)
        elo, cov = anchor + factor * theta, factor**2 * cov
        return Scores(systems, elo, cov, rank_sets(elo, cov, alpha), fit.lam, n, n_pairs)

    n_lab, n_pairs_lab = int(lab_r.sum()), int(np.unique(cl[lab_r]).size)
    if lam is None and not informative(y[lab_r], yhat[lab_r], cl[lab_r]):
        lam = 0.0
    if items.pi is None:
        ppi = ppi_logistic(
            X[lab_r], y[lab_r], yhat[lab_r], X[unl_r], yhat[unl_r], lam=lam, clusters=cl[lab_r], clusters_unlabeled=cl[unl_r]
        )
        human = ppi_logistic(X[lab_r], y[lab_r], yhat[lab_r], X[:0], yhat[:0], lam=0.0, clusters=cl[lab_r])
    else:  # active sampling: inverse-probability weighted (metrics.active)
        pl, pu = items.pi[rows][lab_r], items.pi[rows][unl_r]
        ppi = active_ppi_logistic(
            X[lab_r], y[lab_r], yhat[lab_r], X[unl_r], yhat[unl_r], pl, pu, lam=lam, clusters=cl[lab_r], clusters_unlabeled=cl[unl_r]
        )
        human = active_ppi_logistic(X[lab_r], y[lab_r], yhat[lab_r], X[:0], yhat[:0], pl, [], lam=0.0, clusters=cl[lab_r])
    judge = ppi_logistic(X, yhat, yhat, X[:0], yhat[:0], lam=0.0, clusters=cl)
    return PoweredScores(
        reference, anchor, systems,
        scores(ppi, n_lab, n_pairs_lab), scores(human, n_lab, n_pairs_lab),
        scores(judge, len(y), int(np.unique(cl).size)), left_out,
    )  # fmt: skip
