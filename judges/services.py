"""Writes for judges: configuring them, starting and stopping runs, and the run engine.

The engine (`judge_run_execute`)
--------------------------------
A run judges the units planned by `selectors.run_plan` that are not done yet,
so a run that was stopped, ran out of budget or was killed is resumed by
starting the same run again: finished verdicts are never redone.

Worker threads only talk HTTP: `run.concurrency` loops share one OpenAI client
and take prepared requests from a queue. The calling thread builds the requests,
answers what it can from the cache, and does every database write: one short
transaction per batch of finished units (their calls, verdicts and statuses, and
the run's counters), so a unit is either fully stored or still pending, and the
workers never wait for the database. At least every half second it re-reads the
run's status: "stopping" (the web Stop button) or any status set by someone else
ends the run cleanly, after the units in flight.

Requests go through the official client's `post` with the chat-completions body
as a plain dict, and `protocol.read_completion` reads the reply: the client still
provides the base URL, auth, timeouts and its error classes, but its typed
parameter and response models, which cost the worker threads as much interpreter
time as the HTTP itself, are skipped (see bench/judges.py). An endpoint that
answers the JSON schema with a 400 naming the response format is asked again,
for the rest of the run, for plain JSON (`_PlainJson`); the run's message says so.

Every HTTP attempt is a `JudgeCall`. 429, 408/409, 5xx, timeouts and connection
errors are retried with exponential backoff (0.5 s doubling, capped at 30 s, at
most `HTTP_RETRIES` retries per unit), honouring `Retry-After`. A 200 whose
content `parse_verdicts` rejects is billed and retried up to the judge's
`max_attempts`; if it stays unreadable the unit is ERROR with the raw response
and the reason, never a tie or a win. Only valid responses are cached.

The budget is never exceeded: before any attempt is sent, its worst case
(prompt estimate with a margin at the input price, plus `max_tokens` at the
output price) is reserved against the budget together with everything spent and
reserved by the attempts in flight; if it does not fit, the run stops with
status BUDGET and the unit stays pending.
"""

from __future__ import annotations

import os
import queue
import random
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import openai
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from annotate.models import Article, Campaign, Pair, System, Topic
from judges import baselines
from judges.models import CachedResponse, Judge, JudgeCall, JudgeRun, JudgeUnit, JudgeVerdict
from judges.protocol import InvalidResponse, JudgeRequest, estimate_prompt_tokens, parse_verdicts, read_completion
from judges.selectors import Plan, UnitPlan, run_plan, token_cost

RETRY_BASE_SECONDS = 0.5
RETRY_CAP_SECONDS = 30.0
HTTP_RETRIES = 6
RETRY_AFTER_CAP_SECONDS = 300.0
RETRYABLE_STATUSES = frozenset({408, 409, 429})
# The endpoint will refuse every unit alike: the run fails instead of erroring each unit.
FATAL_STATUSES = frozenset({401, 403, 404})
# The prompt estimate is characters / 4; tokenizers differ, so the budget reserves more.
PROMPT_ESTIMATE_MARGIN = Decimal("1.25")
STATUS_POLL_SECONDS = 0.5
BATCH_SECONDS = 0.05
MAX_CONCURRENCY = 64
ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
# The key variable is sent as a bearer token to the judge's URL: only variables named for an
# API key may be read, never this server's own secrets (SECRET_KEY, DATABASE_URL) or anything else.
API_KEY_ENV = re.compile(r"[A-Z][A-Z0-9_]*_API_KEY")
MAX_STORED_RESPONSE = 200_000
SCHEMA_WORDS = re.compile(r"response_format|json_schema|schema|structured|guided", re.IGNORECASE)


# --- judges -----------------------------------------------------------------------


