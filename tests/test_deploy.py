"""Serving as on a server: settings from the environment, `check --deploy`, `make serve`'s script
(gunicorn, whitenoise and the task worker, stopped together) and login throttling (django-axes)."""

import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.urls import reverse

from config.settings import client_ip_behind_proxy, env_int
from tests.conftest import REPO
from tests.helpers import run

# Every variable these tests set, and one the browser test sets in this process: a developer's
# or another test's values must not leak into the subprocesses.
SERVER_VARIABLES = {
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "SECURE_SSL_REDIRECT",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "TRUST_PROXY_HEADERS",
    "DATABASE_URL",
    "CONN_MAX_AGE",
    "STATIC_ROOT",
    "LOG_LEVEL",
    "AXES_FAILURE_LIMIT",
    "AXES_IP_FAILURE_LIMIT",
    "AXES_COOLOFF_MINUTES",
    "HOST",
    "PORT",
    "WEB_WORKERS",
    "WEB_THREADS",
    "FORWARDED_ALLOW_IPS",
}
# The values README "Deploy" documents for `check --deploy` (plus a fresh SECRET_KEY).
DOCUMENTED = {
    "DEBUG": "0",
    "ALLOWED_HOSTS": "pairwise.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://pairwise.example.org",
    "TRUST_PROXY_HEADERS": "1",
    "SECURE_SSL_REDIRECT": "1",
    "SESSION_COOKIE_SECURE": "1",
    "CSRF_COOKIE_SECURE": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
}


def environment(**values: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in SERVER_VARIABLES}
    return {**env, "DJANGO_SETTINGS_MODULE": "config.settings", **values}


def python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()\n" + code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


# --- settings from the environment ------------------------------------------------------------


def test_it_reads_whole_numbers_and_refuses_anything_else(monkeypatch):
    monkeypatch.setenv("SOME_SECONDS", " 42 ")
    assert env_int("SOME_SECONDS", 7) == 42
    monkeypatch.setenv("SOME_SECONDS", "")
    assert env_int("SOME_SECONDS", 7) == 7
    for bad in ["a year", "1.5", "-1"]:
        monkeypatch.setenv("SOME_SECONDS", bad)
        with pytest.raises(ImproperlyConfigured, match="SOME_SECONDS must be a whole number of at least 0"):
            env_int("SOME_SECONDS", 7)
    monkeypatch.setenv("SOME_LIMIT", "0")
    with pytest.raises(ImproperlyConfigured, match="at least 1, got '0'"):
        env_int("SOME_LIMIT", 5, minimum=1)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SECURE_HSTS_SECONDS", "one year", "SECURE_HSTS_SECONDS must be a whole number"),
        ("SECURE_SSL_REDIRECT", "sometimes", "SECURE_SSL_REDIRECT must be true or false"),
        ("AXES_FAILURE_LIMIT", "0", "AXES_FAILURE_LIMIT must be a whole number of at least 1"),
        ("LOG_LEVEL", "loud", "LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL"),
    ],
)
def test_it_refuses_to_start_with_a_bad_value(name, value, message):
    result = python("", environment(SECRET_KEY="x", DEBUG="0", **{name: value}))
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and message in result.stderr


REPORT = """
from django.conf import settings as s
print(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS,
      s.SECURE_PROXY_SSL_HEADER, s.USE_X_FORWARDED_HOST, s.CSRF_TRUSTED_ORIGINS, s.DATABASES["default"]["CONN_MAX_AGE"],
      s.DATABASES["default"]["CONN_HEALTH_CHECKS"], s.AXES_FAILURE_LIMIT, s.AXES_COOLOFF_TIME, s.AXES_CLIENT_IP_CALLABLE is not None)
"""


