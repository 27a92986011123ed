"""The HTTP side of a judge run: what worker threads do, with no database.

Worker threads only talk HTTP: `run.concurrency` loops (`work_loop`) share one
OpenAI client (`openai_client`, cached per endpoint, key, timeout and concurrency)
and take prepared requests (`Job`) from a queue; the engine (`judges.engine`)
builds the requests and writes what comes back.

Requests go through the official client's `post` with the chat-completions body
as a plain dict, and `protocol.read_completion` reads the reply: the client still
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
the worst case reserved) before the request leaves. The engine writes the first
attempt's row when it hands the job to the workers; a later attempt (a retry)
asks the engine for its row through `ahead` and waits until it is written. Each
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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

import openai

from judges.pacing import Pacer, pacer_for
from judges.pricing import token_cost
from judges.protocol import InvalidResponse, JudgeRequest, estimate_prompt_tokens, parse_verdicts, read_completion

if TYPE_CHECKING:
    from judges.models import Judge
    from judges.selectors import UnitPlan

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
SCHEMA_WORDS = re.compile(r"response_format|json_schema|schema|structured|guided", re.IGNORECASE)


@dataclass(frozen=True)
class CallSettings:
    """What a worker thread needs from the judge, copied so threads never touch the ORM."""

    model: str
    temperature: float
    max_tokens: int
    max_attempts: int
    input_price: Decimal
    cached_input_price: Decimal | None
    output_price: Decimal
    secret: str
    pacer: Pacer | None = None  # shared by the run's workers; None: no rpm/tpm limit

    @classmethod
    def of(cls, judge: Judge, secret: str) -> CallSettings:
        return cls(
            model=judge.model,
            temperature=judge.temperature,
            max_tokens=judge.max_tokens,
            max_attempts=judge.max_attempts,
            input_price=Decimal(judge.input_price),
            cached_input_price=None if judge.cached_input_price is None else Decimal(judge.cached_input_price),
            output_price=Decimal(judge.output_price),
            secret=secret,
            pacer=pacer_for(judge.rpm, judge.tpm),
        )

    def paced_tokens(self, request: JudgeRequest) -> int:
        """The tokens a request is expected to use, for the tpm pacing: the prompt estimate and up to
        1,024 completion tokens (verdicts are short; the real usage corrects it afterwards)."""
        return estimate_prompt_tokens(request) + min(self.max_tokens, 1024)

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> Decimal:
        return token_cost(judge=self, prompt_tokens=prompt_tokens, cached_tokens=cached_tokens, completion_tokens=completion_tokens)

    def worst_case(self, request: JudgeRequest) -> Decimal:
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

    def reserve(self, amount: Decimal) -> bool:
        with self._lock:
            if self.budget is not None and self.spent + self.reserved + amount > self.budget:
                return False
            self.reserved += amount
            return True

    def settle(self, reserved: Decimal, actual: Decimal) -> None:
        with self._lock:
            self.reserved -= reserved
            self.spent += actual


def new_client_request_id() -> str:
    return uuid.uuid4().hex


@dataclass
class Attempt:
    number: int
    request_hash: str
    client_request_id: str = ""
    provider_request_id: str = ""
    response_id: str = ""
    reserved_usd: Decimal = Decimal(0)
    batch_id: int | None = None
    from_cache: bool = False
    valid: bool = False
    http_status: int | None = None
    error: str = ""
    raw_response: str = ""
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    latency_ms: int = 0


@dataclass
class Outcome:
    """How a unit ended: verdicts (done), an error, or neither (left pending: budget or a fatal refusal)."""

    attempts: list[Attempt] = field(default_factory=list)
    verdicts: dict[str, tuple[str, str]] | None = None
    error: str = ""
    budget: bool = False
    fatal: str = ""
    paced_ms: int = 0  # waited for the rpm/tpm pacing
    rate_limited: int = 0  # 429 answers


@dataclass
class Job:
    plan: UnitPlan
    unit_id: int
    request: JudgeRequest | None = None
    request_hash: str = ""
    plain_hash: str = ""  # the request's hash without its JSON schema ("" when it has none)
    reserved: Decimal = Decimal(0)
    first_request_id: str = ""  # the X-Client-Request-Id of attempt 1, whose row the engine wrote ahead


@dataclass(frozen=True)
class Ahead:
    """A worker's request to the engine: write the "sent" row of this attempt, then set `written`."""

    job: Job
    number: int
    request_hash: str
    client_request_id: str
    reserved: Decimal
    written: threading.Event