def judge_create(
    *,
    name: str,
    kind: str = Judge.Kind.LLM,
    model: str = "",
    base_url: str = "",
    api_key_env: str = "",
    input_price: Decimal | float | str = 0,
    output_price: Decimal | float | str = 0,
    cached_input_price: Decimal | float | str | None = None,
    temperature: float = 0.0,
    max_tokens: int = 4096,
    per_criterion: bool = False,
    structured_output: bool = True,
    timeout_seconds: float | None = None,
    max_attempts: int | None = None,
    update: bool = False,
) -> tuple[Judge, bool]:
    """Creates a judge, or updates it with `update`; returns (judge, created).

    The API key itself is never taken: only the name of the environment variable
    that holds it, checked to look like a variable name so a pasted key is refused.
    """
    errors: list[str] = []
    name = name.strip()
    if not re.fullmatch(r"[-a-zA-Z0-9_]{1,100}", name):
        errors.append(f"The name '{name}' must be 1 to 100 letters, digits, '-' or '_'.")
    if kind not in Judge.Kind.values:
        errors.append(f"The kind must be one of: {', '.join(Judge.Kind.values)}.")
    if kind == Judge.Kind.LLM:
        if not model.strip():
            errors.append("An LLM judge needs a model.")
        if not re.match(r"https?://", base_url.strip()):
            errors.append("An LLM judge needs a base URL starting with http:// or https://.")
        elif refusal := base_url_refusal(base_url.strip()):
            errors.append(refusal)
        if refusal := api_key_env_refusal(api_key_env.strip()):
            errors.append(refusal)
    prices = {}
    for label, value in (("input", input_price), ("output", output_price), ("cached input", cached_input_price)):
        if value is None:
            prices[label] = None
            continue
        try:
            price = Decimal(str(value))
        except ArithmeticError:
            errors.append(f"The {label} price '{value}' is not a number.")
            continue
        if not price.is_finite() or price < 0:
            errors.append(f"The {label} price must be zero or more (USD per million tokens).")
        prices[label] = price
    if not 0 <= temperature <= 2:
        errors.append("The temperature must be between 0 and 2.")
    if max_tokens < 1:
        errors.append("max_tokens must be at least 1.")
    if timeout_seconds is not None and timeout_seconds <= 0:
        errors.append("The timeout must be positive.")
    if max_attempts is not None and not 1 <= max_attempts <= 10:
        errors.append("max_attempts must be between 1 and 10.")
    existing = Judge.objects.filter(name=name).first()
    if existing is not None and not update:
        errors.append(f"A judge named '{name}' already exists; pass --update (or tick 'update') to change it.")
    if errors:
        raise ValidationError(errors)
    values = {
        "kind": kind,
        "model": model.strip(),
        "base_url": base_url.strip(),
        "api_key_env": api_key_env.strip(),
        "input_price": prices["input"],
        "output_price": prices["output"],
        "cached_input_price": prices["cached input"],
        "temperature": temperature,
        "max_tokens": max_tokens,
        "mode": Judge.Mode.CRITERION if per_criterion else Judge.Mode.CATEGORY,
        "structured_output": structured_output,
    }
    if timeout_seconds is not None:
        values["timeout_seconds"] = timeout_seconds
    if max_attempts is not None:
        values["max_attempts"] = max_attempts
    judge, created = Judge.objects.update_or_create(name=name, defaults=values)
    return judge, created


def api_key_env_refusal(name: str) -> str:
    """Why the variable `name` may not be read as a judge's API key, or "" when it may.

    The value is never repeated in the message: what was typed may be a pasted key.
    """
    rule = (
        "a name of capital letters, digits and _ ending in _API_KEY (e.g. OPENAI_API_KEY, DEEPSEEK_API_KEY), "
        "or one listed in the JUDGE_API_KEY_ENVS setting"
    )
    if not ENV_NAME.fullmatch(name):
        return f"--api-key-env takes the NAME of the environment variable holding the key ({rule}), never the key itself."
    if API_KEY_ENV.fullmatch(name) or name in settings.JUDGE_API_KEY_ENVS:
        return ""
    return (
        f"The API key variable must be {rule}: other variables, such as SECRET_KEY or DATABASE_URL, "
        "hold this server's own secrets and are never sent to an endpoint."
    )


def base_url_refusal(url: str) -> str:
    """Why a judge may not call `url` under the JUDGE_BASE_URL_HOSTS setting, or "" (no setting: any host)."""
    hosts = {host.lower() for host in settings.JUDGE_BASE_URL_HOSTS}
    if not hosts:
        return ""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    if host in hosts:
        return ""
    return f"The base URL's host '{host}' is not one of JUDGE_BASE_URL_HOSTS ({', '.join(sorted(hosts))})."


# --- runs ---------------------------------------------------------------------------


def judge_run_create(
    *,
    campaign: Campaign,
    judge: Judge,
    swap: bool = False,
    concurrency: int = 4,
    budget_usd: Decimal | None = None,
    limit: int | None = None,
    seed: int = 0,
) -> JudgeRun:
    errors = []
    if judge.kind == Judge.Kind.IMPORTED:
        errors.append(f"'{judge.name}' holds imported verdicts; it cannot be run.")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        errors.append(f"Concurrency must be between 1 and {MAX_CONCURRENCY}.")
    if budget_usd is not None and budget_usd < 0:
        errors.append("The budget cannot be negative.")
    if limit is not None and limit < 1:
        errors.append("The pair limit must be at least 1.")
    if errors:
        raise ValidationError(errors)
    return JudgeRun.objects.create(
        campaign=campaign, judge=judge, swap=swap, concurrency=concurrency, budget_usd=budget_usd, limit=limit, seed=seed
    )


def judge_run_start(
    *,
    campaign: Campaign,
    judge: Judge,
    swap: bool = False,
    concurrency: int = 4,
    budget_usd: Decimal | None = None,
    limit: int | None = None,
    seed: int = 0,
) -> JudgeRun:
    """Creates a run and queues it for a worker (`manage.py db_worker`); nothing runs here."""
    from judges.tasks import judge_run_task

    run = judge_run_create(
        campaign=campaign, judge=judge, swap=swap, concurrency=concurrency, budget_usd=budget_usd, limit=limit, seed=seed
    )
    result = judge_run_task.enqueue(run.pk)
    run.task_id = str(result.id)
    run.save(update_fields=["task_id"])
    return run


