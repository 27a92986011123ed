"""The HTTP side of a judge run: what worker threads do, with no database.

Worker threads only talk HTTP: `run.concurrency` loops (`work_loop`) share one
OpenAI client (`openai_client`, cached per endpoint, key, timeout and concurrency)
and take prepared requests (`Job`) from a queue; the engine (`judges.engine`)
builds the requests and writes what comes back.

Requests go through the official client's `post` with the chat-completions body
as a plain dict, and `wire.read_completion` reads the reply: the client still
provides the base URL, auth, timeouts and its error classes, but its typed
parameter and response models, which cost the worker threads as much interpreter
time as the HTTP itself, are skipped (see bench/judges.py). An endpoint that
answers the JSON schema with a 400 naming the response format is asked again,
for the rest of the run, for plain JSON (`PlainJson`); the run's message says so.

Every HTTP attempt is an `Attempt` (stored as a `JudgeCall`). 429, 408/409, 5xx,
timeouts and connection errors are retried with exponential backoff (0.5 s
doubling, capped at 30 s, at most `HTTP_RETRIES` retries per unit), honouring
`Retry-After`. A 200 whose content `parse_verdicts` rejects is billed and retried
up to the judge's `max_attempts`; if it stays unreadable the unit is ERROR with the
raw response and the reason, never a tie or a win.

The budget is never exceeded: before any attempt is sent, its worst case
(prompt estimate with a margin at the input price, plus `max_tokens` at the
output price) is reserved in the `Ledger` together with everything spent and
reserved by the attempts in flight; if it does not fit, the unit's `Outcome`
says so and the run stops.

Every attempt is written ahead: its `JudgeCall` row exists (status "sent", with
the worst case reserved) before the request leaves, and no sooner. The worker
that is about to send it asks the engine for the row (`RowWriter.sent`) once the
job is its own and any wait for the pacer is over, and waits until it is written;
so after a kill, the rows left "sent" (possibly billed) are the requests that were
on the network, at most one per worker, each at its own worst case. An attempt
that never connected (refused, an unresolvable host, the outbound policy of
`judges.outbound`), or that the endpoint answered with an error status, has its
row dropped at once (`RowWriter.release`): it cannot have been billed, so it is
never possibly billed. Until some attempt of the
run connects, `UNREACHABLE_ATTEMPTS` such failures fail the run ("could not
connect"); a refusal by the outbound policy fails it at the first. Each
request carries an `X-Client-Request-Id` (stored with the row); the provider's
`x-request-id` header and the completion's `id` are stored with the answer, so
that spend can be reconciled with the provider's logs.

A judge's `rpm`/`tpm` limits are kept by a `judges.pacing.Pacer` shared by the
workers: each attempt waits for its slot before it is sent; the waits and the
429s are counted in the `Outcome` (and summed on the run).
"""

from __future__ import annotations

import queue
import random
import re
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import httpcore2
import httpx2
import openai

import protocols
from judges.confidence import LOGPROBS, TOP_LOGPROBS, confidence_mode, logprob_map, sampled_call
from judges.outbound import POLICY_PREFIX, Network, guarded_http_client
from judges.pacing import Pacer, pacer_for
from judges.pricing import token_cost
from judges.wire import estimate_prompt_tokens, read_completion, unreadable_reason
from protocols.base import InvalidResponse, JudgeRequest, retry_messages


class JudgeConfig(Protocol):
    """What this module reads of a judge (`judges.models.Judge`): its endpoint, model, limits and prices.
    A protocol, not the model, so that this module stays free of Django."""

    base_url: str
    model: str
    temperature: float
    max_tokens: int
    max_attempts: int
    timeout_seconds: float
    input_price: Decimal | None
    cached_input_price: Decimal | None
    output_price: Decimal | None
    rpm: int | None
    tpm: int | None
    confidence: str


