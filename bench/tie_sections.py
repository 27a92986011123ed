"""CPU time of the report's issue-40 sections (consensus strata, Davidson's fit, soft labels, their tables)
on the shape of `bench/calibration_scale.py`, without a database.

    .venv/bin/python bench/tie_sections.py [--labels 100000] [--judges 65] [--rounds 1000] [--seed 0]

Seeded synthetic labels: 30 systems; every battle two criteria; a crowd of 400 raters, one vote per
item and a second on a quarter of them (ties a fifth of the votes); each judge on a random eighth of the
battles; humans and judges together about `--labels` rows. The sections are computed as the report
computes them: above 12 judges the judges' intervals are withheld (`--category-intervals auto`), the
crowd's own consensus intervals too (more than 50 annotators); the humans' figures have theirs.

Prints each section's CPU seconds (one BLAS thread, as the report runs). The report's own time with
these sections on is `bench/calibration_scale.py`'s first figure.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def synthetic(labels: int, judges: int, seed: int):
    import numpy as np

    from calibration import metrics as M

    rng = np.random.default_rng(seed)
    systems = np.array([f"sys-{i:02d}" for i in range(30)])
    battles = max(1, int(labels / (2 * 1.25 + judges * 2 / 8)))
    first = rng.integers(0, 30, battles)
    second = (first + rng.integers(1, 30, battles)) % 30
    cols: dict[str, list] = {k: [] for k in ("pair", "criterion", "category", "rater", "rater_kind", "system_a", "system_b", "winner")}

    def add(p: int, criterion: str, rater: str, kind: str, winner: str) -> None:
        a, b = systems[first[p]], systems[second[p]]
        for key, value in zip(cols, (f"b{p}", criterion, "overall", rater, kind, a, b, winner)):
            cols[key].append(value)

    for p in range(battles):
        a, b = systems[first[p]], systems[second[p]]
        for criterion in ("helpful", "harmless"):
            raters = rng.choice(400, 2, replace=False)
            for v in range(2 if rng.random() < 0.25 else 1):
                add(p, criterion, f"human:r{raters[v]:03d}", "human", str(rng.choice([a, b, "tie"], p=[0.4, 0.4, 0.2])))
    for k in range(judges):
        for p in rng.choice(battles, max(1, battles // 8), replace=False).tolist():
            for criterion in ("helpful", "harmless"):
                add(p, criterion, f"judge-{k:02d}", "judge", str(rng.choice([systems[first[p]], systems[second[p]]])))
    table = M.LabelTable.from_columns(**cols)
    return table, [f"judge-{k:02d}" for k in range(judges)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=100_000)
    parser.add_argument("--judges", type=int, default=65)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
    import django

    django.setup()
    from threadpoolctl import threadpool_limits

    from calibration.report import consensus as report_consensus
    from calibration.report import ties as report_ties
    from calibration.report.build import CATEGORY_INTERVALS_MAX_JUDGES
    from calibration.report.tables.ties import tie_tables

    table, judges = synthetic(args.labels, args.judges, args.seed)
    humans = table.humans()
    merged = {name: table.for_rater(name) for name in judges}
    judge_rounds = args.rounds if args.judges <= CATEGORY_INTERVALS_MAX_JUDGES else 0
    print(
        f"{len(table):,} labels ({len(humans):,} human), {args.judges} judges, {args.rounds} rounds; judges' intervals: {judge_rounds > 0}"
    )
    report: dict = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for name, run in (
            ("consensus", lambda: report_consensus.section(humans, merged, args.rounds, args.seed, judge_rounds)),
            ("davidson", lambda: report_ties.davidson_report(
                report_ties.davidson_section([("humans", humans), *merged.items()], None, args.seed,
                                             lambda n: args.rounds if n == "humans" else judge_rounds), {}, False)),
            ("soft_labels", lambda: report_ties.soft_labels_section(humans, None, args.rounds, args.seed)),
            ("tie_accuracy", lambda: report_ties.tie_accuracy_section(humans, None, args.rounds, args.seed)),
        ):  # fmt: skip
            start = time.process_time()
            report[name] = run()
            print(f"{name:>14}: {time.process_time() - start:6.2f} s CPU")
        start = time.process_time()
        tie_tables(report, "")
        print(f"{'their tables':>14}: {time.process_time() - start:6.2f} s CPU")


if __name__ == "__main__":
    main()