def judge_run_stop(*, run: JudgeRun) -> JudgeRun:
    """A queued run never starts; a running one stops after the units in flight."""
    now = timezone.now()
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.QUEUED).update(
        status=JudgeRun.Status.STOPPED, message="Stopped before it started.", finished_at=now
    )
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING).update(status=JudgeRun.Status.STOPPING)
    run.refresh_from_db()
    return run


# --- the engine: what worker threads do (no database) ---------------------------------------


@dataclass(frozen=True)
class _Settings:
    """What a worker thread needs from the judge, copied so threads never touch the ORM."""

    model: str
    temperature: float
    max_tokens: int
    max_attempts: int
    input_price: Decimal
    cached_input_price: Decimal | None
    output_price: Decimal
    secret: str

    @classmethod
    def of(cls, judge: Judge, secret: str) -> _Settings:
        return cls(
            model=judge.model,
            temperature=judge.temperature,
            max_tokens=judge.max_tokens,
            max_attempts=judge.max_attempts,
            input_price=Decimal(judge.input_price),
            cached_input_price=None if judge.cached_input_price is None else Decimal(judge.cached_input_price),
            output_price=Decimal(judge.output_price),
            secret=secret,
        )

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> Decimal:
        return token_cost(judge=self, prompt_tokens=prompt_tokens, cached_tokens=cached_tokens, completion_tokens=completion_tokens)

    def worst_case(self, request: JudgeRequest) -> Decimal:
        prompt = Decimal(estimate_prompt_tokens(request)) * PROMPT_ESTIMATE_MARGIN
        return (prompt * self.input_price + Decimal(self.max_tokens) * self.output_price) / Decimal(1_000_000)

    def scrub(self, text: str) -> str:
        return text.replace(self.secret, "[key]") if self.secret else text


class _Ledger:
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


@dataclass
class _Attempt:
    number: int
    request_hash: str
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
class _Outcome:
    """How a unit ended: verdicts (done), an error, or neither (left pending: budget or a fatal refusal)."""

    attempts: list[_Attempt] = field(default_factory=list)
    verdicts: dict[str, tuple[str, str]] | None = None
    error: str = ""
    budget: bool = False
    fatal: str = ""


@dataclass
class _Job:
    plan: UnitPlan
    unit_id: int
    request: JudgeRequest | None = None
    request_hash: str = ""
    plain_hash: str = ""  # the request's hash without its JSON schema ("" when it has none)
    reserved: Decimal = Decimal(0)


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
        return max(0.0, (parsedate_to_datetime(value) - timezone.now()).total_seconds())
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


class _PlainJson:
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


def _unit_call(job: _Job, client: openai.OpenAI, settings: _Settings, ledger: _Ledger, plain: _PlainJson) -> _Outcome:
    """Sends one unit's request until it yields verdicts or the retries run out (worker thread)."""
    outcome = _Outcome()
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
        attempt = _Attempt(number=len(outcome.attempts) + 1, request_hash=sent_hash)
        outcome.attempts.append(attempt)
        started = time.monotonic()
        try:
            body = client.post("/chat/completions", body=arguments, cast_to=bytes)
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            attempt.latency_ms = round((time.monotonic() - started) * 1000)
            attempt.http_status, message = _http_error(exc)
            attempt.error = settings.scrub(message)
            status = attempt.http_status
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
        completion = read_completion(body)
        attempt.prompt_tokens, attempt.cached_tokens = completion.prompt_tokens, completion.cached_tokens
        attempt.completion_tokens = completion.completion_tokens
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
            reason = str(exc)
            if completion.problem:
                reason = completion.problem
            elif completion.finish_reason == "length":
                reason = f"cut off at max_tokens ({settings.max_tokens}): {reason}"
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


def _work_loop(
    ready: queue.Queue,
    answers: queue.Queue,
    halt: threading.Event,
    client: openai.OpenAI,
    settings: _Settings,
    ledger: _Ledger,
    plain: _PlainJson,
) -> None:
    """One worker: takes the next request, reserves its worst case against the budget, sends it (worker thread)."""
    try:
        while True:
            job = ready.get()
            if job is None or halt.is_set():
                return
            job.reserved = settings.worst_case(job.request)
            if not ledger.reserve(job.reserved):
                answers.put((job, _Outcome(budget=True)))
                halt.set()
                return
            answers.put((job, _unit_call(job, client, settings, ledger, plain)))
    except BaseException:
        halt.set()
        raise
    finally:
        answers.put(None)  # this loop is over


def _drain(answers: queue.Queue, *, timeout: float, outstanding: int, gather: float = BATCH_SECONDS) -> tuple[list, int]:
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


