"""Background work, queued by the web pages and run by `manage.py db_worker`."""

from django.tasks import task

from judges.engine import judge_run_execute
from judges.models import JudgeRun


@task
def judge_run_task(run_id: int) -> str:
    run = JudgeRun.objects.select_related("judge", "campaign").get(pk=run_id)
    return judge_run_execute(run=run).status