RETRY_BASE_SECONDS = 0.5
RETRY_CAP_SECONDS = 30.0
HTTP_RETRIES = 6
RETRY_AFTER_CAP_SECONDS = 300.0
RETRYABLE_STATUSES = frozenset({408, 409, 429})
# The endpoint will refuse every unit alike: the run fails instead of erroring each unit.
FATAL_STATUSES = frozenset({401, 403, 404})
# The prompt estimate is characters / 4; tokenizers differ, so the budget reserves more.
PROMPT_ESTIMATE_MARGIN = Decimal("1.25")
BATCH_SECONDS = 0.05
MAX_STORED_RESPONSE = 200_000
# Attempts of a run that may fail to connect, none having connected, before the run fails as
# unreachable (README "Judges fail loudly").
UNREACHABLE_ATTEMPTS = 8
SCHEMA_WORDS = re.compile(r"response_format|json_schema|schema|structured|guided", re.IGNORECASE)


@dataclass(frozen=True)
class CallSettings:
    """What a worker thread needs from the judge, copied so threads never touch the ORM."""

    model: str
    temperature: float
    max_tokens: int
    max_attempts: int
    input_price: Decimal | None  # None: unknown, and so is every cost (`cost`, `worst_case`)
    cached_input_price: Decimal | None
    output_price: Decimal | None
    secret: str
    pacer: Pacer | None = None  # shared by the run's workers; None: no rpm/tpm limit
    logprobs: bool = False  # ask for token probabilities (judges.confidence)
    samples: int = 1  # calls per unit (judges.confidence)

    @classmethod
    def of(cls, judge: JudgeConfig, secret: str) -> CallSettings:
        return cls(
            model=judge.model,
            temperature=judge.temperature,
            max_tokens=judge.max_tokens,
            max_attempts=judge.max_attempts,
            input_price=None if judge.input_price is None else Decimal(judge.input_price),
            cached_input_price=None if judge.cached_input_price is None else Decimal(judge.cached_input_price),
            output_price=None if judge.output_price is None else Decimal(judge.output_price),
            secret=secret,
            pacer=pacer_for(judge.rpm, judge.tpm),
            logprobs=confidence_mode(judge.confidence)[0] == LOGPROBS,
            samples=confidence_mode(judge.confidence)[1],
        )

    def paced_tokens(self, request: JudgeRequest) -> int:
        """The tokens a request is expected to use, for the tpm pacing: the prompt estimate and up to
        1,024 completion tokens (verdicts are short; the real usage corrects it afterwards)."""
        return estimate_prompt_tokens(request) + min(self.max_tokens, 1024)

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> Decimal | None:
        return token_cost(judge=self, prompt_tokens=prompt_tokens, cached_tokens=cached_tokens, completion_tokens=completion_tokens)

    def worst_case(self, request: JudgeRequest) -> Decimal | None:
        """What the request can cost at most; None without prices (a judge without prices takes no budget)."""
        if self.input_price is None or self.output_price is None:
            return None
        prompt = Decimal(estimate_prompt_tokens(request)) * PROMPT_ESTIMATE_MARGIN
        return (prompt * self.input_price + Decimal(self.max_tokens) * self.output_price) / Decimal(1_000_000)

    def scrub(self, text: str) -> str:
        return text.replace(self.secret, "[key]") if self.secret else text


class Ledger:
    """Money spent and reserved by attempts in flight, shared by the worker threads."""

    def __init__(self, budget: Decimal | None) -> None:
        self.budget = budget
        self.spent = Decimal(0)
        self.reserved = Decimal(0)
        self._lock = threading.Lock()

    def reserve(self, amount: Decimal | None) -> bool:
        """Holds `amount` (None, unknown, holds nothing: runs of judges without prices have no budget)."""
        amount = amount or Decimal(0)
        with self._lock:
            if self.budget is not None and self.spent + self.reserved + amount > self.budget:
                return False
            self.reserved += amount
            return True

    def settle(self, reserved: Decimal | None, actual: Decimal | None) -> None:
        with self._lock:
            self.reserved -= reserved or Decimal(0)
            self.spent += actual or Decimal(0)