def _baseline_verdicts(plan: UnitPlan, texts: dict[int, str], judge: Judge, seed: int, allow_tie: bool) -> dict[str, tuple[str, str]]:
    pair = plan.pair
    first, second = (pair.article_a_id, pair.article_b_id) if plan.a_first else (pair.article_b_id, pair.article_a_id)
    text_1, text_2 = texts[first], texts[second]
    verdicts = {}
    for criterion in plan.criteria:
        if judge.kind == Judge.Kind.LENGTH:
            position, reason = baselines.length_verdict(text_1, text_2), "The longer article."
        elif judge.kind == Judge.Kind.WORDS_TO_WATCH:
            position = baselines.words_to_watch_verdict(text_1, text_2, criterion_key=criterion.key, watch_class=criterion.watch_class)
            reason = "Fewer words to watch."
        else:
            position = baselines.random_verdict(seed=seed, parts=(pair.pk, criterion.key, plan.a_first), allow_tie=allow_tie)
            reason = "A seeded coin."
        if position == "tie" and not allow_tie:
            # The campaign has no ties: an undecided baseline falls back on a seeded coin.
            position = baselines.random_verdict(seed=seed, parts=(pair.pk, criterion.key, plan.a_first), allow_tie=False)
            reason += " Undecided; a seeded coin chose."
        verdicts[criterion.key] = (position, reason)
    return verdicts


# --- the engine: the calling thread (every database write) --------------------------------


def _verdicts_insert(rows: list[tuple]) -> None:
    """(unit_id, call_id, criterion_id, winner, reason) rows, in one statement run many times.

    Plain SQL on the hot path: a run writes a verdict per criterion, and building
    model instances for bulk_create cost several times the insert itself. Every
    value is an id or text already checked; the database constraints still apply.
    """
    if not rows:
        return
    table = connection.ops.quote_name(JudgeVerdict._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(JudgeVerdict._meta.get_field(name).column) for name in ("unit", "call", "criterion", "winner", "reason"))
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES (%s, %s, %s, %s, %s)", rows)


def _side(position: str, a_first: bool) -> str:
    if position == "tie":
        return "tie"
    return "a" if (position == "1") == a_first else "b"


