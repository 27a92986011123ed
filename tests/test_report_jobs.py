"""The dashboard never computes the report in the request (issue 21): a background thread of the
web process does, one process at a time, while the page shows an earlier report of the same options
(marked as such) or how far the computation is; a failure shows as a message, a dead process's job
is taken over. Real threads, on the database cache of the suite's database (SQLite or PostgreSQL),
on committed data (transactional_db: a thread has its own connection)."""

import logging
import threading
import time

import pytest
from django.core.cache import cache
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from calibration import cache as report_cache
from calibration import selectors
from calibration.report import jobs as report_jobs
from calibration.report.build import default_rounds
from calibration.tasks import WARM_DEBOUNCE
from calibration.views import JOB_STAGES
from tests.helpers import run
from tests.test_import_any_group import votes, write
from tests.test_report_cache import labelled  # noqa: F401 (a fixture: a labels-only campaign of 40 votes and a judge)

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def background(settings, transactional_db):
    """Jobs in background threads, as on the site; every job thread finished before the data go."""
    settings.CALIBRATION_BACKGROUND = True
    settings.CALIBRATION_ROUNDS = 200
    cache.clear()
    yield
    for thread in threading.enumerate():
        if thread.name.startswith("calibration-"):
            thread.join(120)
    cache.clear()


def dashboard_url(campaign, query: str = "") -> str:
    return reverse("calibration-dashboard", args=[campaign.pk]) + (f"?{query}" if query else "")


def status_url(campaign, query: str = "", shown: tuple | None = None) -> str:
    """The status URL a page polls: its options, and the stamp of the report it shows (None: none)."""
    return (
        reverse("calibration-report-status", args=[campaign.pk])
        + "?"
        + "&".join(q for q in (query, f"shown={report_jobs.stamp_digest(shown)}") if q)
    )


def settled(job, *, leaving: tuple[str, ...] = ("computing",), seconds: float = 120):
    """The job's status once it is no longer in `leaving`; fails (naming the state and any error) after
    `seconds` instead of waiting for ever, so that a job that failed cannot hang the suite."""
    deadline = time.monotonic() + seconds
    while (status := report_jobs.status(job)).state in leaving:
        assert time.monotonic() < deadline, f"still {status.state} after {seconds} s: {status}"
        time.sleep(0.05)
    return status


def poll_until_refresh(client, url: str, seconds: float = 120) -> list[str]:
    """Polls the status fragment as htmx does until it answers with HX-Refresh; the fragments seen before."""
    seen, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        response = client.get(url, **HTMX)
        assert response.status_code == 200
        if response.headers.get("HX-Refresh") == "true":
            return seen
        seen.append(response.content.decode())
        time.sleep(0.1)
    raise AssertionError(f"not ready after {seconds} s: {seen[-1:]}")


def test_it_answers_at_once_and_computes_the_report_in_a_background_thread(background, labelled, client, rachel, caplog):  # noqa: F811
    caplog.set_level(logging.INFO, logger="calibration")
    client.force_login(rachel)

    first = client.get(dashboard_url(labelled))

    assert first.status_code == 202
    page = first.content.decode()
    assert "There is no calibration report of this campaign with these options yet." in page
    assert f'hx-get="{status_url(labelled)}" hx-trigger="every 2s"' in page  # shown: nothing
    assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in page
    seen = poll_until_refresh(client, status_url(labelled))
    assert all("An up-to-date report is being computed" in fragment for fragment in seen)
    ready = client.get(dashboard_url(labelled))
    assert ready.status_code == 200
    assert "Judge" in ready.content.decode() and "An earlier report" not in ready.content.decode()
    # Computed once, by a thread of its own, never by a request's.
    computed = [r for r in caplog.records if r.getMessage().startswith("computed the report")]
    assert [r.threadName for r in computed] == [f"calibration-job-{labelled.pk}"]


