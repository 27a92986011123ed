"""Memory of `make serve` at rest: the proportional set size (PSS) of gunicorn's processes and the task worker.

    python bench/serve_memory.py [--workers 5] [--threads 2] [--settle 5]

Starts `config/serve.sh` (what `make serve` runs) on a free port with a throw-away SQLite database,
waits for the login page, asks for it and a few other pages once per worker so that every process
has served a request, waits `--settle` seconds, then reads `/proc/<pid>/smaps_rollup` of every
process in the server's session. PSS counts a page shared by k processes as 1/k in each, so the sum
is what the server really holds (RSS would count shared pages once per process). Prints each process
and the total in MB (issue 41's target: at most 600 MB for 5 workers and the task worker), then stops
the server. Linux only.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_MB = 600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return None


def session_processes(sid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) != sid:
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (ProcessLookupError, FileNotFoundError, PermissionError):
            continue
        found.append((int(entry.name), command))
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--settle", type=float, default=5.0)
    args = parser.parse_args()
    python = ROOT / ".venv" / "bin" / "python"
    port = free_port()
    with tempfile.TemporaryDirectory() as work:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{work}/serve.sqlite3",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "DEBUG": "0",
            "PORT": str(port),
            "WEB_WORKERS": str(args.workers),
            "WEB_THREADS": str(args.threads),
            "LOG_LEVEL": "WARNING",
        }
        log = open(Path(work) / "serve.log", "w")
        server = subprocess.Popen(
            ["bash", "config/serve.sh", str(python)], cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 180
            while True:
                try:
                    urllib.request.urlopen(f"{base}/accounts/login/", timeout=5).read()
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        sys.exit(f"the server did not come up; see its log:\n{(Path(work) / 'serve.log').read_text()[-2000:]}")
                    time.sleep(0.5)
            for _ in range(args.workers * 3):
                for path in ("/accounts/login/", "/static/app.css", "/no-such-page/"):
                    try:
                        urllib.request.urlopen(f"{base}{path}", timeout=10).read()
                    except OSError:
                        pass  # the missing page answers 404, which urllib raises
            time.sleep(args.settle)
            rows = [(pid, command, pss_kb(pid)) for pid, command in session_processes(server.pid)]
            rows = [row for row in rows if row[2] is not None]
            total = sum(kb for _, _, kb in rows) / 1024
            print(f"make serve at rest: {args.workers} gunicorn workers x {args.threads} threads and the task worker")
            for pid, command, kb in rows:
                print(f"  {kb / 1024:7.1f} MB  pid {pid}  {command[:90]}")
            verdict = "met" if total <= TARGET_MB else "NOT met"
            print(f"  total PSS {total:.0f} MB over {len(rows)} processes | target <= {TARGET_MB} MB: {verdict}")
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
            log.close()


if __name__ == "__main__":
    main()
