"""Ranking the systems: Bradley-Terry scores with their pair bootstrap, their ranks (scores within a
tolerance tied), and Kendall's tau between two rankings."""

from __future__ import annotations

import math
import threading
from dataclasses import asdict, dataclass, field, replace
from typing import Iterable, Mapping

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from calibration.metrics._common import HI_WINS, LO_WINS, SMALL_N, TIE_TOLERANCE, TIED, as_float
from calibration.metrics.bootstrap import PairBootstrap, percentile_ci
from calibration.metrics.distributions import kendall_tau_b
from calibration.metrics.labels import LabelRow, LabelTable, as_table
from common.names import REFERENCE_SYSTEM

# --------------------------------------------------------------------------
# Bradley-Terry
# --------------------------------------------------------------------------

BELOW, ABOVE, APART = "below", "above", "apart"
MEAN_ANCHOR = "mean"


@dataclass(frozen=True)
class SystemScore:
    """One system's Bradley-Terry score.

    ``estimable`` is False when no finite maximum-likelihood score exists for it against the
    anchor's group (see :func:`bradley_terry`); then ``score`` is None, ``side`` says whether
    its score tends to minus infinity ("below": e.g. it never wins), plus infinity ("above":
    it never loses) or is not tied to the group at all ("apart"), and ``reason`` says why in
    words. A CI end is -inf / +inf when the system left the group on that side in more than
    2.5% of the bootstrap rounds; both ends are None when there is no CI.
    """

    system: str
    score: float | None
    ci_low: float | None
    ci_high: float | None
    n: int  # comparisons involving the system
    wins: float = 0.0  # ties count 1/2
    losses: float = 0.0
    estimable: bool = True
    side: str | None = None
    reason: str | None = None
    n_pairs: int | None = None  # pairs comparing the system (the bootstrap's units)
    rank: int | None = None  # 1 + the systems ranked above it (ties within TIE_TOLERANCE share one); None when apart
    small_n: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "small_n", (self.n if self.n_pairs is None else self.n_pairs) < SMALL_N)


@dataclass(frozen=True)
class BTResult:
    """Elo-like Bradley-Terry scores, best first (systems that are not estimable last).

    Anchored either on ``reference`` (which scores ``anchor``) or, when ``reference`` is None,
    on the mean of ``anchor_systems`` (which is ``anchor``): the estimable systems finite in every bootstrap round. ``degenerate`` is True when
    some system has no finite estimate; ``rounds_degenerate`` counts bootstrap rounds where
    some system of the estimable group had none.
    """

    reference: str | None
    anchor: float
    scale: float
    base: float
    scores: dict[str, SystemScore]
    n_comparisons: int
    degenerate: bool
    rounds_degenerate: int
    anchor_systems: tuple[str, ...] = ()  # whose mean is ``anchor`` (the reference alone when there is one)
    # The anchor systems this fit would choose alone (the estimable systems finite in every round that
    # counts); a table of several raters anchors each on the systems all of them have here.
    candidate_anchors: tuple[str, ...] = ()
    fit: "_Fit | None" = field(default=None, repr=False, compare=False)

    def recentred(self, systems: Iterable[str]) -> "BTResult":
        """The same fit with the mean of ``systems`` (among ``candidate_anchors``) at ``anchor``."""
        systems = sorted(set(systems))
        if self.reference is not None or self.fit is None:
            raise ValueError("only a fit anchored on its mean can be re-centred")
        unknown = set(systems) - set(self.candidate_anchors)
        if not systems or unknown:
            raise ValueError(f"cannot anchor on {', '.join(sorted(unknown)) or 'no system'}: not finite in every round")
        anchors = np.array([self.fit.names.index(name) for name in systems])
        return replace(self, scores=_placed(self.fit, anchors), anchor_systems=tuple(systems))

    @property
    def anchor_kind(self) -> str:
        return MEAN_ANCHOR if self.reference is None else "reference"

    @property
    def not_estimable(self) -> list[str]:
        return [k for k, s in self.scores.items() if not s.estimable]

    def score_map(self) -> dict[str, float]:
        """Scores for ranking: a system that is not estimable sits at -inf / +inf by its side."""
        out = {}
        for k, s in self.scores.items():
            if s.estimable:
                out[k] = s.score
            elif s.side in (BELOW, ABOVE):
                out[k] = -math.inf if s.side == BELOW else math.inf
        return out

    def as_dict(self) -> dict:
        return asdict(self)


