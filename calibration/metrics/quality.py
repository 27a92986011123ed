"""Vetting the human reference: known-answer (gold) accuracy, the humans' position bias from swapped
repeats, and the flags that mark a rater for staff.

Known-answer pairs compare a reference article with a copy degraded on purpose; on the criteria
the degradation targets the original must win, on the others nothing is scored. The same code
scores annotators and judges: a rater is a rater.

Gold accuracy's 95% interval is a Wilson interval (:func:`ppi.wilson_interval`) on an *effective*
number of answers: the answers on one pair are not independent (one degraded copy, several targeted
criteria, one reading), so n is divided by the design effect, the cluster-robust variance of the
share over the variance of n independent answers (:func:`clustered_votes`, never above n). With one
answer per pair it is the textbook Wilson interval; with one pair, or a share of 0 or 1 (where the
spread says nothing), each pair counts as one answer. Unlike a bootstrap it stays sound on a handful
of pairs: read ``Estimate.ci`` (``shown_ci`` hides intervals on fewer than 10 pairs, the bootstrap's rule).

Position figures are the judges' own (:mod:`bias`), run per human: consistency on the swapped
repeats (the same pair met again, reversed) and the first-position rate on every answer whose
display order is known, both with pair-bootstrap CIs.

Flags are for staff to look at, never a rejection: :func:`flagged_raters` gathers them with reasons.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

import numpy as np

from calibration.metrics._common import TIED, UNKNOWN
from calibration.metrics.bias import position_figures_by_rater
from calibration.metrics.bootstrap import Estimate
from calibration.metrics.labels import LabelTable
from calibration.metrics.ppi import wilson_interval

# --------------------------------------------------------------------------
# shares with a Wilson interval, clustered by pair
# --------------------------------------------------------------------------


def clustered_se(hits: np.ndarray, clusters: np.ndarray) -> float:
    """The cluster-robust standard error of the share of ``hits``: each cluster's sum of residuals
    (hits - share) squared, summed, times G / (G - 1) for G clusters, over n^2 (statsmodels' cluster
    covariance of a mean); 0 with fewer than two clusters."""
    hits = np.asarray(hits, dtype=float)
    n = len(hits)
    units, inverse = np.unique(clusters, return_inverse=True)
    g = len(units)
    if g < 2:
        return 0.0
    residual_sums = np.bincount(inverse, weights=hits - hits.mean(), minlength=g)
    return math.sqrt(g / (g - 1) * float((residual_sums**2).sum())) / n


def clustered_votes(hits: np.ndarray, clusters: np.ndarray) -> float:
    """How many independent answers the clustered 0/1 ``hits`` are worth: n over the design effect,
    the cluster-robust variance of the share over the variance it would have from n independent
    answers, s^2 / n with s^2 = p(1 - p) n / (n - 1) (the same small-sample factor on both sides, so
    that one answer per pair gives exactly n); never more than n. The number of pairs when the
    spread says nothing (one pair, or a share of 0 or 1)."""
    hits = np.asarray(hits, dtype=float)
    n, g = len(hits), int(len(np.unique(clusters)))
    p = float(hits.mean()) if n else 0.0
    se = clustered_se(hits, clusters)
    if g < 2 or not 0.0 < p < 1.0 or se <= 0.0:
        return float(max(g, 1))
    return min(float(n), p * (1 - p) / (n - 1) / se**2 * n)


def clustered_share(hits: np.ndarray, clusters: np.ndarray) -> Estimate:
    """Share of true ``hits`` with the clustered Wilson interval (module doc); n = answers, n_pairs = clusters."""
    hits = np.asarray(hits, dtype=float)
    if not len(hits):
        return Estimate(None, 0, n_pairs=0)
    p = float(hits.mean())
    lo, hi = wilson_interval(p, clustered_votes(hits, clusters))
    return Estimate(p, int(len(hits)), lo, hi, int(len(np.unique(clusters))))


# --------------------------------------------------------------------------
# gold accuracy
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldAccuracy:
    """One rater on the known-answer items: ``accuracy`` is the share of their answers there that
    name the expected winner (a tie is wrong: the degradation is meant to be seen); n = answers,
    n_pairs = gold pairs. ``n_ties``: answers that said tie. ``by_kind``: the same per degradation."""

    rater: str
    rater_kind: str
    accuracy: Estimate
    n_ties: int
    by_kind: dict[str, Estimate] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _expected_codes(table: LabelTable, expected: Mapping[tuple[str, str], str]) -> np.ndarray:
    """Per row: the expected outcome code (0 = sys_lo, 1 = sys_hi), or -1 when the item is not scored."""
    v = table.vocab
    pair_index = {name: i for i, name in enumerate(v.pairs)}
    crit_index = {name: i for i, name in enumerate(v.criteria)}
    pa, pb = table.pair_systems()
    span = max(len(v.criteria), 1)
    keys, codes = [], []
    for (pair, criterion), winner in expected.items():
        if pair not in pair_index or criterion not in crit_index:
            continue  # a gold item nobody labelled
        p = pair_index[pair]
        if pa[p] < 0:
            continue
        names = (v.systems[pa[p]], v.systems[pb[p]])
        if winner not in names:
            raise ValueError(f"the expected winner {winner!r} of pair {pair!r}, criterion {criterion!r} is not one of its systems {names}")
        keys.append(p * span + crit_index[criterion])
        codes.append(names.index(winner))
    out = np.full(len(table), -1, dtype=np.int64)
    if keys:
        order = np.argsort(keys)
        sorted_keys, sorted_codes = np.asarray(keys)[order], np.asarray(codes)[order]
        pos = np.clip(np.searchsorted(sorted_keys, table.item), 0, len(sorted_keys) - 1)
        found = sorted_keys[pos] == table.item
        out[found] = sorted_codes[pos[found]]
    return out


def gold_accuracy(
    labels: LabelTable,
    expected: Mapping[tuple[str, str], str],
    *,
    kinds: Mapping[str, str] | None = None,
) -> list[GoldAccuracy]:
    """Each rater's accuracy on the known-answer items, with the clustered Wilson interval.

    ``labels``: any raters (humans, judges, or both; every answer counts, a swapped repeat too).
    ``expected``: ``(pair, criterion) -> the system that must win`` for the targeted criteria of the
    gold pairs; criteria absent from it are not scored. ``kinds``: ``pair -> degradation`` for the
    per-degradation breakdown. Raters without a scored answer are left out (an empty list when no
    gold item was answered). Raises ValueError when an expected winner is not one of its pair's systems.
    """
    expect = _expected_codes(labels, expected)
    scored = expect >= 0
    t = labels.select(scored)
    expect = expect[scored]
    hits = t.outcome == expect
    kind_of_pair = np.array([(kinds or {}).get(name, "") for name in t.vocab.pairs], dtype=object)
    out = []
    for r in sorted(np.unique(t.rater).tolist(), key=lambda code: t.vocab.raters[code]):
        mine = t.rater == r
        by_kind = {}
        if kinds:
            pair_kinds = kind_of_pair[t.pair[mine]]
            for kind in sorted({k for k in pair_kinds if k}):
                m = pair_kinds == kind
                by_kind[kind] = clustered_share(hits[mine][m], t.pair[mine][m])
        out.append(
            GoldAccuracy(
                t.vocab.raters[r], t.vocab.rater_kinds[r], clustered_share(hits[mine], t.pair[mine]),
                int((t.outcome[mine] == TIED).sum()), by_kind,
            )
        )  # fmt: skip
    return out


def gold_pause_due(gold: GoldAccuracy, *, threshold: float, after_pairs: int) -> str | None:
    """The message of an optional pause rule, or None: after at least ``after_pairs`` gold pairs, a
    rater whose gold accuracy is clearly below ``threshold`` (the whole 95% interval under it) is
    paused. Clearly below, not merely below: a few unlucky answers must not stop a careful annotator."""
    if not 0.0 < threshold <= 1.0 or after_pairs < 1:
        raise ValueError("threshold must be in (0, 1] and after_pairs at least 1")
    a = gold.accuracy
    if a.value is None or (a.n_pairs or 0) < after_pairs or a.ci_high is None or a.ci_high >= threshold:
        return None
    return (
        f"Your answers on {a.n_pairs} check pairs agree with the expected answer {a.value:.0%} of the time "
        f"(95% CI {a.ci_low:.0%}–{a.ci_high:.0%}), below the {threshold:.0%} this campaign asks for. "
        "New pairs are paused until a staff member has looked at your work."
    )


# --------------------------------------------------------------------------
# the humans' position bias, from swapped repeats
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class HumanPosition:
    """One rater's position figures: ``consistency`` (same answer on the swapped repeat; n = repeated
    items) and ``first_position_rate`` (share of non-tie answers with a known display order that pick
    the article shown first; 0.5 is no lean). ``lean``: ``first`` or ``second`` when the rate's CI
    lies wholly beyond 0.5 ± ``margin`` (see :func:`human_position`), else None."""

    rater: str
    consistency: Estimate
    first_position_rate: Estimate
    lean: str | None

    def as_dict(self) -> dict:
        return asdict(self)


def _lean(rate: Estimate, margin: float) -> str | None:
    if rate.ci_low is not None and rate.ci_low > 0.5 + margin:
        return "first"
    if rate.ci_high is not None and rate.ci_high < 0.5 - margin:
        return "second"
    return None


def human_position(labels: LabelTable, *, margin: float = 0.1, rounds: int = 1000, seed: int = 0) -> list[HumanPosition]:
    """Position consistency and first-position rate per human rater (judges in the table are skipped).

    Uses the display order of each answer (``first``); answers with an unknown order (imported work
    without one) are left out of both figures. Consistency needs swapped repeats: without any its
    value is None with n 0. CIs: the pair bootstrap, as for the judges' position figures.
    """
    humans = labels.humans()
    humans = humans.select(humans.first != UNKNOWN)
    names = sorted(humans.rater_names())
    figures = position_figures_by_rater(humans, [humans.vocab.raters.index(n) for n in names], rounds=rounds, seed=seed)
    return [HumanPosition(name, consistency, rate, _lean(rate, margin)) for name, (consistency, rate) in zip(names, figures)]


# --------------------------------------------------------------------------
# flags for staff
# --------------------------------------------------------------------------


def flagged_raters(
    *,
    gold: Sequence[GoldAccuracy] = (),
    position: Sequence[HumanPosition] = (),
    flagged_elsewhere: Mapping[str, Sequence[str]] | None = None,
    min_gold_accuracy: float = 0.7,
) -> dict[str, tuple[str, ...]]:
    """Raters to look at, each with the reasons in words (empty dict: nobody).

    Rules: gold accuracy whose whole 95% interval lies below ``min_gold_accuracy``; a position lean
    (:class:`HumanPosition`.lean); and any reasons passed in ``flagged_elsewhere`` (rater -> reasons),
    for example the speed and rationale flags of :mod:`attention`. Only human raters' gold rows are
    considered. A flag never removes anyone by itself: the ``exclude-flagged`` reference does, on request.
    """
    reasons: dict[str, list[str]] = {}
    for g in gold:
        a = g.accuracy
        if g.rater_kind == "human" and a.value is not None and a.ci_high is not None and a.ci_high < min_gold_accuracy:
            reasons.setdefault(g.rater, []).append(
                f"gold accuracy {a.value:.2f} (95% CI {a.ci_low:.2f}–{a.ci_high:.2f}, {a.n} answers on {a.n_pairs} pairs) "
                f"below {min_gold_accuracy:.2f}"
            )
    for p in position:
        if p.lean:
            r = p.first_position_rate
            reasons.setdefault(p.rater, []).append(
                f"leans to the article shown {p.lean}: first-position rate {r.value:.2f} (95% CI {r.ci_low:.2f}–{r.ci_high:.2f}, n={r.n})"
            )
    for rater, more in (flagged_elsewhere or {}).items():
        reasons.setdefault(rater, []).extend(more)
    return {rater: tuple(why) for rater, why in sorted(reasons.items()) if why}
