"""The statistics of a rating campaign of 100,000 pointwise answers, timed (issue 25: the report of
such a campaign must stay within 10 s, so its statistics should take a few seconds).

    .venv/bin/python bench/scales.py [--answers 100000] [--annotators 5] [--judges 3] [--criteria 39]
        [--points 5] [--coverage 1.0] [--rounds 1000] [--runs 3] [--seed 0] [--profile]

Seeded data, made here (no database, no file): articles of 6 systems on topics, one per system
and topic; every article answered on `--criteria` criteria of a 1-`--points` scale by
`--annotators` annotators (each item by each annotator with probability `--coverage`; 1.0 is a
fully crossed design) and by `--judges` judges. An answer is the article's latent quality on the
criterion plus the rater's leniency and noise, rounded onto the scale; judges are noisier, and one
is harsh. The pairwise part: on every topic, each annotator and each judge compares the first two
systems' articles on every criterion (the verdict follows the latent qualities plus noise).
Articles are added until the pointwise answers reach `--answers`.

Timed, median of `--runs` (the whole computation the report needs, from the columns on):

1. building the table (`pointwise_table` from columns of names and values);
2. `pointwise_statistics`: every judge against the humans, the leave-one-out ceiling (pooled, per
   criterion and per annotator), the human panel and each judge's panel, each figure with its
   clustered bootstrap CI (`--rounds` rounds, clusters = articles);
3. `powered_means` (prediction-powered mean score per system) and `alt_test_inputs` for each judge;
4. `cross_protocol` on the pairwise verdicts (clusters = topics).

Prints each time (wall clock), the total, the total against the 10 s budget of the whole report,
and the process's CPU time (on a shared machine the wall clock also counts the others' work).
`--profile` runs the computation once more under cProfile (CPU time) and prints the 20 costliest
entries. The machine's load average is printed first: on a shared machine the wall clock grows
with it, the CPU time does not.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.metrics.crossprotocol import PairVerdict, cross_protocol
from calibration.metrics.pointwise import RATING, pointwise_table
from calibration.metrics.pointwise_agreement import pointwise_statistics
from calibration.metrics.pointwise_powered import alt_test_inputs, powered_means

BUDGET_S = 10.0
SYSTEMS = 6


def campaign(args) -> tuple[dict, list[PairVerdict]]:
    """Columns of the pointwise answers and the pairwise verdicts."""
    rng = np.random.default_rng(args.seed)
    raters = [(f"annotator-{i}", False) for i in range(args.annotators)] + [(f"judge-{i}.1", True) for i in range(args.judges)]
    leniency = np.concatenate([rng.normal(0, 0.3, args.annotators), [0.0, -0.6, 0.3][: args.judges] + [0.0] * max(0, args.judges - 3)])
    noise = np.concatenate([np.full(args.annotators, 0.7), np.full(args.judges, 0.9)])
    per_article = args.criteria * (args.annotators * args.coverage + args.judges)
    n_articles = int(np.ceil(args.answers / per_article))
    n_topics = int(np.ceil(n_articles / SYSTEMS))
    centre = (1 + args.points) / 2
    quality = centre + rng.normal(0, (args.points - 1) / 4, (n_topics * SYSTEMS, args.criteria))
    cols = {k: [] for k in ("article", "system", "topic", "criterion", "rater", "value", "is_judge")}
    for a in range(n_articles):
        topic, system = f"topic-{a // SYSTEMS}", f"system-{a % SYSTEMS}.v2"
        for r, (name, judge) in enumerate(raters):
            answered = np.ones(args.criteria, dtype=bool) if judge else rng.random(args.criteria) < args.coverage
            value = np.clip(np.rint(quality[a] + leniency[r] + rng.normal(0, noise[r], args.criteria)), 1, args.points)
            for c in np.flatnonzero(answered):
                cols["article"].append(f"article-{a}")
                cols["system"].append(system)
                cols["topic"].append(topic)
                cols["criterion"].append(f"criterion-{c}")
                cols["rater"].append(name)
                cols["value"].append(float(value[c]))
                cols["is_judge"].append(judge)
    verdicts = []
    for t in range(n_topics):
        a, b = t * SYSTEMS, t * SYSTEMS + 1
        if b >= n_articles:
            break
        for r, (name, judge) in enumerate(raters):
            diff = quality[a] - quality[b] + rng.normal(0, noise[r], args.criteria)
            for c in range(args.criteria):
                preferred = 0 if abs(diff[c]) < 0.2 else (1 if diff[c] > 0 else -1)
                verdicts.append(PairVerdict(f"topic-{t}", f"criterion-{c}", name, f"article-{a}", f"article-{b}", preferred, judge))
    return cols, verdicts


def run(cols: dict, verdicts: list[PairVerdict], args) -> dict[str, float]:
    times = {}
    cpu = time.process_time()
    t0 = time.perf_counter()
    table = pointwise_table(**cols, response=RATING, scale=(1, args.points))
    times["table"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    stats = pointwise_statistics(table, rounds=args.rounds, seed=args.seed)
    times["pointwise_statistics"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for judge in table.judges:
        powered_means(table, judge)
        alt_test_inputs(table, judge)
    times["powered_means + alt_test_inputs"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    cross = cross_protocol(table, verdicts, rounds=args.rounds, seed=args.seed)
    times["cross_protocol"] = time.perf_counter() - t0
    run.cpu = time.process_time() - cpu
    run.last = (table, stats, cross)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=5)
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--criteria", type=int, default=39)
    parser.add_argument("--points", type=int, default=5)
    parser.add_argument("--coverage", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    cols, verdicts = campaign(args)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"{len(cols['value']):,} pointwise answers ({args.annotators} annotators, {args.judges} judges, {args.criteria} criteria, "
        f"1-{args.points} scale, coverage {args.coverage:g}), {len(set(cols['article'])):,} articles, "
        f"{len(verdicts):,} pairwise verdicts; {args.rounds} bootstrap rounds"
    )
    runs, cpu = [], []
    for _ in range(args.runs):
        runs.append(run(cols, verdicts, args))
        cpu.append(run.cpu)
    table, stats, cross = run.last
    for key in runs[0]:
        print(f"  {key:<34} {statistics.median(r[key] for r in runs):7.2f} s")
    total = statistics.median(sum(r.values()) for r in runs)
    print(f"  {'total':<34} {total:7.2f} s   ({total / BUDGET_S:.0%} of the report's {BUDGET_S:.0f} s budget)")
    print(
        f"  {'CPU time of the total (all threads)':<34} {statistics.median(cpu):7.2f} s   (below the wall time when other processes share the cores)"
    )
    judge = table.judges[0]
    fig = stats.judge_figures[judge].figures

    def shown(estimate) -> str:
        return "cannot run" if estimate.value is None else f"{estimate.value:.3f}"

    print(
        f"  check: {judge} kappa_quadratic {shown(fig['kappa_quadratic'])} (n {fig['kappa_quadratic'].n:,}), "
        f"ceiling {shown(stats.ceiling.figures['kappa_quadratic'])}; human ICC(2,1) {shown(stats.human_panel.figures['icc2_1'])} "
        f"on {stats.human_panel.counts['icc_items']:,} fully crossed items; "
        f"human hit rate {shown(cross.humans.figures['hit_rate'])} (n {cross.humans.figures['hit_rate'].n:,})"
    )
    if args.profile:
        profile = cProfile.Profile(time.process_time)  # CPU time: a shared machine's load does not blur it
        profile.enable()
        run(cols, verdicts, args)
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(20)


if __name__ == "__main__":
    main()
