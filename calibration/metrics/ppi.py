"""Prediction-powered inference: estimates from a few human labels and many judge verdicts.

The idea (Angelopoulos et al., Science 2023; the power-tuned PPI++, Angelopoulos, Duchi and Zrnic
2023): a judge's verdicts on every item give a precise but possibly biased estimate; on the items
that also carry human labels, the judge's error can be measured and subtracted. The corrected
estimate is unbiased for what the *humans* would say, and its CI is narrower than the humans'
alone by as much as the judge tracks them. The tuning weight ``lam`` (0 = humans only, 1 = plain
PPI) is chosen from the data to minimize the variance, so a useless judge costs almost nothing.

What is estimated here:

* :func:`ppi_mean` -- a mean (a system's win rate, a share);
* :func:`ppi_logistic` -- logistic-regression coefficients, which for rows ``x = e_a - e_b`` are
  Bradley-Terry strengths (:func:`bt_design` builds such rows);
* :func:`rank_sets` -- for each system, the ranks it can hold, from estimates and their covariance.

Numbers equal the reference implementation ``ppi_py`` (``ppi_mean_ci``, ``ppi_logistic_ci``, the
same two-step choice of ``lam`` and the same degrees of freedom) when every item is its own
cluster; the tests check it to 1e-6. Beyond it: *clusters*. The criteria of one pair share the
same two articles, so their errors are correlated; with ``clusters`` given, variances sum each
cluster's influence before squaring (a cluster-robust sandwich), which reduces to ppi_py's
formulas when every cluster has one item. A cluster must lie wholly in the labelled or wholly in
the unlabelled set.

Assumption to state with every figure: the human-labelled items are a random sample of the items
the judge saw (missing at random). Items picked for labelling because they looked hard break it.

Pure numpy/scipy, no Django.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import expit

from calibration.metrics import distributions as dist

Z95 = float(dist.normal_quantile(0.975))


@dataclass(frozen=True)
class PPIFit:
    """An estimate (d values) with its covariance matrix and the weight given to the judge."""

    estimate: np.ndarray
    cov: np.ndarray
    lam: float
    n: int  # labelled items
    N: int  # unlabelled items (judge verdicts only)
    n_clusters: int  # labelled clusters (pairs)
    N_clusters: int

    @property
    def se(self) -> np.ndarray:
        return np.sqrt(np.maximum(np.diag(self.cov), 0.0))

    def ci(self, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
        z = float(dist.normal_quantile(1 - alpha / 2))
        return self.estimate - z * self.se, self.estimate + z * self.se


# --------------------------------------------------------------------------
# cluster-robust second moments
# --------------------------------------------------------------------------


def as_2d(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x.reshape(-1, 1) if x.ndim == 1 else x


@dataclass(frozen=True)
class Clusters:
    """Items' clusters coded 0..k-1 in the order of their ids (`np.unique`'s inverse): pass it where
    ``clusters`` is asked for to code them once for many estimates on the same items."""

    codes: np.ndarray
    k: int

    @classmethod
    def of(cls, clusters) -> "Clusters":
        if isinstance(clusters, Clusters):
            return clusters
        _, codes = np.unique(np.asarray(clusters), return_inverse=True)
        codes = codes.reshape(-1)
        return cls(codes, int(codes.max()) + 1 if len(codes) else 0)

    def subset(self, mask: np.ndarray) -> "Clusters":
        """The clusters of the items in ``mask``, coded as `of` codes them (without sorting again)."""
        codes = self.codes[mask]
        present = np.zeros(self.k, dtype=np.int64)
        present[codes] = 1
        rank = np.cumsum(present) - 1
        return Clusters(rank[codes], int(present.sum()))

    def __len__(self) -> int:
        return len(self.codes)


def cluster_sums(z: np.ndarray, clusters) -> np.ndarray:
    """Rows of ``z`` summed within each cluster (``z`` itself when there are no clusters);
    ``clusters``: one id per row, or their :class:`Clusters`."""
    if clusters is None or len(z) == 0:
        return z
    coded = Clusters.of(clusters)
    codes, k = coded.codes, coded.k
    # Each column's sums in row order, as a product with the 0/1 cluster-by-row matrix adds them (and
    # without building one: that took longer than the sums, thousands of times per report).
    z = np.asarray(z, dtype=np.float64)
    if z.ndim == 1:
        return np.bincount(codes, weights=z, minlength=k)
    return np.stack([np.bincount(codes, weights=z[:, j], minlength=k) for j in range(z.shape[1])], axis=1)


def n_clusters(m: int, clusters) -> int:
    if clusters is None:
        return m
    return clusters.k if isinstance(clusters, Clusters) else int(np.unique(clusters).size)


def scatter(a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None, ddof: int) -> np.ndarray:
    """Per-item (cross-)covariance of the centred rows ``a`` and ``b`` (m x d each): the sum over
    clusters of (cluster sum of a)(cluster sum of b)^T, divided by m - ddof. With one item per
    cluster and ddof 1 this is ``np.cov``; the cluster sums carry the within-cluster correlation."""
    m = len(a)
    if m - ddof <= 0:
        return np.full((a.shape[1], b.shape[1]), np.nan)
    clusters = None if clusters is None else Clusters.of(clusters)
    sa = cluster_sums(a, clusters)
    sb = sa if b is a else cluster_sums(b, clusters)
    return sa.T @ sb / (m - ddof)


def _tuned_lam(g, g_hat, g_hat_u, inv_h, clusters, clusters_u) -> float:
    """The ``lam`` that minimizes the total variance (trace), clipped to [0, 1]: as ppi_py's
    ``_calc_lam_glm`` (cross-covariance with 1/n, pooled variance of the judge gradients with
    ddof 1), with cluster sums."""
    n, N = len(g), len(g_hat_u)
    if n == 0 or N == 0:
        return 0.0
    gc, hc = g - g.mean(axis=0), g_hat - g_hat.mean(axis=0)
    clusters = None if clusters is None else Clusters.of(clusters)
    cross = scatter(gc, hc, clusters, 0)
    cross = cross + cross.T
    pooled = np.concatenate([g_hat, g_hat_u])
    pooled_clusters = None
    if clusters is not None or clusters_u is not None:
        cl = np.arange(n) if clusters is None else Clusters.of(clusters).codes
        cu = np.arange(N) if clusters_u is None else Clusters.of(clusters_u).codes
        pooled_clusters = np.concatenate([cl, cu + cl.max() + 1])
    centred = pooled - pooled.mean(axis=0)
    var = scatter(centred, centred, pooled_clusters, 1)
    num = np.trace(inv_h @ cross @ inv_h)
    den = 2 * (1 + n / N) * np.trace(inv_h @ var @ inv_h)
    if not np.isfinite(num) or not np.isfinite(den) or den <= 0:
        return 0.0
    return float(np.clip(num / den, 0.0, 1.0))


def _check(n: int, *arrays) -> None:
    for a in arrays:
        if a is not None and len(a) != n:
            raise ValueError("labels, predictions and clusters must have one entry per item")


def informative(y, yhat, clusters=None, level: float = 0.05) -> bool:
    """Whether the judge's values track the humans' on the labelled items: the correlation of their
    cluster sums (centred on the means) is positive at the one-sided ``level`` (t-test with G - 2
    degrees of freedom, G clusters).

    Why a gate: the tuned lam is estimated from the same few labels, and with a useless judge it
    picks up the sample correlation's noise, shaving about 1/G off the variance of CIs that should
    not shrink at all (10% narrower at 21 pairs). Passing lam = 0 when this test fails keeps a
    useless judge's CI as wide as the humans' own, at the price of ignoring a weakly informative
    judge on very few pairs."""
    y, yhat = (np.asarray(a, dtype=np.float64).ravel() for a in (y, yhat))
    clusters = None if clusters is None else Clusters.of(clusters)
    g = n_clusters(len(y), clusters)
    if g < 3:
        return False
    sy = cluster_sums(as_2d(y - y.mean()), clusters).ravel()
    sh = cluster_sums(as_2d(yhat - yhat.mean()), clusters).ravel()
    denom = math.sqrt(float(sy @ sy) * float(sh @ sh))
    if denom <= 0:
        return False
    # Clamped on both sides: at r = +1 or -1 exactly (a judge that copies or contradicts the humans on
    # every pair, common with 3 or 4 pairs) 1 - r^2 is 0, and t is +-infinity in the limit.
    r = min(max(float(sy @ sh) / denom, -1 + 1e-12), 1 - 1e-12)
    t = r * math.sqrt((g - 2) / (1 - r * r))
    return bool(t > _t_quantile(1 - level, g - 2))


@lru_cache(maxsize=4096)
def _t_quantile(q: float, df: int) -> float:
    """Student's t quantile (scipy's, kept: a report asks for the same few thousands of times)."""
    return dist.t_quantile(q, df)


# --------------------------------------------------------------------------
# mean
# --------------------------------------------------------------------------


def ppi_mean(
    y,
    yhat,
    yhat_unlabeled,
    *,
    lam: float | None = None,
    clusters=None,
    clusters_unlabeled=None,
) -> PPIFit:
    """Prediction-powered estimate of a (scalar) mean of the human labels ``y``.

    ``yhat`` are the judge's values on the labelled items, ``yhat_unlabeled`` on the others.
    ``lam=None`` tunes the weight (PPI++); ``lam=1`` is plain PPI; ``lam=0`` the human-only mean.
    """
    y, yhat, yu = (np.asarray(a, dtype=np.float64).ravel() for a in (y, yhat, yhat_unlabeled))
    n, N = len(y), len(yu)
    _check(n, yhat, clusters)
    _check(N, clusters_unlabeled)
    if n == 0:
        raise ValueError("a prediction-powered estimate needs at least one labelled item")
    if N == 0:
        lam = 0.0
    clusters = None if clusters is None else Clusters.of(clusters)
    clusters_unlabeled = None if clusters_unlabeled is None else Clusters.of(clusters_unlabeled)
    if lam is None:
        first = yu.mean() + (y - yhat).mean()
        lam = _tuned_lam(as_2d(y - first), as_2d(yhat - first), as_2d(yu - first), np.eye(1), clusters, clusters_unlabeled)
    imputed = lam * yu.mean() if N else 0.0
    estimate = imputed + (y - lam * yhat).mean()
    r = as_2d(y - lam * yhat)
    r = r - r.mean()
    var = scatter(r, r, clusters, 0)[0, 0] / n
    if N:
        u = as_2d(lam * yu)
        u = u - u.mean()
        var += scatter(u, u, clusters_unlabeled, 0)[0, 0] / N
    return PPIFit(
        np.array([estimate]), np.array([[var]]), float(lam), n, N,
        n_clusters(n, clusters), n_clusters(N, clusters_unlabeled),
    )  # fmt: skip


# --------------------------------------------------------------------------
# logistic regression (Bradley-Terry)
# --------------------------------------------------------------------------


def _log1pexp(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _rectified_fit(X, y, yhat, Xu, yu, lam: float, start: np.ndarray, max_iter: int = 100) -> np.ndarray | None:
    """Minimizer of the rectified logistic loss (convex for lam in [0, 1]) by damped Newton steps;
    None when it does not converge (no finite minimizer, e.g. perfectly separated data)."""
    n, N = len(y), len(yu)

    def loss(t):
        z, zu = X @ t, Xu @ t
        total = np.sum(-y * z + _log1pexp(z)) / n - lam / n * np.sum(-yhat * z + _log1pexp(z))
        return total + (lam / N * np.sum(-yu * zu + _log1pexp(zu)) if N else 0.0)

    theta = start.copy()
    current = loss(theta)
    for _ in range(max_iter):
        mu, mu_u = expit(X @ theta), expit(Xu @ theta)
        grad = X.T @ (mu - y) / n - lam / n * X.T @ (mu - yhat)
        hess = (1 - lam) / n * (X.T * (mu * (1 - mu))) @ X
        if N:
            grad = grad + lam / N * Xu.T @ (mu_u - yu)
            hess = hess + lam / N * (Xu.T * (mu_u * (1 - mu_u))) @ Xu
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(step)):
            return None
        size, improved = 1.0, False
        while size > 1e-10:
            candidate = theta - size * step
            value = loss(candidate)
            if value <= current + 1e-15 * max(1.0, abs(current)):
                improved = True
                break
            size /= 2
        if not improved:  # no step lowers the loss: at the optimum up to rounding, or stuck
            return theta if np.max(np.abs(grad)) < 1e-8 else None
        theta, current = candidate, value
        if np.max(np.abs(size * step)) < 1e-12:
            return theta if np.max(np.abs(theta)) < 50 else None
    return None


def _logistic_stats(theta, X, y, yhat, Xu, yu, use_unlabeled: bool):
    """Per-item gradients (humans, judge on labelled, judge on unlabelled) and the inverse Hessian,
    as ppi_py's ``_logistic_get_stats``."""
    n, N = len(y), len(yu)
    mu, mu_u = expit(X @ theta), expit(Xu @ theta)
    g = X * (mu - y)[:, None]
    g_hat = X * (mu - yhat)[:, None]
    g_hat_u = Xu * (mu_u - yu)[:, None]
    if use_unlabeled:
        hess = ((X.T * (mu * (1 - mu))) @ X + (Xu.T * (mu_u * (1 - mu_u))) @ Xu) / (N + n)
    else:
        hess = (X.T * (mu * (1 - mu))) @ X / n
    return g, g_hat, g_hat_u, np.linalg.inv(hess)


