"""Time to import and clean a benchmark, in MB/s of markdown, beside earlier versions of the code.

    python bench/import.py ../shared/wlc-sample [--rounds 3] [--against acb0463 --against 59bb9c9] [--profile]

Each version runs in its own process on its own fresh SQLite database (set
DATABASE_URL to measure another server), in turn, twice over (this tree, the
others, then back), so that a change of load on the machine falls on all of them;
each process imports the benchmark once to warm up, then ``--rounds`` times, and
reports reading, cleaning + rendering, and database writes separately. The figure
compared is the median round, in wall time and in the process's CPU time (user +
system, with that of the import's forked workers: on a shared machine the wall time of each version also measures its
neighbours, its CPU time much less so); the load average is printed beside them. ``--against`` names git revisions to measure beside
this tree (each is unpacked with ``git archive`` into a temporary folder; no
worktree is made). The default is the commit before "a new line of prose starts a
new paragraph" (acb0463, the parent of 8db74e3, which brought annotate/rendering's
paragraph_per_line and migration 0007) and the commit this branch started from.
``--profile`` prints where this tree's CPU time goes (cProfile, top functions).
DEBUG is off in every process, as in production.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE_PARAGRAPHS = "acb0463"  # parent of 8db74e3 (paragraph_per_line, migration 0007)
BRANCH_START = "59bb9c9"  # the commit issue 33's work started from
WORKER = r"""
import json, os, sys, tempfile, time
from pathlib import Path
tree, path, rounds, profile = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
sys.path.insert(0, tree)
os.chdir(tree)
os.environ.setdefault("DATABASE_URL", f"sqlite:///{tempfile.mkdtemp(prefix='bench-import-')}/bench.sqlite3")
os.environ["DEBUG"] = "0"
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
import django
django.setup()
from django.conf import settings
from django.core.management import call_command
call_command("migrate", verbosity=0)
from annotate.models import Article, Criterion, CriterionSet, System, Topic
from annotate.services import articles_import, articles_prepare
from annotate.sources import read_wlc

import resource

def cpu():
    # This process's CPU time and that of its children once they ended (the import's forked workers).
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

def one():
    for model in (Article, Topic, System, Criterion, CriterionSet):
        model.objects.all().delete()
    c0, t0 = cpu(), time.perf_counter()
    batch = read_wlc(path, max_bytes=settings.MAX_ARTICLE_BYTES)
    t1 = time.perf_counter()
    prepared = articles_prepare(batch.articles)
    t2 = time.perf_counter()
    summary = articles_import(batch=batch, prepared=prepared)
    t3, c3 = time.perf_counter(), cpu()
    return [t1 - t0, t2 - t1, t3 - t2, t3 - t0, summary.markdown_bytes / 1e6, summary.articles_created, c3 - c0]

one()
rows = [one() for _ in range(rounds)]
if profile:
    import cProfile, io, pstats
    profiler = cProfile.Profile(time.process_time)
    profiler.runcall(one)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(18)
    sys.stderr.write(out.getvalue())
print(json.dumps(rows))
"""


def _unpack(rev: str, into: Path) -> Path:
    target = into / rev
    target.mkdir()
    done = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"cannot unpack revision {rev!r} (a shallow clone?): {done.stderr.decode(errors='replace').strip()}")
    archive = done.stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def _measure(tree: Path, path: Path, rounds: int, profile: bool = False) -> list[list[float]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(tree), str(path.resolve()), str(rounds), "1" if profile else "0"],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the import failed:\n{done.stderr[-3000:]}")
    if profile:
        print(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _load() -> str:
    """The 1, 5 and 15 minute load averages: on a shared machine, the figures' context."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--against", action="append", help=f"git revision to measure beside this tree (default {BEFORE_PARAGRAPHS}, {BRANCH_START})"
    )
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary of one round of this tree")
    args = parser.parse_args()
    against = args.against or [BEFORE_PARAGRAPHS, BRANCH_START]

    load_before = _load()
    with tempfile.TemporaryDirectory(prefix="bench-import-trees-") as tmp:
        trees = {"this tree": ROOT} | {rev: _unpack(rev, Path(tmp)) for rev in against}
        rows: dict[str, list[list[float]]] = {name: [] for name in trees}
        order = list(trees)
        for name in order + order[::-1]:  # there and back: drifting load falls on every version
            rows[name] += _measure(trees[name], args.path, args.rounds, profile=args.profile and name == "this tree" and not rows[name])

    mb = rows["this tree"][0][4]
    print(f"{rows['this tree'][0][5]} articles, {mb:.2f} MB of markdown; median of {2 * args.rounds} rounds per version, DEBUG off")
    print(f"load average before: {load_before}, after: {_load()} (on {os.cpu_count()} CPUs)")
    print(f"{'version':<12} {'read s':>8} {'clean+render s':>15} {'db s':>8} {'total s':>8} {'MB/s':>6} {'CPU s':>7} {'MB/CPU s':>9}")
    medians, cpu = {}, {}
    for name, data in rows.items():
        med = [statistics.median(r[i] for r in data) for i in range(4)]
        medians[name] = med[3]
        cpu[name] = statistics.median(r[6] for r in data)
        print(
            f"{name:<12} {med[0]:8.3f} {med[1]:15.3f} {med[2]:8.3f} {med[3]:8.3f} {mb / med[3]:6.2f} {cpu[name]:7.3f} {mb / cpu[name]:9.2f}"
        )
    for rev in against:
        print(
            f"this tree against {rev}: {medians[rev] / medians['this tree']:.2f}x as fast (wall), {cpu[rev] / cpu['this tree']:.2f}x (CPU)"
        )


if __name__ == "__main__":
    main()