def test_it_shows_the_earlier_report_marked_while_the_new_one_is_computed(background, labelled, client, rachel, tmp_path):  # noqa: F811
    client.force_login(rachel)
    assert client.get(dashboard_url(labelled)).status_code == 202
    poll_until_refresh(client, status_url(labelled))
    before = client.get(dashboard_url(labelled)).content.decode()
    earlier = selectors.calibration_stamp(campaign=labelled)
    # One new human label: a third rater on the first battle.
    extra = {**votes(1)[0], "rater": "crowd_3", "rater_kind": "human"}
    assert run("import_labels", "--campaign", "crowd", str(write(tmp_path / "more.csv", [extra]))).code == 0

    started = time.monotonic()
    stale = client.get(dashboard_url(labelled))
    answered = time.monotonic() - started

    assert stale.status_code == 200 and answered < 5
    page = stale.content.decode()
    assert "An earlier report." in page
    assert "from 40 human labels and 20 judge verdicts; the labels changed since." in page
    assert "An up-to-date report is being computed" in page and "this page refreshes when it is ready" in page
    assert f'hx-get="{status_url(labelled, shown=earlier)}" hx-trigger="every 2s"' in page
    assert "Judge" in page  # the earlier report's tables
    poll_until_refresh(client, status_url(labelled, shown=earlier))
    fresh = client.get(dashboard_url(labelled)).content.decode()
    assert "An earlier report" not in fresh and fresh != before
    pointer = cache.get(report_jobs.Job(labelled.pk, (), "", ()).latest_key)
    assert pointer["labels"] == 41 and pointer["stamp"] == selectors.calibration_stamp(campaign=labelled)


def test_it_keeps_each_set_of_options_apart(background, labelled, client, rachel):  # noqa: F811
    """An earlier report is only ever one of the same options: another convention starts from nothing."""
    client.force_login(rachel)
    client.get(dashboard_url(labelled))
    poll_until_refresh(client, status_url(labelled))
    query = "swap_policy=both&unparsable=drop"

    other = client.get(dashboard_url(labelled, query))

    assert other.status_code == 202 and "An earlier report" not in other.content.decode()
    poll_until_refresh(client, status_url(labelled, query))
    assert client.get(dashboard_url(labelled, query)).status_code == 200


def test_it_shows_a_refused_option_as_its_message_not_an_endless_computing(background, labelled, client, rachel):  # noqa: F811
    client.force_login(rachel)
    query = "ensemble=gpt-4o,nobody"

    client.get(dashboard_url(labelled, query))
    deadline = time.monotonic() + 60
    while "failed" not in (fragment := client.get(status_url(labelled, query), **HTMX).content.decode()):
        assert time.monotonic() < deadline, fragment
        time.sleep(0.1)

    assert "Computing the report failed:" in fragment and "nobody" in fragment
    assert "hx-trigger" not in fragment  # the polling stops
    page = client.get(dashboard_url(labelled, query))
    assert page.status_code == 400 and "nobody" in page.content.decode()
    # "Try again" (a form, without htmx): the job runs again, and back to the dashboard.
    again = client.post(status_url(labelled, query))
    assert again.status_code == 302 and again["Location"] == dashboard_url(labelled, "ensemble=gpt-4o%2Cnobody")


def job_of(campaign) -> report_jobs.Job:
    return report_jobs.Job(campaign.pk, selectors.calibration_stamp(campaign=campaign), "", tuple(JOB_STAGES.items()))


def test_it_shows_an_error_and_computes_again_when_asked(background, labelled):  # noqa: F811
    job, calls = job_of(labelled), []

    def body(stage):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the database went away")
        return {"generated_at": "now", "labels": 40, "verdicts": 20}

    report_jobs.ensure(job, body)
    deadline = time.monotonic() + 30
    while (status := report_jobs.status(job)).state == "computing":
        assert time.monotonic() < deadline
        time.sleep(0.05)

    assert status.state == "failed" and status.error == "RuntimeError: the database went away" and not status.refused
    assert report_jobs.ensure(job, body).state == "failed"  # not tried again on every refresh
    assert len(calls) == 1
    report_jobs.forget_error(job)  # the page's "Try again"
    report_jobs.ensure(job, body)
    status = settled(job)
    assert status.state == "ready" and len(calls) == 2


def test_it_says_which_stage_runs_for_how_long_and_how_long_the_last_took(background, labelled):  # noqa: F811
    job, go = job_of(labelled), threading.Event()
    cache.set(job.duration_key, 14.6)

    def body(stage):
        stage("disagreements")
        stage("report")
        assert go.wait(30)
        return {"generated_at": "now", "labels": 40, "verdicts": 20}

    report_jobs.ensure(job, body)
    time.sleep(0.3)
    status = report_jobs.status(job)
    go.set()

    assert status.state == "computing" and (status.step, status.steps) == (2, 4)
    assert status.stage == JOB_STAGES["report"]
    assert 0.2 < status.elapsed < 30 and status.estimate == 14.6