def _reach(w: np.ndarray, pivot: int) -> tuple[np.ndarray, np.ndarray]:
    """(down, up), each (R, S), of (R, S, S) win matrices, with an edge i -> j when i has a win or a tie
    against j: down[r, j] when the pivot beats j through a chain of edges, up[r, i] when i beats the pivot
    so (the pivot reaches itself). From the pivot's own edges, widened one edge at a time while they grow
    and miss a system (dense data: once or twice): a product with the counts is positive where an edge leads."""
    down, up = w[:, pivot, :] > 0, w[:, :, pivot] > 0
    down[:, pivot] = up[:, pivot] = True
    todo = np.flatnonzero(~(down.all(axis=1) & up.all(axis=1)))
    while todo.size:  # each pass widens a set of every round left, or leaves it out
        d, u, wt = down[todo], up[todo], w if todo.size == len(w) else w[todo]
        wider_d = d | (np.matmul(d[:, None, :].astype(w.dtype), wt)[:, 0, :] > 0)
        wider_u = u | (np.matmul(wt, u[:, :, None].astype(w.dtype))[:, :, 0] > 0)
        down[todo], up[todo] = wider_d, wider_u
        grew = (wider_d != d).any(axis=1) | (wider_u != u).any(axis=1)
        todo = todo[grew & ~(wider_d.all(axis=1) & wider_u.all(axis=1))]
    return down, up


def _sides(down: np.ndarray, up: np.ndarray, in_group: np.ndarray) -> np.ndarray:
    """(R, S) limit of each score outside the pivot's group: -inf, +inf, or NaN when unrelated."""
    return np.where(in_group, 0.0, np.where(down, -np.inf, np.where(up, np.inf, np.nan)))  # down & up: in the group


# choix silences the warning of its (singular by construction) LU factorisation with
# warnings.catch_warnings, which changes the process's warning filters and is not safe when two
# threads do it at once (before Python 3.14): the report fits several raters side by side.
_CHOIX_LOCK = threading.Lock()


def fit_choix(w: np.ndarray) -> np.ndarray:
    """ML log-strengths (centred) from a win matrix with choix's I-LSR (imported here: it imports scipy.stats).

    ``w[i, j]`` = wins of i over j, ties 1/2 each way. The I-LSR fixed point solves the likelihood
    equations for any non-negative (fractional) counts: the exact MLE of the 1/2-tie likelihood.
    One fit at a time in the process (`_CHOIX_LOCK`).
    """
    import choix

    with _CHOIX_LOCK:
        return choix.ilsr_pairwise_dense(w, alpha=0.0, max_iter=10_000, tol=1e-11)


def fit_point(w: np.ndarray, ref: int) -> np.ndarray:
    """ML log-strengths (theta[ref] = 0) of one strongly connected win matrix: Newton's steps from zero until
    one is below 1e-10 (then at the MLE to the last bits); equal to choix's I-LSR within 1e-9 (tests), 4x faster."""
    return fit_newton(np.asarray(w, dtype=float)[None], ref, tol=1e-10)[0]


_NEWTON_CHUNK = 64  # rounds fitted together: their (rounds x S x S) arrays stay in the CPU's cache
NEWTON_TOL = 2e-5  # a round stops after a Newton step this small (log scale): see fit_newton


def fit_newton(
    w: np.ndarray, ref: int, max_iter: int = 100, tol: float = NEWTON_TOL, start: np.ndarray | None = None, point: np.ndarray | None = None
) -> np.ndarray:
    """Batched Newton-Raphson ML fit of log-strengths with theta[ref] = 0 of (R, S, S) win matrices, each
    strongly connected over all S systems, every round from ``start`` (S,) (zero when None). ``point``:
    the (S, S) win matrix bootstrap rounds were drawn from; with it a round first takes its linearized
    step, with the Hessian of the point's likelihood at ``start`` (one matrix for all rounds): a judge's
    category has rounds 0.8 (log) from the point fit in the median, 0.2 after it (Newton's steps per
    round: 4 -> 3.2 on the 100k-label benchmark). Steps are capped at 2 (log) so that far-off starts
    cannot overshoot. A round stops after a step below ``tol``: Newton converges quadratically, so it is
    then within c * tol^2 of its MLE, c measured at 0.3 to 1.1 on the benchmark's rounds (at the default,
    under 5e-10: 1e-7 Elo; the tests check rounds against choix to 1e-6 Elo). A round that does not
    settle is finished by choix. Each round's steps depend on that round (and ``point``) alone: the
    rounds are fitted in chunks small enough for the CPU's cache, the same arithmetic whatever the chunk.
    """
    theta = np.empty(w.shape[:2])
    first = np.zeros(w.shape[1]) if start is None else np.asarray(start, dtype=float) - start[ref]
    shared = None if point is None else _point_hessian(np.asarray(point, dtype=float), first)
    for begin in range(0, len(w), _NEWTON_CHUNK):
        chunk = w[begin : begin + _NEWTON_CHUNK]
        theta[begin : begin + _NEWTON_CHUNK] = _fit_newton_chunk(chunk, ref, max_iter, tol, first, shared)
    return theta


