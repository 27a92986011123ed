"""The report is computed ahead by the task worker after a judge run, as after an import (issue 21,
item 5): judges runs hook ``after_run`` (settings.HOOKS), calibration queues `report_warm_task`."""

import logging

from django_tasks_db.models import DBTaskResult

from calibration.report.build import report_cached
from common.hooks import hooks
from judges.models import JudgeRun
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.test_judge_pages import work_off_the_queue

WARM = "calibration.tasks.report_warm_task"


def warm_tasks() -> list[DBTaskResult]:
    return list(DBTaskResult.objects.filter(task_path=WARM).order_by("enqueued_at"))


def computed(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("computed the report")]


def test_it_queues_the_report_after_a_run_and_the_worker_computes_it_once(campaign, transactional_db, caplog):
    caplog.set_level(logging.INFO, logger="calibration.cache")
    judge, _ = judge_create(name="longer", kind="length")

    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=2))

    assert run.status == JudgeRun.Status.FINISHED and run.units_done > 0
    queued = warm_tasks()
    assert len(queued) == 1 and queued[0].args_kwargs["args"] == [campaign.pk]
    assert computed(caplog) == []  # queued, not computed inside the run

    work_off_the_queue()

    queued[0].refresh_from_db()
    assert queued[0].status == "SUCCESSFUL" and queued[0].return_value == "ready"
    [line] = computed(caplog)
    assert line.startswith(f"computed the report of campaign {campaign.pk} in ")
    caplog.clear()
    report = report_cached(campaign)  # what the dashboard asks: the worker's, from the shared cache
    assert computed(caplog) == []
    assert [j["name"] for j in report["judges"]] == ["longer"]


def test_it_queues_nothing_after_a_run_that_stored_no_verdict(campaign, transactional_db):
    judge, _ = judge_create(name="longer", kind="length")
    first = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge))
    assert first.units_done == first.units_total > 0 and len(warm_tasks()) == 1

    again = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge))  # nothing left to judge

    assert again.status == JudgeRun.Status.FINISHED and again.units_total == first.units_total
    assert len(warm_tasks()) == 1


def test_it_runs_calibration_once_after_a_run():
    assert [f.__name__ for f in hooks("after_run")] == ["report_warm_after_run"]