def test_it_keeps_the_lock_of_a_long_job_and_takes_over_that_of_a_dead_process(background, labelled, monkeypatch):  # noqa: F811
    # The database cache keeps whole seconds: a lock of 2 s lives 1 to 2 s unless renewed.
    monkeypatch.setattr(report_cache, "LOCK_SECONDS", 2)
    monkeypatch.setattr(report_cache, "LOCK_RENEW", 0.2)
    job, calls = job_of(labelled), []

    def body(stage):
        calls.append(1)
        time.sleep(3.5)  # longer than the lock lives unless renewed
        return {"generated_at": "now", "labels": 40, "verdicts": 20}

    report_jobs.ensure(job, body)
    time.sleep(2.8)
    assert report_jobs.ensure(job, body).state == "computing"  # still held: renewed
    assert settled(job).state == "ready" and len(calls) == 1

    # A process that died while computing leaves a lock nobody renews: the next request takes over.
    dead = job_of(labelled)
    dead = report_jobs.Job(dead.campaign_id, dead.stamp, "swap_policy=both", dead.stages)
    cache.add(dead.lock, "a dead worker's token", 2)
    assert report_jobs.ensure(dead, body).state == "computing"
    time.sleep(2.2)
    assert report_jobs.ensure(dead, body).state == "computing"  # started again, by us
    assert settled(dead).state == "ready" and len(calls) == 2


def test_it_runs_one_job_at_a_time_while_the_labels_keep_changing(background, labelled):  # noqa: F811
    """Annotators label while the report is computed: the job of the new stamp waits for the running
    one, and a page showing an older report is told that a newer one is there."""
    first, go, calls = job_of(labelled), threading.Event(), []
    later = report_jobs.Job(first.campaign_id, (*first.stamp, "one more label"), "", first.stages)

    def body(stage):
        calls.append(1)
        assert go.wait(30)
        return {"generated_at": "now", "labels": 40, "verdicts": 20}

    assert report_jobs.ensure(first, body).state == "computing"
    assert report_jobs.ensure(later, body).state == "computing"  # the same options: it waits its turn
    time.sleep(0.2)
    assert len(calls) == 1
    assert not report_jobs.newer_than(later, "")  # nothing finished yet
    go.set()
    assert settled(first).state == "ready"
    assert report_jobs.newer_than(later, "") and not report_jobs.newer_than(later, report_jobs.stamp_digest(first.stamp))
    assert report_jobs.latest(later)["stamp"] == first.stamp
    # Now its turn, asked again as the page's poll asks (`calibration.views.report_status`): while the first job's
    # thread still holds the lock (it lets go just after marking its report ready) the answer is
    # "computing"; then the later job runs, or (its body no longer waits once `go` is set) has already run.
    deadline = time.monotonic() + 120
    while (state := report_jobs.ensure(later, body).state) != "ready":
        assert state == "computing" and time.monotonic() < deadline, report_jobs.status(later)
        time.sleep(0.05)
    assert len(calls) == 2 and report_jobs.latest(later) is None


def test_it_waits_for_the_task_worker_computing_the_same_report(background, labelled, client, rachel):  # noqa: F811
    """The task worker holds the report's lock: the page answers at once, and the job shows the report
    the worker computes (here: once the lock is gone, the job computes it)."""
    stamp = selectors.calibration_stamp(campaign=labelled)
    params = dict(rounds=default_rounds(), seed=0, reference=None, include_unsubmitted=False, ensembles=[])
    parts = (labelled.pk, labelled.reference_system_id, labelled.neutral_emphasis, "report", sorted(params.items()), stamp)
    lock = report_cache.cache_key(parts) + ":lock"
    cache.add(lock, "the task worker's token", 60)
    client.force_login(rachel)

    started = time.monotonic()
    busy = client.get(dashboard_url(labelled))

    assert busy.status_code == 202 and time.monotonic() - started < 5
    time.sleep(0.5)
    assert "Step 2 of 4: reading the labels" in client.get(status_url(labelled), **HTMX).content.decode()
    cache.delete(lock)
    poll_until_refresh(client, status_url(labelled))
    assert client.get(dashboard_url(labelled)).status_code == 200


def test_it_queues_one_warm_up_a_minute_after_human_submissions(transactional_db, alice):
    from tests.calibration_builders import hand_campaign
    from tests.test_active_resample import TOPICS, label_next

    campaign = hand_campaign([alice], topics=TOPICS)
    cache.clear()

    for _ in range(3):
        label_next(campaign, alice)

    [queued] = DBTaskResult.objects.filter(task_path="calibration.tasks.report_warm_task")
    assert queued.args_kwargs["args"] == [campaign.pk] and queued.status == "READY"
    assert WARM_DEBOUNCE - 5 < (queued.run_after - queued.enqueued_at).total_seconds() <= WARM_DEBOUNCE + 1
    cache.delete(f"calibration:warm-queued:{campaign.pk}")  # the minute is over
    label_next(campaign, alice)
    assert DBTaskResult.objects.filter(task_path="calibration.tasks.report_warm_task").count() == 2