def test_it_keeps_local_defaults_without_https_or_proxy():
    result = python(REPORT, environment(SECRET_KEY="x", DEBUG="0"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False", "False", "0", "None", "False", "[]", "0", "True", "5", "0:15:00", "False"]


def test_it_reads_the_server_values_and_keeps_postgresql_connections():
    env = environment(
        **DOCUMENTED,
        SECRET_KEY="x",
        DATABASE_URL="postgres://pairwise@db.example.org:5432/pairwise",
        AXES_FAILURE_LIMIT="3",
        AXES_COOLOFF_MINUTES="60",
    )
    result = python(REPORT, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "True",
        "True",
        "True",
        "31536000",
        "('HTTP_X_FORWARDED_PROTO',",
        "'https')",
        "True",
        "['https://pairwise.example.org']",
        "60",
        "True",
        "3",
        "1:00:00",
        "True",
    ]


# --- check --deploy ---------------------------------------------------------------------------


def test_it_passes_check_deploy_with_the_documented_values():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=environment(**DOCUMENTED, SECRET_KEY=secrets.token_urlsafe(50)))
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_it_fails_check_deploy_with_the_local_defaults():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=environment(SECRET_KEY="short", DEBUG="0"))
    assert result.returncode == 1
    for warning in ["security.W004", "security.W008", "security.W009", "security.W012", "security.W016"]:
        assert warning in result.stderr, warning


# --- config/serve.sh, the path of `make serve` and `make demo` ------------------------------------

SERVE = ["bash", "config/serve.sh", sys.executable]
# What the web does when staff start a judge run: queue it for the worker.
QUEUE_A_JUDGE_RUN = """
from django.core.management import call_command
call_command("migrate", verbosity=0)
call_command("load_demo", verbosity=0)
call_command("add_judge", "longer", "--kind", "length")
from annotate.models import Campaign
from judges.models import Judge
from judges.services import judge_run_start
judge_run_start(campaign=Campaign.objects.get(name="Demo campaign"), judge=Judge.objects.get(name="longer"))
"""


