"""Active sampling for prediction-powered estimates: which items humans label, and the weighted
estimate that keeps its confidence interval valid.

The design (Zrnic and Candes, "Active statistical inference", ICML 2024): every item the judge
has a verdict on gets an inclusion probability ``pi`` that grows with the judge's predicted error
on it, mixed with a uniform share so that no item is left to chance alone; an independent draw
admits it to the human queue. The estimate weights the human corrections by ``1 / pi``: it stays
unbiased whatever the predictor's quality, and is narrower when the predictor finds the items
where the judge and the humans part.

What is here:

* :func:`error_model_fit` -- a (weighted) least-squares model of the squared judge-human error from
  item features (position-swap disagreement, disagreement between judges, the judge's confidence,
  length difference: whatever the caller has), gated by an F-test so that useless features give a
  flat prediction and hence the uniform design;
* :func:`inclusion_probabilities` -- ``pi`` proportional to sqrt(predicted error / human cost), mixed
  with a uniform share, scaled to an expected human budget and capped at 1 (the excess is spread
  over the others); :func:`design_cost` the money a design is expected to spend, judge included;
* :func:`active_ppi_mean` -- the inverse-probability-weighted PPI++ mean with the power-tuned
  weight ``lam`` and a cluster-robust normal CI; with every ``pi`` equal it is
  :func:`.ppi.ppi_mean` (point, lam and CI; the tests check it to 1e-9);
* :func:`effective_sample_size`, :func:`judge_human_correlation` and :func:`ess_ceiling` -- how many
  uniformly drawn human labels the estimate is worth, and the ceiling ``1 / (1 - rho^2)`` that a
  judge with correlation ``rho`` puts on that worth under the uniform design.

The estimator. The labelled set L holds the items the draw admitted (probability ``pi``), the
unlabelled set U the others (probability ``1 - pi``). With ``r = y - lam * yhat``::

    theta = lam * A + B,   B = sum_L w r / sum_L w,   w = 1 / pi
                           A = (sum_C yhat + sum_U v yhat) / (|C| + sum_U v),   v = 1 / (1 - pi)

``B`` is the Hajek estimate of the population mean of ``r`` from the labelled items, ``A`` that of
the judge's mean from the unlabelled ones, with the certain items C (``pi = 1``, never unlabelled)
counted as they are. With equal ``pi`` both are plain means: PPI++'s two-sample form. The variance
sums the squared cluster sums of the weighted influences ``w (r - B)`` and ``v (yhat - A_U)``, as
ppi.py does for equal weights; it is that of a superpopulation mean, so for the finite population's
mean it errs on the wide side. Each item gets one draw, with a ``pi``
fixed before it: items met during a burn-in get the uniform rate, later ones a ``pi`` from a
model fitted on the labels before them, and the estimate sums every item's term with its own
``pi`` (the sequential form of Zrnic and Candes: given the earlier draws each term is unbiased).
Redrawing an item, or counting a burn-in label as certain (``pi = 1``), breaks or wastes that.

Pure numpy/scipy, no Django.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from calibration.metrics import distributions as dist
from calibration.metrics.ppi import PPIFit, as_2d, cluster_sums, n_clusters, scatter

# --------------------------------------------------------------------------
# the design: predicted error -> inclusion probabilities
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorModel:
    """A linear model of the squared judge-human error; ``coef`` has the intercept first.
    ``useful`` is False when the features did not pass the F-test: the prediction is then the mean."""

    coef: np.ndarray
    mean: float
    useful: bool
    n: int
    p_value: float

    def predict(self, features) -> np.ndarray:
        X = as_2d(features)
        if X.shape[1] != len(self.coef) - 1:
            raise ValueError(f"the model has {len(self.coef) - 1} features, the items {X.shape[1]}")
        if not self.useful:
            return np.full(len(X), self.mean)
        return np.maximum(self.coef[0] + X @ self.coef[1:], 0.0)


def error_model_fit(features, squared_error, weights=None, *, ridge: float = 1e-6, level: float = 0.05) -> ErrorModel:
    """Weighted least squares of ``squared_error`` on ``features`` (with an intercept).

    ``weights`` are 1 / pi of the labels so far (none: equal), so that a model fitted on actively
    drawn labels describes the whole population. The F-test of all slopes at ``level`` gates it:
    features that explain nothing would only add noise to ``pi``, and a noisy ``pi`` widens the CI."""
    X = as_2d(features)
    e = np.asarray(squared_error, dtype=np.float64).ravel()
    n, k = X.shape
    if len(e) != n:
        raise ValueError("features and squared errors must have one row per item")
    if n == 0:
        raise ValueError("an error model needs at least one labelled item")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if len(w) != n or np.any(~np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("weights must be positive, one per item")
    w = w * n / w.sum()
    mean = float(w @ e / n)
    design = np.column_stack([np.ones(n), X])
    gram = (design.T * w) @ design + ridge * np.diag([0.0] + [1.0] * k)
    coef = np.linalg.lstsq(gram, (design.T * w) @ e, rcond=None)[0]
    rss = float(w @ (e - design @ coef) ** 2)
    tss = float(w @ (e - mean) ** 2)
    p_value = 1.0
    if k > 0 and n - k - 1 > 0 and tss > 0:
        f = ((tss - rss) / k) / (rss / (n - k - 1)) if rss > 0 else math.inf
        p_value = float(dist.f_sf(f, k, n - k - 1))
    return ErrorModel(coef, mean, p_value < level, n, p_value)


def inclusion_probabilities(predicted_error, budget: float, *, uniform_share: float = 0.2, human_cost=None) -> np.ndarray:
    """Each item's probability of being drawn for human labelling.

    A share ``1 - uniform_share`` of the budget goes proportionally to sqrt(predicted error / cost)
    (Neyman's allocation with costs: the variance a label removes per unit spent), the rest to
    equal probabilities. ``budget`` is the expected spend, sum(pi * cost); with no ``human_cost``
    (1 per item) it is the expected number of labels. Probabilities are capped at 1 and the excess
    is spread over the others in proportion to their shares."""
    e = np.asarray(predicted_error, dtype=np.float64).ravel()
    m = len(e)
    if np.any(~np.isfinite(e)) or np.any(e < 0):
        raise ValueError("predicted errors must be finite and non-negative")
    if not 0 < uniform_share <= 1:
        raise ValueError("the uniform share must be in (0, 1]: an item with pi = 0 would make the estimate biased")
    cost = np.ones(m) if human_cost is None else np.broadcast_to(np.asarray(human_cost, dtype=np.float64), (m,)).copy()
    if np.any(~np.isfinite(cost)) or np.any(cost <= 0):
        raise ValueError("human costs must be positive")
    if not budget > 0:
        raise ValueError("the human budget must be positive")
    if m == 0:
        return np.zeros(0)
    if budget >= cost.sum():
        return np.ones(m)
    score = np.sqrt(e / cost)
    spend = float(score @ cost)
    # shares whose spend (share . cost) is 1: (1 - u) by the score, u uniformly
    share = uniform_share / cost.sum() + (1 - uniform_share) * (score / spend if spend > 0 else 1 / cost.sum())
    pi = np.zeros(m)
    capped = np.zeros(m, dtype=bool)
    while True:
        left = budget - cost[capped].sum()
        scale = left / float(share[~capped] @ cost[~capped])
        pi = np.where(capped, 1.0, share * scale)
        over = ~capped & (pi >= 1.0)
        if not over.any():
            return np.minimum(pi, 1.0)
        capped |= over


def design_cost(pi, *, human_cost=1.0, judge_cost: float = 0.0) -> float:
    """Expected money a design spends: human labels, sum(pi * human cost), plus a judge verdict on
    every item (the judge sees them all, active or not)."""
    pi = np.asarray(pi, dtype=np.float64).ravel()
    cost = np.broadcast_to(np.asarray(human_cost, dtype=np.float64), pi.shape)
    return float(pi @ cost + judge_cost * len(pi))


# --------------------------------------------------------------------------
# the estimate
# --------------------------------------------------------------------------


def _probabilities(pi, n: int, which: str) -> np.ndarray:
    pi = np.asarray(pi, dtype=np.float64).ravel()
    if len(pi) != n:
        raise ValueError(f"the {which} items need one inclusion probability each")
    if np.any(~np.isfinite(pi)) or np.any(pi <= 0) or np.any(pi > 1):
        raise ValueError("inclusion probabilities must be in (0, 1]")
    return pi


def _weighted_sq(a: np.ndarray, b: np.ndarray, clusters) -> float:
    """Sum over clusters of (cluster sum of a) (cluster sum of b)."""
    return float((cluster_sums(as_2d(a), clusters).T @ cluster_sums(as_2d(b), clusters))[0, 0])


def _pooled_variance(yhat, yu, clusters, clusters_u) -> float:
    """The judge values' per-item variance over both sets (ddof 1, cluster sums), as ppi.py's tuning."""
    pooled = np.concatenate([yhat, yu])
    centred = as_2d(pooled - pooled.mean())
    return float(scatter(centred, centred, _pooled_codes(clusters, clusters_u, len(yhat), len(yu)), 1)[0, 0])


def _pooled_codes(clusters, clusters_u, n: int, N: int):
    """Cluster codes over the labelled then the unlabelled items, the two sets' clusters kept apart
    (an item without a cluster is its own); None when neither set is clustered."""
    if clusters is None and clusters_u is None:
        return None
    cl = np.arange(n) if clusters is None else np.unique(clusters, return_inverse=True)[1]
    cu = np.arange(N) if clusters_u is None else np.unique(clusters_u, return_inverse=True)[1]
    return np.concatenate([cl, cu + cl.max() + 1])


def active_ppi_mean(
    y,
    yhat,
    yhat_unlabeled,
    pi,
    pi_unlabeled,
    *,
    lam: float | None = None,
    clusters=None,
    clusters_unlabeled=None,
) -> PPIFit:
    """Inverse-probability-weighted prediction-powered mean of the human labels (module docstring).

    ``pi`` are the labelled items' inclusion probabilities, ``pi_unlabeled`` the unlabelled ones'
    (below 1: an item drawn with certainty is never unlabelled). ``lam=None`` tunes the judge's
    weight to minimize the variance, clipped to [0, 1] (``lam=0``: the weighted human-only mean).
    ``n`` and ``N`` of the result count items, as :func:`.ppi.ppi_mean`'s."""
    y, yhat, yu = (np.asarray(a, dtype=np.float64).ravel() for a in (y, yhat, yhat_unlabeled))
    n, N = len(y), len(yu)
    for name, a, m in (("judge", yhat, n), ("clusters", clusters, n), ("unlabelled clusters", clusters_unlabeled, N)):
        if a is not None and len(a) != m:
            raise ValueError(f"{name}: one entry per item needed")
    if n == 0:
        raise ValueError("a prediction-powered estimate needs at least one labelled item")
    pi, pu = _probabilities(pi, n, "labelled"), _probabilities(pi_unlabeled, N, "unlabelled")
    if np.any(pu >= 1):
        raise ValueError("an item drawn with probability 1 cannot be unlabelled")
    w = 1.0 / pi
    W = w.sum()
    certain = pi >= 1.0
    v = 1.0 / (1.0 - pu)
    V = v.sum()
    D = certain.sum() + V
    a_u = float(v @ yu / V) if N else 0.0
    A = float((yhat[certain].sum() + v @ yu) / D) if D > 0 else 0.0
    if N == 0:
        lam = 0.0
    if lam is None:
        yw, hw = float(w @ y / W), float(w @ yhat / W)
        cross = _weighted_sq(w * (y - yw), w * (yhat - hw), clusters) / W**2
        spread = _pooled_variance(yhat, yu, clusters, clusters_unlabeled) * (float(w @ w) / W**2 + float(v @ v) / D**2)
        lam = float(np.clip(cross / spread, 0.0, 1.0)) if np.isfinite(cross / spread) and spread > 0 else 0.0
    r = y - lam * yhat
    b = float(w @ r / W)
    estimate = lam * A + b
    var = _weighted_sq(w * (r - b), w * (r - b), clusters) / W**2
    if N and lam:
        var += lam**2 * _weighted_sq(v * (yu - a_u), v * (yu - a_u), clusters_unlabeled) / D**2
    return PPIFit(
        np.array([estimate]), np.array([[var]]), float(lam), n, N,
        n_clusters(n, clusters), n_clusters(N, clusters_unlabeled),
    )  # fmt: skip


def _logistic_loss(t: np.ndarray, z: np.ndarray) -> np.ndarray:
    return -t * z + np.logaddexp(0.0, z)


def _weighted_fit(X, targets, weights, start, max_iter: int = 100) -> np.ndarray | None:
    """Minimizer of sum_k weights_k * logistic_loss(targets_k, X_k theta) (some weights negative, the
    sum convex: the rectified loss) by damped Newton steps; None when it does not converge."""

    def loss(t):
        return float(weights @ _logistic_loss(targets, X @ t))

    theta, current = start.copy(), loss(start)
    for _ in range(max_iter):
        mu = expit(X @ theta)
        grad = X.T @ (weights * (mu - targets))
        hess = (X.T * (weights * mu * (1 - mu))) @ X
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(step)):
            return None
        size = 1.0
        while size > 1e-10 and loss(theta - size * step) > current + 1e-15 * max(1.0, abs(current)):
            size /= 2
        if size <= 1e-10:
            return theta if np.max(np.abs(grad)) < 1e-8 else None
        theta = theta - size * step
        current = loss(theta)
        if np.max(np.abs(size * step)) < 1e-12:
            return theta if np.max(np.abs(theta)) < 50 else None
    return None


