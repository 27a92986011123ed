"""The demo's judge settings reach its commands (issue 41): `make demo-data` writes .demo-env beside the
key file, and a command run without SECRET_KEY in the checkout reads it (config/env.py load_demo_env)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import load_demo_env

ROOT = Path(__file__).resolve().parents[1]


def test_it_sets_only_what_the_environment_leaves_unset(tmp_path, monkeypatch):
    monkeypatch.delenv("LOOPBACK_API_KEY", raising=False)
    monkeypatch.setenv("JUDGE_ALLOW_ADDRESSES", "10.0.0.1")
    path = tmp_path / ".demo-env"
    path.write_text("# the demo\nJUDGE_ALLOW_ADDRESSES=127.0.0.1\nLOOPBACK_API_KEY=demo-loopback-key\n", encoding="utf-8")
    assert load_demo_env(path) == ["LOOPBACK_API_KEY"]
    assert os.environ["LOOPBACK_API_KEY"] == "demo-loopback-key" and os.environ["JUDGE_ALLOW_ADDRESSES"] == "10.0.0.1"
    assert load_demo_env(tmp_path / "missing") == []


def test_it_refuses_a_variable_it_does_not_carry(tmp_path):
    path = tmp_path / ".demo-env"
    path.write_text("LOOPBACK_API_KEY=x\nSECRET_KEY=stolen\n", encoding="utf-8")
    with pytest.raises(ImproperlyConfigured, match=r"\.demo-env:2: expected NAME=value"):
        load_demo_env(path)


def test_it_gives_a_demo_checkouts_commands_the_demos_endpoints(tmp_path):
    # A checkout with the demo's two files and no SECRET_KEY in the environment: settings read both.
    # config/ is copied, not linked: settings find the checkout from their own file's path.
    shutil.copytree(ROOT / "config", tmp_path / "config", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("manage.py", "annotate", "judges", "calibration", "common", "protocols", "templates", "static", "fixtures"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / ".demo-secret-key").write_text("k" * 50, encoding="utf-8")
    (tmp_path / ".demo-env").write_text(
        "JUDGE_ALLOW_ADDRESSES=127.0.0.1\nLOOPBACK_API_KEY=demo-loopback-key\n"
        "JUDGE_ENDPOINTS=loopback http://127.0.0.1:8011/v1 LOOPBACK_API_KEY\n",
        encoding="utf-8",
    )
    env = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "config.settings"}
    probe = "import django; django.setup(); from django.conf import settings as s; print(s.SECRET_KEY_SOURCE, s.JUDGE_ENDPOINTS[0]['base_url'], s.JUDGE_ALLOW_ADDRESSES)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["demo", "key", "file", "http://127.0.0.1:8011/v1", "[IPv4Network('127.0.0.1/32')]"]
    # With SECRET_KEY set (a served site, the tests), the file is not read.
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={**env, "SECRET_KEY": "x" * 50}, capture_output=True, text=True)
    assert "8011" not in out.stdout
