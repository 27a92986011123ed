"""The dashboard's report, computed in the background: a request never waits for it (issue 21).

A *job* computes everything the dashboard's first view of a campaign shows for one set of options
(the report, its charts, the first criterion's disagreements, the page's report part) into the
shared cache (`calibration.cache`). It is identified by the campaign, its change stamp and
the options' query string. A request that misses starts the job (`ensure`) and answers at once:
with an earlier report of the same options when there is one (`latest`, stale-while-revalidate),
else with a page saying how far the job is (`Status`).

One job at a time runs for a campaign and set of options, whatever the stamp, in one process: it
takes their lock (`cache.add`, atomic), renewed while it runs (`report_cache.lease`), so that a
job whose process died is started again by the next request within `report_cache.LOCK_SECONDS`.
While annotators keep labelling, the stamp changes under a running job: the next job, for the
stamp of then, starts once it ends (the pages showing an earlier report reload to show its result
meanwhile: `shown`), never many side by side. The job runs in a daemon thread of the web process, so the
dashboard works with or without `manage.py db_worker`; the task worker runs the same job in its
own thread (`run_here`). A job that fails stores its error, shown on the page instead of an endless
"computing", until `ERROR_SECONDS` pass, the data change or someone asks again (`forget_error`).

With `settings.CALIBRATION_BACKGROUND` False (the test suite's default: a thread cannot see a test's
open transaction) `ensure` runs the job in the request itself, as before this module.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db import connections

from calibration import cache as report_cache

log = logging.getLogger(__name__)

# A failure is shown (not retried on every refresh) this long, unless someone asks again.
ERROR_SECONDS = 600
# The last duration of a campaign's job, the computing page's estimate: kept a week.
DURATION_SECONDS = 7 * 24 * 3600
PREFIX = report_cache.PREFIX + "job:"

# A job's body: called with `stage(name)`, which it calls as it enters each stage; returns the
# figures the stale page names (`{"generated_at": ..., "labels": n, "verdicts": m}`).
Body = Callable[[Callable[[str], None]], dict]


@dataclass(frozen=True)
class Job:
    campaign_id: int
    stamp: tuple
    query: str  # the dashboard's options, "" for the defaults
    stages: tuple[tuple[str, str], ...]  # (name, words for the page), in order
    settings: tuple = ()  # the campaign's settings the report depends on (its reference system, the alt-test's epsilon...)

    @property
    def key(self) -> str:
        return report_cache.cache_key(("dashboard-job", self.campaign_id, self.stamp, self.query, self.settings))

    @property
    def lock(self) -> str:
        """Held while a job of these options runs, whatever its stamp; the stage record sits beside it."""
        return report_cache.cache_key(("dashboard-job", self.campaign_id, self.query, self.settings)) + ":lock"

    @property
    def latest_key(self) -> str:
        """The pointer to the last finished job of the same campaign and options, whatever its stamp."""
        return report_cache.cache_key(("dashboard-latest", self.campaign_id, self.query))

    @property
    def duration_key(self) -> str:
        return f"{PREFIX}duration:{self.campaign_id}"


@dataclass(frozen=True)
class Status:
    """Where a job stands: `state` is "ready", "computing", "failed" or "idle" (nobody at it)."""

    state: str
    stage: str = ""  # the stage's words
    step: int = 0
    steps: int = 0
    elapsed: float | None = None
    estimate: float | None = None  # seconds the campaign's last job took
    error: str = ""
    refused: bool = False  # the error is a ValueError: the options asked for something the data cannot give

    @property
    def waiting(self) -> bool:
        return self.state in ("computing", "idle")


def status(job: Job) -> Status:
    """The job's state, read from the cache (a few small entries)."""
    found = cache.get_many([job.key, job.lock, job.lock + ":stage", job.key + ":error", job.duration_key])
    estimate = found.get(job.duration_key)
    if found.get(job.key) is not None:
        return Status("ready", estimate=estimate)
    if job.lock in found:
        stage = found.get(job.lock + ":stage") or {}
        names = [name for name, _ in job.stages]
        name = stage.get("stage", "")
        elapsed = time.time() - stage["started"] if "started" in stage else None
        step = names.index(name) + 1 if name in names else 0
        words = job.stages[step - 1][1] if step else "starting"
        return Status("computing", words, step, len(job.stages), elapsed, estimate)
    if job.key + ":error" in found:
        error = found[job.key + ":error"]
        return Status("failed", error=error["message"], refused=error["refused"], estimate=estimate)
    return Status("idle", estimate=estimate)


