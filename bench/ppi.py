"""Coverage and gain of prediction-powered estimates on Chatbot Arena votes (../shared/realdata/arena-ppr).

    .venv/bin/python bench/ppi.py [--data DIR] [--judge NAME | --all-judges] [--reps 200] [--labelled 1000] [--seed 0]

The 26,919 crowd votes are the population. The population values are each model's win rate
against the field (the mean, over the battles it plays, of its share of the win; a tie of either
kind counts 1/2), its Bradley-Terry score fitted to all the votes (Elo-like, 400 / ln 10 per unit,
mean 1000) and its rank by that score (1 = best).

Each repetition (numpy Generator, seeded) draws ``--labelled`` battles without replacement as the
"human-labelled" sample; the others keep only the judge's verdict. `calibration.metrics.powered`
then estimates the win rates (`win_rates`) and the scores with rank-sets (`bt_scores`) three ways:
prediction-powered (PPI++: the labelled votes plus every judge verdict), human-only (the labelled
votes) and judge-only (the judge's verdicts on every battle, as if they were votes). Every battle
is its own cluster.

Printed per judge (default gpt-4-0125-preview; ``--all-judges`` runs the three in turn):

* coverage: the share of 95% CIs that contain the population value, over repetitions x models,
  with the worst model's share; the target for the prediction-powered win rates is >= 0.93;
* the same coverage for the normal CIs, value +- 1.96 se, that the report gave before it kept win
  rates inside [0, 1] (now Wilson score intervals with an effective number of votes), and how many
  of the report's CIs end outside [0, 1] (0 expected);
* gain: the median, over (repetition, model), of the prediction-powered CI width divided by the
  human-only CI width from the same votes (below 1 = narrower; also for the normal CIs, where it is
  the ratio of standard errors); the median tuned weight ``lam``
  and the median n_effective / labelled items (how many labelled votes the human-only CI would
  need to be as narrow);
* time per estimate: the median of `win_rates` and `bt_scores` calls (time.perf_counter);
* rank-sets: the share of (repetition, model) whose rank-set holds the full-data rank, the share
  of repetitions where every model's does (the rank-sets' claim is simultaneous), and the mean size.

The judge-only CIs rest on every battle, so they are the same in every repetition: their
coverage is the share of models whose judge-only CI happens to hold the crowd's value.

When the data folder is absent the script prints one "skipped: ..." line and exits 0. Progress
goes to stderr every 50 repetitions. Nothing here is part of the test suite.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # first, before bench/: bench/calibration.py would shadow the calibration package

from bench.arena_ppr import DATA, JUDGES, TIES, read_votes  # noqa: E402 (after the path is set)
from calibration.metrics.powered import METHODS, PPI, Items, bt_scores, win_rates  # noqa: E402 (after the path is set)
from calibration.metrics.ppi import Z95  # noqa: E402 (after the path is set)

TARGET = 0.93
LABELS = dict(zip(METHODS, ("PPI", "human-only", "judge-only"), strict=True))  # ppi, human, judge
CODE = ("calibration/metrics/ppi.py", "calibration/metrics/powered.py")


def fingerprint() -> str:
    """Short hashes of the code under test, so that a figure can be traced to the version that made it."""
    return ", ".join(f"{name} {hashlib.sha256((ROOT / name).read_bytes()).hexdigest()[:10]}" for name in CODE)


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------


def share_of_first(row: dict, first_is_a: bool) -> float:
    """The share of the win of the battle's first model by name: 1, 0, or 1/2 for either tie kind."""
    if row["winner"] in TIES:
        return 0.5
    if row["winner"] not in ("model_a", "model_b"):
        raise ValueError(f"battle {row['num']}: unknown winner {row['winner']!r}")
    return 1.0 if (row["winner"] == "model_a") == first_is_a else 0.0


@dataclass(frozen=True)
class Battles:
    systems: tuple[str, ...]
    sys_lo: np.ndarray  # sys_lo < sys_hi (name order)
    sys_hi: np.ndarray
    y: np.ndarray  # crowd share of the win of sys_lo
    yhat: np.ndarray  # judge's share of the win of sys_lo