def active_ppi_logistic(
    X, y, yhat, X_unlabeled, yhat_unlabeled, pi, pi_unlabeled, *, lam: float | None = None, clusters=None, clusters_unlabeled=None
) -> PPIFit | None:
    """Inverse-probability-weighted PPI++ logistic-regression coefficients (Bradley-Terry strengths for
    rows e_a - e_b): the minimizer of the rectified loss with the labelled items weighted w / W
    (w = 1 / pi) and the unlabelled v / D (v = 1 / (1 - pi)), the certain items (pi = 1) standing
    for themselves in the judge's part, as :func:`active_ppi_mean`. The covariance is the sandwich
    H^-1 M H^-1 with H the mean Hessian over every item (labelled or not: it needs no label) and M
    the cluster sums of the weighted influences; ``lam=None`` tunes the judge's weight in two steps
    as :func:`.ppi.ppi_logistic`. With every pi equal (below 1) it is ppi_logistic. None when the
    loss has no finite minimizer."""
    X, Xu = as_2d(X), as_2d(X_unlabeled)
    y, yhat, yu = (np.asarray(a, dtype=np.float64).ravel() for a in (y, yhat, yhat_unlabeled))
    n, N = len(y), len(yu)
    if n == 0:
        raise ValueError("a prediction-powered estimate needs at least one labelled item")
    if len(X) != n or len(Xu) != N or len(yhat) != n:
        raise ValueError("rows, labels and predictions must have one entry per item")
    pi, pu = _probabilities(pi, n, "labelled"), _probabilities(pi_unlabeled, N, "unlabelled")
    if np.any(pu >= 1):
        raise ValueError("an item drawn with probability 1 cannot be unlabelled")
    a = (1.0 / pi) / (1.0 / pi).sum()
    certain = (pi >= 1.0).astype(np.float64)
    D = certain.sum() + (1.0 / (1.0 - pu)).sum()
    c, b = certain / D if D > 0 else certain, (1.0 / (1.0 - pu)) / D if N else np.zeros(0)
    if N == 0:
        lam = 0.0
    rows, targets = np.vstack([X, X, Xu]), np.concatenate([y, yhat, yu])
    start = np.zeros(X.shape[1])

    def fit(weight):
        return _weighted_fit(rows, targets, np.concatenate([a, weight * (c - a), weight * b]), start)

    def gradients(theta):
        mu, mu_u = expit(X @ theta), expit(Xu @ theta)
        h = np.vstack([X, Xu])
        m = np.concatenate([mu, mu_u])
        return (
            X * (mu - y)[:, None],
            X * (mu - yhat)[:, None],
            Xu * (mu_u - yu)[:, None],
            np.linalg.inv((h.T * (m * (1 - m))) @ h / (n + N)),
        )

    def tune(theta):
        g, gh, ghu, inv_h = gradients(theta)
        gc, hc = g - a @ g, gh - a @ gh
        cross = cluster_sums(a[:, None] * gc, clusters).T @ cluster_sums(a[:, None] * hc, clusters)
        pooled = np.vstack([gh, ghu])
        centred = pooled - pooled.mean(axis=0)
        codes = _pooled_codes(clusters, clusters_unlabeled, n, N)
        spread = scatter(centred, centred, codes, 1) * (float(a @ a) + float(b @ b))
        num, den = np.trace(inv_h @ (cross + cross.T) @ inv_h), 2 * np.trace(inv_h @ spread @ inv_h)
        return float(np.clip(num / den, 0.0, 1.0)) if np.isfinite(num / den) and den > 0 else 0.0

    try:
        if lam is None:
            for _ in range(2):
                theta = fit(1.0 if lam is None else lam)
                if theta is None:
                    return None
                lam = tune(theta)
        theta = fit(lam)
        if theta is None:
            return None
        g, gh, ghu, inv_h = gradients(theta)
        if lam == 0:
            mu = expit(X @ theta)
            inv_h = np.linalg.inv((X.T * (a * mu * (1 - mu))) @ X)
    except np.linalg.LinAlgError:
        return None
    r = g - lam * gh
    r = a[:, None] * (r - a @ r)
    middle = cluster_sums(r, clusters).T @ cluster_sums(r, clusters) * (n / (n - 1) if n > 1 else np.nan)
    if N and lam:
        u = lam * ghu
        u = b[:, None] * (u - b @ u / b.sum())
        middle = middle + cluster_sums(u, clusters_unlabeled).T @ cluster_sums(u, clusters_unlabeled) * (N / (N - 1) if N > 1 else np.nan)
    cov = inv_h @ middle @ inv_h
    return PPIFit(theta, cov, float(lam), n, N, n_clusters(n, clusters), n_clusters(N, clusters_unlabeled))


