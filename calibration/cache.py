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
and the next waiter takes it. The lock is a lease of `LOCK_SECONDS` that the holder renews every
`LOCK_RENEW` seconds while it computes (`lease`): if it dies (a killed worker), the lock expires
within `LOCK_SECONDS` and a waiter takes over, however long the computation would have taken.

Inside `cached_only()`, nothing is computed: a miss raises `Missing` (the dashboard's request reads
what is there and leaves the computing to a background thread, `calibration.report.jobs`).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from django.core.cache import cache
from django.db import connections

if TYPE_CHECKING:
    from annotate.models import Campaign

T = TypeVar("T")
log = logging.getLogger(__name__)

CACHE_SECONDS = 3600
# A lock lives this long unless its holder renews it, which it does every LOCK_RENEW seconds while
# it computes: a dead holder's lock is taken over within LOCK_SECONDS, however long reports take.
LOCK_SECONDS, LOCK_RENEW = 30, 10
# Waiters look again after this many seconds, doubling up to POLL_MAX.
POLL_FIRST, POLL_MAX = 0.05, 0.5
PREFIX = "calibration:"


def cache_key(parts: tuple) -> str:
    """The cache key of a computation described by `parts` (reprs of plain values)."""
    return PREFIX + hashlib.sha256(repr(parts).encode()).hexdigest()


class Computing(Exception):
    """Another process is computing the value (raised instead of waiting, when asked)."""


class Missing(Exception):
    """The value is not in the cache and `cached_only()` forbids computing it here."""


_only_cached = contextvars.ContextVar("calibration_only_cached", default=False)


@contextlib.contextmanager
def cached_only() -> Iterator[None]:
    """Within it, `computed_once` returns what the cache holds and raises `Missing` for the rest."""
    token = _only_cached.set(True)
    try:
        yield
    finally:
        _only_cached.reset(token)


@contextlib.contextmanager
def lease(lock: str, token: str) -> Iterator[None]:
    """Keeps `lock` (held with `token`) alive while the block runs: a daemon thread renews it every
    `LOCK_RENEW` seconds, as long as it is still ours. Its database connection is closed at the end."""
    done = threading.Event()

    def renew() -> None:
        try:
            while not done.wait(LOCK_RENEW):
                if cache.get(lock) != token:
                    return  # released, or taken over after we stalled: not ours to keep
                cache.touch(lock, LOCK_SECONDS)
        except Exception:  # noqa: BLE001 (a failed renewal only lets the lease expire)
            log.warning("could not renew the lock %s", lock, exc_info=True)
        finally:
            connections.close_all()

    renewer = threading.Thread(target=renew, name="calibration-lease", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        done.set()


def computed_once(parts: tuple, build: Callable[[], T], *, what: str = "value", timeout: int = CACHE_SECONDS, wait: bool = True) -> T:
    """`build()`'s value for `parts`, from the shared cache, computed by one process at a time.

    `what` names the computation in the log ("report of campaign 3"): INFO records say which
    process computed and which waited, and how long. With `wait` False, a value another process
    is computing raises `Computing` at once (a web page can then say so rather than hold a worker).
    Within `cached_only()`, a value not in the cache raises `Missing`.
    """
    key = cache_key(parts)
    value = cache.get(key)
    if value is not None:
        return value
    if _only_cached.get():
        raise Missing(what)
    lock, token = key + ":lock", secrets.token_hex(8)
    started, poll = time.monotonic(), POLL_FIRST
    while True:
        if cache.add(lock, token, LOCK_SECONDS):
            try:
                # Another process may have stored it between our miss and our lock.
                value = cache.get(key)
                if value is None:
                    t = time.monotonic()
                    with lease(lock, token):
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
