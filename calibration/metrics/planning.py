"""How many more human-labelled pairs a campaign needs: predictions from the labels collected so far.

Three questions, each answered in units of *pairs* (the criteria of one pair share its two articles,
so pairs are the independent units, as in the report's bootstrap) at 95% (z = 1.96):

(a) A judge's PAR (:func:`par_moments`). Per labelled pair c, ``A_c`` human labels the judge's merged
    verdict equals out of ``m_c`` human labels on items the judge has judged. ``p = sum A / sum m``
    (the report's PAR) and, with G pairs of mean size ``mbar = sum m / G``, the per-pair variance of
    the ratio ``V = sum_c (A_c - p m_c)^2 / G / mbar^2``; with G' pairs the CI half-width is
    ``z sqrt(V / G')``, so a half-width h needs ``ceil(V z^2 / h^2)`` pairs.
(b) The difference of two judges' PAR (:func:`difference_moments`): on the human labels of items both
    judged, ``D_c = A1_c - A2_c``, ``d = sum D / sum m``, ``V_d`` as V. Telling them apart with a
    two-sided test at level alpha and power beta needs ``ceil((z_{1-alpha/2} + z_beta)^2 V_d / d^2)``
    pairs; with G' pairs the power is ``Phi(|d| sqrt(G'/V_d) - z_{1-alpha/2})`` (+ the other tail).
(c) Prediction-powered win rates (:func:`score_moments`, as :func:`.powered.win_rates` computes them):
    per system s, from cluster sums per pair of the centred human values (Y_c) and judge values
    (H_c) on its ``G_s`` labelled pairs (n items) and of the judge values (U_c) on its ``U_s``
    unlabelled pairs (N items): ``b = sum Y^2 G_s / n^2``, ``a_l = sum H^2 G_s / n^2``,
    ``c = sum Y H G_s / n^2``, ``a_u = sum U^2 U_s / N^2``. With G' labelled and U' unlabelled pairs
    ``Var(lam) = lam^2 a_u / U' + (b - 2 lam c + lam^2 a_l) / G'`` -- at G' = G_s, U' = U_s exactly
    the variance :func:`.ppi.ppi_mean` reports for that lam -- minimized by
    ``lam = c / (a_u G' / U' + a_l)`` clipped to [0, 1] (0 without unlabelled pairs, and 0 when the
    judge fails the report's gate, :func:`.ppi.informative`, on the pairs labelled now). Labelling
    Delta more of the campaign's pairs (G labelled so far) gives ``G_s' = G_s (G + Delta) / G`` and
    ``U_s' = max(U_s - (G_s' - G_s), 0)``; the half-width is the widest system's ``z sqrt(Var)``,
    and :func:`plan_scores` scans Delta for the first that reaches the target (when the target is
    met already, Delta runs back from -(G - 2): how few labelled pairs would have done, as (a) says).

Assumptions, stated with every figure: future pairs resemble the labelled ones (same criteria and as
many annotators per pair, the same agreement and the same difference between judges); labelled pairs
are a random sample of the campaign's pairs, and the next ones too; the judges will have judged the
pairs labelled next; normal approximations (the report's PAR CIs are bootstrap percentile intervals
and may differ slightly). A plan needs at least two labelled pairs and never asks for fewer than two.

Pure numpy/scipy, no Django.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from calibration.metrics import distributions as dist
from calibration.metrics._common import sorted_lookup
from calibration.metrics.agreement import judge_index
from calibration.metrics.labels import LabelTable, align_tables
from calibration.metrics.powered import Items, system_rows
from calibration.metrics.ppi import Z95, cluster_sums, informative

ALPHA = 0.05
MIN_PAIRS = 2
_SCAN_CELLS = 2_000_000  # (systems x Delta) half-widths computed at once while scanning


def _ceil(x: float) -> int:
    """Ceiling that forgives float noise (29.000000001 pairs are 29)."""
    return max(MIN_PAIRS, math.ceil(x - 1e-9))


# --------------------------------------------------------------------------
# (a) and (b): ratios of per-pair sums
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class RatioMoments:
    """``value = sum A / sum m`` over labelled pairs, and V: its variance is about ``V / pairs``
    (NaN with a single pair: no spread to measure, and no plan; see ``plannable``)."""

    value: float
    n_labels: int
    n_pairs: int
    variance: float

    @property
    def plannable(self) -> bool:
        return self.n_pairs >= MIN_PAIRS

    def halfwidth(self, pairs: float, z: float = Z95) -> float:
        return z * math.sqrt(self.variance / pairs)

    def pairs_for_halfwidth(self, halfwidth: float, z: float = Z95) -> int:
        return _ceil(self.variance * z * z / halfwidth**2)

    def power(self, pairs: float, alpha: float = ALPHA) -> float:
        """Power of the two-sided z-test of ``value == 0`` at level ``alpha`` with ``pairs`` pairs."""
        if self.value == 0:
            return alpha
        if self.variance <= 0:
            return 1.0
        z = float(dist.normal_quantile(1 - alpha / 2))
        shift = abs(self.value) / math.sqrt(self.variance / pairs)
        return float(dist.normal_cdf(shift - z) + dist.normal_cdf(-shift - z))

    def pairs_for_power(self, power: float, alpha: float = ALPHA) -> int | None:
        """Pairs for the test of ``value == 0`` to reach ``power``; None when the value is 0."""
        if self.value == 0:
            return None
        z = float(dist.normal_quantile(1 - alpha / 2)) + float(dist.normal_quantile(power))
        return _ceil(z * z * self.variance / self.value**2)


def ratio_moments(pair_codes, numer, denom) -> RatioMoments | None:
    """The ratio of sums of ``numer`` over ``denom`` (one entry per label) and its per-pair variance;
    None without labels."""
    pair_codes = np.asarray(pair_codes)
    if len(pair_codes) == 0:
        return None
    _, inverse = np.unique(pair_codes, return_inverse=True)
    a = np.bincount(inverse, weights=np.asarray(numer, dtype=np.float64))
    m = np.bincount(inverse, weights=np.asarray(denom, dtype=np.float64))
    g, total = len(a), float(m.sum())
    if total <= 0:
        return None
    value = float(a.sum()) / total
    mbar = total / g
    variance = float(np.sum((a - value * m) ** 2)) / g / mbar**2 if g >= MIN_PAIRS else math.nan
    return RatioMoments(value, round(total), g, variance)


def _agreements(humans: LabelTable, *judges: LabelTable) -> tuple[np.ndarray, list[np.ndarray]]:
    """Pair codes of the human labels on items every judge has judged, and per judge whether its
    verdict (one per item: merge swapped runs first) equals each of them."""
    *judges, humans = align_tables(*judges, humans)
    found = np.ones(len(humans), dtype=bool)
    looked_up = []
    for judge in judges:
        keys, outcome = judge_index(judge)
        hit, pos = sorted_lookup(keys, humans.item)
        found &= hit
        looked_up.append((outcome, pos))
    agree = [(humans.outcome[found] == outcome[pos[found]]).astype(np.float64) for outcome, pos in looked_up]
    return humans.pair[found], agree


def par_moments(judge: LabelTable, humans: LabelTable) -> RatioMoments | None:
    """(a): a judge's PAR (:func:`.agreement.agreement`'s ``par``) with its per-pair variance."""
    pairs, (agree,) = _agreements(humans, judge)
    return ratio_moments(pairs, agree, np.ones(len(pairs)))


def difference_moments(judge_a: LabelTable, judge_b: LabelTable, humans: LabelTable) -> RatioMoments | None:
    """(b): PAR of ``judge_a`` minus PAR of ``judge_b`` on the human labels of items both judged
    (:func:`.agreement.paired_difference`'s difference) with its per-pair variance."""
    pairs, (agree_a, agree_b) = _agreements(humans, judge_a, judge_b)
    return ratio_moments(pairs, agree_a - agree_b, np.ones(len(pairs)))


def _check_plannable(moments: RatioMoments) -> None:
    if not moments.plannable:
        raise ValueError(f"a plan needs labels on at least {MIN_PAIRS} pairs, not {moments.n_pairs}")


@dataclass(frozen=True)
class HalfwidthPlan:
    """A CI half-width now, after the next batch, and the pairs it takes to reach the target.

    ``pairs_needed`` counts labelled pairs in all (``more_pairs`` beyond those labelled now); it is
    not ``reachable`` when the campaign has fewer pairs left, and ``best_halfwidth`` is what labelling
    every one of them would give."""

    halfwidth: float
    halfwidth_after_batch: float
    pairs_needed: int
    more_pairs: int
    reachable: bool
    best_halfwidth: float


def plan_halfwidth(moments: RatioMoments, *, target: float, remaining: int, batch: int) -> HalfwidthPlan:
    """``remaining``: the campaign's pairs without human labels yet; the batch takes at most those."""
    _check_plannable(moments)
    g = moments.n_pairs
    needed = moments.pairs_for_halfwidth(target)
    return HalfwidthPlan(
        halfwidth=moments.halfwidth(g),
        halfwidth_after_batch=moments.halfwidth(g + min(batch, remaining)),
        pairs_needed=needed,
        more_pairs=max(0, needed - g),
        reachable=needed <= g + remaining,
        best_halfwidth=moments.halfwidth(g + remaining),
    )


@dataclass(frozen=True)
class PowerPlan:
    """Power to tell two judges apart at the observed difference, now and after the next batch, and
    the pairs it takes to reach the power asked for."""

    difference: float
    n_pairs: int
    power_now: float
    power_after_batch: float
    pairs_needed: int
    more_pairs: int
    reachable: bool


def plan_power(moments: RatioMoments, *, power: float, remaining: int, batch: int, alpha: float = ALPHA) -> PowerPlan | None:
    """None when the observed difference is 0 (no number of pairs tells the judges apart)."""
    _check_plannable(moments)
    needed = moments.pairs_for_power(power, alpha)
    if needed is None:
        return None
    g = moments.n_pairs
    return PowerPlan(
        difference=moments.value,
        n_pairs=g,
        power_now=moments.power(g, alpha),
        power_after_batch=moments.power(g + min(batch, remaining), alpha),
        pairs_needed=needed,
        more_pairs=max(0, needed - g),
        reachable=needed <= g + remaining,
    )


# --------------------------------------------------------------------------
# (c): prediction-powered win rates
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreMoments:
    """Per-pair variance components of one system's prediction-powered win rate (see the module)."""

    system: str
    n_pairs: int  # G_s: labelled pairs
    n_unlabelled_pairs: int  # U_s: pairs with judge verdicts only
    human: float  # b
    judge: float  # a_l: the judge on the labelled pairs
    cross: float  # c
    judge_unlabelled: float  # a_u
    informative: bool = True  # the judge tracks the humans on the labelled pairs (:func:`.ppi.informative`)

    def lam(self, labelled, unlabelled) -> np.ndarray:
        """The weight that minimizes the variance, clipped to [0, 1]; 0 without unlabelled pairs, and
        0 for a judge that fails the report's gate (``informative``), as :func:`.powered.win_rates`."""
        labelled, unlabelled = np.asarray(labelled, dtype=np.float64), np.asarray(unlabelled, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            den = self.judge_unlabelled * labelled / unlabelled + self.judge
            lam = np.where(den > 0, self.cross / den, 0.0)
        return np.where((unlabelled > 0) & self.informative, np.clip(np.nan_to_num(lam), 0.0, 1.0), 0.0)

    def variance(self, labelled, unlabelled, lam=None) -> np.ndarray:
        """Variance of the win rate with ``labelled`` and ``unlabelled`` pairs (arrays broadcast);
        ``lam`` None: the best one."""
        labelled, unlabelled = np.asarray(labelled, dtype=np.float64), np.asarray(unlabelled, dtype=np.float64)
        lam = self.lam(labelled, unlabelled) if lam is None else np.asarray(lam, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            judge_part = np.where(unlabelled > 0, lam**2 * self.judge_unlabelled / unlabelled, 0.0)
        return judge_part + (self.human - 2 * lam * self.cross + lam**2 * self.judge) / labelled

    def halfwidth(self, labelled, unlabelled, lam=None, z: float = Z95) -> np.ndarray:
        return z * np.sqrt(np.maximum(self.variance(labelled, unlabelled, lam), 0.0))


def _pair_sums(values: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """Per pair, the sum of its centred values (centred on the mean over all the values)."""
    return cluster_sums((values - values.mean()).reshape(-1, 1), clusters)[:, 0]


def _system_moments(name: str, y, yhat, cl, yhat_u, cl_u) -> ScoreMoments:
    n, big_n = len(y), len(yhat_u)
    yc, hc = _pair_sums(y, cl), _pair_sums(yhat, cl)
    uc = _pair_sums(yhat_u, cl_u) if big_n else np.zeros(0)
    g, u = len(yc), len(uc)
    return ScoreMoments(
        system=name,
        n_pairs=g,
        n_unlabelled_pairs=u,
        human=float(yc @ yc) * g / n**2,
        judge=float(hc @ hc) * g / n**2,
        cross=float(yc @ hc) * g / n**2,
        judge_unlabelled=float(uc @ uc) * u / big_n**2 if big_n else 0.0,
        informative=informative(y, yhat, cl),
    )


def score_moments(items: Items, reference: str | None) -> list[ScoreMoments]:
    """Per system, the moments of its win rate against ``reference`` (or the field when None), on
    the same items and with the same systems left out (fewer than two labelled pairs) as
    :func:`.powered.win_rates`; sorted by system name."""
    out = []
    for name, rows, y, yhat in system_rows(items, reference):
        lab, unl = rows & items.labelled, rows & items.unlabelled
        if lab.sum() < 2 or np.unique(items.cluster[lab]).size < MIN_PAIRS:
            continue
        out.append(_system_moments(name, y[lab], yhat[lab], items.cluster[lab], yhat[unl], items.cluster[unl]))
    return sorted(out, key=lambda m: m.system)


def score_halfwidths(moments: list[ScoreMoments], n_labelled_pairs: int, more) -> np.ndarray:
    """(systems x len(more)) half-widths after labelling ``more`` further pairs of the campaign, of
    which ``n_labelled_pairs`` carry labels now: each system gains labelled pairs in proportion and
    loses as many unlabelled ones."""
    more = np.atleast_1d(np.asarray(more, dtype=np.float64))
    scale = (n_labelled_pairs + more) / n_labelled_pairs
    rows = []
    for m in moments:
        labelled = m.n_pairs * scale
        unlabelled = np.maximum(m.n_unlabelled_pairs - (labelled - m.n_pairs), 0.0)
        rows.append(m.halfwidth(labelled, unlabelled))
    return np.array(rows).reshape(len(moments), len(more))


@dataclass(frozen=True)
class ScorePlan:
    """The widest system's half-width now and after the next batch, per system too, and the pairs it
    takes for every system to reach the target (None when the campaign has too few left)."""

    systems: tuple[str, ...]
    halfwidths: tuple[float, ...]
    halfwidths_after_batch: tuple[float, ...]
    worst_system: str
    halfwidth: float
    halfwidth_after_batch: float
    pairs_needed: int | None
    more_pairs: int | None
    reachable: bool
    best_halfwidth: float  # every pair of the campaign labelled


def plan_scores(moments: list[ScoreMoments], *, n_labelled_pairs: int, remaining: int, target: float, batch: int) -> ScorePlan | None:
    """None without systems to plan for (``moments`` empty). A scan, not a bisection: the half-width
    need not fall with every pair moved from the unlabelled to the labelled set (it can rise a little
    when the judge's values spread more on the unlabelled pairs than on the labelled ones, a_u > a_l,
    mostly noise in small samples)."""
    if not moments or n_labelled_pairs <= 0:
        return None
    fixed = score_halfwidths(moments, n_labelled_pairs, [0, min(batch, remaining), remaining])
    now, after, best = fixed[:, 0], fixed[:, 1], fixed[:, 2]
    more = None
    step = max(1, _SCAN_CELLS // len(moments))
    # Already at the target: how few pairs would have done (as (a) says for PAR), scanning back.
    first = -(n_labelled_pairs - MIN_PAIRS) if now.max() <= target else 0
    for start in range(first, remaining + 1, step):
        deltas = np.arange(start, min(start + step, remaining + 1))
        worst = score_halfwidths(moments, n_labelled_pairs, deltas).max(axis=0)
        hits = np.flatnonzero(worst <= target)
        if hits.size:
            more = int(deltas[hits[0]])
            break
    worst_now = int(np.argmax(now))
    return ScorePlan(
        systems=tuple(m.system for m in moments),
        halfwidths=tuple(float(x) for x in now),
        halfwidths_after_batch=tuple(float(x) for x in after),
        worst_system=moments[worst_now].system,
        halfwidth=float(now[worst_now]),
        halfwidth_after_batch=float(after.max()),
        pairs_needed=None if more is None else max(MIN_PAIRS, n_labelled_pairs + more),
        more_pairs=None if more is None else max(more, 0),
        reachable=more is not None,
        best_halfwidth=float(best.max()),
    )
