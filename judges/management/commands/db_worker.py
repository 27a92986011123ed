"""`manage.py db_worker`: django-tasks-db's task worker, which first marks the judge runs whose worker died.

It replaces the library's command of the same name (the `judges` app comes before
`django_tasks_db` in INSTALLED_APPS), with the same options. A worker killed in the
middle of a judge run leaves the run "running"; the worker started in its place
(config/serve.sh restarts it) marks such runs interrupted before taking new work,
so that their page offers to resume them (judges/recovery.py).
"""

import logging

from django.conf import settings
from django_tasks_db.compat import TASKS_LOGGER
from django_tasks_db.management.commands.db_worker import Command as TaskWorkerCommand

from judges.recovery import judge_runs_interrupt_dead

logger = logging.getLogger("judges.worker")


class Command(TaskWorkerCommand):
    help = "Run a database background worker; first mark the judge runs whose worker died as interrupted."

    def configure_logging(self, verbosity: int) -> None:
        # The library sets its loggers to INFO at the default verbosity; LOG_LEVEL (config/settings.py)
        # may ask for less, as `make demo` does to keep its start-up quiet. Errors are always logged.
        super().configure_logging(verbosity)
        if verbosity == 1 and logging.getLevelName(settings.LOG_LEVEL) > logging.INFO:
            for name in ("django_tasks_db", TASKS_LOGGER):
                logging.getLogger(name).setLevel(settings.LOG_LEVEL)

    def handle(self, *args, **options):
        for run in judge_runs_interrupt_dead():
            logger.warning("Judge run #%s: %s", run.pk, run.message)
        return super().handle(*args, **options)
