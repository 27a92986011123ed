"""Items per annotator for the alt-test: its power, by simulation under a stated model.

The model (after the alt-test authors' simulation, Calderon, Reichart and Dror 2025, appendix C)
-----------------------------------------------------------------------------------------------
* Every item has a true answer drawn uniformly from ``n_categories`` answers (3 for A / B / tie).
* ``n_annotators`` annotators label every item. Each one independently gives the true answer with
  probability ``s`` ("keeps" it) and otherwise an answer drawn uniformly from all the answers
  (which may be the true one again).
* The judge is one more such rater, with its own keep probability ``s_judge``.

Under this model two annotators agree with probability ``1/K + (1 - 1/K) s^2`` (K answers), so
their chance-corrected agreement (Cohen's kappa, uniform answers) is exactly ``s^2``: a pilot's
kappa gives ``s = sqrt(kappa)``, and a pilot's raw agreement ``a`` gives kappa = (a - 1/K)/(1 - 1/K).
A judge ``margin`` worse than the humans agrees with an annotator ``margin`` less often than two
annotators agree with each other: ``(1 - 1/K) s (s - s_judge) = margin``. ``margin = 0`` is a
judge as good as the humans.

Each simulated campaign runs the alt-test's item form (the t-test and Benjamini-Yekutieli
correction of ``calibration.metrics.alttest``) and records whether the judge passes (omega >= 0.5).
The pass probability is the share of campaigns passed, with its 95% Clopper-Pearson interval
(the Monte Carlo uncertainty) and n = the number of campaigns simulated. Draws are seeded.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from calibration.metrics.alttest import FDR_Q, MIN_ITEMS, PASS_OMEGA, by_adjusted, one_sided_p

MODEL = (
    "each item has a true answer drawn uniformly from {k} answers; each of {a} annotators labels every item, giving the "
    "true answer with probability {s:.3f} and otherwise an answer drawn uniformly from all {k} (human kappa {kappa:.2f}); "
    "the judge does the same with probability {sj:.3f} (its agreement with an annotator is {margin:.3f} below the "
    "annotators' agreement with each other)"
)


@dataclass(frozen=True)
class PassProbability:
    """The estimated chance that a judge passes, with its Monte Carlo 95% CI; n = campaigns simulated."""

    value: float
    ci_low: float
    ci_high: float
    n: int


@dataclass(frozen=True)
class AltTestPower:
    """Pass probabilities of a judge as good as the humans (``equal``) and of one ``margin``
    worse (``worse``; None when margin is 0) for ``n_items`` items per annotator."""

    n_items: int
    epsilon: float
    n_annotators: int
    n_categories: int
    human_kappa: float
    margin: float
    equal: PassProbability
    worse: PassProbability | None
    model: str

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ItemsNeeded:
    """The smallest ``n_items`` of ``curve`` whose ``equal`` pass probability reaches ``target``
    (None when none does), and the whole curve, one :class:`AltTestPower` per size."""

    target: float
    n_items: int | None
    curve: tuple[AltTestPower, ...]

    def at(self, n_items: int) -> AltTestPower:
        return next(p for p in self.curve if p.n_items == n_items)


def keep_probability(*, kappa: float | None = None, agreement: float | None = None, n_categories: int = 3) -> tuple[float, float]:
    """(keep probability s, kappa) from a pilot's kappa, or from its raw agreement between two annotators."""
    k = n_categories
    if k < 2:
        raise ValueError("n_categories must be at least 2")
    if (kappa is None) == (agreement is None):
        raise ValueError("give the pilot's kappa or its agreement (one of them)")
    if agreement is not None:
        if not (0.0 <= agreement <= 1.0):
            raise ValueError(f"agreement must be in [0, 1], got {agreement}")
        kappa = (agreement - 1 / k) / (1 - 1 / k)
    if not (0.0 < kappa <= 1.0):
        raise ValueError(f"this model needs a human kappa in (0, 1], got {kappa:.3f} (agreement at or below chance)")
    return math.sqrt(kappa), float(kappa)


def judge_keep_probability(s: float, margin: float, n_categories: int = 3) -> float:
    """The judge's keep probability when its agreement with an annotator is ``margin`` below the annotators'."""
    s_judge = s - margin / ((1 - 1 / n_categories) * s)
    if not (0.0 <= s_judge <= 1.0):
        raise ValueError(f"margin {margin} puts the judge's keep probability at {s_judge:.3f}, outside [0, 1]")
    return s_judge


def simulate_labels(
    rng: np.random.Generator, *, campaigns: int, n_items: int, n_annotators: int, n_categories: int, s: float, s_judge: float
):
    """(humans: campaigns x annotators x items, judge: campaigns x items) answer codes under the model."""
    truth = rng.integers(0, n_categories, size=(campaigns, 1, n_items))
    keep = rng.random((campaigns, n_annotators + 1, n_items)) < np.concatenate([np.full(n_annotators, s), [s_judge]])[None, :, None]
    noise = rng.integers(0, n_categories, size=(campaigns, n_annotators + 1, n_items))
    labels = np.where(keep, truth, noise)
    return labels[:, :n_annotators, :], labels[:, n_annotators, :]