class _Engine:
    def __init__(self, run: JudgeRun, progress: Callable[[JudgeRun], None] | None) -> None:
        self.run = run
        self.judge = run.judge
        self.progress = progress
        self.ledger = _Ledger(None if run.budget_usd is None else Decimal(run.budget_usd))
        self.stop_reason = ""
        self.budget_hit = False
        self.fatal = ""
        self.plain = _PlainJson()
        self._polled = 0.0

    # -- status

    def should_stop(self) -> bool:
        if self.stop_reason:
            return True
        now = time.monotonic()
        if now - self._polled >= STATUS_POLL_SECONDS:
            self._polled = now
            status = JudgeRun.objects.filter(pk=self.run.pk).values_list("status", flat=True).first()
            if status != JudgeRun.Status.RUNNING:
                self.stop_reason = status or "deleted"
        return bool(self.stop_reason)

    # -- storing

    def store(self, results: list[tuple[_Job, _Outcome]]) -> None:
        """Writes finished units in one transaction: their calls, verdicts, statuses and the run's counters.

        Batched because units finish together at high concurrency: the queries per
        batch do not grow with its size, which keeps this thread ahead of the HTTP threads.
        """
        run, now = self.run, timezone.now()
        calls: list[JudgeCall] = []
        valid_calls: dict[int, JudgeCall] = {}
        for job, outcome in results:
            for a in outcome.attempts:
                call = JudgeCall(
                    unit_id=job.unit_id, run_id=run.pk, attempt=a.number, request_hash=a.request_hash, from_cache=a.from_cache,
                    valid=a.valid, http_status=a.http_status, error=a.error, raw_response=a.raw_response,
                    prompt_tokens=a.prompt_tokens, cached_tokens=a.cached_tokens, completion_tokens=a.completion_tokens,
                    cost_usd=a.cost_usd, latency_ms=a.latency_ms,
                )
                calls.append(call)
                if a.valid:
                    valid_calls[job.unit_id] = call
        finished = [(job, outcome) for job, outcome in results if outcome.verdicts is not None or outcome.error]
        fresh = {
            a.request_hash: CachedResponse(
                request_hash=a.request_hash, model=self.judge.model, content=a.raw_response,
                prompt_tokens=a.prompt_tokens, cached_tokens=a.cached_tokens, completion_tokens=a.completion_tokens,
            )
            for _, outcome in results
            for a in outcome.attempts
            if a.valid and not a.from_cache
        }
        with transaction.atomic():
            # Locked and re-read: if another run finished a unit meanwhile, its verdicts stand.
            statuses = dict(JudgeUnit.objects.select_for_update().filter(pk__in=[job.unit_id for job, _ in finished]).values_list("pk", "status"))
            taken = {pk for pk, status in statuses.items() if status == JudgeUnit.Status.DONE}
            JudgeCall.objects.bulk_create(calls)
            done = [(job, outcome) for job, outcome in finished if outcome.verdicts is not None and job.unit_id not in taken]
            failed = [(job, outcome) for job, outcome in finished if outcome.verdicts is None and job.unit_id not in taken]
            if done:
                ids = [job.unit_id for job, _ in done]
                JudgeUnit.objects.filter(pk__in=ids).update(status=JudgeUnit.Status.DONE, error="", run=run, updated_at=now)
                if any(statuses.get(pk) == JudgeUnit.Status.ERROR for pk in ids):
                    # An imported unit in error may hold the verdicts it had.
                    JudgeVerdict.objects.filter(unit_id__in=ids).delete()
                rows = []
                for job, outcome in done:
                    by_key = {c.key: c.pk for c in job.plan.criteria}
                    call = valid_calls.get(job.unit_id)
                    rows += [
                        (job.unit_id, call.pk if call else None, by_key[key], _side(position, job.plan.a_first), reason)
                        for key, (position, reason) in outcome.verdicts.items()
                    ]
                _verdicts_insert(rows)
            for job, outcome in failed:
                JudgeUnit.objects.filter(pk=job.unit_id).update(status=JudgeUnit.Status.ERROR, error=outcome.error, run=run, updated_at=now)
            if fresh:
                CachedResponse.objects.bulk_create(list(fresh.values()), ignore_conflicts=True)
            counters = {
                "units_done": len(done),
                "errors": len(failed),
                "calls": len(calls),
                "prompt_tokens": sum(c.prompt_tokens for c in calls),
                "cached_tokens": sum(c.cached_tokens for c in calls),
                "completion_tokens": sum(c.completion_tokens for c in calls),
                "cost_usd": sum((c.cost_usd for c in calls), Decimal(0)),
            }
            changed = {name: value for name, value in counters.items() if value}
            if changed:
                JudgeRun.objects.filter(pk=run.pk).update(**{name: F(name) + value for name, value in changed.items()})
        for name, value in counters.items():
            setattr(run, name, getattr(run, name) + value)
        if self.progress is not None:
            self.progress(run)

    # -- planning

    def prepare(self) -> tuple[Plan, list[_Job]]:
        """The plan and a job per unit not done yet; their rows come later, from `units_ensure`."""
        run = self.run
        plan = run_plan(campaign=run.campaign, judge=self.judge, swap=run.swap, limit=run.limit, seed=run.seed)
        jobs = [_Job(plan=u, unit_id=0) for u in plan.pending()]
        run.units_total = len(plan.units)
        run.units_done = len(plan.units) - len(jobs)
        JudgeRun.objects.filter(pk=run.pk).update(units_total=run.units_total, units_done=run.units_done)
        return plan, jobs

    def units_ensure(self, plan: Plan, jobs: list[_Job]) -> None:
        """Creates the rows of units never planned before and gives every job its unit's id.

        Separate from `prepare` so that the first requests are on their way meanwhile.
        """
        missing = [u for u in plan.units if u.key not in plan.stored]
        if missing:
            JudgeUnit.objects.bulk_create(
                [
                    JudgeUnit(judge=self.judge, pair=u.pair, category=u.category, criterion=u.criterion, a_first=u.a_first, run=self.run)
                    for u in missing
                ],
                ignore_conflicts=True,
            )
            # ignore_conflicts gives no primary keys back: read the units again.
            pairs = {u.pair.pk for u in plan.units}
            plan.stored = {
                (u.pair_id, u.category_id, u.criterion_id, u.a_first): u for u in JudgeUnit.objects.filter(judge=self.judge, pair__in=pairs)
            }
        for job in jobs:
            job.unit_id = plan.stored[job.plan.key].pk

    # -- running

    def run_baseline(self, plan: Plan, jobs: list[_Job], batch: int = 50) -> None:
        self.units_ensure(plan, jobs)
        for start in range(0, len(jobs), batch):
            if self.should_stop():
                return
            self.store([
                (job, _Outcome(verdicts=_baseline_verdicts(job.plan, plan.texts, self.judge, self.run.seed, plan.campaign.allow_tie)))
                for job in jobs[start : start + batch]
            ])

    def run_llm(self, plan: Plan, jobs: list[_Job], client: openai.OpenAI, settings: _Settings) -> None:
        """`run.concurrency` worker loops take prepared requests from `ready` and put answers in `answers`.

        This thread keeps `ready` stocked (building requests, answering from the
        cache) and writes the answers in batches, so a worker never waits for the
        database before sending its next request.
        """
        concurrency = self.run.concurrency
        ready: queue.Queue[_Job | None] = queue.Queue()
        answers: queue.Queue[tuple[_Job, _Outcome]] = queue.Queue()
        halt = threading.Event()
        pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"judge-run-{self.run.pk}")
        loops = [pool.submit(_work_loop, ready, answers, halt, client, settings, self.ledger, self.plain) for _ in range(concurrency)]
        source = self._with_cache(plan, jobs)
        sealed = False
        running = concurrency
        outstanding = 0  # requests handed to the workers and not answered yet
        ensured = False

        def seal() -> None:
            # One end marker per loop: each takes one and returns.
            nonlocal sealed
            if not sealed:
                sealed = True
                for _ in loops:
                    ready.put(None)

        try:
            while True:
                if self.budget_hit or self.fatal or self.should_stop():
                    halt.set()
                    seal()
                cached: list[tuple[_Job, _Outcome]] = []
                while not sealed and ready.qsize() < 2 * concurrency and len(cached) < 50:
                    item = next(source, None)
                    if item is None:
                        seal()
                    elif item[1] is not None:
                        cached.append(item)
                    else:
                        ready.put(item[0])
                        outstanding += 1
                if not ensured:
                    self.units_ensure(plan, jobs)
                    ensured = True
                if cached:
                    self.store(cached)
                batch, ended = _drain(answers, timeout=STATUS_POLL_SECONDS, outstanding=outstanding)
                running -= ended
                outstanding -= len(batch)
                for _, outcome in batch:
                    self.budget_hit = self.budget_hit or outcome.budget
                    self.fatal = self.fatal or outcome.fatal
                if batch:
                    self.store(batch)
                if not running:
                    break
        except BaseException:
            # Ctrl-C or a database error: send nothing more; answers in flight are lost, their units stay pending.
            halt.set()
            seal()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        for loop in loops:
            loop.result()  # a bug in a worker fails the run rather than vanishing

    def _with_cache(self, plan: Plan, jobs: list[_Job], *, first: int = 4, chunk: int = 16):
        """Jobs with their requests and the cached answer if any, by small chunks: building requests
        holds the interpreter lock, so it is spread out rather than done in bursts that delay the workers."""
        if not jobs:
            return
        bounds = [0, *range(min(first, chunk), len(jobs), chunk), len(jobs)]
        for start, end in zip(bounds, bounds[1:]):
            batch = jobs[start:end]
            for job in batch:
                job.request = plan.request(job.plan)
                job.request_hash, job.plain_hash = plan.request_hashes(job.request)
            # An answer to the request without its schema serves too: the endpoint refused the schema before.
            hashes = [digest for job in batch for digest in (job.request_hash, job.plain_hash) if digest]
            cached = {c.request_hash: c for c in CachedResponse.objects.filter(request_hash__in=hashes)}
            for job in batch:
                hit = cached.get(job.request_hash) or cached.get(job.plain_hash)
                yield job, (self._from_cache(job, hit) if hit is not None else None)

    def _from_cache(self, job: _Job, hit: CachedResponse) -> _Outcome | None:
        try:
            verdicts = parse_verdicts(hit.content, criteria=job.request.criteria, allow_tie=job.request.allow_tie)
        except InvalidResponse:
            return None
        attempt = _Attempt(number=1, request_hash=hit.request_hash, from_cache=True, valid=True, raw_response=hit.content)
        return _Outcome(attempts=[attempt], verdicts=verdicts)

    def finish(self) -> None:
        run = self.run
        if self.fatal:
            status, message = JudgeRun.Status.FAILED, f"The endpoint refused the run: {self.fatal}"
        elif self.budget_hit:
            status = JudgeRun.Status.BUDGET
            message = f"Stopped at the budget: ${run.cost_usd:.8f} spent of ${Decimal(run.budget_usd):f}; the next request could have cost more than what was left."
        elif self.stop_reason == JudgeRun.Status.STOPPING:
            status, message = JudgeRun.Status.STOPPED, "Stopped on request."
        elif self.stop_reason:
            return  # someone else set the status (a newer run took over): leave it
        else:
            status, message = JudgeRun.Status.FINISHED, ""
        pending = run.units_total - run.units_done - run.errors
        if run.errors:
            message = f"{message} {run.errors} unit(s) in error (no verdict).".strip()
        if self.plain.reason:
            message = (
                f"{message} The endpoint refused the JSON schema ({self.plain.reason}); the run asked for plain JSON "
                "instead and read the answers tolerantly. Turn structured output off for this judge to skip the refused requests."
            ).strip()
        if status != JudgeRun.Status.FINISHED and pending:
            message = f"{message} {pending} unit(s) left; start the run again to resume.".strip()
        _run_close(run, status=status, message=message)


