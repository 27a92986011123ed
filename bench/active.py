"""Active against uniform sampling of the human labels, at equal expected human budget.

    .venv/bin/python bench/active.py [--data DIR] [--labels FILE.csv] [--judge NAME | --all-judges]
                                     [--reps 200] [--labelled 1000] [--burn-in 200] [--uniform-share 0.2]
                                     [--pair-shrink K] [--seed 0]

The population is every item with a human value and the judge's verdict: by default the 26,919
Chatbot Arena battles of ../shared/realdata/arena-ppr (bench/ppi.py's loading: one crowd vote per
battle, tie = 1/2); with ``--labels`` the items of a labels file in the platform's long format
(export_labels / import_labels: one row per rater and verdict; the humans' values averaged per
(topic, criterion), a judge's likewise, both orders merged). The truth is each system's win rate
against the field over the whole population, as in bench/ppi.py.

Each repetition (numpy Generator, seeded) runs two designs with the same expected number of labels:

* uniform: ``--labelled`` items drawn without replacement, estimated by today's
  `calibration.metrics.powered.win_rates` (PPI++ with the informativeness gate);
* active: one independent draw per pair. A burn-in (a random ``--burn-in`` / ``--labelled``
  share of the pairs, as if met first) at the uniform rate; an error model
  (calibration.metrics.active) of (human - judge)^2 fitted on its labels from the features the
  data has -- the judge says tie, its disagreement with each other judge, with itself across the
  two orders (labels files only); the other pairs drawn with pi from sqrt(predicted error) mixed
  with a uniform share, for the rest of the expected budget; estimated by `active_ppi_mean` with
  every pair's own pi, with the same gate. ``--pair-shrink K`` adds to the error model's prediction
  the mean of its residuals on the labelled items of the same two systems, shrunk by n / (n + K)
  (fitted on labelled items only: pi still depends only on the labels so far and on features).

Printed per judge: coverage of the 95% CIs (the report's Wilson form and the normal one) for both
designs, the median width ratios active / uniform (with a 95% interval over the repetitions
resampled: the simulation noise) and each / human-only (the uniform human-only
CI from the same uniform draw), the median effective sample size / labels, the ceiling
1 / (1 - rho^2), the labels actually drawn, and the median time per estimate (one system's win
rate), and the width floor: the narrowest active / uniform ratio any error model on these features
could reach (each feature cell's true mean error, known from every item's human label: a bound, not
a design). Skips with one line when the data is absent. Not part of the test suite.

On the arena votes (one crowd vote per battle; no judge probabilities, one order per judge, 9 battles
asked twice) the features are the judge's tie and its agreement with the two other judges: 27 cells,
and the floor is 0.99 for GPT-4 (0.96 for the two others), so the active design cannot be materially
narrower than the uniform one there; at 200 repetitions it measures 1.002 / 1.018 / 1.025 with
coverage 0.944 / 0.948 / 0.951 (GPT-4, Claude-3-Opus, GPT-3.5), intervals over the repetitions
0.997-1.006 / 1.014-1.023 / 1.021-1.030. The compared systems do not help: with ``--pair-shrink 20``
it is 1.002 (0.996-1.007) / 1.019 / 1.024, with 5 1.004 / 1.028 / 1.032, and with a burn-in of 500
1.006 against 1.004 without (GPT-4). The in-sample gain of model pair x verdict cells (floor 0.962)
is overfitting: ~5 battles per cell. Fitted on one half of the battles (13,000 labels, far more
than a design has) and judged on the other (GPT-4, 20 splits), the cells shrunk to the mean give
0.991-0.996 and the features with a shrunk model-pair factor 0.988, against 0.991 for the features
alone. The estimator's variance follows
y - lam * yhat (lam ~ 0.5 for GPT-4), not y - yhat, and for that residual the features' floor is
0.996 / 0.993 / 0.997. A crowd vote is mostly noise the judge's features cannot see: the gain needs
richer features (both orders, confidences) or several votes per item.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # first, before bench/: bench/calibration.py would shadow the calibration package

from bench.arena_ppr import DATA, JUDGES, read_votes  # noqa: E402 (after the path is set)
from bench.ppi import load as load_arena  # noqa: E402
from calibration.metrics.active import (  # noqa: E402
    active_ppi_mean,
    effective_sample_size,
    error_model_fit,
    ess_ceiling,
    inclusion_probabilities,
    judge_human_correlation,
)
from calibration.metrics.powered import Items, rate_intervals, system_rows, win_rates  # noqa: E402
from calibration.metrics.ppi import Z95, informative, ppi_mean  # noqa: E402

TARGET = 0.93


@dataclass(frozen=True)
class Population:
    systems: tuple[str, ...]
    sys_lo: np.ndarray
    sys_hi: np.ndarray
    cluster: np.ndarray  # pair code
    y: np.ndarray  # human share of the win of sys_lo
    yhat: np.ndarray  # this judge's
    features: np.ndarray  # items x features, for the error model

    def win_rates(self) -> np.ndarray:
        k = len(self.systems)
        wins = np.bincount(self.sys_lo, weights=self.y, minlength=k) + np.bincount(self.sys_hi, weights=1 - self.y, minlength=k)
        games = np.bincount(self.sys_lo, minlength=k) + np.bincount(self.sys_hi, minlength=k)
        with np.errstate(invalid="ignore"):
            return wins / games


def features_from(yhat: np.ndarray, others: list[np.ndarray], swap: np.ndarray | None = None) -> np.ndarray:
    """The judge says tie; its distance to each other judge (0 where that judge has no verdict);
    its disagreement with itself across the two orders, when known."""
    cols = [(yhat == 0.5).astype(float)] + [np.nan_to_num(np.abs(yhat - o)) for o in others]
    if swap is not None:
        cols.append(swap)
    return np.column_stack(cols)


def arena(data: Path, judge: str) -> Population:
    crowd = read_votes(data / "human.json")
    b = load_arena(data, judge, crowd)
    others = [load_arena(data, name, crowd).yhat for name in JUDGES if name != judge]
    return Population(b.systems, b.sys_lo, b.sys_hi, np.arange(len(b.y)), b.y, b.yhat, features_from(b.yhat, others))


def read_labels(path: Path) -> tuple[dict, list[str]]:
    """Per (topic, criterion): the pair's systems (name order) and each rater's shares of the first's
    win, by rater key ("human" for every human row, else the judge's rater name)."""
    items: dict = {}
    judges: set[str] = set()
    with path.open(encoding="utf-8-sig", newline="") as f:
        for row in csv.DictReader(f):
            left, right, winner = row["left_system"], row["right_system"], row["winner_system"]
            if (row.get("error") or "").strip() or not winner:
                continue
            lo, hi = sorted((left, right))
            share = 1.0 if winner == lo else 0.0 if winner == hi else 0.5 if winner in ("tie", "both_bad") else None
            if share is None:
                raise SystemExit(f"{path}: winner {winner!r} names neither {left!r} nor {right!r}")
            who = "human" if row["rater_kind"] == "human" else row["rater"]
            if who != "human":
                judges.add(who)
            item = items.setdefault((row["campaign"], row["topic"], row["criterion"]), {"pair": (lo, hi)})
            item.setdefault(who, []).append(share)
    return items, sorted(judges)


def from_labels(items: dict, judges: list[str], judge: str) -> Population:
    keys = sorted(k for k, v in items.items() if "human" in v and judge in v)
    if len(keys) < 10:
        raise SystemExit(f"{judge}: only {len(keys)} items with both human labels and its verdicts")
    systems = tuple(sorted({s for k in keys for s in items[k]["pair"]}))
    code = {s: i for i, s in enumerate(systems)}
    pairs = {p: i for i, p in enumerate(sorted({(k[0], k[1], items[k]["pair"]) for k in keys}))}

    def mean(k, who):
        return float(np.mean(items[k][who])) if who in items[k] else np.nan

    yhat = np.array([mean(k, judge) for k in keys])
    swap = np.array([float(np.ptp(items[k][judge])) for k in keys])
    others = [np.array([mean(k, other) for k in keys]) for other in judges if other != judge]
    return Population(
        systems,
        np.array([code[items[k]["pair"][0]] for k in keys]),
        np.array([code[items[k]["pair"][1]] for k in keys]),
        np.array([pairs[(k[0], k[1], items[k]["pair"])] for k in keys]),
        np.array([mean(k, "human") for k in keys]),
        yhat,
        features_from(yhat, others, swap if swap.any() else None),
    )


# --------------------------------------------------------------------------
# one repetition
# --------------------------------------------------------------------------


def pair_draw(p: Population, rng, size: int, among: np.ndarray) -> np.ndarray:
    """Items of ``size`` pairs drawn without replacement from the pairs of the items ``among``."""
    pairs = np.unique(p.cluster[among])
    chosen = rng.choice(pairs, size=min(size, len(pairs)), replace=False)
    return np.isin(p.cluster, chosen)


def system_pair_effects(p: Population, labelled: np.ndarray, residual: np.ndarray, shrink: float) -> np.ndarray:
    """Per item: the mean of the error model's residuals on the labelled items of its two systems
    (the model pair, in either order), shrunk to 0 as n / (n + shrink) -- fitted on labelled items
    only, so pi still depends only on the labels so far and on features."""
    systems = len(p.systems)
    key = p.sys_lo * systems + p.sys_hi
    total = np.bincount(key[labelled], weights=residual, minlength=systems * systems)
    count = np.bincount(key[labelled], minlength=systems * systems)
    return (total / (count + shrink))[key]


def active_design(p: Population, rng, budget: int, burn_in: int, share: float, pair_shrink: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(labelled mask, pi per item). Each pair gets one draw. The burn-in pairs -- a random
    burn_in / budget share of all pairs, as if met first -- at the uniform rate budget / pairs; the
    others, after an error model is fitted on the burn-in's labels, with pi from its predictions,
    spending the rest of the expected budget. ``pair_shrink`` > 0 adds to the prediction the
    shrunk mean residual of the item's model pair (`system_pair_effects`)."""
    pairs, codes = np.unique(p.cluster, return_inverse=True)
    m = len(pairs)
    early = np.zeros(m, dtype=bool)
    early[rng.choice(m, size=round(m * burn_in / budget), replace=False)] = True
    pi_pair = np.full(m, budget / m)
    drawn = early & (rng.random(m) < pi_pair)
    burn = drawn[codes]
    error = (p.y[burn] - p.yhat[burn]) ** 2
    model = error_model_fit(p.features[burn], error)
    prediction = model.predict(p.features)
    if pair_shrink > 0:
        prediction = np.maximum(prediction + system_pair_effects(p, burn, error - prediction[burn], pair_shrink), 0.0)
    # one probability per pair (its items' predicted errors averaged)
    predicted = np.bincount(codes, weights=prediction) / np.bincount(codes)
    pi_pair[~early] = inclusion_probabilities(predicted[~early], budget - pi_pair[early].sum(), uniform_share=share)
    drawn[~early] = rng.random(int((~early).sum())) < pi_pair[~early]
    return drawn[codes], pi_pair[codes]


def active_rates(p: Population, labelled: np.ndarray, pi: np.ndarray) -> dict:
    """Per system: (PPI Interval, human-only Interval, effective sample size) under the active design."""
    y = np.where(labelled, p.y, np.nan)
    items = Items(p.systems, p.sys_lo, p.sys_hi, p.cluster, y, p.yhat, labelled, ~labelled)
    out = {}
    for name, rows, ys, yh in system_rows(items, None):
        lab, unl = rows & labelled, rows & ~labelled
        cl, cu = p.cluster[lab], p.cluster[unl]
        if lab.sum() < 2 or np.unique(cl).size < 2:
            continue
        lam = None if informative(ys[lab], yh[lab], cl) else 0.0
        args = (ys[lab], yh[lab], yh[unl], pi[lab], pi[unl])
        fit = active_ppi_mean(*args, lam=lam, clusters=cl, clusters_unlabeled=cu)
        human = active_ppi_mean(*args, lam=0.0, clusters=cl, clusters_unlabeled=cu)
        judge = ppi_mean(yh[rows], yh[rows], [], lam=0.0, clusters=p.cluster[rows])
        ppi_i, human_i, _ = rate_intervals(fit, human, judge)
        out[name] = (ppi_i, human_i, effective_sample_size(ys[lab], pi[lab], ppi_i.se, cl))
    return out


def simulate(p: Population, reps: int, budget: int, burn_in: int, share: float, seed: int, judge: str, pair_shrink: float = 0.0) -> dict:
    k = len(p.systems)
    rng = np.random.default_rng(seed)
    table = {name: np.full((reps, k), np.nan) for name in ("u_lo", "u_hi", "u_se", "u_val", "h_lo", "h_hi", "u_ess", "u_n",
                                                           "a_lo", "a_hi", "a_se", "a_val", "a_ess")}  # fmt: skip
    table["n_active"], table["t_uniform"], table["t_active"], table["models"] = [], [], [], []
    started = time.perf_counter()
    for rep in range(reps):
        labelled = pair_draw(p, rng, budget, np.ones(len(p.y), dtype=bool))
        items = Items(p.systems, p.sys_lo, p.sys_hi, p.cluster, np.where(labelled, p.y, np.nan), p.yhat, labelled, ~labelled)
        t = time.perf_counter()
        rates = win_rates(items, None)
        table["t_uniform"].append((time.perf_counter() - t) / max(len(rates), 1))
        for name, rate in rates.items():
            i = p.systems.index(name)
            table["u_lo"][rep, i], table["u_hi"][rep, i] = rate.ppi.ci
            table["u_se"][rep, i], table["u_val"][rep, i] = rate.ppi.se, rate.ppi.value
            table["h_lo"][rep, i], table["h_hi"][rep, i] = rate.human.ci
            table["u_ess"][rep, i] = rate.n_effective or np.nan
            table["u_n"][rep, i] = rate.human.n

        labelled, pi = active_design(p, rng, budget, burn_in, share, pair_shrink)
        table["n_active"].append(int(np.unique(p.cluster[labelled]).size))
        t = time.perf_counter()
        rates = active_rates(p, labelled, pi)
        table["t_active"].append((time.perf_counter() - t) / max(len(rates), 1))
        for name, (est, _, ess) in rates.items():
            i = p.systems.index(name)
            table["a_lo"][rep, i], table["a_hi"][rep, i] = est.ci
            table["a_se"][rep, i], table["a_val"][rep, i] = est.se, est.value
            table["a_ess"][rep, i] = ess or np.nan
        if (rep + 1) % 50 == 0 or rep + 1 == reps:
            print(f"  {judge}: {rep + 1}/{reps} repetitions, {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return table


# --------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------


def width_floor(p: Population) -> float:
    """The narrowest active / uniform width ratio an error model on these features could reach: each
    feature cell's true mean squared error (from every item's human label -- a bound, not a design),
    pi proportional to its square root, no uniform share; the variance ratio is then
    (E sqrt(e))^2 / E e (Neyman's allocation against equal rates)."""
    _, cell = np.unique(p.features, axis=0, return_inverse=True)
    cell = cell.ravel()
    e = np.bincount(cell, weights=(p.y - p.yhat) ** 2) / np.bincount(cell)
    e = e[cell]
    return float(np.sqrt(np.mean(np.sqrt(e)) ** 2 / np.mean(e))) if np.mean(e) > 0 else float("nan")


def coverage(lo, hi, truth) -> tuple[float, int]:
    present = ~np.isnan(lo)
    held = (lo <= truth) & (truth <= hi)
    return float(held[present].mean()), int(present.sum())


def median(values) -> float:
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    return float(np.median(values)) if len(values) else float("nan")


def median_interval(ratios: np.ndarray, rounds: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the median of ``ratios`` (repetitions x systems), the repetitions
    resampled: how far simulation noise alone moves the median."""
    rng = np.random.default_rng(seed)
    draws = [median(ratios[rng.integers(0, len(ratios), len(ratios))]) for _ in range(rounds)]
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return float(lo), float(hi)


def report(judge: str, p: Population, t: dict, reps: int, budget: int) -> dict:
    truth = np.broadcast_to(p.win_rates(), t["u_lo"].shape)
    out = {}
    for d in ("u", "a"):
        out[f"{d}_cov"], n = coverage(t[f"{d}_lo"], t[f"{d}_hi"], truth)
        out[f"{d}_cov_normal"], _ = coverage(t[f"{d}_val"] - Z95 * t[f"{d}_se"], t[f"{d}_val"] + Z95 * t[f"{d}_se"], truth)
        out[f"{d}_n"] = n
    with np.errstate(divide="ignore", invalid="ignore"):
        human = t["h_hi"] - t["h_lo"]
        ratios = (t["a_hi"] - t["a_lo"]) / (t["u_hi"] - t["u_lo"])
        out["a_vs_u"] = median(ratios)
        out["a_vs_u_ci"] = median_interval(ratios)
        out["u_vs_h"] = median((t["u_hi"] - t["u_lo"]) / human)
        out["a_vs_h"] = median((t["a_hi"] - t["a_lo"]) / human)
    out["u_ess"] = median(t["u_ess"] / t["u_n"])
    out["ess_ratio"] = median(t["a_ess"] / t["u_ess"])
    rho = judge_human_correlation(p.y, p.yhat)
    out["ceiling"] = ess_ceiling(rho) if rho is not None else float("nan")
    out["floor"] = width_floor(p)
    agree = float(np.mean(p.y == p.yhat))
    print(f"\n== {judge}: {reps} repetitions, {budget:,} labelled pairs expected of {len(np.unique(p.cluster)):,} "
          f"({len(p.y):,} items, {len(p.systems)} systems); agreement with the humans {agree:.3f}, rho {rho:.3f}")  # fmt: skip
    print(
        f"  coverage, 95% CI (Wilson)      uniform {out['u_cov']:.3f}   active {out['a_cov']:.3f}   (n = {out['u_n']:,} / {out['a_n']:,} CIs)"
    )
    print(f"  coverage, normal CI            uniform {out['u_cov_normal']:.3f}   active {out['a_cov_normal']:.3f}")
    lo, hi = out["a_vs_u_ci"]
    print(f"  median width ratio             active / uniform {out['a_vs_u']:.3f} (95% CI over repetitions {lo:.3f}-{hi:.3f}); "
          f"uniform / human-only {out['u_vs_h']:.3f}; active / human-only {out['a_vs_h']:.3f}")  # fmt: skip
    print(f"  effective sample size          uniform / its labels {out['u_ess']:.2f}; active / uniform {out['ess_ratio']:.2f} "
          f"(median per system; uniform ceiling 1/(1-rho^2) = {out['ceiling']:.2f})")  # fmt: skip
    print(f"  width floor of any error model  {out['floor']:.3f} (sqrt-allocation with the true mean error of each feature cell, "
          f"no uniform share: the most these features allow)")  # fmt: skip
    drawn = np.asarray(t["n_active"])
    print(
        f"  active labels drawn            median {np.median(drawn):.0f} (5-95%: {np.percentile(drawn, 5):.0f}-{np.percentile(drawn, 95):.0f})"
    )
    out["ms_u"], out["ms_a"] = 1000 * np.median(t["t_uniform"]), 1000 * np.median(t["t_active"])
    print(f"  time per estimate (one system) uniform {out['ms_u']:.2f} ms   active {out['ms_a']:.2f} ms (median)")
    ok = out["a_cov"] >= TARGET
    narrower = "narrower than uniform" if hi < 1 else ("wider than uniform" if lo > 1 else "no different from uniform within noise")
    print(f"coverage {'PASS' if ok else 'FAIL'}: active {out['a_cov']:.3f} {'>=' if ok else '<'} {TARGET}; "
          f"width active / uniform {out['a_vs_u']:.3f} ({lo:.3f}-{hi:.3f}): {narrower}")  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the arena-ppr folder (default: %(default)s)")
    parser.add_argument("--labels", type=Path, help="a labels CSV in the import format instead of the arena votes")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--judge", help="judge (rater) name; default: the first")
    which.add_argument("--all-judges", action="store_true")
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--labelled", type=int, default=1000, help="expected human-labelled pairs per design (default: %(default)s)")
    parser.add_argument("--burn-in", type=int, default=200, help="expected labels of the uniform burn-in (default: %(default)s)")
    parser.add_argument(
        "--uniform-share", type=float, default=0.2, help="share of the active budget spent uniformly (default: %(default)s)"
    )
    parser.add_argument(
        "--pair-shrink",
        type=float,
        default=0.0,
        help="add to the error model each model pair's mean residual on the labelled items, shrunk by n / (n + this); 0: off",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.pair_shrink < 0:
        parser.error("--pair-shrink must be >= 0")
    if not 2 <= args.burn_in < args.labelled:
        parser.error("--burn-in must be at least 2 and below --labelled")
    if not 0 < args.uniform_share <= 1:
        parser.error("--uniform-share must be in (0, 1]")

    if args.labels is not None:
        if not args.labels.is_file():
            print(f"skipped: no labels file {args.labels}")
            return
        items, judges = read_labels(args.labels)
        populations = lambda name: from_labels(items, judges, name)  # noqa: E731
    else:
        judges = list(JUDGES)
        missing = [n for n in ("human", *judges) if not (args.data / f"{n}.json").is_file()]
        if missing:
            print(f"skipped: {args.data} has no {', '.join(n + '.json' for n in missing)} (the arena-ppr data is not here)")
            return
        populations = lambda name: arena(args.data, name)  # noqa: E731
    if not judges:
        raise SystemExit("no judge verdicts in the labels file")
    if args.judge is not None and args.judge not in judges:
        parser.error(f"--judge must be one of {', '.join(judges)}")
    chosen = judges if args.all_judges else [args.judge or judges[0]]
    pair_note = f", model-pair effects shrunk by {args.pair_shrink:g}" if args.pair_shrink else ""
    print(f"active vs uniform: seed {args.seed}, burn-in {args.burn_in}, uniform share {args.uniform_share}{pair_note}")
    summary = {}
    for judge in chosen:
        p = populations(judge)
        n_pairs = len(np.unique(p.cluster))
        if not args.labelled < n_pairs:
            parser.error(f"--labelled must be below the {n_pairs} pairs")
        table = simulate(p, args.reps, args.labelled, args.burn_in, args.uniform_share, args.seed, judge, args.pair_shrink)
        summary[judge] = report(judge, p, table, args.reps, args.labelled)
    if len(summary) > 1:
        print(f"\nSummary ({args.reps} repetitions; coverage at nominal 0.95, Wilson CIs)")
        print(
            f"  {'judge':<26}{'cov unif':>9}{'active':>8}{'width a/u':>10}{'95% CI':>14}{'u/human':>8}{'a/human':>8}{'ESS u/n':>8}"
            f"{'a/u':>6}{'ceiling':>8}{'floor':>7}"
        )
        for judge, s in summary.items():
            ci = "{:.3f}-{:.3f}".format(*s["a_vs_u_ci"])
            print(f"  {judge:<26}{s['u_cov']:>9.3f}{s['a_cov']:>8.3f}{s['a_vs_u']:>10.3f}{ci:>14}{s['u_vs_h']:>8.3f}{s['a_vs_h']:>8.3f}"
                  f"{s['u_ess']:>8.2f}{s['ess_ratio']:>6.2f}{s['ceiling']:>8.2f}{s['floor']:>7.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
