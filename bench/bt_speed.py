"""The Bradley-Terry fits of a calibration report, timed against another version of the code (issue 21).

    .venv/bin/python bench/bt_speed.py [--baseline REV] [--tables PATH] [--judges 65] [--rounds 1000] [--repeats 1]

The report fits each rater (the humans and every judge) once over all its labels and once per
category, each with a pair bootstrap of ``--rounds`` rounds: at 100,000 labels and 65 judges,
66 raters x 3 scopes = 198 fits. This runs those fits (`bradley_terry` and
`bradley_terry_by_category`, anchored on the mean, as the report calls them) with this
checkout's calibration/metrics/ranking.py and with the one of git revision ``--baseline``
(default main), rater by rater, the two alternating which goes first, one BLAS thread as in
the report, the bootstrap's draw counts made (and cached) before either runs. Printed: the CPU seconds (and wall seconds) of each, their ratio, and the largest
difference between the two in any score or CI end, in Elo points.

The raters' label tables come from ``--tables`` (a pickled list of (rater name, LabelTable),
default /work/scratch/tables.pkl: the 66 raters of the 100k-label benchmark) when that file
exists; otherwise they are generated, seeded, in the benchmark's shape: 30 systems, 5,333
battles in two categories, a crowd voting once on every battle (a quarter twice), and
``--judges`` judges each on a random eighth of the battles.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calibration.metrics import LabelTable, ranking  # noqa: E402
from calibration.metrics.bootstrap import draw_count_blocks  # noqa: E402

SYSTEMS, BATTLES, CATEGORIES = 30, 5333, ("harmless", "helpful")
DEFAULT_TABLES = Path("/work/scratch/tables.pkl")


def baseline_module(rev: str):
    """calibration/metrics/ranking.py as of git revision ``rev``, imported under another name."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:calibration/metrics/ranking.py"], capture_output=True, text=True, check=True
    ).stdout
    spec = importlib.util.spec_from_loader("calibration.metrics.ranking_baseline", loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    exec(compile(source, f"{rev}:calibration/metrics/ranking.py", "exec"), module.__dict__)
    return module


def generated_tables(judges: int, seed: int = 0) -> list[tuple[str, LabelTable]]:
    rng = np.random.default_rng(seed)
    names = [f"system-{i:02d}" for i in range(SYSTEMS)]
    quality = rng.normal(0, 120, SYSTEMS) * math.log(10) / 400
    a = rng.integers(0, SYSTEMS, BATTLES)
    b = (a + rng.integers(1, SYSTEMS, BATTLES)) % SYSTEMS

    def table(rater: str, kind: str, battles: np.ndarray, skill: float) -> LabelTable:
        rows = {k: [] for k in ("pair", "criterion", "category", "rater", "rater_kind", "system_a", "system_b", "winner")}
        for c, category in enumerate(CATEGORIES):
            edge = quality[a[battles]] - quality[b[battles]] + (0.3 if c else -0.3) * rng.normal(0, 1, SYSTEMS)[a[battles]]
            a_wins = rng.random(len(battles)) < 1 / (1 + np.exp(-skill * edge))
            tie = rng.random(len(battles)) < 0.15
            for i, x in enumerate(battles):
                rows["pair"].append(f"battle-{x:05d}")
                rows["criterion"].append(category)
                rows["category"].append(category)
                rows["rater"].append(rater if kind == "judge" else f"{rater}-{x % 400}")
                rows["rater_kind"].append(kind)
                rows["system_a"].append(names[a[x]])
                rows["system_b"].append(names[b[x]])
                rows["winner"].append("tie" if tie[i] else names[a[x]] if a_wins[i] else names[b[x]])
        return LabelTable.from_columns(**rows)

    crowd = np.concatenate([np.arange(BATTLES), rng.choice(BATTLES, BATTLES // 4, replace=False)])
    out = [("humans", table("crowd", "human", crowd, 1.0))]
    for j in range(judges):
        out.append(
            (
                f"judge-{j:02d}",
                table(f"judge-{j:02d}", "judge", np.sort(rng.choice(BATTLES, BATTLES // 8, replace=False)), rng.uniform(0.5, 1.2)),
            )
        )
    return out


def fits(module, table, rounds: int):
    """The rater's three scopes: all its labels, then each category."""
    overall = module.bradley_terry(table, reference=None, anchor=1000, rounds=rounds, seed=0)
    return [overall, *module.bradley_terry_by_category(table, reference=None, anchor=1000, rounds=rounds, seed=0).values()]


def figures(results) -> np.ndarray:
    out = []
    for bt in results:
        for s in bt.scores.values():
            out.extend(np.nan if v is None else v for v in (s.score, s.ci_low, s.ci_high))
    return np.array(out, dtype=float)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="main", help="git revision whose ranking.py is the baseline (default main)")
    parser.add_argument("--tables", type=Path, default=DEFAULT_TABLES)
    parser.add_argument("--judges", type=int, default=65, help="judges of the generated tables (without --tables)")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=1, help="runs of every fit; the smallest CPU time of each counts")
    parser.add_argument("--raters", type=int, default=0, help="only the first N raters (0: all)")
    args = parser.parse_args()

    if args.tables.exists():
        tables = pickle.load(args.tables.open("rb"))
        origin = str(args.tables)
    else:
        tables = generated_tables(args.judges)
        origin = f"generated (seed 0, {args.judges} judges)"
    if args.raters:
        tables = tables[: args.raters]
    versions = {"baseline": baseline_module(args.baseline), "this": ranking}
    cpu = {k: 0.0 for k in versions}
    wall = {k: 0.0 for k in versions}
    worst = 0.0
    n_fits = 0
    with threadpool_limits(limits=1, user_api="blas"):
        for i, (_, table) in enumerate(tables):
            order = list(versions) if i % 2 == 0 else list(versions)[::-1]
            for scope in [table, *(table.select(table.category == c) for c in np.unique(table.category))]:
                for _ in draw_count_blocks(len(np.unique(scope.pair)), args.rounds, 0):  # both find them cached
                    pass
            got = {}
            for name in order:
                best_cpu, best_wall = math.inf, math.inf
                for _ in range(args.repeats):
                    c, w = time.process_time(), time.perf_counter()
                    got[name] = fits(versions[name], table, args.rounds)
                    best_cpu, best_wall = min(best_cpu, time.process_time() - c), min(best_wall, time.perf_counter() - w)
                cpu[name] += best_cpu
                wall[name] += best_wall
            n_fits += len(got["this"])
            a, b = figures(got["baseline"]), figures(got["this"])
            if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)) or not np.array_equal(np.isinf(a), np.isinf(b)):
                print(f"rater {i}: the two versions give different figures (shape, missing or unbounded values)")
                worst = math.inf
            else:
                finite = np.isfinite(a)
                if finite.any():
                    worst = max(worst, float(np.abs(a[finite] - b[finite]).max()))
    print(f"tables: {origin}; {len(tables)} raters, {n_fits} fits of {args.rounds} bootstrap rounds")
    for name in versions:
        label = f"baseline ({args.baseline})" if name == "baseline" else "this checkout"
        print(f"{label:>24}: {cpu[name]:7.2f} CPU s  {wall[name]:7.2f} wall s")
    print(f"ratio this / baseline: {cpu['this'] / cpu['baseline']:.3f} (CPU), {wall['this'] / wall['baseline']:.3f} (wall)")
    print(f"largest difference in a score or CI end: {worst:.2e} Elo")


if __name__ == "__main__":
    main()
