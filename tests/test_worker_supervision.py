"""A dead task worker never takes the site down: `make serve`'s script restarts it, the judge run it was
executing is marked interrupted, and the run page resumes it without buying a finished unit again.

The end-to-end test runs config/serve.sh for real (gunicorn, the worker, the loopback LLM server),
SIGKILLs the worker in the middle of a run and drives the site over HTTP, on the test database
(SQLite or PostgreSQL) shared with the served processes.
"""

import http.cookiejar
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, connections
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from judges import engine, heartbeat
from judges.models import JudgeCall, JudgeRun, JudgeUnit
from judges.recovery import STALE_SECONDS, judge_run_resume, judge_runs_interrupt_dead
from judges.services import judge_create, judge_run_create, judge_run_start
from judges.workers import this_worker, worker_gone
from tests.conftest import REPO
from tests.test_deploy import SERVE, environment, fetch, free_port, session_members
from tests.test_judge_commands import KEY_ENV, SECRET
from tests.test_judge_pages import work_off_the_queue

ELSEWHERE = "another-host|0b5e7c1d-0000-4000-8000-000000000000|pid:[4026531836]|77|12345"


def ended_worker() -> str:
    """The identity of a process that has ended (it printed it, then exited)."""
    code = "from judges.workers import this_worker; print(this_worker())"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