# --------------------------------------------------------------------------
# what the estimate is worth
# --------------------------------------------------------------------------


def _cluster_weights(w: np.ndarray, clusters) -> np.ndarray:
    """One weight per cluster (the mean of its items'; a pair's items share their pair's pi)."""
    if clusters is None:
        return w
    _, codes = np.unique(clusters, return_inverse=True)
    return np.bincount(codes, weights=w) / np.bincount(codes)


def effective_sample_size(y, pi, se: float, clusters=None) -> float | None:
    """How many uniformly drawn human labels the human-only mean would need for this ``se``: the
    population's per-item variance of ``y`` (inverse-probability weighted, cluster sums, so that a
    pair's correlated items count as fewer), divided by se^2. Under the uniform design it is
    ``powered``'s n_effective. None when ``se`` is 0 or the labels show no spread."""
    y = np.asarray(y, dtype=np.float64).ravel()
    w = 1.0 / _probabilities(pi, len(y), "labelled")
    if len(y) == 0 or not se > 0:
        return None
    mean = float(w @ y / w.sum())
    sums = cluster_sums(as_2d(y - mean), clusters).ravel()
    per_item = float(_cluster_weights(w, clusters) @ sums**2 / w.sum())
    return per_item / se**2 if per_item > 0 else None


def judge_human_correlation(y, yhat, pi=None) -> float | None:
    """The population correlation of the human and judge values, estimated from the labelled items
    weighted by 1 / pi (none: equal). None without spread."""
    y, yhat = (np.asarray(a, dtype=np.float64).ravel() for a in (y, yhat))
    w = np.ones(len(y)) if pi is None else 1.0 / _probabilities(pi, len(y), "labelled")
    if len(y) < 2:
        return None
    dy, dh = y - w @ y / w.sum(), yhat - w @ yhat / w.sum()
    den = math.sqrt(float(w @ dy**2) * float(w @ dh**2))
    # Clipped: rounding can take a perfect correlation a last bit past 1.
    return min(1.0, max(-1.0, float(w @ (dy * dh)) / den)) if den > 0 else None