AheadWriter = Callable[[Job, int, str, str, Decimal], bool]  # False: the run is ending, send nothing more


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


def _http_error(exc: Exception) -> tuple[int | None, str]:
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code, f"HTTP {exc.status_code}: {exc.message}"
    if isinstance(exc, openai.APITimeoutError):
        return None, "timeout: no answer in time"
    return None, f"connection error: {exc}"


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


def unreadable_reason(exc: InvalidResponse, completion, max_tokens: int) -> str:
    """Why a billed answer gave no verdicts: no completion at all, cut off at `max_tokens`, or what
    `parse_verdicts` found wrong (synchronous and batch answers alike)."""
    if completion.problem:
        return completion.problem
    if completion.finish_reason == "length":
        return f"cut off at max_tokens ({max_tokens}): {exc}"
    return str(exc)


def _unit_call(
    job: Job,
    client: openai.OpenAI,
    settings: CallSettings,
    ledger: Ledger,
    plain: PlainJson,
    ahead: AheadWriter | None = None,
    halt: threading.Event | None = None,
) -> Outcome:
    """Sends one unit's request until it yields verdicts or the retries run out (worker thread).

    Attempt 1 goes out under the row the engine wrote when it queued the job; every later
    attempt first has `ahead` write its row (and waits for it)."""
    outcome = Outcome()
    request = job.request
    reserved = job.reserved
    arguments = {
        "model": settings.model,
        "messages": request.messages,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
    }
    sent_hash = job.request_hash
    if request.response_format is not None:
        if plain.reason:
            sent_hash = job.plain_hash
        else:
            arguments["response_format"] = request.response_format
    http_retries = invalid = 0
    while True:
        number = len(outcome.attempts) + 1
        client_id = job.first_request_id if number == 1 and job.first_request_id else new_client_request_id()
        attempt = Attempt(number=number, request_hash=sent_hash, client_request_id=client_id, reserved_usd=job.reserved)
        if number > 1 and ahead is not None and not ahead(job, number, sent_hash, client_id, job.reserved):
            ledger.settle(reserved, Decimal(0))
            return outcome  # the run is ending: this attempt is not sent and the unit stays pending
        if settings.pacer is not None:
            outcome.paced_ms += round(settings.pacer.acquire(settings.paced_tokens(request), cancel=halt) * 1000)
            if halt is not None and halt.is_set():
                ledger.settle(reserved, Decimal(0))
                return outcome  # stopped while waiting for the pacer: not sent, the unit stays pending
        outcome.attempts.append(attempt)
        started = time.monotonic()
        try:
            response = client.post(
                "/chat/completions", body=arguments, cast_to=openai.APIResponse[bytes], options={"headers": {"X-Client-Request-Id": client_id}}
            )
            body = response.parse()
            attempt.provider_request_id = (response.headers.get("x-request-id") or "")[:200]
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            attempt.latency_ms = round((time.monotonic() - started) * 1000)
            attempt.http_status, message = _http_error(exc)
            attempt.error = settings.scrub(message)
            status = attempt.http_status
            if isinstance(exc, openai.APIStatusError):
                attempt.provider_request_id = (exc.request_id or "")[:200]
            if status == 429:
                outcome.rate_limited += 1
            if "response_format" in arguments and _refuses_schema(status, message):
                plain.refuse(attempt.error)
                del arguments["response_format"]
                sent_hash = job.plain_hash
                continue  # unbilled: the same reservation covers the plain request
            if status is not None and status in FATAL_STATUSES:
                ledger.settle(reserved, Decimal(0))
                outcome.fatal = attempt.error
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
            time.sleep(delay)
            continue
        attempt.latency_ms = round((time.monotonic() - started) * 1000)
        attempt.http_status = 200
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
            verdicts = parse_verdicts(content, criteria=request.criteria, allow_tie=request.allow_tie)
        except InvalidResponse as exc:
            reason = unreadable_reason(exc, completion, settings.max_tokens)
            attempt.error = reason
            invalid += 1
            if invalid >= settings.max_attempts:
                outcome.error = f"unreadable answer after {invalid} attempt(s): {reason}"
                return outcome
            if not ledger.reserve(job.reserved):
                outcome.budget = True
                return outcome
            reserved = job.reserved
            continue
        attempt.valid = True
        outcome.verdicts = verdicts
        return outcome