def _point_hessian(point: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(p, inverse) at ``theta``: p[i, j] = P(i beats j); the inverse of minus the Hessian of the point's
    likelihood plus the all-ones matrix (connected systems: invertible). None when not finite."""
    with np.errstate(all="ignore"):
        e = np.exp(theta - theta.max())
        p = e[:, None] / (e[:, None] + e[None, :])
        info = -(point + point.T) * p * (1.0 - p)
        np.fill_diagonal(info, -info.sum(axis=1))
        inverse = np.linalg.inv(info + 1.0)
    return (p, inverse) if np.isfinite(inverse).all() and np.isfinite(p).all() else None


def _fit_newton_chunk(w: np.ndarray, ref: int, max_iter: int, tol: float, first: np.ndarray, shared) -> np.ndarray:
    r_n, s, _ = w.shape
    diag = np.arange(s)
    minus_n = np.negative(w) - np.swapaxes(w, 1, 2)  # minus the games of each two systems (negated once, for _gradient)
    minus_n[:, diag, diag] = 0.0  # a system's games against itself (none) would add nothing but noise
    wins = w @ np.ones(s) - w[:, diag, diag]
    theta = np.repeat(first[None], r_n, axis=0)
    active = np.ones(r_n, dtype=bool)
    # a round whose strengths part by over 350 (log) gets inf or NaN: choix finishes it
    with np.errstate(all="ignore"):
        if shared is not None:
            p, inverse = shared
            g = wins + np.multiply(minus_n, p) @ np.ones(s)  # the gradient at the start: p is the same for all
            step = np.matmul(inverse, g[:, :, None])[:, :, 0]  # one product per round: the same bits whatever the chunk
            step -= step[:, ref : ref + 1]
            big = np.abs(step).max(axis=1)
            take = np.isfinite(big)
            theta[take] += step[take] * np.minimum(1.0, 2.0 / np.maximum(big[take], 1e-300))[:, None]  # capped as Newton's
        for _ in range(max_iter):
            ia = np.flatnonzero(active)
            if ia.size == 0:
                break
            _newton_step(theta, minus_n, wins, ia, active, ref, tol)
    for r in np.flatnonzero(active | ~np.isfinite(theta).all(axis=1)):  # did not settle: let choix finish it
        th = fit_choix(w[r])
        theta[r] = th - th[ref]
    return theta


def _gradient(th: np.ndarray, minus_n: np.ndarray, wins: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(g, e, r, q) at ``th`` (R, S): e = exp(th - max th); r[i, j] = 1 / (e_i + e_j); q = minus_n * r; the gradient
    g_i = wins_i - sum_j n_ij e_i / (e_i + e_j) = wins_i + e_i * sum_j q_ij (P(i beats j) is never formed)."""
    e = np.exp(th - th.max(axis=1, keepdims=True))
    ones = np.ones_like(e)
    r = np.matmul(np.stack([e, ones], axis=2), np.stack([ones, e], axis=1))  # exactly e_i + e_j, faster than broadcasting
    np.reciprocal(r, out=r)
    q = np.multiply(minus_n, r)
    g = wins + e * (q @ np.ones(th.shape[1]))  # row sums (a product: several times faster than sum over a short last axis)
    return g, e, r, q


def _newton_step(
    theta: np.ndarray, minus_n: np.ndarray, wins: np.ndarray, ia: np.ndarray, active: np.ndarray, ref: int, tol: float
) -> None:
    """One Newton step of the rounds ``ia`` of ``theta`` (in place); those that settle leave ``active``."""
    th, mn, wi = (theta, minus_n, wins) if ia.size == len(theta) else (theta[ia], minus_n[ia], wins[ia])
    diag = np.arange(th.shape[1])
    g, e, r, q = _gradient(th, mn, wi)
    # Minus the Hessian, the Laplacian of the weights n_ij e_i e_j / (e_i + e_j)^2, is E (D - K) E: E = diag(e),
    # K[i, j] = n_ij / (e_i + e_j)^2, D = diag(K e / e); the step x solves (D - K) (e x) = g / e (no product by e
    # over the S x S cells). Doubling D[ref, ref] makes it invertible (the group is connected) and, the gradient
    # summing to zero, gives the Newton step of the fit with theta[ref] fixed.
    m = np.multiply(q, r, out=r)  # -K, zero on the diagonal
    m[:, diag, diag] = -np.matmul(m, e[:, :, None])[:, :, 0] / e
    m[:, ref, ref] *= 2.0
    step = np.linalg.solve(m, (g / e)[:, :, None])[:, :, 0] / e
    step -= step[:, ref : ref + 1]
    big = np.abs(step).max(axis=1)
    step *= np.minimum(1.0, 2.0 / np.maximum(big, 1e-300))[:, None]
    theta[ia] = th + step
    active[ia[~(big >= tol)]] = False  # settled, or not finite (NaN): choix finishes those


def _same_groups(in_group: np.ndarray):
    """(rounds, membership) for each distinct row of the (R, S) membership ``in_group``: one
    group when every round has the same (the usual case, found without sorting)."""
    if not len(in_group) or (in_group == in_group[0]).all():
        yield np.arange(len(in_group)), in_group[0] if len(in_group) else np.zeros(in_group.shape[1], dtype=bool)
        return
    masks, inverse = np.unique(np.packbits(in_group, axis=1), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    for g in range(len(masks)):
        rows = np.flatnonzero(inverse == g)
        yield rows, in_group[rows[0]]


def fit_rounds(
    w: np.ndarray, pivot: int, start: np.ndarray | None = None, point: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Log-strengths relative to the pivot (theta[pivot] = 0) for bootstrap win matrices.

    In each round the systems of the pivot's group get their exact MLE; the others get -inf /
    +inf by their side, NaN when absent or unrelated to the group. Rounds sharing a group are
    fitted together (batched Newton), so degenerate rounds cost no more than the others.
    ``start``: (S,) log-strengths Newton starts every round from (the point fit's; NaN or absent: 0);
    ``point``: (S, S) the win matrix the rounds were drawn from (see :func:`fit_newton`). Returns (thetas, group membership).
    """
    first = np.zeros(w.shape[1]) if start is None else np.nan_to_num(np.asarray(start, dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
    r_n, s, _ = w.shape
    down, up = _reach(w, pivot)
    in_group = down & up  # the pivot's strongly connected group: finite MLE relative to the pivot
    theta = _sides(down, up, in_group)
    for rows, mask in _same_groups(in_group):
        idx = np.flatnonzero(mask)
        if idx.size < 2:
            theta[rows, pivot] = 0.0
            continue
        sub = w if len(rows) == r_n and idx.size == s else w[rows][:, idx][:, :, idx]
        shared = None if point is None else point[np.ix_(idx, idx)]
        theta[np.ix_(rows, idx)] = fit_newton(sub, int(np.flatnonzero(idx == pivot)[0]), start=first[idx], point=shared)
    return theta, in_group


def _bt_inputs(t: LabelTable):
    """Per-row win statistics over the systems present in ``t``."""
    v = t.vocab
    present_codes = np.unique(np.concatenate([t.sys_lo, t.sys_hi]))
    local = np.full(len(v.systems), -1, dtype=np.int64)
    local[present_codes] = np.arange(len(present_codes))
    s = len(present_codes)
    a, b = local[t.sys_lo], local[t.sys_hi]
    win_a = (t.outcome == LO_WINS) + 0.5 * (t.outcome == TIED)
    win_b = (t.outcome == HI_WINS) + 0.5 * (t.outcome == TIED)
    # one column per ordered system pair: (winner, loser) -> winner * s + loser
    col = np.concatenate([a * s + b, b * s + a])
    vals = np.concatenate([win_a, win_b])
    pairs = np.concatenate([t.pair, t.pair])
    return present_codes, local, s, col, vals, pairs


def _pivot(w: np.ndarray, reference: int | None) -> int:
    """The reference, else a system of the largest strongly connected group (most comparisons first)."""
    if reference is not None:
        return reference
    s = w.shape[0]
    k, comp = connected_components(csr_matrix(w > 0), directed=True, connection="strong")
    sizes = np.bincount(comp, minlength=k)
    games = (w + w.T).sum(axis=1)
    best = max(range(s), key=lambda i: (sizes[comp[i]], games[i], -i))
    return int(best)


def _reason(wins: float, losses: float, side: str, pivot_name: str, anchored: bool) -> str:
    n = wins + losses
    count = f"{n:g} comparison{'s' if n != 1 else ''}"
    if wins == 0:
        return f"not estimable: 0 wins in {count}"
    if losses == 0:
        return f"not estimable: 0 losses in {count}"
    group = f"{pivot_name}'s group" if anchored else "the main group"
    if side == BELOW:
        return f"not estimable: never beats {group} ({wins:g} wins in {count}, all against systems outside it)"
    if side == ABOVE:
        return f"not estimable: never loses to {group} ({losses:g} losses in {count}, all against systems outside it)"
    return f"not estimable: no chain of comparisons links it to {group}"


def _ends(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2.5/97.5 percentiles per column of rounds that may hold -inf / +inf (kept: they make an
    end unbounded) and NaN (dropped: the system was absent from that round)."""
    big = 1e12
    finite = np.clip(np.where(np.isnan(samples), np.nan, samples), -big, big)
    lo, hi = percentile_ci(finite)
    # any interpolation touching a clipped round stays beyond 2.5% of `big` (see the test)
    lo = np.where(lo < -big / 1000, -np.inf, lo)
    hi = np.where(hi > big / 1000, np.inf, hi)
    return lo, hi


def bradley_terry(
    labels: LabelTable | Iterable[LabelRow],
    reference: str | None = REFERENCE_SYSTEM,
    base: float = 10,
    scale: float = 400,
    anchor: float = 1000,
    rounds: int = 1000,
    seed: int = 0,
    weights: np.ndarray | None = None,
) -> BTResult:
    """Bradley-Terry scores: each label is one comparison of its two systems
    (win 1, tie 1/2 each way), fitted by maximum likelihood (Newton, :func:`fit_point`, equal to
    choix's I-LSR ``ilsr_pairwise_dense`` with alpha=0) on the win-count matrix, shown as
    ``scale * theta / ln(base)``.

    Anchor: with a ``reference``, it scores ``anchor``; with ``reference=None``
    (benchmarks without a reference), the mean of the *anchor systems* is
    ``anchor``: the estimable systems that keep a finite score in every bootstrap
    round (all estimable systems when there is no bootstrap), so that every
    round is centred on the same systems as the point estimate.

    No regularization. The score of a system relative to the anchor has a finite
    maximum-likelihood estimate only when the system and the anchor lie in the
    same strongly connected group of the "beat" graph (edge i -> j when i has a
    win or a tie against j); without a reference, the group is the largest one.
    A system outside it (it never wins; it never loses; its group never beats the
    anchor's group...) is reported as not estimable with the reason and the side
    its score tends to; the group's scores are the exact limit of the full MLE.

    CI: pair bootstrap. Each round is fitted the same way (batched Newton on the
    anchor's group, rounds with the same group together); a system outside the
    group in a round counts as -inf / +inf there, so an end of its CI is
    unbounded when that happens in more than 2.5% of the rounds. Without a
    reference, each round is centred on the mean of the anchor systems. Rounds
    in which the reference (or, without one, the pivot system) does not appear
    are left out. Rounds in which a system does not appear
    leave it out; a system compared in one pair only gets no CI.
    ``n`` = comparisons involving the system.

    ``weights`` (one per label, e.g. 1 / the pair's inclusion probability under active sampling):
    each label counts that many times in the win counts, so that the fit is the weighted MLE; the
    bootstrap still resamples pairs, carrying their weights. None: every label once.
    """
    t = as_table(labels)
    codes, local, s, col, vals, pairs = _bt_inputs(t)
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (len(t),) or np.any(~np.isfinite(weights)) or np.any(weights <= 0):
            raise ValueError("Bradley-Terry weights must be positive, one per label")
        vals = vals * np.concatenate([weights, weights])
    v = t.vocab
    ref = None
    if reference is not None:
        if reference not in v.systems or v.systems.index(reference) not in codes:
            raise ValueError(f"reference system {reference!r} is not among the compared systems")
        ref = int(local[v.systems.index(reference)])
    boot = PairBootstrap(t.pair, rounds, seed)
    # per pair, its two cells of the S x S win matrix (duplicates summed): sparse, resampled as such
    per_unit = csr_matrix((vals, (boot.unit_index(pairs), col)), shape=(boot.n_units, s * s))
    w = np.asarray(per_unit.sum(axis=0)).reshape(s, s)
    pivot = _pivot(w, ref)
    down, up = _reach(w[None], pivot)
    in_group = (down & up)[0]
    limit = _sides(down, up, in_group[None])[0]
    idx = np.flatnonzero(in_group)
    theta = np.full(s, np.nan)
    if idx.size > 1:
        theta[idx] = fit_point(w[np.ix_(idx, idx)], int(np.flatnonzero(idx == pivot)[0]))
    else:
        theta[pivot] = 0.0
    k = scale / math.log(base)
    anchors = np.array([pivot]) if ref is not None else idx

    rounds_deg = 0
    th_b = None
    if boot.rounds > 0:
        wb = boot.resample(per_unit).reshape(-1, s, s)
        keep = (wb[:, pivot, :] + wb[:, :, pivot]).sum(axis=1) > 0  # the pivot is compared in the round
        th_b, grp = fit_rounds(wb if keep.all() else wb[keep], pivot, start=theta, point=w)
        rounds_deg = int((~grp[:, idx]).any(axis=1).sum())
        if ref is None and len(th_b):
            anchors = idx[grp[:, idx].all(axis=0)]  # never out of the group, never absent: always finite
    _, first = np.unique(t.pair, return_index=True)  # a pair compares the same two systems in all its rows
    pairs_of = np.bincount(local[t.sys_lo[first]], minlength=s) + np.bincount(local[t.sys_hi[first]], minlength=s)
    n_sys = np.bincount(np.concatenate([t.sys_lo, t.sys_hi]), minlength=len(v.systems))
    wins, losses = w.sum(axis=1), w.sum(axis=0)
    pivot_name = v.systems[codes[pivot]]
    reasons = {}
    for i in np.flatnonzero(~in_group):
        side = BELOW if limit[i] < 0 else ABOVE if limit[i] > 0 else APART
        reasons[int(i)] = (side, _reason(float(wins[i]), float(losses[i]), side, pivot_name, ref is not None))
    fit = _Fit(
        names=tuple(v.systems[c] for c in codes),
        k=k,
        anchor=float(anchor),
        theta=theta,
        rounds=th_b,
        in_group=in_group,
        # A system seen in one pair only: every round that has it has that same pair, and the
        # zero-width interval would claim a certainty the data cannot give. No CI then.
        lone=(pairs_of < 2) & (np.arange(s) != (ref if ref is not None else -1)),
        n=n_sys[codes],
        n_pairs=pairs_of,
        wins=wins,
        losses=losses,
        reasons=reasons,
    )
    return BTResult(
        reference=reference,
        anchor=float(anchor),
        scale=float(scale),
        base=float(base),
        scores=_placed(fit, anchors),
        n_comparisons=len(t),
        degenerate=bool((~in_group).any()),
        rounds_degenerate=rounds_deg,
        anchor_systems=tuple(sorted(fit.names[i] for i in anchors)),
        candidate_anchors=tuple(sorted(fit.names[i] for i in anchors)),
        fit=fit,
    )


@dataclass(frozen=True, eq=False)
class _Fit:
    """A Bradley-Terry fit before it is placed on the scale (kept so that it can be re-centred).

    Per system (local index): ``theta``, the log-strength relative to the pivot (NaN outside its
    group); ``rounds``, the same per bootstrap round that counts (-inf / +inf / NaN outside the
    round's group), or None without a bootstrap.
    """

    names: tuple[str, ...]
    k: float
    anchor: float
    theta: np.ndarray
    rounds: np.ndarray | None
    in_group: np.ndarray
    lone: np.ndarray
    n: np.ndarray
    n_pairs: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    reasons: dict[int, tuple[str, str]]


def tie_levels(values: np.ndarray, tolerance: float = TIE_TOLERANCE) -> np.ndarray:
    """An integer level per value, higher for a higher value, equal for values tied within
    ``tolerance``: sorted values each closer than it to the next share a level (a chain of ties).
    Equal infinities are tied; NaN is not allowed."""
    values = np.asarray(values, dtype=float)
    if not len(values):
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    with np.errstate(invalid="ignore"):
        gaps = np.diff(ordered)
    new = np.where(np.isnan(gaps), False, gaps > tolerance)  # inf - inf is NaN: the same level
    levels = np.empty(len(values), dtype=np.int64)
    levels[order] = np.concatenate([[0], np.cumsum(new)])
    return levels


def _placed(fit: _Fit, anchors: np.ndarray) -> dict[str, SystemScore]:
    """The scores of a fit whose anchor systems (local indices) average ``fit.anchor``, best first."""
    s = len(fit.names)
    elo = fit.k * (fit.theta - fit.theta[anchors].mean()) + fit.anchor
    lo = hi = np.full(s, np.nan)
    if fit.rounds is not None:
        elo_b = fit.k * (fit.rounds - fit.rounds[:, anchors].mean(axis=1)[:, None]) + fit.anchor
        lo, hi = _ends(elo_b)
        lo, hi = np.where(fit.lone, np.nan, lo), np.where(fit.lone, np.nan, hi)
    # Ranks and order come from the scores relative to the pivot, tied within the tolerance: the
    # anchor moves every score alike and must not break a tie by floating-point noise.
    ranking = np.where(fit.in_group, fit.k * fit.theta, 0.0)
    for i, (side, _) in fit.reasons.items():
        ranking[i] = -math.inf if side == BELOW else math.inf if side == ABOVE else math.nan
    ranked = ~np.isnan(ranking)
    levels = np.full(s, -1, dtype=np.int64)
    levels[ranked] = tie_levels(ranking[ranked])
    rank = {i: 1 + int((levels[ranked] > levels[i]).sum()) for i in np.flatnonzero(ranked)}

    def place(i: int) -> tuple:
        if fit.in_group[i]:
            return (0, -levels[i], fit.names[i])
        return (1 if fit.reasons[i][0] == ABOVE else 2, 0, fit.names[i])

    scores = {}
    for i in sorted(range(s), key=place):
        name = fit.names[i]
        counts = dict(n=int(fit.n[i]), wins=float(fit.wins[i]), losses=float(fit.losses[i]), n_pairs=int(fit.n_pairs[i]), rank=rank.get(i))
        if fit.in_group[i]:
            ci_lo, ci_hi = (None, None) if np.isnan(lo[i]) or np.isnan(hi[i]) else (float(lo[i]), float(hi[i]))
            scores[name] = SystemScore(name, float(elo[i]), ci_lo, ci_hi, **counts)
        else:
            side, reason = fit.reasons[i]
            scores[name] = SystemScore(name, None, None, None, **counts, estimable=False, side=side, reason=reason)
    return scores


def bradley_terry_by_category(labels, reference: str | None = REFERENCE_SYSTEM, **kwargs) -> dict[str, BTResult | None]:
    """:func:`bradley_terry` per category (None where the reference is absent)."""
    t = as_table(labels)
    weights = kwargs.pop("weights", None)
    out: dict[str, BTResult | None] = {}
    for c in np.unique(t.category):
        sub = t.select(t.category == c)
        if weights is not None:
            kwargs["weights"] = np.asarray(weights)[t.category == c]
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


def kendall_tau(
    scores_a: BTResult | Mapping[str, float], scores_b: BTResult | Mapping[str, float], tolerance: float = TIE_TOLERANCE
) -> TauResult:
    """Kendall's tau-b (as scipy.stats.kendalltau) between two score sets on their common systems, scores within
    ``tolerance`` of each other tied (:func:`tie_levels`) so that noise in the last bits of two
    equal scores is no order."""
    a = scores_a.score_map() if isinstance(scores_a, BTResult) else dict(scores_a)
    b = scores_b.score_map() if isinstance(scores_b, BTResult) else dict(scores_b)
    common = tuple(sorted(k for k in a if k in b and a[k] is not None and b[k] is not None))
    if len(common) < 2:
        return TauResult(None, None, len(common), common)
    levels_a = tie_levels(np.array([a[k] for k in common]), tolerance)
    levels_b = tie_levels(np.array([b[k] for k in common]), tolerance)
    tau, p = kendall_tau_b(levels_a, levels_b)
    return TauResult(as_float(tau), as_float(p), len(common), common)
