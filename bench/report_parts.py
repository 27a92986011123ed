"""CPU seconds of each part of the calibration report, here and (optionally) in another checkout.

    .venv/bin/python bench/report_parts.py --reuse DIR [--rounds 1000] [--runs 1] [--threads 4]
        [--before CHECKOUT] [--profile]

`DIR` holds the SQLite database of `bench/calibration_scale.py --keep DIR` (campaign `scale-bench`:
100,000 labels, 65 judges). Each checkout is measured in its own process: `build_report` as the
report command runs it (the cache left out), with the functions that make the report's parts
wrapped to count the CPU time of the thread that runs them (`time.thread_time`). A part's seconds
leave out the parts it calls (the humans' section calls the annotators' pairs, a rater's fits call
the Bradley-Terry fits): the parts and "other" add up to the whole CPU time of `build_report`.
With several runs, each figure is the median.

`--before CHECKOUT` (e.g. a worktree of main) measures it too and prints both, with the ratio
before / now per part and for everything but the Bradley-Terry fits (calibration/metrics/ranking.py).
The raters' fits run in threads here, never in a pool of processes (`calibration.metrics.rater_fits`),
so that their CPU time is counted. `--profile` prints the 30 functions of largest own time of this
checkout's first run (cProfile; the pool's threads are not profiled, so it runs the report on one thread).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = "scale-bench"
FITS = "Bradley-Terry fits (ranking.py)"
# (label, module, attribute): what is wrapped; a class attribute is "Class.name".
PARTS = (
    ("calibration_inputs (reading)", "calibration.selectors", "calibration_inputs"),
    ("humans_section", "calibration.report.sections", "humans_section"),
    ("rater_pairs (annotators, judges)", "calibration.report.sections", "rater_pairs"),
    ("position_section", "calibration.report.build", "position_section"),
    ("LabelTable.for_rater", "calibration.metrics", "LabelTable.for_rater"),
    ("judge_votes", "calibration.metrics", "judge_votes"),
    ("merge_swapped", "calibration.metrics", "merge_swapped"),
    ("judge_section", "calibration.report.sections", "judge_section"),
    ("LabelTable.concat", "calibration.metrics", "LabelTable.concat"),
    (FITS, "calibration.metrics", "bradley_terry"),
    (FITS, "calibration.metrics", "bradley_terry_by_category"),
    (FITS, "calibration.metrics.rater_fits", "bradley_terry"),  # where the fits have a module of their own
    (FITS, "calibration.metrics.rater_fits", "bradley_terry_by_category"),
    ("win rates", "calibration.metrics", "win_rate_vs_field"),
    ("win rates", "calibration.metrics", "win_rate_vs_reference"),
    ("win rates", "calibration.metrics.rater_fits", "win_rate_vs_field"),
    ("win rates", "calibration.metrics.rater_fits", "win_rate_vs_reference"),
    ("rater_fits (rest)", "calibration.report.build", "rater_fits"),
    ("prediction_powered", "calibration.report.ppi", "section"),
    ("paired_differences", "calibration.metrics", "paired_differences"),
    ("kendall", "calibration.report.build", "kendall"),
    ("alt_test", "calibration.report.alttest", "section"),
    ("with_design", "calibration.report.build", "with_design"),
    ("pointwise_add", "calibration.report.build", "pointwise_add"),
    ("plan_section", "calibration.plan.study", "plan_section"),
)
OTHER, TOTAL = "other", "total"


class Clock:
    """Own CPU seconds per label: a thread's time in a wrapped call less its wrapped calls'."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.local = threading.local()
        self.lock = threading.Lock()

    def wrap(self, label: str, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            stack = self.local.__dict__.setdefault("stack", [])
            stack.append(0.0)  # the time of the wrapped calls inside this one
            started = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.thread_time() - started
                inner = stack.pop()
                if stack:
                    stack[-1] += spent
                with self.lock:
                    self.seconds[label] = self.seconds.get(label, 0.0) + spent - inner

        return timed


def install(clock: Clock) -> None:
    import importlib

    seen = set()
    for label, module_name, attr in PARTS:
        try:
            owner = importlib.import_module(module_name)
        except ImportError:
            continue  # not in this checkout
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        fn = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if fn is None or (id(owner), name) in seen:
            continue  # not in this checkout
        seen.add((id(owner), name))
        if isinstance(fn, staticmethod):
            setattr(owner, name, staticmethod(clock.wrap(label, fn.__func__)))
        else:
            setattr(owner, name, clock.wrap(label, fn))


def measure(rounds: int, threads: int | None, profile: bool) -> dict[str, float]:
    """One run in this process (the checkout first on sys.path): own CPU seconds per part."""
    import django

    django.setup()
    from annotate.models import Campaign
    from calibration.report import build as report

    clock = Clock()
    install(clock)
    try:  # the raters' fits in this process's threads, where the clock sees them (not in a pool of processes)
        from calibration.metrics import rater_fits

        rater_fits.PROCESS_WORK = float("inf")
    except ImportError:
        pass
    if threads is not None:
        report._THREADS = threads
    if profile:
        import cProfile
        import pstats

        report._THREADS = 1
        profiler = cProfile.Profile()
        profiler.enable()
    campaign = Campaign.objects.get(name=CAMPAIGN)
    started, wall = time.process_time(), time.perf_counter()
    report.build_report(campaign, rounds=rounds)
    total, wall = time.process_time() - started, time.perf_counter() - wall
    if profile:
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(30)
    out = dict(clock.seconds)
    out[OTHER] = total - sum(out.values())
    out[TOTAL] = total
    out["wall"] = wall
    return out


def run_checkout(root: Path, folder: Path, rounds: int, threads: int | None, profile: bool) -> dict[str, float]:
    env = dict(os.environ)
    env.update(DATABASE_URL=f"sqlite:///{folder / 'bench.sqlite3'}", DJANGO_SETTINGS_MODULE="config.settings", DEBUG="0")
    env.setdefault("SECRET_KEY", "bench-only-not-secret")
    args = [sys.executable, __file__, "--measure", str(root), "--rounds", str(rounds)]
    args += [] if threads is None else ["--threads", str(threads)]
    args += ["--profile"] if profile else []
    done = subprocess.run(args, cwd=root, env=env, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"measuring {root} failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    keys = {k for r in runs for k in r}
    return {k: statistics.median(r.get(k, 0.0) for r in runs) for k in keys}


def table(now: dict[str, float], before: dict[str, float] | None) -> None:
    labels = list(dict.fromkeys([label for label, *_ in PARTS] + [OTHER]))
    head = f"{'part':36s} {'now CPU s':>10s}" + ("" if before is None else f" {'before':>10s} {'before/now':>10s}")
    print(head)

    def line(name: str, a: float, b: float | None) -> None:
        ratio = "" if b is None else f" {b:10.2f} {b / a if a > 0.005 else float('nan'):10.2f}"
        print(f"{name:36s} {a:10.2f}{ratio}")

    for label in labels:
        line(label, now.get(label, 0.0), None if before is None else before.get(label, 0.0))
    print("-" * len(head))
    line(TOTAL, now[TOTAL], None if before is None else before[TOTAL])
    line("total but the fits", now[TOTAL] - now.get(FITS, 0.0), None if before is None else before[TOTAL] - before.get(FITS, 0.0))
    line("wall", now["wall"], None if before is None else before["wall"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reuse", type=Path, metavar="DIR")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--threads", type=int, help="the report's threads (default: the project's)")
    parser.add_argument("--before", type=Path, metavar="CHECKOUT")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure is not None:
        sys.path.insert(0, str(args.measure.resolve()))
        print(json.dumps(measure(args.rounds, args.threads, args.profile)))
        return
    if args.reuse is None:
        parser.error("--reuse DIR is required")
    folder = args.reuse.resolve()
    now_runs, before_runs = [], []
    for run in range(args.runs):
        # Alternated, so that a busy spell of the shared machine weighs on both.
        if args.before is not None:
            before_runs.append(run_checkout(args.before.resolve(), folder, args.rounds, args.threads, False))
        now_runs.append(run_checkout(ROOT, folder, args.rounds, args.threads, args.profile and run == 0))
    print(f"calibration report of {CAMPAIGN} in {folder}, {args.rounds} rounds, median of {args.runs} run(s); own CPU seconds per part")
    table(medians(now_runs), medians(before_runs) if before_runs else None)


if __name__ == "__main__":
    main()