def ess_ceiling(rho: float) -> float:
    """The most a judge with correlation ``rho`` to the humans can multiply the uniform design's
    human labels by, with unlimited verdicts: PPI++'s variance tends to (1 - rho^2) times the
    humans' own. (A judge that only matches the evaluated systems' quality is held near 2: Dorner,
    Nastl and Hardt, ICLR 2025.)"""
    rho = float(rho)
    if not -1 <= rho <= 1:
        raise ValueError("a correlation lies in [-1, 1]")
    return math.inf if abs(rho) == 1 else 1.0 / (1.0 - rho * rho)


def inverse_probability_weights(pair_keys, inclusion: dict[str, float]) -> np.ndarray:
    """1 / pi per entry of ``pair_keys`` (the pairs' keys as the label tables spell them), from the
    stored inclusion probabilities; a pair without one was labelled with certainty (a calibration
    pair every annotator labels), weight 1."""
    pi = np.array([inclusion.get(key, 1.0) for key in pair_keys], dtype=np.float64)
    if np.any(~np.isfinite(pi)) or np.any(pi <= 0) or np.any(pi > 1):
        raise ValueError("inclusion probabilities must be in (0, 1]")
    return 1.0 / pi


def unequal_inclusion(inclusion: dict[str, float] | None) -> dict[str, float] | None:
    """The inclusion probabilities when they call for weighting, else None: none stored (a uniform
    campaign, or no pair drawn yet) or every one equal, where the weighted forms are the uniform ones."""
    if not inclusion:
        return None
    values = np.fromiter(inclusion.values(), dtype=np.float64)
    return None if np.all(values == values[0]) else inclusion
