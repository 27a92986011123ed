"""The workers' way to the write-ahead ledger (`judges.transport.RowWriter`) in a synchronous run.

A worker about to send an attempt puts a note in the answers queue; the engine's thread writes
the notes first (`Engine.write_notes`), and the worker waits until its note is written.
"""

from __future__ import annotations

import queue
import threading
from decimal import Decimal

from judges.transport import Ahead, Job, Release


class QueuedRows:
    def __init__(self, answers: queue.Queue, closing: threading.Event) -> None:
        self.answers = answers
        self.closing = closing

    def _wait(self, written: threading.Event) -> bool:
        while not written.wait(0.25):
            if self.closing.is_set():
                return False  # the engine's thread has stopped writing: the run is ending
        return True

    def sent(self, job: Job, number: int, request_hash: str, client_request_id: str, reserved: Decimal) -> bool:
        note = Ahead(job, number, request_hash, client_request_id, reserved, threading.Event())
        self.answers.put(note)
        return self._wait(note.written) and not note.refused

    def release(self, client_request_id: str) -> None:
        note = Release(client_request_id, threading.Event())
        self.answers.put(note)
        self._wait(note.written)


def take(answers: queue.Queue, *, timeout: float) -> tuple[list, int]:
    """What the workers have put in `answers` (waiting up to `timeout` for the first item, then
    taking whatever else is already there) and how many worker loops ended meanwhile."""
    try:
        first = answers.get(timeout=timeout) if timeout > 0 else answers.get_nowait()
    except queue.Empty:
        return [], 0
    pending = [first]
    while True:
        try:
            pending.append(answers.get_nowait())
        except queue.Empty:
            break
    items = [item for item in pending if item is not None]
    return items, len(pending) - len(items)
