"""The distributions and tests the report needs, from scipy.special rather than scipy.stats.

Importing scipy.stats takes 0.35-0.4 s of a core (a third of `calibration_report`'s start-up, and
again in each worker process of a big report). The quantiles and tail areas here are the special
functions scipy.stats itself evaluates, so they give the same bits; Kendall's tau-b with its p-value
and the Benjamini-Yekutieli adjustment are written out. tests/test_metrics_distributions.py checks
every function against scipy.stats on shared inputs.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special


def normal_quantile(q):
    """The standard normal distribution's quantile function."""
    return special.ndtri(q)


def normal_cdf(x):
    return special.ndtr(x)


def t_quantile(q, df):
    """Student's t quantile with ``df`` degrees of freedom."""
    return special.stdtrit(df, q)


def t_cdf(x, df):
    return special.stdtr(df, x)


def f_sf(x, dfn, dfd):
    """P(F > x) for Fisher's F with (``dfn``, ``dfd``) degrees of freedom."""
    return special.fdtrc(dfn, dfd, x)


def beta_quantile(q, a, b):
    return special.betaincinv(a, b, q)


def by_adjusted(p: np.ndarray, axis: int = -1) -> np.ndarray:
    """Benjamini-Yekutieli adjusted p-values, each family along ``axis``: the i-th smallest of m
    becomes m * H(m) / i times itself (H the harmonic number), then the smallest of those at or
    above its rank, capped at 1. A value outside [0, 1] (NaN included) is a ValueError."""
    p = np.moveaxis(np.asarray(p, dtype=float), axis, -1)
    if not ((p >= 0.0) & (p <= 1.0)).all():
        raise ValueError("p-values must lie between 0 and 1")
    m = p.shape[-1]
    if m == 0:
        return np.moveaxis(p.copy(), -1, axis)
    order = np.argsort(p, axis=-1, kind="stable")
    ranks = np.arange(1, m + 1)
    scaled = np.take_along_axis(p, order, axis=-1) * (m / ranks) * np.sum(1.0 / ranks)
    settled = np.minimum.accumulate(scaled[..., ::-1], axis=-1)[..., ::-1]  # the smallest at or above each rank
    out = np.empty_like(settled)
    np.put_along_axis(out, order, settled, axis=-1)
    return np.moveaxis(np.minimum(out, 1.0), -1, axis)


def _tie_sums(levels: np.ndarray) -> tuple[float, float, float]:
    """Over the groups of equal values (sizes t): sum t(t-1)/2, sum t(t-1)(t-2), sum t(t-1)(2t+5)."""
    t = np.unique(levels, return_counts=True)[1].astype(float)
    return float((t * (t - 1) / 2).sum()), float((t * (t - 1) * (t - 2)).sum()), float((t * (t - 1) * (2 * t + 5)).sum())


def _exact_no_tie_p(n: int, c: int) -> float:
    """Two-sided exact p-value of Kendall's tau without ties: twice the share of the n! orders with at
    most ``c`` discordant pairs (``c`` the smaller of discordant and concordant), counted exactly by
    building orders one element at a time (the k-th element adds 0 to k-1 inversions)."""
    counts = [1] + [0] * c  # orders of the first k elements by their number of inversions, up to c
    for k in range(2, n + 1):
        running, new = 0, []
        for j in range(c + 1):
            running += counts[j]
            if j - k >= 0:
                running -= counts[j - k]
            new.append(running)
        counts = new
    return min(1.0, 2.0 * (sum(counts) / math.factorial(n)))


def kendall_tau_b(x, y) -> tuple[float, float]:
    """Kendall's tau-b of two equally long sequences and its two-sided p-value, as scipy.stats.kendalltau
    computes them by default: exact (the distribution of orders) without ties when n <= 33 or when at
    most one pair is on the minority side, else the normal approximation with the tie-corrected
    variance. NaN and NaN when a sequence is constant or shorter than 2."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    if n < 2:
        return math.nan, math.nan
    upper = np.triu_indices(n, k=1)
    sx = np.sign(x[:, None] - x[None, :])[upper]
    sy = np.sign(y[:, None] - y[None, :])[upper]
    concordant, discordant = int(((sx * sy) > 0).sum()), int(((sx * sy) < 0).sum())
    total = n * (n - 1) // 2
    tie_x, x0, x1 = _tie_sums(x)
    tie_y, y0, y1 = _tie_sums(y)
    untied_x, untied_y = total - tie_x, total - tie_y
    if untied_x == 0 or untied_y == 0:
        return math.nan, math.nan
    tau = (concordant - discordant) / math.sqrt(untied_x * untied_y)
    fewer = min(discordant, concordant)  # without ties, every pair is one or the other
    if tie_x == 0 and tie_y == 0 and (n <= 33 or fewer <= 1):
        return tau, _exact_no_tie_p(n, fewer)
    m = n * (n - 1.0)
    var = (m * (2 * n + 5) - x1 - y1) / 18 + 2 * tie_x * tie_y / m + x0 * y0 / (9 * m * (n - 2))
    z = (concordant - discordant) / math.sqrt(var)
    return tau, float(2.0 * special.ndtr(-abs(z)))
