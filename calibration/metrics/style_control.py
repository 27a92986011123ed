"""Bradley-Terry with style covariates: is a rater's preference for one side a preference for its style?

A logistic model of each verdict that names a winner (ties left out): the log-odds that the pair's
first system in name order (``lo``) wins is ``s_lo - s_hi + sum_k beta_k x_k``, where ``s`` are the
systems' strengths (the first system in name order is the baseline, 0) and ``x_k`` the style
covariates of the pair: for each feature, the normalised difference ``(f_lo - f_hi) / (f_lo + f_hi)``
(0 when both are 0), in [-1, 1]. A positive ``beta`` for length: the longer side is preferred
beyond what the systems' strengths explain. Fitted by Newton's method (maximum likelihood, no
intercept, no penalty); the intervals are Wald intervals with a cluster-robust (sandwich) variance
clustered by pair, since the verdicts of one pair share its two articles. The strengths are also
fitted without the covariates, which gives the ranking with and without style.

Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054


@dataclass(frozen=True)
class StyleVerdict:
    pair: object
    system_lo: str
    system_hi: str
    lo_won: bool
    covariates: tuple[float, ...]


@dataclass(frozen=True)
class Coefficient:
    value: float
    se: float
    ci: tuple[float, float]

    @property
    def excludes_zero(self) -> bool:
        return self.ci[0] > 0 or self.ci[1] < 0

    def as_dict(self) -> dict:
        return {"value": self.value, "se": self.se, "ci": list(self.ci), "excludes_zero": self.excludes_zero}


@dataclass(frozen=True)
class StyleFit:
    """Strengths with and without style, the style coefficients, and what they rest on."""

    systems: list[str]
    strengths: dict[str, float]  # with the covariates
    strengths_without: dict[str, float]
    coefficients: dict[str, Coefficient]
    n: int
    n_pairs: int
    converged: bool

    def ranking(self, *, with_style: bool = True) -> list[str]:
        scores = self.strengths if with_style else self.strengths_without
        return sorted(self.systems, key=lambda s: (-scores[s], s))

    def as_dict(self) -> dict:
        return {
            "systems": self.systems,
            "strengths": self.strengths,
            "strengths_without_style": self.strengths_without,
            "ranking": self.ranking(),
            "ranking_without_style": self.ranking(with_style=False),
            "coefficients": {name: c.as_dict() for name, c in self.coefficients.items()},
            "n": self.n,
            "n_pairs": self.n_pairs,
            "converged": self.converged,
        }


def normalised_difference(lo: float, hi: float) -> float:
    total = lo + hi
    return 0.0 if total == 0 else (lo - hi) / total


def design(verdicts: Sequence[StyleVerdict], systems: list[str], *, with_style: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The model's design matrix (system columns but the baseline's, then the covariates) and outcomes."""
    index = {s: i for i, s in enumerate(systems)}
    k = len(verdicts[0].covariates) if verdicts and with_style else 0
    x = np.zeros((len(verdicts), len(systems) - 1 + k))
    for row, v in enumerate(verdicts):
        for system, sign in ((v.system_lo, 1.0), (v.system_hi, -1.0)):
            if index[system] > 0:
                x[row, index[system] - 1] = sign
        if k:
            x[row, len(systems) - 1 :] = v.covariates
    y = np.array([1.0 if v.lo_won else 0.0 for v in verdicts])
    return x, y


def _log_likelihood(x: np.ndarray, y: np.ndarray, beta: np.ndarray) -> float:
    eta = x @ beta
    return float(np.sum(y * eta - np.logaddexp(0, eta)))


def logistic_fit(x: np.ndarray, y: np.ndarray, *, iterations: int = 50, tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray, bool]:
    """Maximum likelihood coefficients by Newton's method, the Hessian of the negative log-likelihood, and
    whether it converged. A separated design (a system that never wins, say) does not: its estimates grow
    without bound while the likelihood stops improving, which ends the iterations early, not converged."""
    beta = np.zeros(x.shape[1])
    converged = False
    hessian = np.eye(x.shape[1])
    previous = _log_likelihood(x, y, beta)
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(x @ beta)))
        gradient = x.T @ (y - p)
        hessian = (x * (p * (1 - p))[:, None]).T @ x
        step = np.linalg.lstsq(hessian, gradient, rcond=None)[0]
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            converged = True
            break
        current = _log_likelihood(x, y, beta)
        if abs(current - previous) < 1e-12 * max(1.0, abs(previous)):
            # The likelihood no longer moves: converged if the steps are small too, separated if they are not.
            converged = bool(np.max(np.abs(step)) < 1e-6)
            break
        previous = current
    p = 1 / (1 + np.exp(-(x @ beta)))
    hessian = (x * (p * (1 - p))[:, None]).T @ x
    return beta, hessian, converged


def cluster_covariance(x: np.ndarray, y: np.ndarray, beta: np.ndarray, hessian: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """The sandwich covariance clustered by `clusters`, with the small-sample factor G/(G-1) * (N-1)/(N-K)
    (as statsmodels' cluster covariance applies it)."""
    p = 1 / (1 + np.exp(-(x @ beta)))
    scores = x * (y - p)[:, None]
    _, group = np.unique(clusters, return_inverse=True)
    summed = np.zeros((group.max() + 1 if len(group) else 0, x.shape[1]))
    np.add.at(summed, group, scores)
    bread = np.linalg.pinv(hessian)
    meat = summed.T @ summed
    n, k, g = x.shape[0], x.shape[1], summed.shape[0]
    factor = (g / (g - 1)) * ((n - 1) / (n - k)) if g > 1 and n > k else 1.0
    return factor * bread @ meat @ bread


def style_fit(verdicts: Sequence[StyleVerdict], features: Sequence[str]) -> StyleFit | None:
    """The fit with and without the style covariates (`features` names them); None without two systems
    or without a verdict."""
    verdicts = list(verdicts)
    systems = sorted({s for v in verdicts for s in (v.system_lo, v.system_hi)})
    if len(systems) < 2 or not verdicts:
        return None
    x, y = design(verdicts, systems)
    beta, hessian, converged = logistic_fit(x, y)
    pair_index: dict[object, int] = {}
    clusters = np.array([pair_index.setdefault(v.pair, len(pair_index)) for v in verdicts])
    covariance = cluster_covariance(x, y, beta, hessian, clusters)
    se = np.sqrt(np.clip(np.diag(covariance), 0, None))
    m = len(systems) - 1
    coefficients = {
        name: Coefficient(
            float(beta[m + i]), float(se[m + i]), (float(beta[m + i] - Z95 * se[m + i]), float(beta[m + i] + Z95 * se[m + i]))
        )
        for i, name in enumerate(features)
    }
    x0, _ = design(verdicts, systems, with_style=False)
    beta0, _, converged0 = logistic_fit(x0, y)
    strengths = {systems[0]: 0.0, **{s: float(beta[i]) for i, s in enumerate(systems[1:])}}
    without = {systems[0]: 0.0, **{s: float(beta0[i]) for i, s in enumerate(systems[1:])}}
    return StyleFit(systems, strengths, without, coefficients, len(verdicts), len(pair_index), converged and converged0)