def _run_close(run: JudgeRun, *, status: str, message: str) -> None:
    now = timezone.now()
    JudgeRun.objects.filter(pk=run.pk, status__in=[JudgeRun.Status.RUNNING, JudgeRun.Status.STOPPING, JudgeRun.Status.QUEUED]).update(
        status=status, message=message, finished_at=now
    )
    run.refresh_from_db()


_clients: dict[tuple[str, str, float, int], openai.OpenAI] = {}
_clients_lock = threading.Lock()
MAX_CLIENTS = 16


def _client(judge: Judge, secret: str, concurrency: int) -> openai.OpenAI:
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


def judge_run_execute(*, run: JudgeRun, progress: Callable[[JudgeRun], None] | None = None) -> JudgeRun:
    """Judges every pending unit of the run, then sets its final status (see the module docstring)."""
    now = timezone.now()
    if not JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.QUEUED).update(status=JudgeRun.Status.RUNNING, started_at=now):
        run.refresh_from_db()
        return run  # stopped before it started, or already taken by another worker
    run.refresh_from_db()
    judge = run.judge
    # A run of the same judge on the same campaign left "running" was killed (or is superseded): this one takes over.
    JudgeRun.objects.filter(campaign_id=run.campaign_id, judge=judge, status__in=[JudgeRun.Status.RUNNING, JudgeRun.Status.STOPPING]).exclude(
        pk=run.pk
    ).update(status=JudgeRun.Status.STOPPED, message=f"Interrupted; run #{run.pk} took over its remaining units.", finished_at=now)
    engine = _Engine(run, progress)
    try:
        if judge.kind == Judge.Kind.IMPORTED:
            _run_close(run, status=JudgeRun.Status.FAILED, message=f"'{judge.name}' holds imported verdicts; it cannot be run.")
            return run
        if judge.kind != Judge.Kind.LLM:
            engine.run_baseline(*engine.prepare())
        else:
            # Checked again here: a judge stored before these rules (or edited in the admin) may break them.
            refusal = (api_key_env_refusal(judge.api_key_env) if judge.api_key_env else "") or base_url_refusal(judge.base_url)
            if refusal:
                _run_close(
                    run,
                    status=JudgeRun.Status.FAILED,
                    message=f"Not run, nothing was sent: {refusal} Fix the judge (add_judge --update) first.",
                )
                return run
            secret = os.environ.get(judge.api_key_env, "") if judge.api_key_env else ""
            if not secret:
                _run_close(
                    run,
                    status=JudgeRun.Status.FAILED,
                    message=f"The environment variable {judge.api_key_env or '(none configured)'} that should hold the API key is not set.",
                )
                return run
            plan, jobs = engine.prepare()
            engine.run_llm(plan, jobs, _client(judge, secret, run.concurrency), _Settings.of(judge, secret))
    except KeyboardInterrupt:
        _run_close(run, status=JudgeRun.Status.STOPPED, message="Interrupted; start the run again to resume.")
        raise
    except Exception as exc:
        _run_close(run, status=JudgeRun.Status.FAILED, message=f"{type(exc).__name__}: {exc}")
        raise
    engine.finish()
    return run


