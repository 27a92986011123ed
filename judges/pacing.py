"""Pacing a run under a provider's rate limits: requests per minute (rpm) and tokens per minute (tpm).

Providers enforce limits over a trailing minute and answer 429 beyond them; a run that discovers
them through 429s wastes the retries' waits and, at high concurrency, hammers the endpoint. A
`Pacer` shared by a run's worker threads spaces the requests out instead.

It keeps, per limit, the *theoretical arrival time* of the next request (the generic cell rate
algorithm, a token bucket written in time instead of tokens):

* requests: one request every 60 / rpm seconds, evenly spaced, no burst -- so any 60 s window
  holds at most rpm + 1 requests;
* tokens: a request of t (estimated) tokens occupies t * 60 / tpm seconds of the token budget; it
  may start once the earlier requests' budget is used up. Any 60 s window then holds at most
  tpm tokens plus one request's worth. The estimate is corrected once the answer reports the
  real usage (`settle`).

`acquire` reserves the slot under a lock and sleeps outside it, so workers never queue on the lock
while waiting. No database, no Django.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Pacer:
    def __init__(
        self,
        rpm: int | None = None,
        tpm: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rpm is not None and rpm <= 0 or tpm is not None and tpm <= 0:
            raise ValueError("rpm and tpm must be positive (or None: no limit)")
        self.rpm, self.tpm = rpm, tpm
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._next_request = float("-inf")
        self._tokens_free_at = float("-inf")

    @property
    def limited(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def acquire(self, tokens: int = 0, cancel: threading.Event | None = None) -> float:
        """Waits until a request of `tokens` estimated tokens fits under the limits; returns the
        seconds waited (0.0 when it fits now). With `cancel`, the wait ends early when it is set
        (the run is stopping): the caller checks it and sends nothing; the slot stays used."""
        if not self.limited:
            return 0.0
        with self._lock:
            now = self._clock()
            start = max(now, self._next_request)
            if self.tpm is not None:
                start = max(start, self._tokens_free_at)
                self._tokens_free_at = start + max(tokens, 0) * 60.0 / self.tpm
            if self.rpm is not None:
                self._next_request = start + 60.0 / self.rpm
        wait = start - now
        if wait > 0:
            if cancel is None:
                self._sleep(wait)
            elif cancel.wait(wait):
                return max(self._clock() - now, 0.0)
        return max(wait, 0.0)

    def settle(self, estimated: int, actual: int) -> None:
        """Corrects the token budget once the answer says how many tokens the request used."""
        if self.tpm is None or actual == estimated:
            return
        with self._lock:
            self._tokens_free_at += (actual - estimated) * 60.0 / self.tpm


def pacer_for(rpm: int | None, tpm: int | None) -> Pacer | None:
    """A run's pacer, or None when the judge sets no limit."""
    return Pacer(rpm, tpm) if rpm or tpm else None