def new_client_request_id() -> str:
    return uuid.uuid4().hex


@dataclass
class Attempt:
    number: int
    request_hash: str
    client_request_id: str = ""
    provider_request_id: str = ""
    response_id: str = ""
    reserved_usd: Decimal | None = Decimal(0)
    batch_id: int | None = None
    from_cache: bool = False
    valid: bool = False
    http_status: int | None = None
    error: str = ""
    raw_response: str = ""
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Decimal | None = Decimal(0)  # None: billed, at no known price
    latency_ms: int = 0


@dataclass
class Outcome:
    """How a unit ended: verdicts (done), an error, or neither (left pending: budget or a fatal refusal)."""

    attempts: list[Attempt] = field(default_factory=list)
    verdicts: dict[str, tuple[str, str]] | None = None
    confidences: dict[str, float] | None = None  # criterion key -> confidence (judges.confidence)
    samples: dict[str, str] | None = None  # criterion key -> the samples' answers (samples:N)
    error: str = ""
    budget: bool = False
    fatal: str = ""
    paced_ms: int = 0  # waited for the rpm/tpm pacing
    rate_limited: int = 0  # 429 answers
    retries: int = 0  # requests sent again after an unreadable answer
    repeated: int = 0  # of those, the ones whose answer was the previous one again


@dataclass
class Job:
    plan: Any  # the engine's unit (`judges.selectors.UnitPlan`), handed back to it as it came
    unit_id: int
    request: JudgeRequest | None = None
    request_hash: str = ""
    plain_hash: str = ""  # the request's hash without its JSON schema ("" when it has none)
    reserved: Decimal | None = None  # the worst case, once a worker took the job (None: unknown)


@dataclass
class Ahead:
    """A worker's request to the engine: write the "sent" row of this attempt, then set `written`;
    `refused` instead when the run is ending (nothing more may leave)."""

    job: Job
    number: int
    request_hash: str
    client_request_id: str
    reserved: Decimal | None
    written: threading.Event
    refused: bool = False


@dataclass(frozen=True)
class Release:
    """A worker's request to the engine: the attempt whose row was written ahead can have cost
    nothing (it never connected, or the endpoint answered it with an error status), so its row
    goes, then set `written`; the unit's outcome records the attempt when the unit ends."""

    client_request_id: str
    written: threading.Event


class RowWriter(Protocol):
    """The engine's side of the write-ahead ledger, called from worker threads; both calls wait
    until the row is written (or the run is ending)."""

    def sent(self, job: Job, number: int, request_hash: str, client_request_id: str, reserved: Decimal) -> bool:
        """Writes the attempt's "sent" row; False: the run is ending, send nothing more."""

    def release(self, client_request_id: str) -> None:
        """Drops the row of an attempt that can have cost nothing: it never connected, or was refused."""


class Reach:
    """Whether the endpoint can be reached at all, shared by a run's workers.

    Until one attempt of the run connects, attempts that could not connect are counted; at
    `UNREACHABLE_ATTEMPTS` the run fails at once ("could not connect") instead of each unit
    backing off through its retries and ending in error."""

    def __init__(self) -> None:
        self.connected = False
        self.failures = 0
        self._lock = threading.Lock()

    def connect_failed(self) -> bool:
        """Counts a failure; True when the endpoint is now taken as unreachable."""
        with self._lock:
            self.failures += 1
            return not self.connected and self.failures >= UNREACHABLE_ATTEMPTS

    def reached(self) -> None:
        self.connected = True


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers
    if (value := headers.get("retry-after-ms")) is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def _backoff(retry: int) -> float:
    delay = min(RETRY_CAP_SECONDS, RETRY_BASE_SECONDS * 2 ** (retry - 1))
    # A little jitter so threads throttled together do not come back together.
    return delay * (1 + random.random() * 0.1)


