"""Start-up of manage.py commands: wall and CPU seconds, this checkout against another (issue 21).

    .venv/bin/python bench/startup.py [--before DIR] [--runs 5] [--imports N]

On a throw-away SQLite database holding the demo, each command runs `--runs` times in this
checkout and, with `--before`, in another one (e.g. a worktree of the commit before a change), the
two alternating so that the machine's load falls on both alike; the figures are medians. With
`--imports N`, the N slowest top-level imports of each command (python -X importtime) in this checkout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (
    ("help",),  # issue 41: at most 1 s of CPU
    ("check",),
    ("calibration_report", "--campaign", "Demo campaign", "--rounds", "0", "--format", "json", "--out", "{tmp}/report.json"),
    ("export_labels", "--campaign", "Demo campaign", "--out", "{tmp}/labels.csv"),
)


def timed(repo: Path, args: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of `manage.py args` in `repo`."""
    import time

    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "manage.py", *args], cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"manage.py {' '.join(args)} failed in {repo}: {child.stderr.read().decode()[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def slowest_imports(args: list[str], env: dict, n: int) -> list[tuple[float, str]]:
    out = subprocess.run([sys.executable, "-X", "importtime", "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    top = []
    for row in out.stderr.splitlines():
        if not row.startswith("import time:") or "|" not in row:
            continue
        _, cumulative, name = row.split("|")
        if cumulative.strip().isdigit() and not name.startswith("  "):  # a top-level import
            top.append((int(cumulative) / 1e6, name.strip()))
    return sorted(top, reverse=True)[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="another checkout to compare with (its .venv is not used: this Python runs both)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--imports", type=int, default=0)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-startup-")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite3", "DEBUG": "1", "DJANGO_SETTINGS_MODULE": "config.settings"}
    for setup in (["migrate", "--verbosity", "0"], ["load_demo"]):
        subprocess.run([sys.executable, "manage.py", *setup], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    trees = [("now", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    print(f"{args.runs} runs each, medians; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    for command in COMMANDS:
        argv = [a.format(tmp=tmp) for a in command]
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
        for _ in range(args.runs):
            for name, repo in trees:
                figures[name].append(timed(repo, argv, env))
        cells = []
        for name, _ in trees:
            wall, cpu = statistics.median(w for w, _ in figures[name]), statistics.median(c for _, c in figures[name])
            cells.append(f"{name} {wall:5.2f} s ({cpu:5.2f} CPU s)")
        if args.before:
            now, before = (statistics.median(c for _, c in figures[name]) for name in ("now", "before"))
            cells.append(f"CPU {now / before:.2f}x")
        print(f"  manage.py {command[0]:<20} " + "; ".join(cells))
        for seconds, name in slowest_imports(argv, env, args.imports):
            print(f"      {seconds:5.2f} s  import {name}")


if __name__ == "__main__":
    main()
