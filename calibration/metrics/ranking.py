"""Ranking the systems: Bradley-Terry scores with their pair bootstrap, Kendall's tau between
two rankings, and win rates against the reference system."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Iterable, Mapping

import choix
import numpy as np
from scipy import optimize, stats
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from annotate.vocabulary import REFERENCE_SYSTEM

from calibration.metrics._common import A_WINS, B_WINS, SMALL_N, TIED, _f
from calibration.metrics.bootstrap import Estimate, _PairBootstrap, _percentile_ci
from calibration.metrics.labels import LabelRow, LabelTable, as_table

# --------------------------------------------------------------------------
# Bradley-Terry
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemScore:
    system: str
    score: float | None
    ci_low: float | None
    ci_high: float | None
    n: int  # comparisons involving the system
    small_n: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "small_n", self.n < SMALL_N)


@dataclass(frozen=True)
class BTResult:
    """Elo-like Bradley-Terry scores, best first; the reference scores ``anchor``.

    ``regularized`` is True when the maximum-likelihood estimate does not exist
    (see :func:`bradley_terry`) and the small tie prior was added;
    ``rounds_regularized`` counts bootstrap rounds where that happened.
    """

    reference: str
    anchor: float
    scale: float
    base: float
    scores: dict[str, SystemScore]
    n_comparisons: int
    regularized: bool
    rounds_regularized: int

    def score_map(self) -> dict[str, float]:
        return {k: s.score for k, s in self.scores.items()}

    def as_dict(self) -> dict:
        return asdict(self)


DEGENERATE_PRIOR = 1.0


def _strongly_connected(w: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Per (R, S, S) win matrix: is the "beat" graph strongly connected on the
    present systems?  (Edge i -> j when i has a win or a tie against j.)  This
    is the condition for the BT maximum-likelihood estimate to exist."""
    s = w.shape[-1]
    reach = ((w > 0) | np.eye(s, dtype=bool)).astype(np.float64)
    for _ in range(max(1, math.ceil(math.log2(max(s, 2))))):
        reach = (reach @ reach > 0).astype(np.float64)
    pm = present[:, :, None] & present[:, None, :]
    return ((reach > 0) | ~pm).all(axis=(1, 2))


def _fit_choix(w: np.ndarray) -> np.ndarray:
    """ML log-strengths (centred) from a win matrix with choix's I-LSR.

    ``w[i, j]`` = wins of i over j, ties counted as 1/2 each way.  The I-LSR
    fixed point solves the likelihood equations for any non-negative
    (fractional) counts, so this is the exact MLE of the 1/2-tie likelihood.
    """
    return choix.ilsr_pairwise_dense(w, alpha=0.0, max_iter=10_000, tol=1e-11)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _fit_degenerate(w: np.ndarray, prior: float) -> np.ndarray:
    """Log-strengths when the MLE does not exist (graph not strongly connected).

    1. Within each strongly connected component the MLE exists: fit it with
       choix on that component's comparisons alone (exactly what the full MLE
       tends to within a component as the gaps between components diverge).
    2. The components' offsets come from the cross-component comparisons plus
       ``prior`` virtual tied comparisons (prior/2 win each way) between every
       two systems of different components, maximized with scipy.
    Systems within a component keep their exact MLE differences.
    """
    s = w.shape[0]
    k, comp = connected_components(csr_matrix(w > 0), directed=True, connection="strong")
    theta = np.zeros(s)
    for c in range(k):
        idx = np.flatnonzero(comp == c)
        if idx.size > 1:
            theta[idx] = _fit_choix(w[np.ix_(idx, idx)])
    cross = comp[:, None] != comp[None, :]
    wc = np.where(cross, w + prior / 2.0, 0.0)
    nc = wc + wc.T

    def neg_ll(free: np.ndarray) -> tuple[float, np.ndarray]:
        t = theta + np.concatenate([[0.0], free])[comp]
        d = t[:, None] - t[None, :]
        ll = -(wc * np.logaddexp(0.0, -d)).sum()
        g_t = wc.sum(axis=1) - (nc * _sigmoid(d)).sum(axis=1)
        g_c = np.bincount(comp, weights=g_t, minlength=k)
        return -ll, -g_c[1:]

    res = optimize.minimize(neg_ll, np.zeros(k - 1), jac=True, method="BFGS", options={"gtol": 1e-10})
    return theta + np.concatenate([[0.0], res.x])[comp]


