"""Coverage and width of four 95% CIs for a win rate in simulated small campaigns: why the report's
prediction-powered win rates use Wilson score intervals (docs/calibration-report.md, "Win rates
inside [0, 1]").

    .venv/bin/python bench/ppi_intervals.py [--reps 1000] [--seed 0]

Each scenario draws G labelled pairs and 10 G judged-only pairs of a system. A pair has k items
(criteria); with k = 3 they agree more often than chance, as criteria of one pair do (each item
copies a pair-level draw with probability 0.6, else draws its own). An item is a tie (1/2) with
probability `ties` (0 or 0.3, as in the Arena votes), else a win with probability p; the true win
rate is ties/2 + (1 - ties) p. The humans give the truth; the judge, when there is one, copies it
with probability 0.85, else says the opposite (a tie stays a tie). The estimates are the report's (`calibration.metrics.powered`): humans only when there is
no judge, else prediction-powered (PPI++, with the report's gate on lam). Four CIs of the same
estimate:

* normal: estimate +- 1.96 se (the report's before issue 21; it can leave [0, 1]);
* clip: the normal CI cut at 0 and 1 (covers exactly as often as the normal CI: the rate is in [0, 1]);
* logit: the delta method on the logit scale, back-transformed (the clip where the estimate is 0 or 1);
* wilson: the report's, `powered.rate_intervals` (Wilson score interval with an effective number of votes).

Printed per scenario: coverage (the share of CIs that hold p) and mean width per method; then, per
method, the lowest coverage over the scenarios and the mean coverage. Pure numpy/scipy; about a
few minutes at 1,000 repetitions on one core. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit, logit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.metrics.powered import rate_intervals
from calibration.metrics.ppi import Z95, informative, ppi_mean

RATES = (0.03, 0.1, 0.3, 0.5)
PAIRS = (10, 20, 40, 150)
METHODS = ("normal", "clip", "logit", "wilson")


def draw(rng, p: float, ties: float, pairs: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Item values (1 = the system wins, 1/2 a tie) of `pairs` pairs of k items, and their pair codes."""

    def values(shape):
        return np.where(rng.random(shape) < ties, 0.5, (rng.random(shape) < p).astype(float))

    shared, own = values(pairs), values((pairs, k))
    return np.where(rng.random((pairs, k)) < 0.6, shared[:, None], own).ravel(), np.repeat(np.arange(pairs), k)


def intervals(rng, p: float, ties: float, pairs: int, k: int, judge: bool) -> dict[str, tuple[float, float]]:
    y_all, cl_all = draw(rng, p, ties, 11 * pairs, k)
    lab = cl_all < pairs
    y, cl, cl_u = y_all[lab], cl_all[lab], cl_all[~lab]
    if judge:
        verdict = np.where(rng.random(len(y_all)) < 0.85, y_all, 1 - y_all)
    else:
        verdict = y_all.copy()
    yhat, yhat_u = verdict[lab], verdict[~lab]
    human = ppi_mean(y, yhat, [], lam=0.0, clusters=cl)
    if judge:
        lam = None if informative(y, yhat, cl) else 0.0
        fit = ppi_mean(y, yhat, yhat_u, lam=lam, clusters=cl, clusters_unlabeled=cl_u)
    else:
        fit = human
    own = ppi_mean(verdict, verdict, [], lam=0.0, clusters=cl_all)
    est, se = float(fit.estimate[0]), float(fit.se[0])
    normal = (est - Z95 * se, est + Z95 * se)
    clip = (max(normal[0], 0.0), min(normal[1], 1.0))
    if 0 < est < 1 and se > 0:
        spread = Z95 * se / (est * (1 - est))
        log = (float(expit(logit(est) - spread)), float(expit(logit(est) + spread)))
    else:
        log = clip
    return {"normal": normal, "clip": clip, "logit": log, "wilson": rate_intervals(fit, human, own)[0].ci}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"{args.reps} repetitions per scenario, seed {args.seed}; coverage / mean width of 95% CIs")
    print(f"  {'judge':<7}{'k':>2}{'ties':>5}{'rate':>7}{'pairs':>6}" + "".join(f"{m:>15}" for m in METHODS))
    coverage: dict[str, list[float]] = {m: [] for m in METHODS}
    for judge in (False, True):
        for k, ties in ((1, 0.0), (3, 0.0), (3, 0.3)):
            for p in RATES:
                rate = ties / 2 + (1 - ties) * p  # the true win rate, a tie counting 1/2
                for pairs in PAIRS:
                    held = dict.fromkeys(METHODS, 0)
                    width = dict.fromkeys(METHODS, 0.0)
                    for _ in range(args.reps):
                        for m, (lo, hi) in intervals(rng, p, ties, pairs, k, judge).items():
                            held[m] += lo <= rate <= hi
                            width[m] += hi - lo
                    cells = "".join(f"{held[m] / args.reps:>8.3f} /{width[m] / args.reps:>5.3f}" for m in METHODS)
                    print(f"  {'0.85' if judge else 'none':<7}{k:>2}{ties:>5}{rate:>7.3f}{pairs:>6}{cells}", flush=True)
                    for m in METHODS:
                        coverage[m].append(held[m] / args.reps)
    print(f"Over the {len(coverage['normal'])} scenarios ({time.perf_counter() - started:.0f} s):")
    for m in METHODS:
        print(f"  {m:<8} lowest coverage {min(coverage[m]):.3f}, mean {np.mean(coverage[m]):.3f}")


if __name__ == "__main__":
    main()