def http_error(exc: Exception) -> tuple[int | None, str]:
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code, f"HTTP {exc.status_code}: {exc.message}"
    cause = exc.__cause__
    if isinstance(exc, openai.APITimeoutError):
        if isinstance(cause, (httpx2.ConnectTimeout, httpcore2.ConnectTimeout)):
            return None, "connection error: timed out while connecting"
        return None, "timeout: no answer in time"
    # The client's own message is only "Connection error."; the reason is in the exception it wraps.
    return None, f"connection error: {cause or exc}"


def never_connected(exc: Exception) -> bool:
    """Whether the request failed before any connection existed (refused, unresolvable host, the
    outbound policy, a connect timeout): then nothing of it reached the endpoint and it cannot be billed.
    A failure on an open connection (reset, read timeout) may come after the request was sent."""
    cause = exc.__cause__ if isinstance(exc, openai.APIConnectionError) else None
    return isinstance(cause, (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout))


class PlainJson:
    """Set once the endpoint refuses the JSON schema: from then on the run asks for plain JSON.

    Some OpenAI-compatible endpoints answer a `json_schema` response format with
    HTTP 400 (DeepSeek, older vLLM and Ollama builds, models without structured
    output). The prompt asks for JSON in words as well, and answers are read
    tolerantly, so the run goes on without the schema and says so in its message.
    """

    def __init__(self) -> None:
        self.reason = ""
        self._lock = threading.Lock()

    def refuse(self, reason: str) -> None:
        with self._lock:
            self.reason = self.reason or reason


def _refuses_schema(status: int | None, message: str) -> bool:
    """A 400/422 that names the response format; any other 400 is the unit's own error."""
    return status in (400, 422) and bool(SCHEMA_WORDS.search(message))


def _response_id(body: bytes) -> str:
    """The completion's `id`, read cheaply from the start of the body ("" when absent)."""
    match = re.search(rb'"id"\s*:\s*"([^"]{1,200})"', body[:400])
    return match.group(1).decode("utf-8", "replace") if match else ""