# --- importing Wiki Live Challenge results ---------------------------------------------------

WLC_WINNERS = {"gt", "gen", "tie"}


@dataclass
class ResultsImport:
    judge: Judge | None = None
    judge_created: bool = False
    files: int = 0
    pairs_created: int = 0
    verdicts: int = 0
    errors: int = 0
    ties_outside_policy: int = 0
    units: dict[str, int] = field(default_factory=lambda: {"new": 0, "updated": 0, "unchanged": 0})
    problems: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)


def _results_topic(campaign: Campaign, title: str, campaign_topics: set[int]):
    """The topic a results file names, by the lookup rules of `annotate.labels_io`."""
    topics = list(Topic.objects.filter(title=title).order_by("id"))
    inside = [t for t in topics if t.id in campaign_topics]
    topics = inside or topics
    if not topics:
        return None, f"unknown topic '{title}'"
    if len(topics) > 1:
        return None, f"topic '{title}' is ambiguous: {len(topics)} benchmarks have a topic with that title"
    return topics[0], ""


def wlc_results_import(*, campaign: Campaign, judge_name: str, system: str, files: list[tuple[str, object]]) -> ResultsImport:
    """Imports verdict files of the Wiki Live Challenge evaluation script as an imported judge's units.

    In that protocol the reference ("gt") is always Article 1, the system ("gen")
    Article 2. Its script writes a tie whose reason starts with "Error:" when the API
    call failed: those become units in ERROR, never ties. Files with problems are
    reported by name and skipped (unknown criteria only skip their entries).
    """
    report = ResultsImport()
    errors = []
    judge = Judge.objects.filter(name=judge_name).first()
    if judge is not None and judge.kind != Judge.Kind.IMPORTED:
        errors.append(f"The judge '{judge_name}' is a {judge.get_kind_display()} judge; import into a new name.")
    if not re.fullmatch(r"[-a-zA-Z0-9_]{1,100}", judge_name):
        errors.append(f"The judge name '{judge_name}' must be 1 to 100 letters, digits, '-' or '_'.")
    reference = campaign.reference_system or System.objects.filter(is_reference=True).first()
    if reference is None:
        errors.append(f"The campaign '{campaign.name}' has no reference system to stand for 'gt'.")
    if not System.objects.filter(key=system).exists():
        errors.append(f"Unknown system '{system}'.")
    if errors:
        raise ValidationError(errors)
    criteria = {c.key: c for c in campaign.criterion_set.criteria.select_related("category")}
    pairs = {frozenset((p.article_a_id, p.article_b_id)): p for p in campaign.pairs.all()}
    campaign_topics = {p.topic_id for p in pairs.values()}

    # (pair, a_first, category) -> [(criterion, side or None, reason)]
    wanted: dict[tuple, list] = {}
    new_pairs = []
    for name, data in files:
        report.files += 1
        if not isinstance(data, dict) or not isinstance(data.get("topic"), str) or not isinstance(data.get("details"), dict):
            report.problems.append((name, "not a results file: expected an object with 'topic' and 'details'"))
            continue
        if data.get("mode", "winrate") != "winrate":
            report.problems.append((name, f"mode is '{data.get('mode')}', only 'winrate' files can be imported"))
            continue
        topic, problem = _results_topic(campaign, data["topic"], campaign_topics)
        if topic is None:
            report.problems.append((name, problem))
            continue
        articles = {a.system.key: a for a in Article.objects.filter(topic=topic, system__key__in=[reference.key, system]).select_related("system")}
        missing = [key for key in (reference.key, system) if key not in articles]
        if missing:
            report.problems.append((name, f"no article by {', '.join(repr(m) for m in missing)} on topic '{topic.title}'"))
            continue
        gt, gen = articles[reference.key], articles[system]
        pair = pairs.get(frozenset((gt.id, gen.id)))
        if pair is None:
            pair = Pair(campaign=campaign, topic=topic, article_a=gt, article_b=gen)
            pairs[frozenset((gt.id, gen.id))] = pair
            new_pairs.append(pair)
        a_is_gt = pair.article_a_id == gt.id
        file_errors = 0
        for block in data["details"].values():
            if not isinstance(block, list):
                report.problems.append((name, "a category in 'details' is not a list of verdicts"))
                continue
            for entry in block:
                key = entry.get("criterion_id") if isinstance(entry, dict) else None
                criterion = criteria.get(key)
                if criterion is None:
                    report.problems.append((name, f"unknown criterion '{key}' (not in {campaign.criterion_set})"))
                    continue
                winner, reason = entry.get("winner"), entry.get("reason") or ""
                if not isinstance(reason, str):
                    reason = str(reason)
                if reason.lstrip().startswith("Error:"):
                    side = None
                    file_errors += 1
                elif winner not in WLC_WINNERS:
                    report.problems.append((name, f"{key}: winner '{winner}' is not gt, gen or tie"))
                    continue
                elif winner == "tie":
                    side = "tie"
                    report.ties_outside_policy += not campaign.allow_tie
                else:
                    side = "a" if (winner == "gt") == a_is_gt else "b"
                wanted.setdefault((frozenset((gt.id, gen.id)), a_is_gt, criterion.category_id), []).append((criterion, side, reason))
        if file_errors:
            report.notes.append((name, f"{file_errors} verdict(s) were API errors in the source ('Error: …'): imported as errors, not ties"))

    with transaction.atomic():
        if judge is None:
            judge = Judge.objects.create(name=judge_name, kind=Judge.Kind.IMPORTED, model=f"imported:{judge_name}")
            report.judge_created = True
        report.judge = judge
        if new_pairs:
            top = max((p.order for p in campaign.pairs.all()), default=0)
            for offset, pair in enumerate(new_pairs, 1):
                pair.order = top + offset
            Pair.objects.bulk_create(new_pairs)
            report.pairs_created = len(new_pairs)
        categories = {c.category_id: c.category for c in criteria.values()}
        expected: dict[int, set[str]] = {}
        for criterion in criteria.values():
            expected.setdefault(criterion.category_id, set()).add(criterion.key)
        for (pair_key, a_first, category_id), rows in wanted.items():
            pair = pairs[pair_key]
            verdicts = {c.key: (c, side, reason) for c, side, reason in rows}
            failed = [f"{key}: {reason}" for key, (_, side, reason) in verdicts.items() if side is None]
            absent = sorted(expected[category_id] - set(verdicts))
            if absent:
                failed.append(f"no verdict in the results file for {', '.join(absent)}")
            status = JudgeUnit.Status.ERROR if failed else JudgeUnit.Status.DONE
            unit, created = JudgeUnit.objects.get_or_create(
                judge=judge, pair=pair, category=categories[category_id], criterion=None, a_first=a_first, defaults={"status": status}
            )
            stored = {(v.criterion_id, v.winner, v.reason) for v in unit.verdicts.all()}
            fresh = {(c.id, side, reason) for c, side, reason in verdicts.values() if side is not None}
            error = "\n".join(failed)
            if not created and stored == fresh and (unit.status, unit.error) == (status, error):
                report.units["unchanged"] += 1
            else:
                report.units["new" if created else "updated"] += 1
                unit.verdicts.all().delete()
                JudgeVerdict.objects.bulk_create([JudgeVerdict(unit=unit, criterion_id=cid, winner=side, reason=reason) for cid, side, reason in fresh])
                JudgeUnit.objects.filter(pk=unit.pk).update(status=status, error=error, updated_at=timezone.now())
            report.verdicts += len(fresh)
            report.errors += sum(1 for _, side, _ in verdicts.values() if side is None)
    return report