def _fit_newton(w: np.ndarray, ref: int, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Batched Newton-Raphson ML fit of log-strengths with theta[ref] = 0.

    ``w``: (R, S, S) win matrices, each strongly connected over all S systems.
    Used for the bootstrap rounds (verified against choix in the tests);
    steps are capped at 2 (log scale) so that far-off starts cannot overshoot.
    """
    r_n, s, _ = w.shape
    n = w + np.swapaxes(w, 1, 2)
    wins = w.sum(axis=2)
    theta = np.zeros((r_n, s))
    free = np.ones(s, dtype=bool)
    free[ref] = False
    eye = np.eye(s - 1)
    active = np.ones(r_n, dtype=bool)
    for _ in range(max_iter):
        ia = np.flatnonzero(active)
        if ia.size == 0:
            break
        th, nn = theta[ia], n[ia]
        p = _sigmoid(th[:, :, None] - th[:, None, :])
        g = (wins[ia] - (nn * p).sum(axis=2))[:, free]
        vv = (nn * p * (1.0 - p))[:, free][:, :, free]
        info = eye * (nn * p * (1.0 - p)).sum(axis=2)[:, free][:, :, None] - vv  # minus the Hessian
        step = np.linalg.solve(info, g[:, :, None])[:, :, 0]
        big = np.abs(step).max(axis=1)
        step *= np.minimum(1.0, 2.0 / np.maximum(big, 1e-300))[:, None]
        theta[np.ix_(ia, np.flatnonzero(free))] = th[:, free] + step
        active[ia[big < tol]] = False
    for r in np.flatnonzero(active):  # did not settle: let choix finish it
        th = _fit_choix(w[r])
        theta[r] = th - th[ref]
    return theta


def _fit_rounds(w: np.ndarray, present: np.ndarray, ref: int, prior: float) -> tuple[np.ndarray, int]:
    """Log-strengths (theta[ref] = 0, NaN for absent systems) for bootstrap
    win matrices; returns (thetas, number of degenerate rounds)."""
    r_n, s, _ = w.shape
    theta = np.full((r_n, s), np.nan)
    ok = _strongly_connected(w, present)
    full = ok & present.all(axis=1)
    if full.any():
        theta[full] = _fit_newton(w[full], ref)
    # These rounds are fitted one by one (degenerate ones with scipy, ~ms each). On small
    # campaigns most rounds are such and many are the same resample: fit each distinct one once.
    fitted: dict[bytes, np.ndarray] = {}
    for r in np.flatnonzero(~full):
        key = present[r].tobytes() + w[r].tobytes()
        if key not in fitted:
            idx = np.flatnonzero(present[r])
            sub = w[r][np.ix_(idx, idx)]
            th = _fit_choix(sub) if ok[r] else _fit_degenerate(sub, prior)
            fitted[key] = th - th[int(np.flatnonzero(idx == ref)[0])]
        theta[r, present[r]] = fitted[key]
    return theta, int((~ok).sum())


def _bt_inputs(t: LabelTable, reference: str):
    """Per-row win statistics over the systems present in ``t``."""
    v = t.vocab
    present_codes = np.unique(np.concatenate([t.sys_a, t.sys_b]))
    if reference not in v.systems or v.systems.index(reference) not in present_codes:
        raise ValueError(f"reference system {reference!r} is not among the compared systems")
    ref_code = v.systems.index(reference)
    local = np.full(len(v.systems), -1, dtype=np.int64)
    local[present_codes] = np.arange(len(present_codes))
    s = len(present_codes)
    a, b = local[t.sys_a], local[t.sys_b]
    win_a = (t.outcome == A_WINS) + 0.5 * (t.outcome == TIED)
    win_b = (t.outcome == B_WINS) + 0.5 * (t.outcome == TIED)
    # one column per ordered system pair: (winner, loser) -> winner * s + loser
    col = np.concatenate([a * s + b, b * s + a])
    vals = np.concatenate([win_a, win_b])
    pairs = np.concatenate([t.pair, t.pair])
    return present_codes, int(local[ref_code]), s, col, vals, pairs


def bradley_terry(
    labels: LabelTable | Iterable[LabelRow],
    reference: str = REFERENCE_SYSTEM,
    base: float = 10,
    scale: float = 400,
    anchor: float = 1000,
    rounds: int = 1000,
    seed: int = 0,
    degenerate_prior: float = DEGENERATE_PRIOR,
) -> BTResult:
    """Bradley-Terry scores: each label is one comparison of its two systems
    (win 1, tie 1/2 each way), fitted by maximum likelihood with choix's I-LSR
    (``ilsr_pairwise_dense``, alpha=0) on the win-count matrix, shown as
    ``scale * theta / ln(base)`` and shifted so the reference scores ``anchor``.

    Regularization: none whenever the MLE exists (the "beat" graph is strongly
    connected), so well-posed data get the exact MLE.  When it does not exist
    (a system that never wins or never loses, groups never compared), each
    strongly connected component is fitted exactly on its own and the
    components are placed relative to each other with ``degenerate_prior`` (1)
    virtual tied comparison between every two systems of different components
    (the Haldane-Anscombe 1/2 correction), which keeps every score finite;
    ``regularized`` is then True.  Bootstrap rounds follow the same rule.

    CI: pair bootstrap; rounds are fitted from per-round win-count matrices with
    a batched Newton solver (matches choix to ~1e-9); rounds in which a system
    does not appear leave that system out, and a system compared in one pair
    only gets no CI.  ``n`` = comparisons involving the system.
    """
    t = as_table(labels)
    codes, ref, s, col, vals, pairs = _bt_inputs(t, reference)
    boot = _PairBootstrap(t.pair, rounds, seed)
    per_unit = boot.per_unit(pairs, vals, col, s * s)
    w = per_unit.sum(axis=0).reshape(s, s)
    regularized = not bool(_strongly_connected(w[None], np.ones((1, s), dtype=bool))[0])
    theta = _fit_degenerate(w, degenerate_prior) if regularized else _fit_choix(w)
    k = scale / math.log(base)
    elo = k * (theta - theta[ref]) + anchor

    rounds_reg = 0
    lo = hi = np.full(s, np.nan)
    if boot.rounds > 0:
        wb = boot.resample(per_unit).reshape(-1, s, s)
        present = (wb + np.swapaxes(wb, 1, 2)).sum(axis=2) > 0
        keep = present[:, ref]
        th_b, rounds_reg = _fit_rounds(wb[keep], present[keep], ref, degenerate_prior)
        lo, hi = _percentile_ci(k * th_b + anchor)
        # A system seen in one pair only: every round that has it has that same pair, and the
        # zero-width interval would claim a certainty the data cannot give. No CI then.
        local = np.full(len(t.vocab.systems), -1, dtype=np.int64)
        local[codes] = np.arange(s)
        _, first = np.unique(t.pair, return_index=True)  # a pair compares the same two systems in all its rows
        pairs_of = np.bincount(local[t.sys_a[first]], minlength=s) + np.bincount(local[t.sys_b[first]], minlength=s)
        lone = (pairs_of < 2) & (np.arange(s) != ref)
        lo, hi = np.where(lone, np.nan, lo), np.where(lone, np.nan, hi)

    n_sys = np.bincount(np.concatenate([t.sys_a, t.sys_b]), minlength=len(t.vocab.systems))
    scores = {}
    for i in np.argsort(-elo, kind="stable"):
        name = t.vocab.systems[codes[i]]
        scores[name] = SystemScore(name, float(elo[i]), _f(lo[i]), _f(hi[i]), int(n_sys[codes[i]]))
    return BTResult(
        reference=reference,
        anchor=float(anchor),
        scale=float(scale),
        base=float(base),
        scores=scores,
        n_comparisons=len(t),
        regularized=regularized,
        rounds_regularized=rounds_reg,
    )


def bradley_terry_by_category(labels, reference: str = REFERENCE_SYSTEM, **kwargs) -> dict[str, BTResult | None]:
    """:func:`bradley_terry` per category (None where the reference is absent)."""
    t = as_table(labels)
    out: dict[str, BTResult | None] = {}
    for c in np.unique(t.category):
        sub = t.select(t.category == c)
        try:
            out[t.vocab.categories[c]] = bradley_terry(sub, reference=reference, **kwargs)
        except ValueError:
            out[t.vocab.categories[c]] = None
    return out


@dataclass(frozen=True)
class TauResult:
    tau: float | None
    p_value: float | None
    n: int
    systems: tuple[str, ...]


def kendall_tau(scores_a: BTResult | Mapping[str, float], scores_b: BTResult | Mapping[str, float]) -> TauResult:
    """Kendall's tau-b (scipy) between two score sets on their common systems."""
    a = scores_a.score_map() if isinstance(scores_a, BTResult) else dict(scores_a)
    b = scores_b.score_map() if isinstance(scores_b, BTResult) else dict(scores_b)
    common = tuple(sorted(k for k in a if k in b and a[k] is not None and b[k] is not None))
    if len(common) < 2:
        return TauResult(None, None, len(common), common)
    res = stats.kendalltau([a[k] for k in common], [b[k] for k in common])
    return TauResult(_f(res.statistic), _f(res.pvalue), len(common), common)


@dataclass(frozen=True)
class WinRates:
    """Each system's share of wins (tie = 1/2) against the reference."""

    reference: str
    overall: dict[str, Estimate]
    by_category: dict[str, dict[str, Estimate]]

    def as_dict(self) -> dict:
        return asdict(self)


def win_rate_vs_reference(
    labels: LabelTable | Iterable[LabelRow], reference: str = REFERENCE_SYSTEM, rounds: int = 1000, seed: int = 0
) -> WinRates:
    t = as_table(labels)
    v = t.vocab
    if reference not in v.systems:
        return WinRates(reference, {}, {})
    ref = v.systems.index(reference)
    m = (t.sys_a == ref) | (t.sys_b == ref)
    t = t.select(m)
    other = np.where(t.sys_a == ref, t.sys_b, t.sys_a)
    other_wins = np.where(t.sys_a == ref, t.outcome == B_WINS, t.outcome == A_WINS)
    score = other_wins + 0.5 * (t.outcome == TIED)
    s = len(v.systems)
    boot = _PairBootstrap(t.pair, rounds, seed)
    ones = np.ones(len(t))
    overall_est = boot.ratios(t.pair, score, ones, other, s)
    present = np.unique(other)
    overall = {v.systems[i]: overall_est[i] for i in present}
    cat_est = boot.ratios(t.pair, score, ones, t.category.astype(np.int64) * s + other, len(v.categories) * s)
    by_cat: dict[str, dict[str, Estimate]] = {}
    for c in np.unique(t.category):
        sys_here = np.unique(other[t.category == c])
        by_cat[v.categories[c]] = {v.systems[i]: cat_est[c * s + i] for i in sys_here}
    return WinRates(reference, overall, by_cat)