def ensure(job: Job, body: Body) -> Status:
    """Starts the job unless it is done, running or failed; its status. Answers at once, unless
    `settings.CALIBRATION_BACKGROUND` is False: then the job runs here and now."""
    now = status(job)
    if now.state != "idle":
        return now
    token = secrets.token_hex(8)
    if not cache.add(job.lock, token, report_cache.LOCK_SECONDS):
        return status(job)  # another process took it a moment ago
    cache.set(job.lock + ":stage", {"stage": "", "started": time.time()}, report_cache.CACHE_SECONDS)
    if not getattr(settings, "CALIBRATION_BACKGROUND", True):
        _run(job, token, body)
        return status(job)
    thread = threading.Thread(target=_in_thread, args=(job, token, body), name=f"calibration-job-{job.campaign_id}", daemon=True)
    thread.start()
    log.info("started the dashboard job of campaign %s in the background", job.campaign_id)
    return status(job)


def run_here(job: Job, body: Body) -> str:
    """Runs the job in this thread (the task worker): "ready", "busy" when another process runs it, or "failed"."""
    token = secrets.token_hex(8)
    if cache.get(job.key) is not None:
        # Done before; its entries may have expired apart from the mark: the body finds what is there.
        cache.delete(job.key)
    if not cache.add(job.lock, token, report_cache.LOCK_SECONDS):
        return "busy"
    cache.set(job.lock + ":stage", {"stage": "", "started": time.time()}, report_cache.CACHE_SECONDS)
    return _run(job, token, body)


def forget_error(job: Job) -> None:
    """Lets the next `ensure` try a failed job again."""
    cache.delete(job.key + ":error")


def restart(job: Job) -> None:
    """Forgets that the job is done (the page found one of its entries expired): the next `ensure` runs it."""
    cache.delete(job.key)


def latest(job: Job) -> dict | None:
    """The last finished job of these options for an earlier stamp: `{"stamp", "generated_at", "labels",
    "verdicts"}`, or None (none, or it is this stamp's)."""
    pointer = cache.get(job.latest_key)
    if pointer is None or pointer["stamp"] == job.stamp:
        return None
    return pointer


def stamp_digest(stamp: tuple | None) -> str:
    """A short name of a stamp, for the page to say which report it shows ("" for none)."""
    return "" if stamp is None else report_cache.cache_key(("stamp", stamp))[-12:]


def newer_than(job: Job, shown: str) -> bool:
    """Whether the last finished job of these options is not the one a page shows (`shown`: its stamp's digest)."""
    pointer = cache.get(job.latest_key)
    return pointer is not None and stamp_digest(pointer["stamp"]) != shown


def _in_thread(job: Job, token: str, body: Body) -> None:
    try:
        _run(job, token, body)
    finally:
        connections.close_all()  # this thread's own connections


def _run(job: Job, token: str, body: Body) -> str:
    lock = job.lock
    started = time.time()

    def stage(name: str) -> None:
        cache.set(lock + ":stage", {"stage": name, "started": started}, report_cache.CACHE_SECONDS)

    try:
        with report_cache.lease(lock, token):
            figures = body(stage)
        seconds = time.time() - started
        cache.set(job.latest_key, {"stamp": job.stamp, **figures}, report_cache.CACHE_SECONDS)
        cache.set(job.duration_key, seconds, DURATION_SECONDS)
        cache.set(job.key, {"seconds": seconds}, report_cache.CACHE_SECONDS)
        log.info("computed the dashboard of campaign %s in %.2f s", job.campaign_id, seconds)
        return "ready"
    except Exception as exc:  # noqa: BLE001 (stored for the page, and logged)
        refused = isinstance(exc, ValueError)
        if refused:
            log.info("the dashboard job of campaign %s refused its options: %s", job.campaign_id, exc)
        else:
            log.exception("the dashboard job of campaign %s failed", job.campaign_id)
        message = str(exc) if refused else f"{type(exc).__name__}: {exc}"
        cache.set(job.key + ":error", {"message": message, "refused": refused}, ERROR_SECONDS)
        return "failed"
    finally:
        if cache.get(lock) == token:
            cache.delete(lock)
