"""A pre-started `manage.py` for tests that run many commands as a shell runs them (tests/test_docs_examples.py).

Each `.venv/bin/python manage.py ...` of a docs example would start Python and Django again, 1.5-3 s of
CPU before the command does anything; the docs run about ninety. Here one process imports Django, the
settings and every command once, then forks a child per command: the child takes the caller's working
folder, arguments and standard input, output and error (passed as file descriptors over a Unix socket),
runs `manage.py`'s own `main()` and reports its exit status. The shell, its pipes and redirections, the
files and the database are the real ones; only the interpreter's start-up is shared.

`shim_text()` is the `python` the examples call: it sends `manage.py` commands here and runs anything
else (or a command whose environment differs from the server's, since the settings were read at start)
with the real interpreter.

    .venv/bin/python -m tests.command_server SOCKET   # serves until killed; the environment is the commands'
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import signal
import socket
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Variables a shell sets by itself; any other difference from the server's environment runs the real interpreter.
SHELL_VARIABLES = {"PWD", "OLDPWD", "SHLVL", "_"}
PRELOAD = ("common", "protocols", "annotate", "judges", "calibration")
FALLBACK = 255 + 1  # not an exit status: "run it with the real interpreter"


def comparable(env: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in env.items() if key not in SHELL_VARIABLES}


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    return json.loads(message), fds


def _run_command(request: dict, fds: list[int]) -> int:
    """In the forked child: become the caller's process and run manage.py's main()."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    sys.argv = request["argv"]
    import manage

    try:
        manage.main()
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if isinstance(exit_.code, str):
            sys.stderr.write(exit_.code + "\n")
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (BrokenPipeError, OSError):
                pass
    return code


def serve(path: str) -> None:
    baseline = comparable(dict(os.environ))  # before anything here sets a variable
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(REPO))
    import django
    from django.core.management import get_commands, load_command_class
    from django.db import connections

    django.setup()
    for name, app in get_commands().items():
        load_command_class(app, name)
    # What the commands import when they run (reports, statistics, judges): once here rather than in every child.
    for package in PRELOAD:
        for module in pkgutil.walk_packages(importlib.import_module(package).__path__, f"{package}."):
            if ".migrations" not in module.name and ".management" not in module.name:
                importlib.import_module(module.name)
    import manage  # noqa: F401

    connections.close_all()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel; they report through the socket
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(path)
    server.listen(8)
    sys.stdout.flush()
    sys.stderr.flush()
    while True:
        connection, _ = server.accept()
        if os.fork() == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the command's own subprocesses are waited for as usual
            server.close()
            request, fds = _receive(connection)
            if comparable(request["env"]) != baseline:
                code = FALLBACK
            else:
                try:
                    code = _run_command(request, fds)
                except BaseException as exc:  # noqa: BLE001 - the caller must always get a status
                    print(f"command server: {exc!r}", file=sys.stderr)
                    code = 1
            connection.sendall(struct.pack("!i", code))
            os._exit(0)
        connection.close()


def shim_text(*, real_python: str, socket_path: str) -> str:
    """The `.venv/bin/python` of the examples' working folder."""
    return f"""#!{real_python} -IS
import json, os, socket, struct, sys
REAL = {real_python!r}
args = sys.argv[1:]
if args[:1] == ["manage.py"] and os.path.exists({socket_path!r}):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    client.connect({socket_path!r})
    request = {{"argv": args, "cwd": os.getcwd(), "env": dict(os.environ)}}
    socket.send_fds(client, [json.dumps(request).encode()], [0, 1, 2])
    answer = b""
    while len(answer) < 4:
        chunk = client.recv(4 - len(answer))
        if not chunk:
            sys.exit("command server: no answer")
        answer += chunk
    code = struct.unpack("!i", answer)[0]
    if code != {FALLBACK}:
        sys.exit(code)
os.execv(REAL, [REAL, *args])
"""


if __name__ == "__main__":
    serve(sys.argv[1])
