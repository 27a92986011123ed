"""add_judge and run_judges, including a real kill of a running `manage.py run_judges` and its resumption."""

import io
import os
import signal
import sqlite3
import subprocess
import sys
from decimal import Decimal
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.core.management import call_command

from judges.models import Judge, JudgeCall, JudgeRun, JudgeUnit
from tests.conftest import REPO
from tests.helpers import run

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"
SECRET = "sk-test-do-not-leak-55e1b0"


def add_fake(server, *extra: str, name: str = "fake-gpt"):
    return run(
        "add_judge",
        name,
        "--model",
        "fake-judge",
        "--base-url",
        server.base_url,
        "--api-key-env",
        KEY_ENV,
        "--input-price",
        "2.5",
        "--output-price",
        "10",
        *extra,
    )


def test_it_adds_a_judge_and_refuses_the_same_name_without_update(db, llm_server):
    result = add_fake(
        llm_server,
        "--cached-input-price",
        "1.25",
        "--temperature",
        "0.2",
        "--max-tokens",
        "2000",
        "--per-criterion",
        "--no-structured-output",
    )

    assert result.code == 0, result.err
    assert f"read from ${KEY_ENV} when a run starts" in result.out
    judge = Judge.objects.get(name="fake-gpt")
    assert (judge.kind, judge.model, judge.base_url, judge.api_key_env) == ("llm", "fake-judge", llm_server.base_url, KEY_ENV)
    assert (judge.input_price, judge.cached_input_price, judge.output_price) == (Decimal("2.5"), Decimal("1.25"), Decimal(10))
    assert (judge.temperature, judge.max_tokens, judge.mode, judge.structured_output) == (0.2, 2000, "criterion", False)

    again = add_fake(llm_server, "--output-price", "20")
    assert again.code == 1 and "already exists; pass --update" in again.err
    assert Judge.objects.get(name="fake-gpt").output_price == 10

    updated = add_fake(llm_server, "--output-price", "20", "--update")
    assert updated.code == 0 and "updated" in updated.out
    judge.refresh_from_db()
    assert judge.output_price == 20 and judge.mode == "category" and judge.structured_output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--api-key-env", "sk-live-abc123"], "never the key itself"),
        (["--model", ""], "needs a model"),
        (["--base-url", "api.example.org"], "base URL starting with http"),
        (["--input-price", "-1"], "input price must be zero or more"),
    ],
)
def test_it_refuses_a_bad_judge(db, llm_server, args, message):
    result = add_fake(llm_server, *args)

    assert result.code == 1 and message in result.err
    assert not Judge.objects.exists()


def test_it_adds_an_offline_baseline(db):
    result = run("add_judge", "longer", "--kind", "length")

    assert result.code == 0, result.err
    assert Judge.objects.get(name="longer").kind == "length"