@pytest.fixture
def llm_judge(llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    judge, _ = judge_create(
        name="gpt-4.1-mini", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV, input_price="2.50", output_price="10"
    )
    return judge


def in_progress(campaign, judge, *, status=JudgeRun.Status.RUNNING, worker="", heartbeat_age: float = 0.0, budget=None) -> JudgeRun:
    run = judge_run_create(campaign=campaign, judge=judge, budget_usd=budget)
    now = timezone.now()
    JudgeRun.objects.filter(pk=run.pk).update(
        status=status,
        worker=worker,
        started_at=now - timedelta(seconds=heartbeat_age + 1),
        heartbeat_at=now - timedelta(seconds=heartbeat_age),
    )
    run.refresh_from_db()
    return run


# --- who is gone ------------------------------------------------------------------------------


def test_it_tells_an_ended_process_from_a_live_one_and_from_one_it_cannot_see():
    me = this_worker()
    assert me and not worker_gone(me)
    assert worker_gone(ended_worker())
    assert not worker_gone(ELSEWHERE)  # another machine: only the heartbeat can tell
    assert not worker_gone("")
    # The same pid, started at another time: the pid was reused by a new process.
    host, boot, namespace, pid, start = me.split("|")
    assert worker_gone("|".join((host, boot, namespace, pid, str(int(start) + 1))))


def test_it_counts_a_zombie_as_gone():
    """A killed worker its parent has not reaped yet still has a pid: it is gone all the same."""
    child = subprocess.Popen(
        [sys.executable, "-c", "from judges.workers import this_worker; print(this_worker(), flush=True)"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        identity = child.stdout.readline().strip()
        stat = Path(f"/proc/{child.pid}/stat")
        deadline = time.monotonic() + 30
        while stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert worker_gone(identity)
    finally:
        child.stdout.close()
        child.wait()


# --- marking runs interrupted -------------------------------------------------------------------


@pytest.mark.django_db
def test_it_marks_the_runs_whose_worker_died_and_leaves_the_others(campaign, llm_judge):
    dead = ended_worker()
    killed = in_progress(campaign, llm_judge, worker=dead)
    stopping = in_progress(campaign, llm_judge, worker=dead, status=JudgeRun.Status.STOPPING)
    alive = in_progress(campaign, llm_judge, worker=this_worker(), heartbeat_age=STALE_SECONDS - 5)
    far_and_beating = in_progress(campaign, llm_judge, worker=ELSEWHERE, heartbeat_age=5)
    far_and_silent = in_progress(campaign, llm_judge, worker=ELSEWHERE, heartbeat_age=STALE_SECONDS + 5)
    finished = in_progress(campaign, llm_judge, worker=dead, status=JudgeRun.Status.FINISHED)

    marked = judge_runs_interrupt_dead()

    assert sorted(run.pk for run in marked) == sorted([killed.pk, stopping.pk, far_and_silent.pk])
    statuses = dict(JudgeRun.objects.values_list("pk", "status"))
    assert statuses == {
        killed.pk: "interrupted", stopping.pk: "stopped", alive.pk: "running", far_and_beating.pk: "running",
        far_and_silent.pk: "interrupted", finished.pk: "finished",
    }  # fmt: skip
    killed.refresh_from_db()
    assert killed.message.startswith(f"Interrupted: process {dead.split('|')[3]} on ")
    assert "Resume judges the rest" in killed.message and killed.finished_at is not None
    assert "no sign of life since" in JudgeRun.objects.get(pk=far_and_silent.pk).message
    assert judge_runs_interrupt_dead() == []  # twice is harmless


@pytest.mark.django_db(transaction=True)
def test_it_marks_them_when_a_task_worker_starts(campaign, llm_judge):
    killed = in_progress(campaign, llm_judge, worker=ended_worker())
    work_off_the_queue()  # `manage.py db_worker --batch`: starts, finds nothing to do, ends
    killed.refresh_from_db()
    assert killed.status == JudgeRun.Status.INTERRUPTED


@pytest.mark.django_db(transaction=True)
def test_it_stamps_a_heartbeat_while_a_run_goes_on(campaign, llm_judge, llm_server, monkeypatch):
    monkeypatch.setattr(heartbeat, "HEARTBEAT_SECONDS", 0.1)
    llm_server.latency = 0.05
    beats = set()

    def seen(run):
        beats.add(JudgeRun.objects.values_list("heartbeat_at", flat=True).get(pk=run.pk))

    run = engine.judge_run_execute(run=judge_run_create(campaign=campaign, judge=llm_judge, concurrency=1), progress=seen)
    assert run.status == JudgeRun.Status.FINISHED
    assert run.worker == this_worker()
    assert len(beats) >= 3


# --- resuming from the page ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_resumes_an_interrupted_run_from_its_page_once(client, rachel, campaign, llm_judge):
    run = in_progress(campaign, llm_judge, worker=ended_worker(), budget=Decimal("1.00"))
    JudgeRun.objects.filter(pk=run.pk).update(cost_usd=Decimal("0.25"), swap=True, concurrency=3, limit=5, seed=7)
    unit = JudgeUnit.objects.create(
        judge=llm_judge, pair=campaign.pairs.first(), category=campaign.criterion_set.categories.first(), a_first=True, order="ab"
    )
    JudgeCall.objects.create(unit=unit, run=run, attempt=1, status=JudgeCall.Status.SENT, reserved_usd=Decimal("0.05"), request_hash="h")
    client.force_login(rachel)
    page_url = reverse("judge-campaign", args=[campaign.pk])

    page = client.get(page_url).content.decode()
    assert "Interrupted" in page and "Resume judges the rest" in page
    assert f'action="{reverse("judge-run-resume", args=[run.pk])}"' in page

    response = client.post(reverse("judge-run-resume", args=[run.pk]))
    assert response.status_code == 302 and response.url == page_url
    resumed = JudgeRun.objects.exclude(pk=run.pk).get()
    assert (resumed.status, resumed.swap, resumed.concurrency, resumed.limit, resumed.seed) == ("queued", True, 3, 5, 7)
    assert resumed.budget_usd == Decimal("0.70")  # 1.00 less 0.25 spent and 0.05 possibly billed
    assert DBTaskResult.objects.filter(id=resumed.task_id).exists()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.INTERRUPTED and run.resumed_by == resumed
    assert f"Run #{run.pk} resumed as run #{resumed.pk}" in client.get(page_url).content.decode()

    again = client.post(reverse("judge-run-resume", args=[run.pk]), follow=True)
    assert f"Run #{run.pk} was resumed already, as run #{resumed.pk}." in again.content.decode()
    assert JudgeRun.objects.count() == 2


@pytest.mark.django_db
def test_it_refuses_to_resume_what_needs_no_resuming(client, rachel, alice, campaign, llm_judge):
    finished = in_progress(campaign, llm_judge, status=JudgeRun.Status.FINISHED)
    with pytest.raises(ValidationError, match="is finished, not interrupted"):
        judge_run_resume(run=finished)
    interrupted = in_progress(campaign, llm_judge, status=JudgeRun.Status.INTERRUPTED)
    busy = judge_run_create(campaign=campaign, judge=llm_judge)
    with pytest.raises(ValidationError, match=f"Run #{busy.pk} of gpt-4.1-mini is queued"):
        judge_run_resume(run=interrupted)

    url = reverse("judge-run-resume", args=[interrupted.pk])
    assert client.post(url).status_code == 302 and "/accounts/login/" in client.post(url).url
    client.force_login(alice)
    assert client.post(url).status_code == 403
    assert JudgeRun.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_it_resumes_once_when_two_tabs_press_resume_together(campaign, llm_judge):
    run = in_progress(campaign, llm_judge, status=JudgeRun.Status.INTERRUPTED)
    barrier = threading.Barrier(4)
    outcomes: list = []

    def press():
        try:
            barrier.wait()
            outcomes.append(judge_run_resume(run=run).pk)
        except ValidationError as exc:
            outcomes.append(exc.messages[0])
        finally:
            connections.close_all()

    threads = [threading.Thread(target=press) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    new = [o for o in outcomes if isinstance(o, int)]
    assert len(outcomes) == 4 and len(new) == 1
    assert JudgeRun.objects.count() == 2 and DBTaskResult.objects.count() == 1
    assert all("resumed already" in o for o in outcomes if isinstance(o, str))


# --- under config/serve.sh, for real ----------------------------------------------------------------------


def live_database_url() -> str:
    """The test database itself, for processes started by the test (whose writes are committed: transactional tests)."""
    connection.ensure_connection()
    if connection.vendor == "sqlite":
        return f"sqlite:///{connection.settings_dict['NAME']}"
    url = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(url._replace(path="/" + connection.settings_dict["NAME"]))


def workers_of(session: int) -> list[int]:
    found = []
    for pid in session_members(session):
        try:
            if b"db_worker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            pass
    return found


def wait_for(what: str, check, timeout: float = 90, every: float = 0.25, on_fail=lambda: ""):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}\n{on_fail()}"
        time.sleep(every)


class Browser:
    """A staff member's session on the served site, with its cookies and CSRF token."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.read().decode()

    def post(self, path: str, data: dict) -> str:
        token = next(cookie.value for cookie in self.jar if cookie.name == "csrftoken")
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token}).encode()
        with self.opener.open(urllib.request.Request(self.base + path, data=body, method="POST"), timeout=30) as response:
            return response.read().decode()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc to see the served processes")
@pytest.mark.django_db(transaction=True)
def test_it_keeps_the_site_up_restarts_the_worker_and_resumes_the_run_without_buying_twice(
    campaign, llm_server, tmp_path, django_user_model, settings
):
    # The served site checks passwords with Django's usual hasher, not the tests' fast one.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    django_user_model.objects.create_user("rhea", password="a staff password for rhea", is_staff=True)
    judge, _ = judge_create(
        name="gpt-4.1-mini", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV, input_price="2.50", output_price="10"
    )
    port = free_port()
    env = environment(
        SECRET_KEY=secrets.token_urlsafe(50), DATABASE_URL=live_database_url(), STATIC_ROOT=str(tmp_path / "static"),
        HOST="127.0.0.1", PORT=str(port), WEB_WORKERS="1", WEB_THREADS="2", **{KEY_ENV: SECRET},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        serve = subprocess.Popen(SERVE, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    output = log.read_text
    try:
        wait_for("the site", lambda: _answers(base + "/accounts/login/") == 200, on_fail=output)
        (first_worker,) = wait_for("the worker", lambda: workers_of(serve.pid), on_fail=output)

        llm_server.latency = 0.4
        run = judge_run_start(campaign=campaign, judge=judge, concurrency=2)
        wait_for("6 units judged", lambda: JudgeUnit.objects.filter(status="done").count() >= 6, on_fail=output)
        assert JudgeRun.objects.get(pk=run.pk).worker.split("|")[3] == str(first_worker)
        os.kill(first_worker, signal.SIGKILL)

        # The site answers throughout; a new worker starts and marks the run interrupted.
        answers = []

        def interrupted() -> bool:
            answers.append(_answers(base + "/accounts/login/"))
            return JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.INTERRUPTED

        wait_for("the run marked interrupted", interrupted, every=0.5, on_fail=output)
        assert set(answers) == {200} and serve.poll() is None
        (second_worker,) = wait_for("a new worker", lambda: workers_of(serve.pid), on_fail=output)
        assert second_worker != first_worker
        assert f"The task worker (pid {first_worker}) stopped with status 137; the site stays up" in output()
        time.sleep(2 * llm_server.latency)  # the server finishes (and bills) the requests the dead worker had sent
        done_at_kill = set(JudgeUnit.objects.filter(status="done").values_list("pk", flat=True))
        assert 6 <= len(done_at_kill) < 24
        answered_before = len(llm_server.answered)

        # Staff resume it from the run page.
        staff = Browser(base)
        staff.get("/accounts/login/")
        staff.post("/accounts/login/", {"username": "rhea", "password": "a staff password for rhea"})
        page = staff.get(f"/judges/campaign/{campaign.pk}/")
        assert "Interrupted: process" in page and f"/judges/runs/{run.pk}/resume/" in page
        page = staff.post(f"/judges/runs/{run.pk}/resume/", {})
        resumed = JudgeRun.objects.get(pk=run.pk).resumed_by
        assert f"Run #{run.pk} resumed as run #{resumed.pk}" in page
        wait_for("the resumed run to finish", lambda: JudgeRun.objects.get(pk=resumed.pk).status == "finished", on_fail=output)

        assert JudgeUnit.objects.filter(judge=judge).count() == 24 and not JudgeUnit.objects.exclude(status="done").exists()
        new_ids = [a["client_request_id"] for a in llm_server.answered[answered_before:]]
        bought = list(JudgeCall.objects.filter(client_request_id__in=new_ids).values_list("unit_id", flat=True))
        assert len(new_ids) == len(bought) == 24 - len(done_at_kill)  # each remaining unit bought once
        assert not set(bought) & done_at_kill  # no finished unit bought again
        assert set(answers) == {200}
    finally:
        if serve.poll() is None:
            serve.send_signal(signal.SIGTERM)
            try:
                serve.wait(timeout=45)
            except subprocess.TimeoutExpired:
                pass
        left = session_members(serve.pid)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert serve.returncode == 0 and left == [], output()


def _answers(url: str) -> int:
    try:
        return fetch(url)[0]
    except OSError:
        return 0