def load(data: Path, judge: str, crowd: dict[int, dict]) -> Battles:
    verdicts = read_votes(data / f"{judge}.json")
    if sorted(verdicts) != sorted(crowd):
        raise SystemExit(f"{judge}: its battles are not the crowd's (different nums)")
    nums = sorted(crowd)
    systems = tuple(sorted({row[side] for row in crowd.values() for side in ("model_a", "model_b")}))
    code = {name: i for i, name in enumerate(systems)}
    sys_lo, sys_hi, y, yhat = [], [], [], []
    for num in nums:
        row, verdict = crowd[num], verdicts[num]
        if (row["model_a"], row["model_b"]) != (verdict["model_a"], verdict["model_b"]):
            raise SystemExit(f"{judge}: battle {num} has other models than the crowd's")
        first_is_a = row["model_a"] < row["model_b"]
        a, b = sorted((code[row["model_a"]], code[row["model_b"]]))
        sys_lo.append(a)
        sys_hi.append(b)
        y.append(share_of_first(row, first_is_a))
        yhat.append(share_of_first(verdict, first_is_a))
    return Battles(systems, np.array(sys_lo, dtype=np.int64), np.array(sys_hi, dtype=np.int64), np.array(y), np.array(yhat))


def items_for(b: Battles, labelled: np.ndarray) -> Items:
    """Items with the crowd vote on the ``labelled`` battles only (NaN elsewhere) and the judge's on all."""
    y = np.where(labelled, b.y, np.nan)
    return Items(b.systems, b.sys_lo, b.sys_hi, np.arange(len(b.y)), y, b.yhat, labelled.copy(), ~labelled)


@dataclass(frozen=True)
class Population:
    win_rate: np.ndarray  # per system
    games: np.ndarray  # battles per system
    score: np.ndarray  # Bradley-Terry, mean 1000 (NaN: not estimable)


def population(b: Battles) -> Population:
    k = len(b.systems)
    wins = np.bincount(b.sys_lo, weights=b.y, minlength=k) + np.bincount(b.sys_hi, weights=1 - b.y, minlength=k)
    games = np.bincount(b.sys_lo, minlength=k) + np.bincount(b.sys_hi, minlength=k)
    fit = bt_scores(items_for(b, np.ones(len(b.y), dtype=bool)), None)
    if fit.human is None:
        raise SystemExit("no Bradley-Terry fit on all the crowd votes")
    score = np.full(k, np.nan)
    score[[b.systems.index(s) for s in fit.systems]] = fit.human.scores
    return Population(wins / games, games, score)


