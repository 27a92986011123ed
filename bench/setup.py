"""A new user's set-up: cold and warm `make demo` until the first page answers, and the virtualenv's size.

    python3 bench/setup.py [--before COMMIT] [--commit COMMIT] [--keep]

Each checkout is a fresh `git clone` of this repository at a commit (default HEAD) in a temporary
folder, with nothing of this checkout's virtualenv, database or key. "Cold" is the first `make demo`
there: it creates the virtualenv, installs, migrates a new SQLite database, loads the demo and
serves; the time runs until the login page answers. "Warm" is a second `make demo` in the same clone
(everything installed, the database there). pip's download cache is the machine's, as for a user who
has installed Python packages before; nothing is downloaded twice within a run.

With `--before COMMIT` the same is measured for that commit, the two clones measured one after the
other in one run, so that the machine's load falls on both alike (run it on a quiet machine: the
install is CPU-bound). Prints seconds, the virtualenv's size in MB and its number of packages, and
the ratios new / before.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clone(commit: str, into: Path) -> Path:
    target = into / commit[:12]
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(target)], check=True)
    subprocess.run(["git", "checkout", "--quiet", commit], cwd=target, check=True)
    return target


def demo_until_served(repo: Path, log: Path, limit: float = 1800) -> float:
    """Seconds from `make demo` to the login page's first answer; the demo is then stopped."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL", "VIRTUAL_ENV"}}
    started = time.perf_counter()
    with open(log, "ab") as out:
        child = subprocess.Popen(
            ["make", "demo", f"PORT={port}"], cwd=repo, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        while time.perf_counter() - started < limit:
            if child.poll() is not None:
                sys.exit(f"make demo exited with {child.returncode} in {repo}; see {log}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2) as page:
                    if page.status == 200:
                        return time.perf_counter() - started
            except OSError:
                pass
            time.sleep(0.5)
        sys.exit(f"make demo did not answer within {limit:.0f} s in {repo}; see {log}")
    finally:
        os.killpg(child.pid, signal.SIGTERM)
        child.wait(timeout=60)


def venv_figures(repo: Path) -> tuple[float, int]:
    """(MB on disk, number of installed distributions) of the clone's .venv."""
    venv = repo / ".venv"
    size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())
    site = next(venv.glob("lib/python3*/site-packages"))
    packages = len(list(site.glob("*.dist-info")))
    return size / 1e6, packages


def measure(commit: str, into: Path) -> dict:
    repo = clone(commit, into)
    log = into / f"{commit[:12]}.log"
    cold = demo_until_served(repo, log)
    warm = demo_until_served(repo, log)
    size, packages = venv_figures(repo)
    return {"commit": commit[:12], "cold": cold, "warm": warm, "venv_mb": size, "packages": packages, "log": log}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commit", default="HEAD", help="the commit to measure (default HEAD)")
    parser.add_argument("--before", help="a commit to measure beside it, e.g. the one before the install split")
    parser.add_argument("--keep", action="store_true", help="keep the clones and logs (their folder is printed)")
    args = parser.parse_args()
    resolve = lambda ref: subprocess.run(["git", "rev-parse", ref], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()  # noqa: E731
    commits = [resolve(args.commit)] + ([resolve(args.before)] if args.before else [])
    into = Path(tempfile.mkdtemp(prefix="bench-setup-"))
    rows = []
    try:
        for commit in commits:
            print(f"measuring {commit[:12]} in a fresh clone (cold make demo, then warm) ...", flush=True)
            rows.append(measure(commit, into))
    finally:
        if args.keep:
            print(f"clones and logs kept in {into}")
        else:
            shutil.rmtree(into, ignore_errors=True)
    print(f"{'commit':<14}{'cold make demo':>16}{'warm make demo':>16}{'venv MB':>10}{'packages':>10}")
    for row in rows:
        print(f"{row['commit']:<14}{row['cold']:>15.1f}s{row['warm']:>15.1f}s{row['venv_mb']:>10.0f}{row['packages']:>10}")
    if len(rows) == 2:
        new, old = rows
        print(
            f"ratio new/before: cold {new['cold'] / old['cold']:.2f}, warm {new['warm'] / old['warm']:.2f}, "
            f"venv {new['venv_mb'] / old['venv_mb']:.2f} (target: cold and venv at most 0.5)"
        )


if __name__ == "__main__":
    main()