def work_loop(
    ready: queue.Queue,
    answers: queue.Queue,
    halt: threading.Event,
    client: openai.OpenAI,
    settings: CallSettings,
    ledger: Ledger,
    plain: PlainJson,
    ahead: AheadWriter | None = None,
) -> None:
    """One worker: takes the next request, reserves its worst case against the budget, sends it (worker thread)."""
    try:
        while True:
            job = ready.get()
            if job is None:
                return
            if halt.is_set():
                answers.put((job, Outcome()))  # never sent: the engine drops its row written ahead
                return
            job.reserved = job.reserved or settings.worst_case(job.request)
            if not ledger.reserve(job.reserved):
                answers.put((job, Outcome(budget=True)))
                halt.set()
                return
            answers.put((job, _unit_call(job, client, settings, ledger, plain, ahead, halt)))
    except BaseException:
        halt.set()
        raise
    finally:
        answers.put(None)  # this loop is over


def drain(answers: queue.Queue, *, timeout: float, outstanding: int, gather: float = BATCH_SECONDS) -> tuple[list, int]:
    """The answers that came (waiting up to `timeout` for the first, then up to `gather`
    for more, unless all `outstanding` requests are in) and how many worker loops ended
    meanwhile. Fewer, larger batches leave the interpreter to the workers most of the time."""
    try:
        first = answers.get(timeout=timeout)
    except queue.Empty:
        return [], 0
    batch, ended = ([], 1) if first is None else ([first], 0)
    until = time.monotonic() + gather
    while len(batch) < outstanding and (left := until - time.monotonic()) > 0:
        try:
            item = answers.get(timeout=left)
        except queue.Empty:
            break
        if item is None:
            ended += 1
        else:
            batch.append(item)
    return batch, ended


_clients: dict[tuple[str, str, float, int], openai.OpenAI] = {}
_clients_lock = threading.Lock()
MAX_CLIENTS = 16


def openai_client(judge: Judge, secret: str, concurrency: int) -> openai.OpenAI:
    """One client per endpoint, key, timeout and concurrency for the life of the process.

    A client is thread-safe and keeps its connections open; making one costs tens of
    milliseconds (its TLS context), so a worker process running run after run, or a
    command running several judges of one endpoint, reuses it. Keyed by concurrency
    too, so that its pool holds as many connections as the run has threads: a pool
    left larger by an earlier run made every request of a smaller one slower
    (bench/judges.py, 32 after 64: 1.32-1.38x instead of 1.2x). Retries are the engine's.
    """
    key = (judge.base_url, secret, float(judge.timeout_seconds), concurrency)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            if len(_clients) >= MAX_CLIENTS:
                # Dropped, not closed: a run of this process may still be using it.
                _clients.pop(next(iter(_clients)))
            client = _clients[key] = openai.OpenAI(base_url=judge.base_url, api_key=secret, max_retries=0, timeout=judge.timeout_seconds)
        return client
