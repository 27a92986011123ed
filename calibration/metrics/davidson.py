"""Davidson's Bradley-Terry model with ties (Davidson 1970, "On extending the Bradley-Terry model to
accommodate ties in paired comparison experiments", JASA 65): a tie is an outcome of its own, not half
a win each way.

For systems i, j with strengths pi = exp(theta) and the tie parameter nu >= 0:

    P(i beats j) = pi_i / D,  P(j beats i) = pi_j / D,  P(tie) = nu sqrt(pi_i pi_j) / D,
    D = pi_i + pi_j + nu sqrt(pi_i pi_j).

Fitted by maximum likelihood over theta (one system fixed at 0) and lambda = ln nu with Newton's method
and a halving line search. The log-likelihood is that of a log-linear model (the outcome's features:
e_i, e_j, (e_i + e_j) / 2 + e_lambda), hence concave, and its Hessian is minus the sum of the outcomes'
covariances. Without a tie the MLE of nu is 0 and the fit is Bradley-Terry's on the wins (equal to
:func:`ranking.bradley_terry` then). Every label is one comparison.

Estimable: the systems of the anchor's strongly connected group of the graph with an edge i -> j when i
beat or tied j (as :func:`ranking.bradley_terry`); the others get no score. Scores on today's scale:
``anchor + scale * (theta - theta_anchor) / ln(base)``, anchored on the reference when it is in the
group, else on the group's mean. nu is undefined (no fit) when every comparison is a tie.

CIs: pair bootstrap, each round refitted (rounds fitted together, batched Newton); a round in which the
group is no longer strongly connected, or with ties only, is left out and counted (``rounds_dropped``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from calibration.metrics._common import HI_WINS, LO_WINS, TIE_TOLERANCE, as_float
from calibration.metrics.bootstrap import PairBootstrap, percentile_ci
from calibration.metrics.labels import LabelTable
from calibration.metrics.ranking import tie_levels

MAX_ITER = 200
TOL = 1e-11
# A strength or log-nu this far from 0 (natural log: a ratio of e^30, about 1e13) is a fit running off to
# infinity, not an estimate: that round has no finite maximum-likelihood solution.
DIVERGED = 30.0
_CHUNK = 64


@dataclass(frozen=True)
class DavidsonScore:
    system: str
    score: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    rank: int | None


@dataclass(frozen=True)
class DavidsonFit:
    reference: str | None  # the anchor system, None: the group's mean
    nu: float | None
    nu_ci: tuple[float | None, float | None]
    tie_share: float | None
    n_comparisons: int
    n_pairs: int
    scores: dict[str, DavidsonScore]  # best first; not estimable last (score None)
    rounds: int
    rounds_dropped: int
    note: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _grad_hess(theta: np.ndarray, lam: np.ndarray, a, b, w_a, w_b, t, with_ties: np.ndarray):
    """Log-likelihood (R,), gradient (R, S+1) and Hessian (R, S+1, S+1) over (theta, lambda) of R rounds."""
    r_n, s = theta.shape
    eta = np.stack([theta[:, a], theta[:, b], lam[:, None] + 0.5 * (theta[:, a] + theta[:, b])], axis=-1)  # R,K,3
    eta = np.where(with_ties[:, None, None] | (np.arange(3) < 2), eta, -np.inf)
    top = eta.max(axis=-1, keepdims=True)
    ex = np.exp(eta - top)
    z = ex.sum(axis=-1, keepdims=True)
    p = ex / z
    log_d = (top + np.log(z))[..., 0]
    n = w_a + w_b + t
    with np.errstate(invalid="ignore"):
        tie_term = np.where(t > 0, t * eta[..., 2], 0.0)
    ll = (w_a * eta[..., 0] + w_b * eta[..., 1] + tie_term - n * log_d).sum(axis=1)
    pa, pb, pt = p[..., 0], p[..., 1], p[..., 2]
    ea, eb, el = pa + pt / 2, pb + pt / 2, pt
    # one-hot incidence of each system pair's first and second system (K x s): sums over the pairs by products
    inc_a, inc_b = np.zeros((len(a), s)), np.zeros((len(b), s))
    inc_a[np.arange(len(a)), a] = 1.0
    inc_b[np.arange(len(b)), b] = 1.0
    grad = np.empty((r_n, s + 1))
    grad[:, :s] = (w_a + t / 2 - n * ea) @ inc_a + (w_b + t / 2 - n * eb) @ inc_b
    grad[:, s] = (t - n * el).sum(axis=1)
    c_aa, c_bb, c_ll = pa + pt / 4 - ea * ea, pb + pt / 4 - eb * eb, pt - el * el
    c_ab, c_al, c_bl = pt / 4 - ea * eb, pt / 2 - ea * el, pt / 2 - eb * el
    hess = np.zeros((r_n, s + 1, s + 1))
    diagonal = np.arange(s)
    hess[:, diagonal, diagonal] = -((n * c_aa) @ inc_a + (n * c_bb) @ inc_b)
    # each system pair once (a < b): its off-diagonal cells are its own
    hess[:, a, b] = -n * c_ab
    hess[:, b, a] = -n * c_ab
    lam_col = -((n * c_al) @ inc_a + (n * c_bl) @ inc_b)
    hess[:, :s, s] = lam_col
    hess[:, s, :s] = lam_col
    hess[:, s, s] = -(n * c_ll).sum(axis=1)
    return ll, grad, hess


def _newton_steps(h: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Each round's Newton step h^-1 g; a round whose matrix is singular takes the least-squares step.

    A resampled round of a few pairs can be strongly connected and still drive a system's
    probabilities to 0 or 1 within a few steps, where its row of the information matrix vanishes in
    floating point; the least-squares step leaves that direction alone and the line search goes on."""
    try:
        return np.linalg.solve(h, g[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return np.stack([np.linalg.lstsq(hi, gi, rcond=None)[0] for hi, gi in zip(h, g)])


def fit_rounds(s: int, a, b, w_a: np.ndarray, w_b: np.ndarray, t: np.ndarray, fixed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(theta (R, s) with theta[fixed] = 0, lambda (R,), finite (R,)) maximising each round's likelihood;
    lambda is -inf in a round without a tie. Rows of w_a, w_b, t: rounds; columns: the system pairs (a, b).

    `finite` is False for a round whose Newton steps did not settle or ran past `DIVERGED`: with ties
    a strongly connected group can still have no finite maximum (one pair tied, another won and tied:
    the likelihood keeps rising as nu and a gap between two strengths grow together)."""
    r_n = w_a.shape[0]
    with_ties = t.sum(axis=1) > 0
    n_all = (w_a + w_b + t).sum(axis=1)
    share = np.where(n_all > 0, t.sum(axis=1) / np.where(n_all > 0, n_all, 1), 0)
    theta = np.zeros((r_n, s))
    # equal strengths: P(tie) = nu / (2 + nu)
    lam = np.where(with_ties, np.log(np.maximum(2 * share / np.maximum(1 - share, 1e-12), 1e-12)), -np.inf)
    free = np.ones(s + 1, dtype=bool)
    free[fixed] = False
    active = np.ones(r_n, dtype=bool)
    ll, grad, hess = _grad_hess(theta, lam, a, b, w_a, w_b, t, with_ties)
    for _ in range(MAX_ITER):
        if not active.any():
            break
        idx = np.flatnonzero(active)
        g = grad[idx][:, free]
        h = -hess[idx][:, free][:, :, free]
        no_tie = ~with_ties[idx]
        if no_tie.any():  # lambda stays at -inf: its row and column out of the system
            h[no_tie, -1, :] = 0.0
            h[no_tie, :, -1] = 0.0
            h[no_tie, -1, -1] = 1.0
            g[no_tie, -1] = 0.0
        step = _newton_steps(h, g)
        full = np.zeros((len(idx), s + 1))
        full[:, free] = step
        scale = np.ones(len(idx))
        for _ in range(40):
            th_new = theta[idx] + scale[:, None] * full[:, :s]
            lam_new = np.where(with_ties[idx], lam[idx] + scale * full[:, s], -np.inf)
            ll_new, g_new, h_new = _grad_hess(th_new, lam_new, a, b, w_a[idx], w_b[idx], t[idx], with_ties[idx])
            worse = ll_new < ll[idx] - 1e-12 * np.abs(ll[idx])
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        theta[idx], lam[idx], ll[idx], grad[idx], hess[idx] = th_new, lam_new, ll_new, g_new, h_new
        active[idx] = np.abs(scale[:, None] * full).max(axis=1) > TOL
    finite = ~active & (np.abs(theta).max(axis=1) < DIVERGED) & (~with_ties | (np.abs(lam) < DIVERGED))
    return theta, lam, finite


def _pair_counts(lo: np.ndarray, hi: np.ndarray, outcome: np.ndarray, s: int):
    """The system pairs compared (a < b codes) and per label its pair's index."""
    key = lo.astype(np.int64) * s + hi
    keys, inv = np.unique(key, return_inverse=True)
    return keys // s, keys % s, inv


def _group(s: int, a, b, w_a, w_b, t, pivot: int) -> np.ndarray:
    """The systems strongly connected to `pivot` by "beat or tied" edges."""
    beat = np.zeros((s, s), dtype=bool)
    beat[a[(w_a + t) > 0], b[(w_a + t) > 0]] = True
    beat[b[(w_b + t) > 0], a[(w_b + t) > 0]] = True
    _, comp = connected_components(csr_matrix(beat), directed=True, connection="strong")
    return comp == comp[pivot]


def davidson(
    table: LabelTable,
    reference: str | None = None,
    base: float = 10,
    scale: float = 400,
    anchor: float = 1000,
    rounds: int = 1000,
    seed: int = 0,
) -> DavidsonFit:
    """The Davidson fit of every label of `table` (module doc), with pair-bootstrap CIs."""
    v = table.vocab
    present = np.unique(np.concatenate([table.sys_lo, table.sys_hi])) if len(table) else np.zeros(0, np.int64)
    s = len(present)
    if s < 2:
        return DavidsonFit(reference, None, (None, None), None, len(table), 0, {}, 0, 0, "fewer than two systems compared")
    local = np.full(len(v.systems), -1, dtype=np.int64)
    local[present] = np.arange(s)
    lo, hi = local[table.sys_lo], local[table.sys_hi]
    a, b, inv = _pair_counts(lo, hi, table.outcome, s)
    k = len(a)
    column = inv * 3 + np.where(table.outcome == LO_WINS, 0, np.where(table.outcome == HI_WINS, 1, 2))
    boot = PairBootstrap(table.pair, rounds, seed)
    # per pair, its counts of each outcome of each system pair: sparse (a pair compares one system pair)
    per_unit = csr_matrix((np.ones(len(table)), (boot.unit_index(table.pair), column)), shape=(boot.n_units, 3 * k))
    totals = np.asarray(per_unit.sum(axis=0)).ravel().reshape(k, 3)
    w_a, w_b, t = totals[:, 0], totals[:, 1], totals[:, 2]
    n_per_system = np.bincount(np.concatenate([lo, hi]), minlength=s)
    names = [v.systems[c] for c in present]
    tie_share = float(t.sum() / len(table))
    if t.sum() == len(table):
        return DavidsonFit(
            reference, None, (None, None), tie_share, len(table), boot.n_units, {}, 0, 0, "every comparison is a tie: no finite nu"
        )
    ref = names.index(reference) if reference in names else None
    games = np.bincount(np.concatenate([a, b]), weights=np.concatenate([w_a + w_b + t] * 2), minlength=s)
    pivot = ref if ref is not None else int(np.argmax(games))
    group = _group(s, a, b, w_a, w_b, t, pivot)
    idx = np.flatnonzero(group)
    in_pair = group[a] & group[b]
    ga, gb = np.searchsorted(idx, a[in_pair]), np.searchsorted(idx, b[in_pair])
    fixed = int(np.searchsorted(idx, pivot))
    anchored_on_ref = ref is not None and group[ref]

    def placed(theta: np.ndarray) -> np.ndarray:
        base_theta = theta[:, fixed : fixed + 1] if anchored_on_ref else theta.mean(axis=1, keepdims=True)
        return anchor + scale * (theta - base_theta) / math.log(base)

    theta, lam, finite = fit_rounds(len(idx), ga, gb, w_a[None, in_pair], w_b[None, in_pair], t[None, in_pair], fixed)
    if not finite[0]:
        return DavidsonFit(
            reference, None, (None, None), tie_share, len(table), boot.n_units,
            {name: DavidsonScore(name, None, None, None, int(n_per_system[i]), None) for i, name in enumerate(names)}, 0, 0,
            "no finite fit: with these ties and wins the likelihood keeps rising as nu and a gap between strengths grow",
        )  # fmt: skip
    point = placed(theta)[0]
    nu = float(np.exp(lam[0]))
    ci = np.full((2, len(idx)), np.nan)
    nu_ci: tuple[float | None, float | None] = (None, None)
    dropped = 0
    if boot.rounds > 0:
        sampled = boot.resample(per_unit).reshape(boot.rounds, k, 3)[:, in_pair]
        keep = np.array([_group(len(idx), ga, gb, *(r[:, c] for c in range(3)), fixed).all() for r in sampled])
        keep &= sampled[..., 2].sum(axis=1) < sampled.sum(axis=(1, 2))
        dropped = int((~keep).sum())
        kept = sampled[keep]
        scores, lams = [], []
        for start in range(0, len(kept), _CHUNK):
            c = kept[start : start + _CHUNK]
            th, lm, ok = fit_rounds(len(idx), ga, gb, c[..., 0], c[..., 1], c[..., 2], fixed)
            dropped += int((~ok).sum())  # a round without a finite fit is left out and counted, like one that falls apart
            if ok.any():
                scores.append(placed(th[ok]))
                lams.append(lm[ok])
        if scores:
            lo_ci, hi_ci = percentile_ci(np.concatenate(scores))
            ci = np.stack([lo_ci, hi_ci])
            nus = np.exp(np.concatenate(lams))
            nu_ci = (as_float(np.percentile(nus, 2.5)), as_float(np.percentile(nus, 97.5)))
    levels = tie_levels(point, TIE_TOLERANCE)
    ranks = {int(i): 1 + int((levels > levels[i]).sum()) for i in range(len(idx))}
    out = {}
    for i in np.argsort(-point, kind="stable").tolist():
        system = int(idx[i])
        out[names[system]] = DavidsonScore(
            names[system], as_float(point[i]), as_float(ci[0, i]), as_float(ci[1, i]), int(n_per_system[system]), ranks[i]
        )
    for system in np.flatnonzero(~group).tolist():
        out[names[system]] = DavidsonScore(names[system], None, None, None, int(n_per_system[system]), None)
    note = None
    if (~group).any():
        note = f"not estimable (no chain of wins or ties both ways with the anchor's group): {', '.join(names[i] for i in np.flatnonzero(~group))}"
    return DavidsonFit(
        names[pivot] if anchored_on_ref else None, as_float(nu), nu_ci, tie_share, len(table), boot.n_units, out, boot.rounds, dropped, note
    )
