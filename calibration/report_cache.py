"""Computed once, shared by every web process: the calibration report, its charts and the label plan.

The cache is Django's default one (settings: "Cache"): the database cache (table `pairwise_cache`,
made by `calibration`'s migration 0001) unless `REDIS_URL` names a Redis server. Either way every
gunicorn worker, the API and the commands see the same entries, so a report built by one worker
serves them all.

An entry's key is a digest of what it was computed from: the campaign, the parameters and the
campaign's change stamp (`calibration.selectors.calibration_stamp`). New labels make a new key, so
nothing is ever invalidated by hand; stale entries expire after `CACHE_SECONDS`.

Only one process computes an entry. The first to miss takes a lock (`cache.add`, which is atomic
on both backends: an INSERT on the primary key for the database, SET NX for Redis) and computes;
the others poll the cache until the entry appears. If the lock's holder fails, it releases the lock
and the next waiter takes it; if it dies (a killed worker), the lock expires after `LOCK_SECONDS`
and a waiter takes over. A waiter never waits longer than that.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from django.core.cache import cache

if TYPE_CHECKING:
    from annotate.models import Campaign

T = TypeVar("T")
log = logging.getLogger(__name__)

CACHE_SECONDS = 3600
# Longer than any report takes to compute (gunicorn's timeout is 60 s; the commands have none).
LOCK_SECONDS = 300
# Waiters look again after this many seconds, doubling up to POLL_MAX.
POLL_FIRST, POLL_MAX = 0.05, 0.5
PREFIX = "calibration:"


def cache_key(parts: tuple) -> str:
    """The cache key of a computation described by `parts` (reprs of plain values)."""
    return PREFIX + hashlib.sha256(repr(parts).encode()).hexdigest()


class Computing(Exception):
    """Another process is computing the value (raised instead of waiting, when asked)."""


def computed_once(parts: tuple, build: Callable[[], T], *, what: str = "value", timeout: int = CACHE_SECONDS, wait: bool = True) -> T:
    """`build()`'s value for `parts`, from the shared cache, computed by one process at a time.

    `what` names the computation in the log ("report of campaign 3"): INFO records say which
    process computed and which waited, and how long. With `wait` False, a value another process
    is computing raises `Computing` at once (a web page can then say so rather than hold a worker).
    """
    key = cache_key(parts)
    value = cache.get(key)
    if value is not None:
        return value
    lock, token = key + ":lock", secrets.token_hex(8)
    started, poll = time.monotonic(), POLL_FIRST
    while True:
        if cache.add(lock, token, LOCK_SECONDS):
            try:
                # Another process may have stored it between our miss and our lock.
                value = cache.get(key)
                if value is None:
                    t = time.monotonic()
                    value = build()
                    cache.set(key, value, timeout)
                    log.info("computed the %s in %.2f s", what, time.monotonic() - t)
                return value
            finally:
                if cache.get(lock) == token:
                    cache.delete(lock)
        if not wait:
            raise Computing(what)
        time.sleep(poll)
        poll = min(poll * 2, POLL_MAX)
        value = cache.get(key)
        if value is not None:
            log.info("waited %.2f s for another process's %s", time.monotonic() - started, what)
            return value
        # No value and no lock: the holder failed or died; the next turn of the loop takes the lock.


def campaign_cached(campaign: Campaign, what: str, stamp: tuple, params: dict, build: Callable[[], T], *, wait: bool = True) -> T:
    """`build()` computed once and shared while the campaign's labels, verdicts and calls stay the same
    (`stamp`): the report, its charts and the label plan. `wait` False raises `Computing` when another
    process is at it."""
    parts = (campaign.pk, campaign.reference_system_id, campaign.neutral_emphasis, what, sorted(params.items()), stamp)
    return computed_once(parts, build, what=f"{what} of campaign {campaign.pk}", wait=wait)
