"""The README's commands as a new user runs them: no setting is needed for commands that serve
nothing, a missing or bad setting is one line naming the variable (never a traceback), and
set-password links are signed with the demo site's key after `make demo`."""

import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO

# What a shell without any of the project's settings looks like.
UNSET = ("SECRET_KEY", "DEBUG", "DATABASE_URL", "CALIBRATION_ROUNDS", "PUBLIC_BASE_URL")


def manage(*args: str, cwd=REPO, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    import os

    base = {k: v for k, v in os.environ.items() if k not in UNSET}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=cwd, env={**base, **(env or {})}, capture_output=True, text=True, timeout=timeout
    )


def test_it_runs_commands_that_serve_nothing_without_secret_key(clone):
    assert not (clone / ".demo-secret-key").exists()  # no key at all, not even the demo's (the fixture migrated already)

    imported = manage("import_criteria", "fixtures/criteria/wiki_writing.json", cwd=clone)
    exported = manage("export_articles", "--out", str(clone / "articles.jsonl"), cwd=clone)

    assert imported.returncode == 0 and "criteria" in imported.stdout + imported.stderr, imported.stderr
    assert exported.returncode == 0, exported.stderr


@pytest.mark.parametrize(
    "variable, value",
    [
        ("CALIBRATION_ROUNDS", "-5"),
        ("CALIBRATION_ROUNDS", "many"),
        ("MAX_ARTICLE_BYTES", "0"),
        ("DEBUG", "maybe"),
        ("CONN_MAX_AGE", "-1"),
        ("LOG_LEVEL", "LOUD"),
        ("DATABASE_URL", "mongodb://127.0.0.1/pairwise"),
        ("PUBLIC_BASE_URL", "annotate.lab.example"),
        ("JUDGE_ALLOW_ADDRESSES", "the-lab-network"),
        ("JUDGE_API_KEY_ENVS", "SECRET_KEY"),
        ("JUDGE_ENDPOINTS", "openai https://api.openai.com/v1"),
        ("JUDGE_ENDPOINTS", "openai https://api.openai.com/v1 DATABASE_URL"),
        ("JUDGE_BASE_URL_HOSTS", "api.openai.com,*"),
    ],
)
def test_it_names_a_bad_setting_in_one_line(variable, value):
    done = manage("check", env={variable: value})

    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(variable)


def test_it_refuses_to_serve_without_secret_key_in_one_line():
    done = manage("runserver", "--noreload", timeout=60)

    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        done.stderr.strip()
        == "SECRET_KEY must be set in the environment to serve the site (DEBUG is off): it signs sessions and CSRF tokens."
    )


def test_it_reads_every_setting_through_the_helpers():
    source = (REPO / "config" / "settings.py").read_text(encoding="utf-8")

    assert "os.environ" not in source and not re.search(r"\b(int|float)\(", source)  # config/env.py reads and checks them all


@pytest.fixture
def clone(tmp_path):
    """The project's code without any key file or database: a checkout of its own."""
    root = tmp_path / "checkout"
    root.mkdir()
    for part in ("annotate", "calibration", "interchange", "judges", "config", "protocols", "common", "templates", "static", "fixtures"):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "manage.py", root)
    assert manage("migrate", "--noinput", "-v", "0", cwd=root).returncode == 0
    return root


def test_it_signs_set_password_links_with_the_demo_sites_key(clone):
    refused = manage("create_accounts", "ana", "--base-url", "http://127.0.0.1:8000", cwd=clone)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "SECRET_KEY is not set: create_accounts signs set-password links with it" in refused.stderr
    key = "demo-key-made-by-make-demo-5f1e9a"
    (clone / ".demo-secret-key").write_text(key + "\n", encoding="utf-8")

    made = manage("create_accounts", "ana", "--base-url", "http://127.0.0.1:8000", cwd=clone)

    assert made.returncode == 0, made.stderr
    uid, token = re.search(r"/accounts/reset/([^/]+)/([^/]+)/", made.stdout).groups()
    # The demo site is served with SECRET_KEY set to the file's key (the Makefile's DEMO_ENV): the link works there.
    check = (
        "from django.contrib.auth.tokens import default_token_generator as g; from django.contrib.auth.models import User; "
        "from django.utils.http import urlsafe_base64_decode as d; "
        f"print(g.check_token(User.objects.get(pk=d('{uid}').decode()), '{token}'))"
    )
    assert manage("shell", "-v", "0", "-c", check, cwd=clone, env={"SECRET_KEY": key}).stdout.strip() == "True"
    assert manage("shell", "-v", "0", "-c", check, cwd=clone, env={"SECRET_KEY": "another-key"}).stdout.strip() == "False"
