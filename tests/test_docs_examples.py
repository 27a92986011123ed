"""Every shell example of the docs site runs as printed on a fresh demo.

The examples are the docs' fenced blocks, read in the site's navigation order (mkdocs.yml):

- a block fenced ```sh is runnable on the demo: it runs, in order, with bash, and must exit 0 without
  a traceback;
- a shell block that cannot run on the demo says why in its title, which the site shows above it:
  ```sh title="Not on the demo: needs an OpenAI key"; it is read, never run.

The demo is `make demo-data`'s (migrate and load_demo) in a temporary SQLite database, with the demo's
settings (the Makefile's DEMO_ENV) and its loopback judge endpoint pointing at the tests' fake
OpenAI-compatible server (tests/llm_server.py) on a free port. The commands run in a temporary folder
that links the checkout's files, so the files they write land there, not in the checkout. Its
`.venv/bin/python` hands `manage.py` commands to a pre-started Django (tests/command_server.py), which
runs each in a fork of itself: about ninety commands would otherwise spend 1.5-3 s of CPU each
starting Python and Django.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests import command_server
from tests.llm_server import FakeLLM

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
NOT_ON_DEMO = 'title="Not on the demo: '
SHELL_LANGUAGES = ("sh", "bash", "shell", "console", "zsh")
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^`]*)$")
COMMAND_LINE = re.compile(r"^\s*(\.venv/bin/)?python3? (manage\.py|-m |bench/)")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    info: str
    text: str

    @property
    def language(self) -> str:
        return self.info.split()[0] if self.info.split() else ""

    @property
    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"


def nav_pages() -> list[str]:
    """The pages of mkdocs.yml's navigation, in order."""
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    pages: list[str] = []

    def walk(items):
        for item in items:
            for value in item.values() if isinstance(item, dict) else [item]:
                if isinstance(value, list):
                    walk(value)
                else:
                    pages.append(value)

    walk(nav)
    return pages


def blocks(page: str) -> list[Block]:
    found, lines = [], (DOCS / page).read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening:
            indent, body = opening["indent"], []
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
                j += 1
            found.append(Block(page, i + 1, opening["info"].strip(), "\n".join(body)))
            i = j
        i += 1
    return found


def all_blocks() -> list[Block]:
    return [block for page in nav_pages() for block in blocks(page)]


def runnable(block: Block) -> bool:
    return block.info == "sh"


def test_it_reads_the_examples_in_navigation_order():
    pages = nav_pages()
    assert pages[:3] == ["index.md", "getting-started.md", "annotators.md"]
    assert all((DOCS / page).exists() for page in pages)
    examples = [block for block in all_blocks() if runnable(block)]
    assert examples[0].page == "getting-started.md"
    assert len(examples) >= 20


def test_it_marks_every_shell_block_runnable_or_says_why_not():
    wrong = []
    for block in all_blocks():
        if block.language in SHELL_LANGUAGES and not runnable(block):
            if block.language != "sh" or NOT_ON_DEMO not in block.info:
                wrong.append(f"{block.where}: ```{block.info}")
        elif block.language not in SHELL_LANGUAGES and any(COMMAND_LINE.match(line) for line in block.text.splitlines()):
            wrong.append(f"{block.where}: a command in a ```{block.info or '(no language)'} block")
    assert not wrong, 'fence these ```sh (runnable on the demo) or ```sh title="Not on the demo: why":\n' + "\n".join(wrong)