def _unit_call(
    job: Job,
    client: openai.OpenAI,
    settings: CallSettings,
    ledger: Ledger,
    plain: PlainJson,
    rows: RowWriter | None = None,
    halt: threading.Event | None = None,
    reach: Reach | None = None,
    outcome: Outcome | None = None,
) -> Outcome:
    """Sends one unit's request until it yields verdicts or the retries run out (worker thread).

    Each attempt has `rows` write its "sent" row (and waits for it) just before it leaves, after
    any wait for the pacer: a request still queued or paced is not on the network and can cost
    nothing, so after a kill the rows left "sent" are at most one per worker. An attempt that
    never connected, or was answered with an error status, has its row dropped again at once
    (`RowWriter.release`). `outcome`: one to continue (the next sample of the same unit)."""
    outcome = outcome or Outcome()
    request = job.request
    reserved = job.reserved
    arguments = {
        "model": settings.model,
        "messages": request.messages,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
    }
    # Confidences are pairwise only (judges.confidence): a one-article request is asked without logprobs.
    logprobs = settings.logprobs and request.protocol == protocols.DEFAULT
    if logprobs:
        arguments.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
    sent_hash = job.request_hash
    if request.response_format is not None:
        if plain.reason:
            sent_hash = job.plain_hash
        else:
            arguments["response_format"] = request.response_format
    http_retries = invalid = 0
    worst, answered = job.reserved, None  # a retry's longer conversation reserves more; the last unreadable answer
    while True:
        number = len(outcome.attempts) + 1
        if number > 1 and halt is not None and halt.is_set():
            ledger.settle(reserved, Decimal(0))
            return outcome  # the run is ending (stopped, failed, out of budget): no retry; the unit stays pending
        client_id = new_client_request_id()
        attempt = Attempt(number=number, request_hash=sent_hash, client_request_id=client_id, reserved_usd=worst)
        if settings.pacer is not None:
            outcome.paced_ms += round(settings.pacer.acquire(settings.paced_tokens(request), cancel=halt) * 1000)
            if halt is not None and halt.is_set():
                ledger.settle(reserved, Decimal(0))
                return outcome  # stopped while waiting for the pacer: not sent, the unit stays pending
        if rows is not None and not rows.sent(job, number, sent_hash, client_id, worst):
            ledger.settle(reserved, Decimal(0))
            return outcome  # the run is ending: this attempt is not sent and the unit stays pending
        outcome.attempts.append(attempt)
        started = time.monotonic()
        try:
            response = client.post(
                "/chat/completions",
                body=arguments,
                cast_to=openai.APIResponse[bytes],
                options={"headers": {"X-Client-Request-Id": client_id}},
            )
            body = response.parse()
            attempt.provider_request_id = (response.headers.get("x-request-id") or "")[:200]
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            attempt.latency_ms = round((time.monotonic() - started) * 1000)
            attempt.http_status, message = http_error(exc)
            attempt.error = settings.scrub(message)
            status = attempt.http_status
            if isinstance(exc, openai.APIStatusError):
                attempt.provider_request_id = (exc.request_id or "")[:200]
            if rows is not None and (status is not None or never_connected(exc)):
                # Refused with a status (not billed), or nothing reached the endpoint: no longer possibly billed.
                # A worker thus holds at most its one request in flight as "sent", retries included.
                rows.release(client_id)
            if never_connected(exc):
                attempt.reserved_usd = Decimal(0)  # nothing reached the endpoint: nothing can be billed
                unreachable = reach is not None and reach.connect_failed()
                if POLICY_PREFIX in attempt.error or unreachable:
                    ledger.settle(reserved, Decimal(0))
                    why = "" if POLICY_PREFIX in attempt.error else f" ({UNREACHABLE_ATTEMPTS} attempts, none connected)"
                    outcome.fatal = f"Could not connect to the endpoint{why}: {attempt.error}"
                    return outcome
            elif reach is not None:
                reach.reached()
            if status == 429:
                outcome.rate_limited += 1
            if "response_format" in arguments and _refuses_schema(status, message):
                plain.refuse(attempt.error)
                del arguments["response_format"]
                sent_hash = job.plain_hash
                continue  # unbilled: the same reservation covers the plain request
            if status is not None and status in FATAL_STATUSES:
                ledger.settle(reserved, Decimal(0))
                outcome.fatal = f"The endpoint refused the run: {attempt.error}"
                return outcome
            if status is not None and status < 500 and status not in RETRYABLE_STATUSES:
                ledger.settle(reserved, Decimal(0))
                outcome.error = attempt.error
                return outcome
            http_retries += 1
            if http_retries > HTTP_RETRIES:
                ledger.settle(reserved, Decimal(0))
                outcome.error = f"{attempt.error} (gave up after {HTTP_RETRIES} retries)"
                return outcome
            delay = _backoff(http_retries)
            if isinstance(exc, openai.APIStatusError) and (after := _retry_after(exc)) is not None:
                delay = min(max(delay, after), RETRY_AFTER_CAP_SECONDS)
            if halt is not None:
                halt.wait(delay)  # a run that is ending does not wait out the backoff
            else:
                time.sleep(delay)
            continue
        attempt.latency_ms = round((time.monotonic() - started) * 1000)
        attempt.http_status = 200
        if reach is not None:
            reach.reached()
        attempt.response_id = _response_id(body)
        completion = read_completion(body)
        attempt.prompt_tokens, attempt.cached_tokens = completion.prompt_tokens, completion.cached_tokens
        attempt.completion_tokens = completion.completion_tokens
        if settings.pacer is not None:
            settings.pacer.settle(settings.paced_tokens(request), completion.prompt_tokens + completion.completion_tokens)
        attempt.cost_usd = settings.cost(attempt.prompt_tokens, attempt.cached_tokens, attempt.completion_tokens)
        ledger.settle(reserved, attempt.cost_usd)
        reserved = Decimal(0)
        content = completion.content
        # When the body is no completion at all, the body itself is the evidence kept.
        raw = body.decode("utf-8", "replace") if completion.problem else content
        attempt.raw_response = settings.scrub(raw[:MAX_STORED_RESPONSE])
        try:
            verdicts = protocols.parse_reply(request, content)
        except InvalidResponse as exc:
            reason = unreadable_reason(exc, completion, settings.max_tokens)
            attempt.error = reason
            outcome.repeated += content == answered  # a retry that returned the previous answer: billed, and no use
            answered = content
            invalid += 1
            if invalid >= settings.max_attempts:
                outcome.error = f"unreadable answer after {invalid} attempt(s): {reason}"
                return outcome
            # With the answer and what was wrong with it: the same request would get the same answer at temperature 0.
            arguments["messages"] = retry_messages(request, content, reason)
            worst = settings.worst_case(replace(request, messages=arguments["messages"]))
            if not ledger.reserve(worst):
                outcome.budget = True
                return outcome
            reserved = worst
            outcome.retries += 1
            continue
        attempt.valid = True
        outcome.verdicts = verdicts
        if logprobs:
            outcome.confidences = logprob_map(completion.logprobs, list(verdicts))
        return outcome