def ppi_logistic(
    X,
    y,
    yhat,
    X_unlabeled,
    yhat_unlabeled,
    *,
    lam: float | None = None,
    clusters=None,
    clusters_unlabeled=None,
) -> PPIFit | None:
    """Prediction-powered logistic-regression coefficients (no intercept) and their covariance.

    ``y`` may be fractional (a tie is 1/2, several annotators are averaged). ``lam=None`` tunes the
    weight as ppi_py does: fit with lam=1, tune, refit, tune again at that fit, refit; the CI uses
    the last lam. Returns None when the loss has no finite minimizer (a system that never wins or
    never loses in the data given).
    """
    X, Xu = as_2d(X), as_2d(X_unlabeled)
    y, yhat, yu = (np.asarray(a, dtype=np.float64).ravel() for a in (y, yhat, yhat_unlabeled))
    n, N = len(y), len(yu)
    _check(n, X, yhat, clusters)
    _check(N, Xu, clusters_unlabeled)
    if n == 0:
        raise ValueError("a prediction-powered estimate needs at least one labelled item")
    if N == 0:
        lam = 0.0
    clusters = None if clusters is None else Clusters.of(clusters)
    clusters_unlabeled = None if clusters_unlabeled is None else Clusters.of(clusters_unlabeled)
    d = X.shape[1]
    start = np.zeros(d)

    fits: dict[float, np.ndarray | None] = {}

    def fit(weight):  # the same weight twice (a tuned lam clipped to 0 or 1, or tuned again to itself): the same fit
        weight = float(weight)
        if weight not in fits:
            fits[weight] = _rectified_fit(X, y, yhat, Xu, yu, weight, start)
        return fits[weight]

    def tune(theta):
        g, gh, ghu, inv_h = _logistic_stats(theta, X, y, yhat, Xu, yu, True)
        return _tuned_lam(g, gh, ghu, inv_h, clusters, clusters_unlabeled)

    try:
        if lam is None:
            theta = fit(1.0)
            if theta is None:
                return None
            theta = fit(tune(theta))
            if theta is None:
                return None
            lam = tune(theta)
        theta = fit(lam)
        if theta is None:
            return None
        g, gh, ghu, inv_h = _logistic_stats(theta, X, y, yhat, Xu, yu, lam != 0)
    except np.linalg.LinAlgError:
        return None
    r = g - lam * gh
    r = r - r.mean(axis=0)
    middle = scatter(r, r, clusters, 1) / n
    if N:
        u = lam * ghu
        u = u - u.mean(axis=0)
        middle = middle + scatter(u, u, clusters_unlabeled, 1) / N
    cov = inv_h @ middle @ inv_h
    return PPIFit(theta, cov, float(lam), n, N, n_clusters(n, clusters), n_clusters(N, clusters_unlabeled))


