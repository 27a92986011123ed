"""Time and peak memory of `import_labels` on 200,000 rows, the audit trail included.

    .venv/bin/python bench/import_labels.py [--topics 86] [--keep DIR | --reuse DIR] [--profile]

The data are those of `bench/calibration.py --realistic` (seeded): 86 topics x 11
systems imported with `import_articles`, a 39-criterion rubric, a campaign of 860
reference pairs, and a labels CSV of 100,620 human labels (3 annotators) and
3 x 33,540 judge verdicts: 201,240 rows, 40 MB. `import_labels` runs in a
subprocess on an SQLite file (start-up included), and its peak resident memory is
read from the child's rusage. Then the same file again: nothing changes, and the
command must say so.

Printed against issue 21's "today" (30 s and 835-990 MB for 200k rows) and its
targets (<= 15 s and <= 500 MB), with the audit trail checked: one LabelChange
row per new assignment (its submission) and per label (its winner and, when not
empty, its rationale).

`--keep DIR` keeps the generated folder; `--reuse DIR` imports into a copy of its
database as it was before the import. `--profile` runs the import once more in
this process under cProfile and prints the top 25 entries by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# The project before bench/ (whose annotate.py would shadow the app), bench/ for its helpers.
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import calibration_realistic as realistic  # noqa: E402  (bench/ is on sys.path)

TODAY_SECONDS, TODAY_MB = 30.0, (835, 990)
TARGET_SECONDS, TARGET_MB = 15.0, 500
BEFORE = "before-import.sqlite3"


def prepare(folder: Path, topics: int, seed: int) -> int:
    """The catalogue, the campaign and labels.csv; a copy of the database as it is before the import. Returns the rows."""
    rng = np.random.default_rng(seed)
    env = realistic.django_env(folder)
    titles, words, _ = realistic.benchmark_write(rng, topics, folder)
    criteria = realistic.criteria_write(folder / f"{realistic.CRITERIA_KEY}.json")
    counts = realistic.labels_write(rng, folder / "labels.csv", titles, words, criteria)
    realistic.manage(["migrate", "--verbosity", "0"], env, "migrate")
    realistic.manage(
        ["import_articles", str(folder / "articles.jsonl"), "--benchmark", realistic.BENCHMARK, "--quiet-progress"], env, "import_articles"
    )
    realistic.manage(
        ["import_criteria", str(folder / f"{realistic.CRITERIA_KEY}.json"), "--key", realistic.CRITERIA_KEY], env, "import_criteria"
    )
    systems = ",".join(s[0] for s in realistic.SYSTEMS)
    realistic.manage(
        ["create_campaign", "--name", realistic.CAMPAIGN, "--criteria", realistic.CRITERIA_KEY, "--systems", systems,
         "--overlap", "3", "--allow-tie", "--no-rationale", "--benchmark", realistic.BENCHMARK],
        env, "create_campaign",
    )  # fmt: skip
    shutil.copyfile(folder / realistic.DATABASE, folder / BEFORE)
    return sum(counts.values())


def audit_trail(folder: Path) -> tuple[int, int, int, int]:
    """(assignments, labels with a rationale, labels, LabelChange rows) in the database."""
    with sqlite3.connect(folder / realistic.DATABASE) as db:
        (assignments,) = db.execute("SELECT count(*) FROM annotate_assignment").fetchone()
        (labels,) = db.execute("SELECT count(*) FROM annotate_label").fetchone()
        (reasons,) = db.execute("SELECT count(*) FROM annotate_label WHERE rationale != ''").fetchone()
        (changes,) = db.execute("SELECT count(*) FROM annotate_labelchange").fetchone()
    return assignments, reasons, labels, changes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=86)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--keep", type=Path, metavar="DIR")
    where.add_argument("--reuse", type=Path, metavar="DIR")
    args = parser.parse_args(argv)

    if args.reuse:
        folder = args.reuse.resolve()
        with open(folder / "labels.csv", encoding="utf-8") as f:
            rows = sum(1 for _ in f) - 1
    else:
        folder = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="bench-import-labels-"))
        folder.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        rows = prepare(folder, args.topics, args.seed)
        print(f"prepared {rows:,} rows ({(folder / 'labels.csv').stat().st_size / 1_048_576:.1f} MB) in {time.perf_counter() - t:.1f} s")
    try:
        env = realistic.django_env(folder)
        shutil.copyfile(folder / BEFORE, folder / realistic.DATABASE)
        floor, floor_mb, *_ = realistic.measured(["import_labels", "--help"], env)
        print(
            f"on {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; start-up floor (import_labels --help) {floor:.1f} s, {floor_mb:.0f} MB"
        )
        seconds, mb, out = realistic.manage(
            ["import_labels", "--campaign", realistic.CAMPAIGN, str(folder / "labels.csv")], env, "import_labels"
        )
        print("  " + out.strip().replace("\n", "\n  "))
        again, again_mb, out_again = realistic.manage(
            ["import_labels", "--campaign", realistic.CAMPAIGN, str(folder / "labels.csv")], env, "import_labels again"
        )
        unchanged = "unchanged: everything in the file(s) was already stored" in out_again
        assignments, reasons, labels, changes = audit_trail(folder)
        expected = assignments + labels + reasons
        print(f"audit trail: {changes:,} LabelChange rows for {assignments:,} assignments, {labels:,} labels "
              f"({reasons:,} with a rationale): {'complete' if changes == expected else f'INCOMPLETE, expected {expected:,}'}")  # fmt: skip
        print(f"import_labels, {rows:,} rows: {seconds:.1f} s ({rows / seconds:,.0f} rows/s; {seconds / TODAY_SECONDS:.2f}x of today's "
              f"{TODAY_SECONDS:g} s; target <= {TARGET_SECONDS:g} s: {'met' if seconds <= TARGET_SECONDS else 'NOT met'}), "
              f"peak {mb:.0f} MB ({mb / TODAY_MB[0]:.2f}x-{mb / TODAY_MB[1]:.2f}x of today's {TODAY_MB[0]}-{TODAY_MB[1]} MB; "
              f"target <= {TARGET_MB} MB: {'met' if mb <= TARGET_MB else 'NOT met'})")  # fmt: skip
        print(f"the same file again: {again:.1f} s, peak {again_mb:.0f} MB, {'nothing changed' if unchanged else 'CHANGED SOMETHING'}")
        if args.profile:
            shutil.copyfile(folder / BEFORE, folder / realistic.DATABASE)
            os.environ.update(env)
            import django

            django.setup()
            from django.core.management import call_command

            profiler = cProfile.Profile()
            profiler.runcall(
                call_command, "import_labels", "--campaign", realistic.CAMPAIGN, str(folder / "labels.csv"), stdout=io.StringIO()
            )
            pstats.Stats(profiler).strip_dirs().sort_stats("cumulative").print_stats(25)
    finally:
        if not (args.keep or args.reuse):
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
