"""Judges fail loudly: a run that cannot connect, or whose units all (or mostly) end in error, ends
Failed with the last error on its page and in `run_judges`, which exits non-zero; a call that never
connected is never possibly billed, not even after a kill."""

import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
from django.urls import reverse

from judges.engine import FAIL_FAST_UNITS
from judges.models import JudgeCall, JudgeRun, JudgeUnit
from judges.services import judge_create
from judges.transport import UNREACHABLE_ATTEMPTS
from tests.conftest import REPO
from tests.helpers import run
from tests.test_judge_commands import database_for_a_subprocess, rows

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"
SECRET = "sk-test-failures-0a9c"


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def judge_at(base_url: str, name: str = "fake-gpt"):
    return judge_create(name=name, model="fake-judge", base_url=base_url, api_key_env=KEY_ENV, input_price="2.5", output_price="10")[0]


def test_it_fails_a_run_whose_endpoint_does_not_listen_and_says_why(client, rachel, campaign):
    """The break: 'Finished · 3 unit(s) in error', no reason, exit status 0."""
    port = free_port()
    judge_at(f"http://127.0.0.1:{port}/v1")

    started = time.monotonic()
    # Four workers, as on a hosted endpoint (a loopback one defaults to 1: judges/serving.py), so
    # that the failures come from several units at once.
    result = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--limit", "1", "--concurrency", "4")
    took = time.monotonic() - started

    reason = f"Could not connect to the endpoint ({UNREACHABLE_ATTEMPTS} attempts, none connected): connection error: [Errno 111] Connection refused"
    assert result.code == 1
    assert "fake-gpt: failed (run #" in result.out and reason in result.out
    assert f"run(s) failed: fake-gpt: {reason}" in result.err
    run_row = JudgeRun.objects.get()
    assert run_row.status == JudgeRun.Status.FAILED and run_row.message.startswith(reason)
    assert took < 10  # it does not back off through every unit's retries first
    # Nothing was judged, nothing is in error: the units wait for a reachable endpoint.
    assert set(JudgeUnit.objects.values_list("status", flat=True)) == {JudgeUnit.Status.PENDING}
    assert not JudgeCall.objects.filter(status=JudgeCall.Status.SENT).exists()  # never connected: never possibly billed
    assert set(JudgeCall.objects.values_list("reserved_usd", flat=True)) == {0}
    client.force_login(rachel)
    page = client.get(reverse("judge-campaign", args=[campaign.pk])).content.decode()
    assert "Failed<br><small" in page and "[Errno 111] Connection refused" in page
    assert "possibly billed (" not in page and "in flight (" not in page


def test_it_fails_a_run_whose_units_all_end_in_error(campaign, llm_server):
    judge_at(llm_server.base_url)
    llm_server.script("400", "400", "400")

    result = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--limit", "1")

    last = "Last error: HTTP 400: Error code: 400 - the prompt is longer than this model's context window"
    assert result.code == 1 and "Failed: 3 of the 3 unit(s) this run ended are in error." in result.out and last in result.out
    assert JudgeRun.objects.get().status == JudgeRun.Status.FAILED


def test_it_stops_early_and_fails_once_most_units_end_in_error(campaign, llm_server):
    judge_at(llm_server.base_url)
    llm_server.script(*["400"] * 24)

    result = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--concurrency", "1")

    done = JudgeRun.objects.get()
    assert result.code == 1 and done.status == JudgeRun.Status.FAILED
    # Checked as each batch of answers is stored: at the first batch that brings the count to FAIL_FAST_UNITS.
    early = re.search(r"\(stopped early: (\d+) of the first \1 units ended in error\)", done.message)
    assert early and int(early.group(1)) >= FAIL_FAST_UNITS
    assert len(llm_server.requests) < 24  # it stopped paying on
    left = JudgeUnit.objects.filter(status=JudgeUnit.Status.PENDING).count()
    assert left == 24 - len(llm_server.requests) and f"{left} unit(s) left; start the run again to resume." in done.message


def test_it_finishes_a_run_with_a_few_errors_and_names_the_last(campaign, llm_server):
    judge_at(llm_server.base_url)
    llm_server.script("400", "400")

    result = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--concurrency", "1")

    done = JudgeRun.objects.get()
    assert result.code == 0 and done.status == JudgeRun.Status.FINISHED
    assert "2 unit(s) in error (no verdict). Last error: HTTP 400: Error code: 400 - the prompt is longer" in done.message


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("endpoint", ["refusing connections", "answering 500"])
def test_it_leaves_no_possibly_billed_call_when_killed_while_retrying(campaign, tmp_path, llm_server, endpoint):
    """Killed while its workers back off from refused connections, or from error answers (never billed):
    no row claims those calls may cost."""
    if endpoint == "refusing connections":
        judge_at(f"http://127.0.0.1:{free_port()}/v1")
    else:
        judge_at(llm_server.base_url)
        llm_server.script(*["500"] * 100)
    url = database_for_a_subprocess(tmp_path)
    env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": "x", KEY_ENV: SECRET}
    command = [sys.executable, "manage.py", "run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--concurrency", "2"]
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while rows(url, "select status from judges_judgerun") != [("running",)]:
            assert time.monotonic() < deadline and process.poll() is None, "the run never started"
            time.sleep(0.05)
        time.sleep(1.0)  # attempts at 0 s and 0.5 s failed; the workers now back off (a refused 8th would come at 3.5 s)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()

    assert rows(url, "select status from judges_judgerun") == [("running",)]  # killed, not finished
    assert rows(url, "select count(*) from judges_judgecall where status = 'sent'") == [(0,)]
    if endpoint == "answering 500":
        assert len(llm_server.requests) >= 4  # the workers were retrying