def work_loop(
    ready: queue.Queue,
    answers: queue.Queue,
    halt: threading.Event,
    client: openai.OpenAI,
    settings: CallSettings,
    ledger: Ledger,
    plain: PlainJson,
    rows: RowWriter | None = None,
    reach: Reach | None = None,
) -> None:
    """One worker: takes the next request, reserves its worst case against the budget, sends it (worker thread)."""
    try:
        while True:
            job = ready.get()
            if job is None:
                return
            if halt.is_set():
                answers.put((job, Outcome()))  # never sent: the unit stays pending
                return
            if job.reserved is None:
                job.reserved = settings.worst_case(job.request)
            if not ledger.reserve(job.reserved):
                answers.put((job, Outcome(budget=True)))
                halt.set()
                return
            call = lambda outcome, job=job: _unit_call(job, client, settings, ledger, plain, rows, halt, reach, outcome)  # noqa: E731
            samples = settings.samples if job.request.protocol == protocols.DEFAULT else 1  # pairwise only (judges.confidence)
            answers.put((job, sampled_call(call, n=samples, ledger=ledger, reserved=job.reserved)))
    except BaseException:
        halt.set()
        raise
    finally:
        answers.put(None)  # this loop is over


_clients: dict[tuple, openai.OpenAI] = {}
_clients_lock = threading.Lock()
MAX_CLIENTS = 16


def openai_client(judge: JudgeConfig, secret: str, concurrency: int, allowed: Iterable[Network] = ()) -> openai.OpenAI:
    """One client per endpoint, key, timeout, concurrency and outbound exceptions for the life of the process.

    Every client connects through `judges.outbound` (the addresses it may reach; `allowed` are the
    exceptions, JUDGE_ALLOW_ADDRESSES). A client is thread-safe and keeps its connections open;
    making one costs tens of milliseconds (its TLS context), so a worker process running run after
    run, or a command running several judges of one endpoint, reuses it. Keyed by concurrency too,
    so that its pool holds as many connections as the run has threads: a pool left larger by an
    earlier run made every request of a smaller one slower (bench/judges.py, 32 after 64:
    1.32-1.38x instead of 1.2x). Retries are the engine's.
    """
    allowed = tuple(allowed)
    key = (judge.base_url, secret, float(judge.timeout_seconds), concurrency, allowed)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            if len(_clients) >= MAX_CLIENTS:
                # Dropped, not closed: a run of this process may still be using it.
                _clients.pop(next(iter(_clients)))
            client = _clients[key] = openai.OpenAI(
                base_url=judge.base_url, api_key=secret, max_retries=0, timeout=judge.timeout_seconds,
                http_client=guarded_http_client(allowed=allowed, timeout=judge.timeout_seconds),
            )  # fmt: skip
        return client