def passes_simulated(humans: np.ndarray, judge: np.ndarray, *, epsilon: float, n_categories: int, q: float = FDR_Q) -> np.ndarray:
    """Whether the judge passes the item-form alt-test in each simulated campaign (every annotator
    labels every item): the same scores, t-test and correction as ``alttest.alt_test``."""
    campaigns, n_annotators, n_items = humans.shape
    counts = np.zeros((campaigns, n_categories, n_items), dtype=np.int64)
    for a in range(n_annotators):
        np.add.at(counts, (np.arange(campaigns)[:, None], humans[:, a, :], np.arange(n_items)[None, :]), 1)
    c_idx = np.arange(campaigns)[:, None, None]
    i_idx = np.arange(n_items)[None, None, :]
    human_hits = counts[c_idx, humans, i_idx] - 1
    judge_hits = counts[c_idx, judge[:, None, :], i_idx] - (judge[:, None, :] == humans)
    d = (human_hits >= judge_hits).astype(float) - (judge_hits >= human_hits)
    mean = d.mean(axis=2)
    var = d.var(axis=2, ddof=1)
    constant = d.min(axis=2) == d.max(axis=2)
    _, p = one_sided_p(mean, var, np.full(mean.shape, n_items), constant, epsilon)
    rejected = by_adjusted(p, axis=1) <= q
    return rejected.mean(axis=1) >= PASS_OMEGA


def _probability(passed: np.ndarray) -> PassProbability:
    n, k = len(passed), int(passed.sum())
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return PassProbability(k / n, float(ci.low), float(ci.high), n)


def alt_test_power(
    *,
    n_items: int,
    epsilon: float,
    n_annotators: int = 3,
    kappa: float | None = None,
    agreement: float | None = None,
    n_categories: int = 3,
    margin: float = 0.0,
    simulations: int = 1000,
    q: float = FDR_Q,
    seed: int = 0,
) -> AltTestPower:
    """The chance that a judge as good as the humans passes, and that one ``margin`` worse passes,
    with ``n_items`` items per annotator (every annotator labels every item), under the model of
    the module docstring. The pilot gives ``kappa`` (or raw ``agreement``) and ``n_annotators``.
    ``epsilon`` is required. Both judges are simulated on the same seeded human labels."""
    if epsilon is None or not (0.0 <= epsilon < 1.0):
        raise ValueError("epsilon is required, in [0, 1)")
    if n_items < 2 or n_annotators < 2 or simulations < 1:
        raise ValueError("n_items and n_annotators must be at least 2, simulations at least 1")
    s, kappa = keep_probability(kappa=kappa, agreement=agreement, n_categories=n_categories)
    s_worse = judge_keep_probability(s, margin, n_categories)
    out = {}
    for name, s_judge in (("equal", s), ("worse", s_worse)):
        if name == "worse" and margin == 0:
            out[name] = None
            continue
        rng = np.random.default_rng(seed)  # the same humans for both judges
        passed = []
        for start in range(0, simulations, 500):
            size = min(500, simulations - start)
            humans, judge = simulate_labels(
                rng, campaigns=size, n_items=n_items, n_annotators=n_annotators, n_categories=n_categories, s=s, s_judge=s_judge
            )
            passed.append(passes_simulated(humans, judge, epsilon=epsilon, n_categories=n_categories, q=q))
        out[name] = _probability(np.concatenate(passed))
    model = MODEL.format(k=n_categories, a=n_annotators, s=s, kappa=kappa, sj=s_worse, margin=margin)
    return AltTestPower(n_items, float(epsilon), n_annotators, n_categories, kappa, float(margin), out["equal"], out["worse"], model)


def alt_test_items_needed(
    *,
    target: float = 0.8,
    epsilon: float,
    sizes: Sequence[int] = tuple(range(MIN_ITEMS, 301, 10)),
    **kwargs,
) -> ItemsNeeded:
    """The fewest items per annotator (among ``sizes``) at which a judge as good as the humans
    passes with probability at least ``target``; the curve also gives, at each size, the chance
    that a judge ``margin`` worse passes. Other arguments as :func:`alt_test_power`. Sizes below
    30 are allowed here but the test itself needs 30."""
    if not (0.0 < target < 1.0):
        raise ValueError(f"target must be in (0, 1), got {target}")
    curve = tuple(alt_test_power(n_items=int(n), epsilon=epsilon, **kwargs) for n in sorted(set(sizes)))
    needed = next((p.n_items for p in curve if p.equal.value >= target), None)
    return ItemsNeeded(target, needed, curve)
