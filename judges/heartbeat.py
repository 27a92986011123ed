"""A judge run's heartbeat: a thread stamping `JudgeRun.heartbeat_at` while the process running it lives.

`judges.recovery` reads the silence: a run whose heartbeat stopped is marked interrupted.
"""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, connection
from django.utils import timezone

from judges.models import JudgeRun

logger = logging.getLogger(__name__)

# How often a run in progress says it is alive (judges/recovery.py judges silence).
HEARTBEAT_SECONDS = 10


class Heartbeat:
    """A thread that stamps the run's `heartbeat_at` while its process lives, whatever the run is busy with."""

    def __init__(self, run_id: int) -> None:
        self.run_id, self.every = run_id, HEARTBEAT_SECONDS
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"judge-run-{run_id}-heartbeat", daemon=True)

    def _beat(self) -> None:
        try:
            while not self.stopped.wait(self.every):
                try:
                    JudgeRun.objects.filter(pk=self.run_id, status__in=[JudgeRun.Status.RUNNING, JudgeRun.Status.STOPPING]).update(
                        heartbeat_at=timezone.now()
                    )
                except DatabaseError:
                    logger.warning("Run #%s: could not write its heartbeat; trying again in %s s.", self.run_id, self.every, exc_info=True)
        finally:
            connection.close()

    def __enter__(self) -> "Heartbeat":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.thread.join()