def test_it_prints_commands_as_they_run():
    """No alternatives (`a|b`) or optional flags (`[--x]`) inside a command, and never a bare `python`."""
    wrong = []
    for block in all_blocks():
        if block.language != "sh":
            continue
        for number, line in enumerate(block.text.splitlines()):
            command = line.split(" #")[0]
            if re.search(r"(^|\s)python3? manage\.py", command) and ".venv/bin/python manage.py" not in command:
                wrong.append(f"{block.where}+{number + 1}: bare python: {line.strip()}")
            if re.search(r"\s\[--?[a-z]", command) or re.search(r"\s--[a-z-]+ [a-z-]+\|[a-z-]+", command):
                wrong.append(f"{block.where}+{number + 1}: options or alternatives inside a command: {line.strip()}")
    assert not wrong, "\n".join(wrong)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A fresh demo (migrate + load_demo) in a temporary folder, with the loopback judge server running."""
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        # The demo is always SQLite (make demo's): CI's second run of the suite, on PostgreSQL, would repeat it.
        pytest.skip("the docs examples run on the demo's SQLite, in the suite's SQLite run")
    work = tmp_path_factory.mktemp("demo")
    for entry in REPO.iterdir():
        if entry.name not in {".venv", "db.sqlite3", "site", ".git", ".demo-secret-key"} and not entry.name.startswith("db.sqlite3"):
            (work / entry.name).symlink_to(entry)
    real_python = str(REPO / ".venv" / "bin" / "python")
    socket_path = str(work / "commands.sock")
    shim = work / ".venv" / "bin" / "python"
    shim.parent.mkdir(parents=True)
    shim.write_text(command_server.shim_text(real_python=real_python, socket_path=socket_path))
    shim.chmod(0o755)
    with FakeLLM() as server:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "PYTEST_"))}
        env.update(
            DATABASE_URL=f"sqlite:///{work / 'demo.sqlite3'}",
            SECRET_KEY="docs-examples-not-secret",
            DEBUG="0",
            # The demo's settings (Makefile DEMO_ENV), its loopback endpoint on the fake server's port.
            JUDGE_ALLOW_ADDRESSES="127.0.0.1",
            LOOPBACK_API_KEY="demo-loopback-key",
            JUDGE_ENDPOINTS=f"openai https://api.openai.com/v1 OPENAI_API_KEY, loopback {server.base_url} LOOPBACK_API_KEY",
            CALIBRATION_ROUNDS="200",
        )
        for step in (["migrate", "--noinput"], ["load_demo"]):
            result = subprocess.run([real_python, "manage.py", *step], cwd=work, env=env, capture_output=True, text=True)
            assert result.returncode == 0, result.stdout + result.stderr
        commands = subprocess.Popen([real_python, "-m", "tests.command_server", socket_path], cwd=REPO, env=env)
        try:
            deadline = time.monotonic() + 300
            while not os.path.exists(socket_path):
                assert commands.poll() is None and time.monotonic() < deadline, "the command server did not start"
                time.sleep(0.2)
            yield work, env
        finally:
            commands.terminate()
            commands.wait(timeout=30)


def test_it_hands_manage_py_to_the_started_django_with_its_exit_status(demo):
    work, env = demo
    refused = subprocess.run(
        ["bash", "-c", ".venv/bin/python manage.py create_campaign --name no-such --criteria no-such --systems wikipedia"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "no-such" in refused.stdout + refused.stderr
    listed = subprocess.run(
        ["bash", "-c", ".venv/bin/python manage.py help | grep -c load_demo"], cwd=work, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0 and listed.stdout.strip() == "1"
    # Another environment than the server's, or not manage.py: the real interpreter runs it.
    other = subprocess.run(
        ["bash", "-c", "CALIBRATION_ROUNDS=-5 .venv/bin/python manage.py help; .venv/bin/python -c 'print(6 * 7)'"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert "CALIBRATION_ROUNDS must be a whole number" in other.stdout + other.stderr and other.stdout.strip().endswith("42")


def test_it_runs_every_runnable_example_in_order_on_the_demo(demo):
    work, env = demo
    examples = [block for block in all_blocks() if runnable(block)]
    timings, failures = [], []
    for block in examples:
        started = time.monotonic()
        result = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=work, env=env, capture_output=True, text=True, timeout=300
        )
        timings.append((time.monotonic() - started, block.where))
        output = result.stdout + result.stderr
        failed = result.returncode != 0 or "Traceback" in output
        print(f"{timings[-1][0]:6.1f} s {block.where} {'FAILED' if failed else 'ok'}", flush=True)
        if failed:
            failures.append(f"{block.where} (exit {result.returncode}):\n{block.text}\n---\n{output[-2000:]}")
    print("slowest examples:", [f"{seconds:.1f} s {where}" for seconds, where in sorted(timings, reverse=True)[:5]])
    assert not failures, f"{len(failures)} of {len(examples)} examples failed:\n\n" + "\n\n".join(failures)