def test_it_runs_judges_with_progress_and_an_exact_summary(campaign, llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    add_fake(llm_server)
    run("add_judge", "longer", "--kind", "length")

    result = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--judge", "longer", "--limit", "4", "--concurrency", "3")

    assert result.code == 0, result.err
    fake = JudgeRun.objects.get(judge__name="fake-gpt")
    assert (fake.status, fake.units_done, fake.calls) == ("finished", 12, 12)
    assert f"fake-gpt: finished (run #{fake.pk}) — 12/12 units done, 0 in error, 0 pending; 12 calls (0 from the cache)" in result.out
    assert f"cost ${fake.cost_usd:.8f}" in result.out
    assert "longer: finished" in result.out and "cost $0.00000000" in result.out
    # Not a terminal: a line each time another tenth is done (answers are written in batches), ending at the total.
    lines = [line for line in result.err.splitlines() if line.startswith("fake-gpt [")]
    done = [int(line.split("] ")[1].split("/")[0]) for line in lines]
    assert 1 <= len(lines) <= 10 and done == sorted(set(done))
    assert lines[-1].startswith("fake-gpt [########################] 12/12 units, 0 errors")
    assert lines[-1].endswith(f"${fake.cost_usd:.4f}")


def test_it_shares_one_budget_between_the_judges(campaign, llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    add_fake(llm_server, "--input-price", "1000", "--output-price", "0")
    add_fake(llm_server, "--input-price", "1000", "--output-price", "0", name="fake-two")

    result = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--judge", "fake-two", "--budget-usd", "20")

    assert result.code == 0, result.err
    spent = sum(r.cost_usd for r in JudgeRun.objects.all())
    assert 0 < spent <= 20
    assert "total: $" in result.out and "of the $20 budget" in result.out
    assert "Stopped at the budget" in result.out


def test_it_estimates_a_dry_run_and_writes_nothing(campaign, llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    add_fake(llm_server)

    result = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--swap", "--dry-run")

    assert result.code == 0, result.err
    assert "fake-gpt: 48 of 48 units to judge, 48 requests (0 answered from the cache); estimated " in result.out
    assert "dry run: nothing was sent or written" in result.out
    assert llm_server.requests == []
    assert not (JudgeRun.objects.exists() or JudgeUnit.objects.exists() or JudgeCall.objects.exists())


def test_it_refuses_unknown_names(campaign):
    assert "No campaign named 'Nope'" in run("run_judges", "--campaign", "Nope", "--judge", "x").err
    assert "No judge named 'x'" in run("run_judges", "--campaign", "Pilot", "--judge", "x").err


def test_it_reports_a_failed_run_and_exits_non_zero(campaign, llm_server, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    add_fake(llm_server)

    result = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt")

    assert result.code == 1
    assert f"The environment variable {KEY_ENV} that should hold the API key is not set." in result.out
    assert "run(s) failed: fake-gpt" in result.err


def test_it_never_shows_or_stores_the_api_key(campaign, llm_server, monkeypatch, client, rachel):
    monkeypatch.setenv(KEY_ENV, SECRET)
    outputs = [add_fake(llm_server)]
    # A server that echoes the key in an error must not get it stored either.
    llm_server.script("truncated", "500", "not_json", "wrong_count", "bad_winner")
    outputs.append(run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--limit", "2", "--dry-run"))
    outputs.append(run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--limit", "2"))
    assert llm_server.requests, "the key was used"
    dump = io.StringIO()
    call_command("dumpdata", "judges", "annotate", "django_tasks_database", stdout=dump)
    client.force_login(rachel)
    pages = [client.get("/judges/").content.decode(), client.get(f"/judges/campaign/{campaign.pk}/").content.decode()]

    for text in [o.out + o.err for o in outputs] + [dump.getvalue()] + pages:
        assert SECRET not in text
    assert KEY_ENV in pages[0]  # the variable's name is shown, never its value


# --- a real kill -------------------------------------------------------------------------


def database_for_a_subprocess(tmp_path) -> str:
    """A DATABASE_URL holding what the test wrote (committed: the test is transactional)."""
    from django.db import connection

    connection.ensure_connection()
    if connection.vendor == "sqlite":
        # The test database lives in memory: copy it to a file the subprocess can open.
        path = tmp_path / "killed.sqlite3"
        with sqlite3.connect(path) as target:
            connection.connection.backup(target)
        return f"sqlite:///{path}"
    url = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(url._replace(path="/" + connection.settings_dict["NAME"]))


def rows(url: str, query: str) -> list[tuple]:
    from django.db import connection

    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
            return db.execute(query).fetchall()
    with connection.cursor() as cursor:
        cursor.execute(query)
        return cursor.fetchall()


def kill_after_units(command: list[str], env: dict, judge: str, units: int) -> None:
    """Runs `command` (a `run_judges`) and SIGKILLs it once its progress line shows `units` units done."""
    process = subprocess.Popen(command, cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        for line in process.stderr:
            if line.startswith(f"{judge} [") and int(line.split("] ")[1].split("/")[0]) >= units:
                break
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        process.stderr.close()


@pytest.mark.django_db(transaction=True)
def test_it_resumes_after_the_process_is_killed_without_redoing_a_unit(campaign, tmp_path, llm_server):
    assert add_fake(llm_server).code == 0
    url = database_for_a_subprocess(tmp_path)
    env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": "x", KEY_ENV: SECRET}
    llm_server.latency = 0.15
    command = [sys.executable, "manage.py", "run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--concurrency", "2"]

    kill_after_units(command, env, "fake-gpt", 8)
    done_at_kill = rows(url, "select count(*) from judges_judgeunit where status = 'done'")[0][0]
    assert rows(url, "select status from judges_judgerun") == [("running",)]
    assert 8 <= done_at_kill < 24
    sent_before = len(llm_server.requests)

    resumed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)

    assert resumed.returncode == 0, resumed.stderr
    assert f"{24 - done_at_kill} calls" in resumed.stdout
    assert rows(url, "select status, count(*) from judges_judgeunit group by status") == [("done", 24)]
    valid_per_unit = rows(url, "select count(*) from judges_judgecall where valid group by unit_id")
    assert len(valid_per_unit) == 24 and set(valid_per_unit) == {(1,)}  # each unit answered once, none twice
    assert rows(url, "select count(*) from judges_judgeverdict") == [(8 * 39,)]
    runs = rows(url, "select status, message from judges_judgerun order by id")
    assert runs[0][0] == "stopped" and "took over" in runs[0][1] and runs[1][0] == "finished"
    # The killed process lost at most the answers it had in flight.
    assert len(llm_server.requests) - sent_before == 24 - done_at_kill
    assert sent_before <= done_at_kill + 2
