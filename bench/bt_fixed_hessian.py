"""Bradley-Terry bootstrap rounds: the project's batched Newton against a fixed-Hessian iteration.

    .venv/bin/python bench/bt_fixed_hessian.py [--rounds 1000] [--repeats 3]

The candidate (issue 21, item 5; not adopted): factor the point fit's Hessian once (Cholesky),
then iterate theta <- theta + H^-1 g(theta) for all rounds at once, the gradients taken over
the system pairs as two matrix products and H^-1 applied as one `cho_solve`; a round stops
after a step below 1e-9, or after 30 iterations (then Newton would have to finish it).

Both are run on the bootstrap rounds of two seeded data sets shaped as in
`bench/calibration_scale.py` (30 systems): a judge's one criterion (about 670 battles,
one or two per system pair) and the crowd's (about 6,700 votes). Printed per data set: the
CPU milliseconds of each (best of `--repeats`), their ratio, the fixed-Hessian iterations
(median, largest), the rounds it left unsettled, and the largest difference of the settled
rounds from Newton's, in Elo points.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.linalg import cho_factor, cho_solve

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration import metrics as M  # noqa: E402
from calibration.metrics.bootstrap import PairBootstrap  # noqa: E402

SYSTEMS, ELO = 30, 400 / np.log(10)
TOL, MAX_ITER = 1e-9, 30


def rounds_of(battles: int, rounds: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(point win matrix, bootstrap win matrices) of `battles` seeded battles, ties counted 1/2."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0, 120, SYSTEMS) / ELO
    a = rng.integers(0, SYSTEMS, battles)
    b = (a + rng.integers(1, SYSTEMS, battles)) % SYSTEMS
    u = rng.random(battles)
    win_a = np.where(u < 0.1, 0.5, (rng.random(battles) < 1 / (1 + np.exp(quality[b] - quality[a]))).astype(float))
    boot = PairBootstrap(np.arange(battles), rounds, seed)
    cells = np.concatenate([a * SYSTEMS + b, b * SYSTEMS + a])
    per_unit = boot.per_unit(np.tile(np.arange(battles), 2), np.concatenate([win_a, 1 - win_a]), cells, SYSTEMS * SYSTEMS)
    return per_unit.sum(axis=0).reshape(SYSTEMS, SYSTEMS), boot.resample(per_unit).reshape(-1, SYSTEMS, SYSTEMS)


def fixed_hessian(w: np.ndarray, point: np.ndarray, start: np.ndarray, ref: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(thetas with theta[ref] = 0, iterations per round, unsettled rounds)."""
    s = w.shape[1]
    lo, hi = np.triu_indices(s, 1)
    met = (point + point.T)[lo, hi] > 0
    lo, hi = lo[met], hi[met]
    incidence = np.zeros((len(lo), s))
    incidence[np.arange(len(lo)), lo], incidence[np.arange(len(lo)), hi] = 1.0, -1.0
    free = np.arange(s) != ref
    d = incidence[:, free]
    n = (w + np.swapaxes(w, 1, 2))[:, lo, hi]  # comparisons per round and system pair
    constant = (w.sum(axis=2) - n @ np.maximum(-incidence, 0))[:, free]  # wins, minus the games as the lower of each pair
    p0 = 0.5 + 0.5 * np.tanh(0.5 * (start[lo] - start[hi]))
    weight = (point + point.T)[lo, hi] * p0 * (1 - p0)
    factor = cho_factor((d * weight[:, None]).T @ d)
    theta = np.repeat(start[free][None], len(w), axis=0)
    iterations, active = np.zeros(len(w), dtype=int), np.ones(len(w), dtype=bool)
    for _ in range(MAX_ITER):
        ia = np.flatnonzero(active)
        if not ia.size:
            break
        th = theta[ia]
        expected = n[ia] * (0.5 + 0.5 * np.tanh(0.5 * (th @ d.T)))
        step = cho_solve(factor, (constant[ia] - expected @ d).T).T
        theta[ia] = th + step
        iterations[ia] += 1
        active[ia[np.abs(step).max(axis=1) < TOL]] = False
    out = np.zeros((len(w), s))
    out[:, free] = theta
    return out, iterations, active


def cpu_ms(fn, repeats: int):
    best, result = np.inf, None
    for _ in range(repeats):
        t = time.process_time()
        result = fn()
        best = min(best, time.process_time() - t)
    return best * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for name, battles in (("a judge, one criterion", 670), ("the crowd, one criterion", 6700)):
        point, w = rounds_of(battles, args.rounds, seed=battles)
        connected = np.array([(M.fit_rounds(w[r : r + 1], 0)[1]).all() for r in range(len(w))])
        w = w[connected]  # both solvers on the rounds whose group holds every system
        ref = 0
        th = M.fit_choix(point)
        start = th - th[ref]
        newton_ms, newton = cpu_ms(lambda: M.fit_newton(w, ref, start=start), args.repeats)
        fixed_ms, (fixed, iterations, unsettled) = cpu_ms(lambda: fixed_hessian(w, point, start, ref), args.repeats)
        settled = ~unsettled
        gap = float(np.abs(fixed[settled] - newton[settled]).max()) * ELO if settled.any() else float("nan")
        print(
            f"{name} ({battles} battles, {len(w)} rounds): Newton {newton_ms:.1f} ms, fixed Hessian {fixed_ms:.1f} ms "
            f"({fixed_ms / newton_ms:.2f}x Newton's, before finishing its {int(unsettled.sum())} unsettled rounds); "
            f"iterations median {np.median(iterations):.0f}, largest {iterations.max()}; largest gap {gap:.1e} Elo"
        )


if __name__ == "__main__":
    main()