def bt_design(sys_lo, sys_hi, n_systems: int, dropped: int) -> np.ndarray:
    """Rows ``e_a - e_b`` over the systems, without the column of ``dropped`` (its strength is 0:
    Bradley-Terry strengths are only defined up to a constant)."""
    sys_lo, sys_hi = np.asarray(sys_lo, dtype=np.int64), np.asarray(sys_hi, dtype=np.int64)
    X = np.zeros((len(sys_lo), n_systems))
    rows = np.arange(len(sys_lo))
    X[rows, sys_lo] = 1.0
    X[rows, sys_hi] = -1.0
    return np.delete(X, dropped, axis=1)


def with_dropped(fit: PPIFit, dropped: int, anchors: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All systems' strengths and covariance from a fit without the ``dropped`` column: the dropped
    system at 0, or, with ``anchors`` (system indices), centred so that the anchors' mean is 0."""
    d = len(fit.estimate) + 1
    keep = np.delete(np.arange(d), dropped)
    expand = np.zeros((d, d - 1))
    expand[keep, np.arange(d - 1)] = 1.0
    if anchors is not None:
        centre = np.eye(d)
        centre[:, anchors] -= 1.0 / len(anchors)
        expand = centre @ expand
    return expand @ fit.estimate, expand @ fit.cov @ expand.T


# --------------------------------------------------------------------------
# rates: intervals inside [0, 1]
# --------------------------------------------------------------------------


def wilson_interval(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` from ``n`` (possibly fractional) binary votes:
    the rates theta that the z-test with the variance at theta, theta(1 - theta)/n, does not reject.
    It lies in [0, 1], holds ``p``, and is not a point at p = 0 or 1."""
    p = min(max(float(p), 0.0), 1.0)
    if not n > 0:
        raise ValueError("a Wilson interval needs a positive number of votes")
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # The exact ends are in [0, 1] and bracket p; clamp the rounding.
    return max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p))


def effective_votes(p: float, se: float, n_clusters: int) -> float:
    """How many independent binary votes would estimate the proportion ``p`` with this standard error:
    p(1 - p)/se^2, the n of the design-effect form of the Wilson interval (survey statistics' for
    proportions from clustered samples). Correlated items count as fewer votes; ties, whose spread is
    smaller than a vote's, as more (they are real: not truncated at the items). ``n_clusters`` when
    the values show no spread or p is 0 or 1: the data cannot tell their own variance then, and one
    vote per cluster (pair) is the cautious choice, as the items of a cluster are correlated."""
    p = float(p)
    if se > 0 and 0 < p < 1:
        return max(p * (1 - p) / se**2, 1.0)
    return float(max(n_clusters, 1))


# --------------------------------------------------------------------------
# rank-sets
# --------------------------------------------------------------------------


def rank_sets(estimate, cov, alpha: float = 0.05) -> list[tuple[int, int]]:
    """For each entry, the ranks (1 = highest) it can hold: [1 + entries surely above it,
    K - entries surely below it]. "Surely" = the pairwise difference's z-test at level
    alpha / (K(K-1)/2), Bonferroni over the pairs, so that all the rank-sets hold together with
    probability at least 1 - alpha (asymptotically). Needs the full covariance: two estimates
    that share data are correlated."""
    est = np.asarray(estimate, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    k = len(est)
    if k == 0:
        return []
    if k == 1:
        return [(1, 1)]
    z = float(dist.normal_quantile(1 - alpha / (k * (k - 1))))  # two-sided at alpha / (k(k-1)/2)
    diag = np.diag(cov)
    var = diag[:, None] + diag[None, :] - 2 * cov
    diff = est[:, None] - est[None, :]  # [i, j] = est_i - est_j
    above = diff < -z * np.sqrt(np.maximum(var, 0.0))  # [i, j]: j surely above i
    np.fill_diagonal(above, False)
    below = above.T
    return [(1 + int(above[i].sum()), k - int(below[i].sum())) for i in range(k)]
