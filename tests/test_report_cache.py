"""One cache for every web process, and one process computing each report (issue 21, item 5).

The default cache is Django's database cache (its table made by a migration); with REDIS_URL,
Redis. Either way, when several threads or processes ask for the same report at once, one
computes it and the others wait for its result: real threads and real processes here, on the
database cache (SQLite or PostgreSQL, as the suite runs) and on the Redis at 127.0.0.1:6379.
"""

import logging
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import connection, connections
from django.test import override_settings

from annotate.models import Campaign
from calibration import cache as report_cache
from calibration.report.build import report_cached
from tests.helpers import run
from tests.test_import_any_group import votes, write

REPO = Path(__file__).resolve().parents[1]
REDIS = ("127.0.0.1", 6379)


def redis_up() -> bool:
    try:
        socket.create_connection(REDIS, timeout=0.5).close()
        return True
    except OSError:
        return False


def redis_cache():
    # A prefix of our own: the server may be shared.
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/0",
            "KEY_PREFIX": f"test-{uuid.uuid4().hex}",
        }
    }


@pytest.fixture(params=["database", "redis"])
def backend(request, transactional_db):
    """The cache under test: the settings' database cache, or Redis."""
    if request.param == "redis":
        if not redis_up():
            pytest.skip("no Redis on 127.0.0.1:6379")
        with override_settings(CACHES=redis_cache()):
            yield "redis"
            cache.clear()
        return
    assert settings.CACHES["default"]["BACKEND"] == "django.core.cache.backends.db.DatabaseCache"
    cache.clear()
    yield "database"
    cache.clear()


def in_threads(n: int, work) -> list:
    """`work()` in `n` threads started together; their results (or exceptions), in order."""
    barrier = threading.Barrier(n)
    results: list = [None] * n

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work()
        except Exception as exc:  # noqa: BLE001 (handed back to the test)
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_it_uses_the_database_cache_by_default_and_its_table_exists(transactional_db):
    assert settings.CACHES["default"]["BACKEND"] == "django.core.cache.backends.db.DatabaseCache"
    assert settings.CACHE_TABLE in connection.introspection.table_names()
    cache.set("probe", {"a": 1})
    assert cache.get("probe") == {"a": 1}


def test_it_computes_once_when_threads_ask_at_once(backend):
    calls = []

    def build():
        calls.append(threading.get_ident())
        time.sleep(0.5)  # long enough for every other thread to find the lock taken
        return {"value": 42}

    parts = ("probe", backend, uuid.uuid4().hex)
    results = in_threads(4, lambda: report_cache.computed_once(parts, build, what="probe"))

    assert results == [{"value": 42}] * 4
    assert len(calls) == 1


def test_it_lets_a_waiter_compute_when_the_holder_fails(backend):
    calls = []

    def build():
        calls.append(1)
        if len(calls) == 1:
            time.sleep(0.3)
            raise RuntimeError("the first computation failed")
        return "second"

    parts = ("probe-fail", backend, uuid.uuid4().hex)
    results = in_threads(2, lambda: report_cache.computed_once(parts, build, what="probe"))

    assert sorted(map(repr, results)) == sorted([repr(RuntimeError("the first computation failed")), repr("second")])
    assert len(calls) == 2


def test_it_takes_over_a_lock_left_by_a_dead_process(backend, monkeypatch):
    """A worker killed while computing leaves its lock; it expires and the next asker computes."""
    monkeypatch.setattr(report_cache, "LOCK_SECONDS", 1)
    parts = ("probe-dead", backend, uuid.uuid4().hex)
    cache.add(report_cache.cache_key(parts) + ":lock", "a dead worker's token", 1)
    started = time.monotonic()

    value = report_cache.computed_once(parts, lambda: "mine", what="probe")

    assert value == "mine"
    assert 0.9 < time.monotonic() - started < 10


@pytest.fixture
def labelled(tmp_path):
    """A labels-only campaign of 40 crowd votes and a judge's verdicts on the same battles."""
    assert run("create_campaign", "--name", "crowd", "--labels-only").code == 0
    rows = votes(20)
    judged = [
        {**row, "rater": "gpt-4o", "rater_kind": "judge", "winner_system": row["left_system"]} for row in rows if row["rater"] == "crowd_1"
    ]
    path = write(tmp_path / "votes.csv", [{**row, "rater_kind": "human"} for row in rows] + judged)
    assert run("import_labels", "--campaign", "crowd", str(path)).code == 0
    return Campaign.objects.get(name="crowd")


def test_it_computes_one_report_for_threads_asking_for_it_together(backend, labelled, caplog):
    campaign = labelled
    caplog.set_level(logging.INFO, logger="calibration.cache")

    results = in_threads(3, lambda: report_cached(campaign, rounds=2000))

    assert all(isinstance(r, dict) for r in results), results
    assert len({r["generated_at"] for r in results}) == 1
    computed = [r for r in caplog.records if r.getMessage().startswith("computed the report")]
    waited = [r for r in caplog.records if r.getMessage().startswith("waited")]
    # One computes; the others wait for it (or, started late on a busy machine, find it stored).
    assert len(computed) == 1
    assert len(waited) <= 2


def database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


ASK = """
import logging, sys, time
import django
django.setup()
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
from annotate.models import Campaign
from calibration.report.build import report_cached
campaign = Campaign.objects.get(pk=int(sys.argv[1]))
print("ready", flush=True)
sys.stdin.readline()
report_cached(campaign, rounds=int(sys.argv[2]))
"""


@pytest.mark.parametrize("cache_backend", ["database", "redis"])
def test_it_computes_one_report_for_processes_asking_for_it_together(transactional_db, labelled, cache_backend):
    """Two web processes (here: two Python processes on the test database) ask at once; one computes."""
    env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "config.settings", "LOG_LEVEL": "INFO"}
    if cache_backend == "redis":
        if not redis_up():
            pytest.skip("no Redis on 127.0.0.1:6379")
        env["REDIS_URL"] = "redis://127.0.0.1:6379/0"
    campaign = labelled
    rounds = 2000 + int(uuid.uuid4().int % 1000)  # a key no other run has used, and long enough to be waited for
    children = [
        subprocess.Popen(
            [sys.executable, "-c", ASK, str(campaign.pk), str(rounds)],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for child in children:
            while (line := child.stdout.readline()) and line.strip() != "ready":
                pass
            assert line.strip() == "ready"
        for child in children:
            child.stdin.write("go\n")
            child.stdin.flush()
        outputs = [child.communicate(timeout=300)[0] for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
    assert all(child.returncode == 0 for child in children), outputs
    said = "\n".join(outputs)
    # One computes; the other waits for it (or, started late on a busy machine, finds it stored).
    assert said.count("computed the report") == 1, said


def test_it_reads_redis_from_redis_url_and_refuses_a_bad_one():
    code = "from django.conf import settings; print(settings.CACHES['default']['BACKEND'], settings.CACHES['default']['LOCATION'])"
    base = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "x", "DEBUG": "0"}
    good = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); " + code],
        cwd=REPO,
        env={**base, "REDIS_URL": "redis://127.0.0.1:6379/3"},
        capture_output=True,
        text=True,
    )
    assert good.stdout.split() == ["django.core.cache.backends.redis.RedisCache", "redis://127.0.0.1:6379/3"], good.stderr
    bad = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=REPO,
        env={**base, "REDIS_URL": "127.0.0.1:6379"},
        capture_output=True,
        text=True,
    )
    assert bad.returncode != 0
    assert "REDIS_URL must start with redis://, rediss:// or unix://, got '127.0.0.1:6379'" in bad.stderr