@dataclass
class Site:
    url: str
    process: subprocess.Popen
    database: Path
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def session_members(session_id: int) -> list[int]:
    """Processes in a session: the script and everything it started, in whatever process group."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session_id:
            members.append(int(stat.parent.name))
    return members


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs Linux's /proc to see the served processes")
    workdir = tmp_path_factory.mktemp("served")
    database = workdir / "site.sqlite3"
    env = environment(
        SECRET_KEY=secrets.token_urlsafe(50),
        DATABASE_URL=f"sqlite:///{database}",
        STATIC_ROOT=str(workdir / "static"),
        HOST="127.0.0.1",
        PORT=str(free_port()),
        WEB_WORKERS="1",
        WEB_THREADS="2",
    )
    prepared = python(QUEUE_A_JUDGE_RUN, env)
    assert prepared.returncode == 0, prepared.stderr
    log = workdir / "serve.log"
    with log.open("w") as out:
        # Its own session, so that the test can find every process it starts.
        process = subprocess.Popen(SERVE, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    served = Site(f"http://127.0.0.1:{env['PORT']}", process, database, log)
    deadline = time.monotonic() + 90
    while True:
        assert process.poll() is None, served.output()
        try:
            if fetch(served.url + "/accounts/login/")[0] == 200:
                break
        except OSError:
            pass
        assert time.monotonic() < deadline, served.output()
        time.sleep(0.5)
    yield served
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=45)
        except subprocess.TimeoutExpired:
            pass
    for pid in session_members(process.pid):
        os.kill(pid, signal.SIGKILL)


def test_it_refuses_to_serve_without_a_secret_key(tmp_path):
    database = tmp_path / "never.sqlite3"
    result = subprocess.run(
        SERVE, cwd=REPO, env=environment(DATABASE_URL=f"sqlite:///{database}"), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "SECRET_KEY is not set" in result.stderr
    assert not database.exists()


def test_it_serves_pages_with_debug_off(site):
    status, _, body = fetch(site.url + "/accounts/login/")
    assert status == 200 and b"Log in" in body
    status, _, body = fetch(site.url + "/no-such-page/")
    assert status == 404
    assert b"DEBUG = True" not in body and b"URLconf" not in body


def test_it_serves_collected_static_files_by_hashed_and_plain_name(site):
    _, _, login_page = fetch(site.url + "/accounts/login/")
    hashed = login_page.decode().split('href="/static/app.', 1)[1].split('"', 1)[0]
    assert hashed.count(".") == 1 and hashed.endswith(".css"), hashed
    status, headers, body = fetch(f"{site.url}/static/app.{hashed}", {"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["Content-Type"].startswith("text/css")
    assert headers.get("Content-Encoding") == "gzip"
    assert "immutable" in headers["Cache-Control"]
    status, headers, body = fetch(site.url + "/static/app.css")
    assert status == 200 and b"{" in body
    assert "immutable" not in headers["Cache-Control"]


def test_it_runs_judge_runs_queued_on_the_web_in_the_worker_beside_gunicorn(site):
    deadline = time.monotonic() + 90
    status = None
    while time.monotonic() < deadline:
        with sqlite3.connect(site.database) as database:
            (status,) = database.execute("SELECT status FROM judges_judgerun").fetchone()
        if status == "finished":
            break
        time.sleep(0.5)
    assert status == "finished", site.output()


def test_it_stops_gunicorn_and_the_worker_together_on_term(site):
    assert site.process.poll() is None, site.output()
    assert len(session_members(site.process.pid)) >= 4  # the script, the worker, gunicorn and its worker
    # To the script alone, as `kill PID` would: it passes the stop on.
    site.process.send_signal(signal.SIGTERM)
    assert site.process.wait(timeout=45) == 0, site.output()
    assert session_members(site.process.pid) == [], site.output()
    assert "Handling signal: term" in site.output()


# --- login throttling ------------------------------------------------------------------------


def log_in(client: Client, username: str, password: str):
    return client.post(reverse("login"), {"username": username, "password": password})


@pytest.fixture
def throttle(settings):
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    return settings


def lock_out(client: Client, username: str, limit: int):
    for _ in range(limit - 1):
        assert log_in(client, username, "wrong").status_code == 200
    return log_in(client, username, "wrong")


@pytest.mark.django_db
def test_it_locks_a_username_after_failed_logins_even_for_the_right_password(client, alice, throttle):
    locked = lock_out(client, "alice", throttle.AXES_FAILURE_LIMIT)
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.text and "Try again in 15 minutes." in locked.text
    right = log_in(client, "alice", "alice-password")
    assert right.status_code == 429
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_it_leaves_colleagues_and_other_addresses_alone(client, alice, bob, throttle):
    assert lock_out(client, "alice", throttle.AXES_FAILURE_LIMIT).status_code == 429
    same_address = Client()
    assert log_in(same_address, "bob", "bob-password").status_code == 302
    elsewhere = Client(REMOTE_ADDR="10.0.0.2")
    assert log_in(elsewhere, "alice", "alice-password").status_code == 302


@pytest.mark.django_db
def test_it_unlocks_a_username_with_axes_reset_username(client, alice, throttle):
    assert lock_out(client, "alice", throttle.AXES_FAILURE_LIMIT).status_code == 429
    result = run("axes_reset_username", "alice")
    assert result.code == 0 and "attempts removed" in result.out
    assert log_in(client, "alice", "alice-password").status_code == 302


@pytest.mark.django_db
def test_it_tells_clients_apart_by_the_address_the_proxy_saw(alice, throttle):
    throttle.AXES_CLIENT_IP_CALLABLE = client_ip_behind_proxy
    behind_proxy = Client(HTTP_X_FORWARDED_FOR="203.0.113.5, 198.51.100.7")
    assert lock_out(behind_proxy, "alice", throttle.AXES_FAILURE_LIMIT).status_code == 429
    # The first entries are the client's own word: changing them does not escape the lock.
    assert log_in(Client(HTTP_X_FORWARDED_FOR="192.0.2.1, 198.51.100.7"), "alice", "alice-password").status_code == 429
    assert log_in(Client(HTTP_X_FORWARDED_FOR="198.51.100.8"), "alice", "alice-password").status_code == 302


def test_it_falls_back_to_the_peer_address_when_the_proxy_header_is_unusable(rf):
    assert client_ip_behind_proxy(rf.get("/", HTTP_X_FORWARDED_FOR="unknown", REMOTE_ADDR="10.1.2.3")) == "10.1.2.3"
    assert client_ip_behind_proxy(rf.get("/", REMOTE_ADDR="10.1.2.3")) == "10.1.2.3"
    assert client_ip_behind_proxy(rf.get("/", HTTP_X_FORWARDED_FOR="2001:db8::1")) == "2001:db8::1"
