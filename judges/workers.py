"""Which process runs a judge run, and whether that process is gone. Plain Python, no Django.

A run records the identity of the process executing it (`this_worker`): host,
boot, pid namespace, pid, and the pid's start time. Another process can then
tell that it died (`worker_gone`) when both share a machine and a pid namespace
(the web server and the worker of `make serve`, a worker restarted in their
place): the pid no longer exists, is a zombie, or now names a process started
later. Elsewhere (another machine or container) it cannot tell, and says so by
answering False: the run's heartbeat decides there (judges/recovery.py).

Linux only; without /proc every identity is "" and nothing is ever judged gone.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

PROC = Path("/proc")
SEPARATOR = "|"


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _boot_id() -> str:
    return _read(PROC / "sys" / "kernel" / "random" / "boot_id")


def _pid_namespace() -> str:
    try:
        return os.readlink(PROC / "self" / "ns" / "pid")
    except OSError:
        return ""


def _process(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks after boot) of a process, None when there is none."""
    stat = _read(PROC / str(pid) / "stat")
    if not stat:
        return None
    # The command name, in parentheses, may hold spaces: the fields that follow it are plain.
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[0], fields[19]


def this_worker() -> str:
    """The identity of the calling process, "" where /proc is missing."""
    boot, namespace = _boot_id(), _pid_namespace()
    process = _process(os.getpid())
    if not boot or not namespace or process is None:
        return ""
    return SEPARATOR.join((socket.gethostname()[:64], boot, namespace, str(os.getpid()), process[1]))


def describe(worker: str) -> str:
    """A worker identity in words, for messages: "process 4242 on lab-server"."""
    parts = worker.split(SEPARATOR)
    return f"process {parts[3]} on {parts[0]}" if len(parts) == 5 else "its worker process"


def worker_gone(worker: str) -> bool:
    """True only when `worker` ran here (same boot and pid namespace) and that process has ended."""
    parts = worker.split(SEPARATOR)
    if len(parts) != 5 or not parts[1] or parts[1] != _boot_id() or parts[2] != _pid_namespace():
        return False
    try:
        pid = int(parts[3])
    except ValueError:
        return False
    process = _process(pid)
    return process is None or process[0] == "Z" or process[1] != parts[4]
