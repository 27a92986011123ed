"""Runs whose worker died: marking them interrupted, and resuming them.

A run in progress records its worker process (`JudgeRun.worker`, judges/workers.py)
and a heartbeat (`JudgeRun.heartbeat_at`, written every HEARTBEAT_SECONDS by a thread
of that process, whatever the run is busy with). `judge_runs_interrupt_dead` finds
the runs still "running" whose process is known to have ended (same machine) or has
given no sign of life for STALE_SECONDS (any machine): they become INTERRUPTED; a run
asked to stop becomes STOPPED. It runs when a task worker starts (`manage.py db_worker`)
and whenever the judges page of a campaign is shown.

`judge_run_resume` starts a new run with the interrupted one's options, once: the
engine judges only the units not done yet, so nothing finished is bought again.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from judges.heartbeat import HEARTBEAT_SECONDS
from judges.models import JudgeCall, JudgeRun
from judges.selectors import ACTIVE
from judges.tasks import judge_run_task
from judges.workers import describe, worker_gone

# Six missed heartbeats: a process that silent is gone (or frozen), wherever it ran.
STALE_SECONDS = 6 * HEARTBEAT_SECONDS
IN_PROGRESS = (JudgeRun.Status.RUNNING, JudgeRun.Status.STOPPING)


def _silent_since(run: JudgeRun) -> datetime | None:
    return run.heartbeat_at or run.started_at


def judge_runs_interrupt_dead(
    *, runs: Iterable[JudgeRun] | None = None, now: datetime | None = None, stale_seconds: float = STALE_SECONDS
) -> list[JudgeRun]:
    """Marks the runs in progress whose worker died; returns them, updated (see the module docstring).

    `runs`: runs already read (a page's list), looked at without a query; by default every run in progress.
    """
    now = now or timezone.now()
    stale = now - timedelta(seconds=stale_seconds)
    ended = []
    if runs is None:
        runs = JudgeRun.objects.filter(status__in=IN_PROGRESS).only("pk", "status", "worker", "heartbeat_at", "started_at")
    for run in runs:
        if run.status not in IN_PROGRESS:
            continue
        silent_since = _silent_since(run)
        if worker_gone(run.worker):
            why = f"{describe(run.worker)} ended"
        elif silent_since is not None and silent_since < stale:
            why = f"{describe(run.worker)} has given no sign of life since {silent_since:%Y-%m-%d %H:%M:%S} UTC"
        else:
            continue
        if run.status == JudgeRun.Status.STOPPING:
            status, message = JudgeRun.Status.STOPPED, f"Stopped: {why} before the units in flight came back."
        else:
            status = JudgeRun.Status.INTERRUPTED
            message = f"Interrupted: {why}. The units it finished are kept; Resume judges the rest without buying those again."
        # Only if nothing changed meanwhile: the same process still holds it, in the same state.
        if JudgeRun.objects.filter(pk=run.pk, status=run.status, worker=run.worker).update(status=status, message=message, finished_at=now):
            run.status, run.message, run.finished_at = status, message, now
            ended.append(run)
    return ended


def judge_run_resume(*, run: JudgeRun) -> JudgeRun:
    """Queues a new run with the interrupted run's options, once; returns it.

    Refused when the run is not interrupted, was resumed already, or another run
    of the same judge on the campaign is queued or in progress (it judges the
    remaining units itself). A budget carries over less what the interrupted
    run spent and what its calls in flight may have cost.
    """
    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().select_related("judge", "campaign").get(pk=run.pk)
        if run.resumed_by_id is not None:
            raise ValidationError([f"Run #{run.pk} was resumed already, as run #{run.resumed_by_id}."])
        if run.status != JudgeRun.Status.INTERRUPTED:
            raise ValidationError([f"Run #{run.pk} is {run.get_status_display().lower()}, not interrupted: there is nothing to resume."])
        busy = JudgeRun.objects.filter(campaign=run.campaign, judge=run.judge, status__in=ACTIVE).order_by("pk").first()
        if busy is not None:
            raise ValidationError(
                [f"Run #{busy.pk} of {run.judge.name} is {busy.get_status_display().lower()}: it judges the remaining units."]
            )
        budget = run.budget_usd
        if budget is not None:
            possibly_billed = JudgeCall.objects.filter(run=run, status=JudgeCall.Status.SENT).aggregate(usd=Sum("reserved_usd"))["usd"]
            budget = max(Decimal(0), Decimal(budget) - Decimal(run.cost_usd) - (possibly_billed or Decimal(0)))
        resumed = JudgeRun.objects.create(
            campaign=run.campaign, judge=run.judge, swap=run.swap, concurrency=run.concurrency, budget_usd=budget,
            limit=run.limit, seed=run.seed, batch=run.batch, guess=run.guess, steps=run.steps,
        )  # fmt: skip
        resumed.task_id = str(judge_run_task.enqueue(resumed.pk).id)
        resumed.save(update_fields=["task_id"])
        JudgeRun.objects.filter(pk=run.pk).update(resumed_by=resumed, message=f"{run.message} Resumed as run #{resumed.pk}.".strip())
    return resumed