def ranks(scores: np.ndarray) -> np.ndarray:
    """1 = highest."""
    out = np.empty(len(scores), dtype=np.int64)
    out[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
    return out


# --------------------------------------------------------------------------
# repetitions
# --------------------------------------------------------------------------


def nan_table(reps: int, k: int) -> np.ndarray:
    return np.full((reps, k), np.nan)


def simulate(b: Battles, pop: Population, reps: int, n_labelled: int, seed: int, judge: str) -> dict:
    """Runs the repetitions; returns (reps x systems) tables, NaN where a system has no estimate."""
    k, n_battles = len(b.systems), len(b.y)
    rng = np.random.default_rng(seed)
    r = {"wr_time": [], "bt_time": [], "left_out": 0}
    r["bt_lam"], r["no_fit"] = {m: [] for m in METHODS}, {m: 0 for m in METHODS}
    for m in METHODS:
        for name in ("wr_lo", "wr_hi", "wr_se", "bt_lo", "bt_hi", "bt_se", "bt_truth", "rs_lo", "rs_hi", "rank"):
            r[f"{name}_{m}"] = nan_table(reps, k)
        r[f"wr_value_{m}"] = nan_table(reps, k)
    r["wr_lam"], r["wr_neff"], r["bt_neff"] = nan_table(reps, k), nan_table(reps, k), nan_table(reps, k)
    started = time.perf_counter()
    for rep in range(reps):
        labelled = np.zeros(n_battles, dtype=bool)
        labelled[rng.choice(n_battles, size=n_labelled, replace=False)] = True
        items = items_for(b, labelled)

        t = time.perf_counter()
        rates = win_rates(items, None)
        r["wr_time"].append(time.perf_counter() - t)
        for name, rate in rates.items():
            i = b.systems.index(name)
            for m in METHODS:
                interval = getattr(rate, m)
                r[f"wr_lo_{m}"][rep, i], r[f"wr_hi_{m}"][rep, i] = interval.ci
                r[f"wr_se_{m}"][rep, i] = interval.se
                r[f"wr_value_{m}"][rep, i] = interval.value
            r["wr_lam"][rep, i] = rate.lam
            if rate.n_effective is not None:
                r["wr_neff"][rep, i] = rate.n_effective / rate.human.n

        t = time.perf_counter()
        fit = bt_scores(items, None)
        r["bt_time"].append(time.perf_counter() - t)
        r["left_out"] += bool(fit.left_out)
        idx = np.array([b.systems.index(s) for s in fit.systems], dtype=np.int64)
        # The scores are anchored on the mean of the systems scored in this repetition: so is the truth.
        truth = pop.score[idx] - pop.score[idx].mean() + 1000.0
        for m in METHODS:
            scores = getattr(fit, m)
            if scores is None:
                r["no_fit"][m] += 1
                continue
            r["bt_lam"][m].append(scores.lam)
            se = np.sqrt(np.maximum(np.diag(scores.cov), 0.0))
            r[f"bt_lo_{m}"][rep, idx] = scores.scores - Z95 * se
            r[f"bt_hi_{m}"][rep, idx] = scores.scores + Z95 * se
            r[f"bt_se_{m}"][rep, idx] = se
            r[f"bt_truth_{m}"][rep, idx] = truth
            r[f"rs_lo_{m}"][rep, idx] = [lo for lo, _ in scores.rank_sets]
            r[f"rs_hi_{m}"][rep, idx] = [hi for _, hi in scores.rank_sets]
            r[f"rank_{m}"][rep, idx] = ranks(truth)
        if fit.ppi is not None and fit.human is not None:
            neff = [fit.n_effective(j) for j in range(len(idx))]
            r["bt_neff"][rep, idx] = [math.nan if v is None else v / fit.human.n for v in neff]

        if (rep + 1) % 50 == 0 or rep + 1 == reps:
            sys.stdout.flush()
            elapsed = time.perf_counter() - started
            print(f"  {judge}: {rep + 1}/{reps} repetitions, {elapsed:.1f} s", file=sys.stderr, flush=True)
    return r


# --------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------


def count(n: int) -> str:
    return f"{n:,}"


def line(label: str, figure: str, note: str) -> None:
    print(f"  {label:<34}{figure:>8}  ({note})")


def coverage_line(label: str, lo: np.ndarray, hi: np.ndarray, truth: np.ndarray, systems: tuple[str, ...]) -> float:
    """Prints the share of CIs holding the truth, with the worst system's; returns the share."""
    present = ~np.isnan(lo)
    covered = (lo <= truth) & (truth <= hi)
    n = int(present.sum())
    if n == 0:
        line(label, "-", "n = 0 CIs")
        return math.nan
    share = float(covered[present].mean())
    per_system = []
    for i, name in enumerate(systems):
        if present[:, i].any():
            per_system.append((float(covered[present[:, i], i].mean()), int(present[:, i].sum()), name))
    worst, n_worst, name = min(per_system)
    line(label, f"{share:.3f}", f"n = {count(n)} CIs; worst model {name} {worst:.3f}, n = {count(n_worst)}")
    return share


def outside_line(r: dict) -> int:
    """Prints how many win-rate CIs (of every method) end outside [0, 1]; returns the count."""
    lo = np.concatenate([r[f"wr_lo_{m}"].ravel() for m in METHODS])
    hi = np.concatenate([r[f"wr_hi_{m}"].ravel() for m in METHODS])
    present = ~np.isnan(lo)
    outside = int(((lo[present] < 0) | (hi[present] > 1)).sum())
    line("CIs ending outside [0, 1]", count(outside), f"n = {count(int(present.sum()))} CIs, three methods")
    return outside


def median_line(label: str, values, what: str, digits: int = 2) -> None:
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if len(values) == 0:
        line(label, "-", f"n = 0 {what}")
        return
    line(label, f"{np.median(values):.{digits}f}", f"median; n = {count(len(values))} {what}")


def report(judge: str, b: Battles, pop: Population, r: dict, reps: int, n_labelled: int, seed: int, seconds: float) -> dict:
    k, n_battles = len(b.systems), len(b.y)
    agree = float(np.mean(b.y == b.yhat))
    print()
    print(f"== {judge}: {reps} repetitions x {count(n_labelled)} labelled of {count(n_battles)} battles "
          f"({count(n_battles - n_labelled)} judge-only), {k} models, seed {seed}; 3-way agreement with the crowd {agree:.3f}")  # fmt: skip

    print(f"Win rates against the field (population: all {count(n_battles)} crowd votes; tie = 1/2)")
    truth = np.broadcast_to(pop.win_rate, (reps, k))
    summary = {}
    for m in METHODS:
        summary[f"wr_cov_{m}"] = coverage_line(f"coverage, {LABELS[m]} CI", r[f"wr_lo_{m}"], r[f"wr_hi_{m}"], truth, b.systems)
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 when a model's few labelled votes all agree
        ratio = (r["wr_hi_ppi"] - r["wr_lo_ppi"]) / (r["wr_hi_human"] - r["wr_lo_human"])
    median_line("width PPI / human-only", ratio, "CI pairs")
    summary["wr_outside"] = outside_line(r)
    # The normal CIs value +- z se (the report's before it kept rates in [0, 1]), on the same draws.
    for m in (PPI, "human"):
        lo, hi = r[f"wr_value_{m}"] - Z95 * r[f"wr_se_{m}"], r[f"wr_value_{m}"] + Z95 * r[f"wr_se_{m}"]
        summary[f"wr_normal_cov_{m}"] = coverage_line(f"coverage, {LABELS[m]} normal CI", lo, hi, truth, b.systems)
    with np.errstate(divide="ignore", invalid="ignore"):
        normal_ratio = r["wr_se_ppi"] / r["wr_se_human"]
    median_line("width PPI / human-only, normal", normal_ratio, "CI pairs")
    summary["wr_normal_width"] = float(np.nanmedian(normal_ratio))
    median_line("lam (weight of the judge)", r["wr_lam"], "estimates")
    median_line("n_effective / labelled items", r["wr_neff"], "estimates")
    per_call = np.median(r["wr_time"]) * 1000
    models = np.sum(~np.isnan(r["wr_se_ppi"])) / reps
    line("time per win_rates call", f"{per_call:.1f}", f"median ms; n = {count(reps)} calls; {per_call / models:.2f} ms per model")
    summary["wr_width"] = float(np.nanmedian(ratio))
    summary["wr_lam"] = float(np.nanmedian(r["wr_lam"]))
    summary["wr_ms"] = float(per_call)

    print(f"Bradley-Terry scores (population: fitted to all {count(n_battles)} crowd votes; mean 1000, 400 / ln 10 per unit)")
    for m in METHODS:
        summary[f"bt_cov_{m}"] = coverage_line(f"coverage, {LABELS[m]} CI", r[f"bt_lo_{m}"], r[f"bt_hi_{m}"], r[f"bt_truth_{m}"], b.systems)
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 when a model's few labelled votes all agree
        ratio = r["bt_se_ppi"] / r["bt_se_human"]
    median_line("width PPI / human-only", ratio, "CI pairs")
    median_line("lam (weight of the judge)", r["bt_lam"][PPI], "fits")
    median_line("n_effective / labelled items", r["bt_neff"], "estimates")
    per_call = np.median(r["bt_time"]) * 1000
    line("time per bt_scores call", f"{per_call:.0f}", f"median ms; n = {count(reps)} calls (PPI, human-only and judge-only fits)")
    left = "no model left out in any repetition"
    if r["left_out"]:
        left = f"{r['left_out']} of {reps} repetitions left a model out (0 wins or 0 losses)"
    failed = ", ".join(f"{LABELS[m]} {v}" for m, v in r["no_fit"].items() if v)
    print(f"  {left}; {'fits without a finite optimum: ' + failed if failed else 'every fit converged'}")
    summary["bt_width"] = float(np.nanmedian(ratio))
    summary["bt_ms"] = float(per_call)

    print("Rank-sets (95%, simultaneous over the models; full-data rank by the crowd's Bradley-Terry score)")
    for m in METHODS:
        lo, hi, rank = r[f"rs_lo_{m}"], r[f"rs_hi_{m}"], r[f"rank_{m}"]
        present = ~np.isnan(lo)
        holds = (lo <= rank) & (rank <= hi)
        fitted = present.any(axis=1)
        every = [bool(holds[i, present[i]].all()) for i in range(reps) if fitted[i]]
        size = (hi - lo + 1)[present]
        summary[f"rs_{m}"] = (float(holds[present].mean()), float(np.mean(every)), float(size.mean()))
        print(f"  {LABELS[m] + ':':<12} holds the rank {holds[present].mean():.3f} (n = {count(int(present.sum()))} rank-sets); "
              f"all models at once {np.mean(every):.3f} (n = {count(len(every))} repetitions); "
              f"mean size {size.mean():.2f} of {k} ranks")  # fmt: skip

    cov = summary[f"wr_cov_{PPI}"]
    verdict = "PASS" if cov >= TARGET else "FAIL"
    sign = ">=" if cov >= TARGET else "<"
    print(f"{verdict}: PPI win-rate coverage {cov:.3f} {sign} {TARGET:.2f} target ({judge}; {seconds:.0f} s for {reps} repetitions)")
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the arena-ppr folder (default: %(default)s)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--judge", choices=JUDGES, default=JUDGES[0])
    which.add_argument("--all-judges", action="store_true", help="run the three judges in turn")
    parser.add_argument("--reps", type=int, default=200, help="repetitions (default: %(default)s)")
    parser.add_argument("--labelled", type=int, default=1000, help="human-labelled battles per repetition (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    judges = JUDGES if args.all_judges else (args.judge,)
    missing = [name for name in ("human", *judges) if not (args.data / f"{name}.json").is_file()]
    if missing:
        print(f"skipped: {args.data} has no {', '.join(f'{name}.json' for name in missing)} (the arena-ppr data is not here)")
        return
    crowd = read_votes(args.data / "human.json")
    if not 2 <= args.labelled < len(crowd):
        parser.error(f"--labelled must be between 2 and {len(crowd) - 1}")

    code = fingerprint()
    print(f"code under test: {code}")
    summaries = {}
    for judge in judges:
        b = load(args.data, judge, crowd)
        pop = population(b)
        started = time.perf_counter()
        r = simulate(b, pop, args.reps, args.labelled, args.seed, judge)
        summaries[judge] = report(judge, b, pop, r, args.reps, args.labelled, args.seed, time.perf_counter() - started)

    if fingerprint() != code:
        print(f"warning: the code under test changed on disk during the run (now {fingerprint()}); rerun")
    if len(summaries) > 1:
        print()
        print(f"Summary ({args.reps} repetitions x {count(args.labelled)} labelled battles; coverage at nominal 0.95)")
        print(f"  {'judge':<24}{'WR cov PPI':>11}{'human':>7}{'judge':>7}{'width':>7}{'lam':>6}"
              f"{'BT cov PPI':>11}{'human':>7}{'width':>7}{'RS holds':>9}{'all':>6}{'size':>6}")  # fmt: skip
        for judge, s in summaries.items():
            hold, every, size = s[f"rs_{PPI}"]
            print(f"  {judge:<24}{s['wr_cov_ppi']:>11.3f}{s['wr_cov_human']:>7.3f}{s['wr_cov_judge']:>7.3f}{s['wr_width']:>7.2f}"
                  f"{s['wr_lam']:>6.2f}{s['bt_cov_ppi']:>11.3f}{s['bt_cov_human']:>7.3f}{s['bt_width']:>7.2f}"
                  f"{hold:>9.3f}{every:>6.3f}{size:>6.2f}")  # fmt: skip
        print("Win rates, the report's CIs (Wilson, inside [0, 1]) against the normal ones (value +- 1.96 se) on the same draws")
        print(f"  {'judge':<24}{'PPI cov':>9}{'normal':>8}{'width':>7}{'normal':>8}{'outside [0, 1]':>16}")
        for judge, s in summaries.items():
            print(f"  {judge:<24}{s['wr_cov_ppi']:>9.3f}{s['wr_normal_cov_ppi']:>8.3f}{s['wr_width']:>7.2f}"
                  f"{s['wr_normal_width']:>8.2f}{s['wr_outside']:>16}")  # fmt: skip


if __name__ == "__main__":
    main()
