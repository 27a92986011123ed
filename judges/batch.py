"""Batch runs: a judge run sent through the provider's Batch API (`/v1/files` + `/v1/batches`).

OpenAI, Azure OpenAI and the endpoints that mimic them answer a file of
chat-completions requests within 24 hours at about half the price. A run with
`run.batch` (`run_judges --batch`, the web's "Batch API" box) goes through
`run_batch` instead of the worker threads of `judges.transport`; the database
side is the engine's (`engine.store` writes what comes back exactly as it writes
synchronous answers: verdicts, errors, calls, counters, the cache).

Submitting. Units the cache answers are stored at once. Every other unit becomes
a JSONL line whose `body` is the request the transport would send (response_format
included while the endpoint takes the schema) and whose `custom_id` is
`<submission>-u<unit>-a<attempt>`, the submission being a random id per batch file.
Lines go in files of at most JUDGE_BATCH_MAX_LINES lines (50,000, OpenAI's limit) and
MAX_FILE_BYTES. Each line's worst case at the judge's batch prices is held in the run's
ledger first (a budget submits only what fits), and its call row is written ahead,
status "sent", with the custom_id as its client request id, before the file leaves.
The file is uploaded, the batch created with metadata naming the app, judge, campaign,
run and submission, and then a `JudgeBatch` row records it and the sent calls are linked to it.

Polling. Every JUDGE_BATCH_POLL_SECONDS (10 s) each open batch is retrieved; the run's
progress callback sees the figures (`open_batches_summary`). A stop (the web's Stop
button, or another run taking over) leaves the batches at the provider. An ended batch
(completed, expired, failed, cancelled) has its output and error files read: each line
becomes an `Attempt` (batch, response id, the provider's request id, tokens, cost at the
batch prices, raw response) and an `Outcome` (verdicts, an error, or pending), stored in
chunks. A call with no line never ran (expired, cancelled, failed batch): it is recorded
unbilled and its unit stays pending; the run's message says which batch and why.

Retries go in a follow-up batch, at the batch prices, after the batch that needed them
is read: an unreadable answer up to the judge's `max_attempts` (then the unit is ERROR
with the reason, as in a synchronous run), a 429/408/409/5xx line up to
`transport.HTTP_RETRIES` times, and a 400 naming the JSON schema once, without the schema
(the run's message says so, as in a synchronous run). 401/403/404 lines fail the run.

Resuming never submits a unit twice. A run first takes over what earlier runs of the same
judge on the same campaign left: batches not read yet are polled and read (their sent
calls become this run's, and their units are not submitted again). A kill between "the
provider accepted the batch" and "its row is stored" leaves sent calls with no batch: the
provider's batch list is searched for their submission id in the metadata, and a batch
found is recorded and polled; a submission the provider does not have never left, so its
rows are dropped and its units submitted again. Reading is idempotent: a line whose call
is no longer "sent" was stored already and is skipped.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal

import openai
from django.conf import settings as django_settings
from django.db import transaction
from django.db.models import Q

import protocols
from annotate.answers import on_pair
from judges.models import JudgeBatch, JudgeCall, JudgeRun, JudgeUnit
from judges.pricing import batch_prices
from judges.selectors import GUESS, RunPlan, UnitPlan, campaign_categories, campaign_units_q, criterion_protocol, judged
from judges.transport import (
    FATAL_STATUSES,
    HTTP_RETRIES,
    MAX_STORED_RESPONSE,
    RETRYABLE_STATUSES,
    SCHEMA_WORDS,
    Attempt,
    CallSettings,
    Job,
    Outcome,
)
from judges.wire import read_completion, unreadable_reason
from protocols.base import InvalidResponse, JudgeRequest, retry_messages

ENDPOINT = "/v1/chat/completions"
SUBMISSION_PREFIX = "sub-"
ENDED = frozenset({"completed", "expired", "failed", "cancelled"})
MAX_LINES = 50_000  # per batch file, OpenAI's limit; the JUDGE_BATCH_MAX_LINES setting lowers it
MAX_FILE_BYTES = 190_000_000  # OpenAI takes batch files up to 200 MB
POLL_SECONDS = 10.0  # the JUDGE_BATCH_POLL_SECONDS setting changes it
STORE_CHUNK = 200
WAIT_SLICE_SECONDS = 0.25
# Provider clocks differ from ours: a batch this much older than the oldest unrecorded call may still be it.
ADOPT_MARGIN_SECONDS = 3600


@dataclass
class _Line:
    job: Job
    number: int  # the attempt
    reserved: Decimal
    request_hash: str
    body: bytes  # the request, as JSON


def run_batch(engine, plan: RunPlan, jobs: list[Job], client: openai.OpenAI, settings: CallSettings) -> str:
    """Judges the run's pending units through the Batch API (see the module docstring).

    `engine` is the run's `judges.engine.Engine`, used through its public methods only. Returns a note for the run's message
    ("" when there is nothing to say): batches left at the provider, requests that never ran.
    """
    engine.units_ensure(plan, jobs)
    work = _BatchRun(engine, plan, jobs, client, settings)
    awaited = work.resume()
    work.submit_fresh([job for job in jobs if job.unit_id not in awaited])
    work.poll()
    return work.note()


def open_batches_summary(run: JudgeRun) -> str:
    """What the provider holds for the run's judge and campaign, for progress lines ("" when nothing)."""
    rows = list(
        JudgeBatch.objects.filter(judge_id=run.judge_id, run__campaign_id=run.campaign_id)
        .exclude(status=JudgeBatch.Status.READ)
        .values_list("provider_status", "requests", "completed", "failed")
    )
    if not rows:
        return ""
    statuses = ", ".join(sorted({status or "submitted" for status, *_ in rows}))
    answered = sum(completed + failed for _, _, completed, failed in rows)
    return f"{len(rows)} batch(es) at the provider ({statuses}): {answered}/{sum(r[1] for r in rows)} requests answered"


def _submission_of(custom_id: str) -> str:
    return custom_id.rsplit("-u", 1)[0]


def _error_message(body) -> str:
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return json.dumps(body)[:500] if body is not None else "no body"


def _line_error(line: dict) -> str:
    error = line.get("error")
    if isinstance(error, dict):
        return f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
    return "the line has no response"


def _ended_reason(batch) -> str:
    if batch.status == "expired":
        return "the batch expired at the provider before this request ran"
    if batch.status == "cancelled":
        return "the batch was cancelled at the provider"
    if batch.status == "failed":
        errors = getattr(batch.errors, "data", None) or []
        detail = "; ".join(e.message or e.code or "" for e in errors if e is not None)[:500]
        return f"the batch failed at the provider{f': {detail}' if detail else ''}"
    return "the provider returned no line for this request"


def _described(exc: openai.APIError) -> str:
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {exc.message}"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout: no answer in time"
    return f"connection error: {exc}"


class _BatchRun:
    def __init__(self, engine, plan: RunPlan, jobs: list[Job], client: openai.OpenAI, settings: CallSettings) -> None:
        self.engine, self.plan, self.run, self.judge = engine, plan, engine.run, engine.judge
        prices = batch_prices(self.judge)
        self.prices = dataclasses.replace(
            settings,
            input_price=prices.input_price,
            cached_input_price=prices.cached_input_price,
            output_price=prices.output_price,
            pacer=None,
        )
        # Uploads, polls and downloads are safe to repeat, so the client retries them; creating a batch is not (see _submit_file).
        self.client = client.with_options(max_retries=3)
        self.create_client = client
        self.max_lines = max(1, int(getattr(django_settings, "JUDGE_BATCH_MAX_LINES", MAX_LINES)))
        self.poll_seconds = float(getattr(django_settings, "JUDGE_BATCH_POLL_SECONDS", POLL_SECONDS))
        self.jobs = {job.unit_id: job for job in jobs}
        self.outside: set[int] = set()  # units of batches taken over that this run did not plan: read, never retried
        self.held: dict[str, Decimal] = {}  # custom_id -> the worst case held in the ledger until its line is read
        self.invalid: Counter[int] = Counter()
        # unit -> its last unreadable answer and why: the retry's line carries both (protocols.base.retry_messages).
        self.feedback: dict[int, tuple[str, str]] = {}
        self.http_failures: Counter[int] = Counter()
        self.retries: list[tuple[Job, int]] = []
        self.open: list[JudgeBatch] = []
        self.notes: list[str] = []
        self._criteria: dict[int, tuple] | None = None

    # -- taking over what earlier runs left

    def resume(self) -> set[int]:
        """Takes over the batches earlier runs of this judge on this campaign left at the provider, and
        returns the units whose answers are awaited there: polled for, never submitted again."""
        mine = JudgeCall.objects.filter(
            campaign_units_q(self.plan.campaign, "unit__"), unit__judge=self.judge, status=JudgeCall.Status.SENT
        )
        unlinked = mine.filter(batch__isnull=True, client_request_id__startswith=SUBMISSION_PREFIX)
        orphans = list(unlinked.values_list("client_request_id", "created_at"))
        if orphans:
            self._adopt({_submission_of(custom_id) for custom_id, _ in orphans}, since=min(at for _, at in orphans))
        self.open = list(
            JudgeBatch.objects.filter(
                judge=self.judge, run__campaign=self.plan.campaign, status__in=[JudgeBatch.Status.SUBMITTED, JudgeBatch.Status.ENDED]
            )
        )
        awaited: set[int] = set()
        if self.open:
            calls = mine.filter(batch__in=self.open)
            # Their answers are stored by this run: its rows (a finished run's "sent" rows read as possibly billed) and its budget.
            calls.exclude(run=self.run).update(run=self.run)
            for custom_id, unit_id, reserved in calls.values_list("client_request_id", "unit_id", "reserved_usd"):
                if self.engine.ledger.reserve(reserved):
                    self.held[custom_id] = reserved
                else:
                    self.engine.stop_at_budget()  # already submitted: it will be billed; nothing new is sent
                awaited.add(unit_id)
        return awaited

    def _adopt(self, submissions: set[str], *, since: datetime) -> None:
        """Records the batches the provider accepted while no row recorded them (the process died in between),
        found by the submission id in their metadata. A submission the provider does not have never left:
        its rows are dropped, and its units are submitted again."""
        found = self._find(submissions, since=since.timestamp())
        for submission, batch in found.items():
            self._record(batch, submission)
        lost = submissions - set(found)
        if lost:
            named = Q()
            for submission in lost:
                named |= Q(client_request_id__startswith=f"{submission}-")
            JudgeCall.objects.filter(named, unit__judge=self.judge, status=JudgeCall.Status.SENT, batch__isnull=True).delete()

    def _find(self, submissions: set[str], *, since: float) -> dict:
        """The provider's batches carrying these submission ids, newest first, back to a little before `since`."""
        found = {}
        for batch in self.client.batches.list(limit=100):
            metadata = batch.metadata or {}
            if metadata.get("submission") in submissions and metadata.get("judge") == str(self.judge.pk):
                found[metadata["submission"]] = batch
            if len(found) == len(submissions) or batch.created_at < since - ADOPT_MARGIN_SECONDS:
                break
        return found

    def _record(self, batch, submission: str) -> JudgeBatch:
        """The batch's row, and its sent calls linked to it (and to this run), in one transaction."""
        with transaction.atomic():
            calls = JudgeCall.objects.filter(
                unit__judge=self.judge, status=JudgeCall.Status.SENT, batch__isnull=True, client_request_id__startswith=f"{submission}-"
            )
            row, _ = JudgeBatch.objects.get_or_create(
                judge=self.judge,
                provider_batch_id=batch.id,
                defaults={
                    "run": self.run,
                    "input_file_id": batch.input_file_id,
                    "provider_status": batch.status,
                    "requests": calls.count(),
                },
            )
            calls.update(batch=row, run=self.run)
        return row

    # -- submitting

    def submit_fresh(self, jobs: list[Job]) -> None:
        """Stores what the cache answers and submits the rest, as attempt 1."""
        cached: list[tuple[Job, Outcome]] = []

        def uncached() -> Iterable[tuple[Job, int]]:
            for job, outcome in self.engine.requests_with_cache(self.plan, jobs):
                if outcome is None:
                    yield job, 1
                    continue
                cached.append((job, outcome))
                if len(cached) >= STORE_CHUNK:
                    self.engine.store(cached)
                    cached.clear()

        self.submit(uncached())
        if cached:
            self.engine.store(cached)

    def submit(self, items: Iterable[tuple[Job, int]]) -> None:
        """A line per (job, attempt), in files of at most `max_lines` lines and MAX_FILE_BYTES; each line's
        worst case is held in the ledger first, and what does not fit stays pending."""
        lines: list[_Line] = []
        size = 0
        for job, number in items:
            if self.engine.failed or self.engine.should_stop():
                break
            line = self._line(job, number)
            if not self.engine.ledger.reserve(line.reserved):
                self.engine.stop_at_budget()
                break
            if lines and (len(lines) >= self.max_lines or size + len(line.body) > MAX_FILE_BYTES):
                self._submit_file(lines)
                lines, size = [], 0
            lines.append(line)
            size += len(line.body)
        if lines and not self.engine.failed and not self.engine.should_stop():
            self._submit_file(lines)
        else:
            for line in lines:
                self.engine.ledger.settle(line.reserved, Decimal(0))

    def _request(self, job: Job) -> JudgeRequest:
        if job.request is None:
            job.request = self.plan.request(job.plan)
            job.request_hash, job.plain_hash = self.plan.request_hashes(job.request)
        return job.request

    def _line(self, job: Job, number: int) -> _Line:
        request = self._request(job)
        prices = self.prices
        if job.unit_id in self.feedback:
            request = replace(request, messages=retry_messages(request, *self.feedback[job.unit_id]))
        body = {"model": prices.model, "messages": request.messages, "temperature": prices.temperature, "max_tokens": prices.max_tokens}
        request_hash = job.request_hash
        if request.response_format is not None:
            if self.engine.plain.reason:
                request_hash = job.plain_hash
            else:
                body["response_format"] = request.response_format
        return _Line(job, number, self.prices.worst_case(request), request_hash, json.dumps(body, ensure_ascii=False).encode("utf-8"))

    def _submit_file(self, lines: list[_Line]) -> None:
        run = self.run
        submission = f"{SUBMISSION_PREFIX}{uuid.uuid4().hex[:16]}"
        ids = [f"{submission}-u{line.job.unit_id}-a{line.number}" for line in lines]
        JudgeCall.objects.bulk_create(
            [
                JudgeCall(
                    unit_id=line.job.unit_id,
                    run_id=run.pk,
                    attempt=line.number,
                    status=JudgeCall.Status.SENT,
                    reserved_usd=line.reserved,
                    client_request_id=custom_id,
                    request_hash=line.request_hash,
                )
                for custom_id, line in zip(ids, lines)
            ]
        )
        head = b', "method": "POST", "url": "' + ENDPOINT.encode() + b'", "body": '
        data = b"".join(
            b'{"custom_id": ' + json.dumps(custom_id).encode() + head + line.body + b"}\n" for custom_id, line in zip(ids, lines)
        )
        metadata = {
            "app": "pairwise",
            "judge": str(self.judge.pk),
            "judge_name": self.judge.name[:500],
            "campaign": str(run.campaign_id),
            "run": str(run.pk),
            "submission": submission,
        }
        try:
            upload = self.client.files.create(file=(f"{submission}.jsonl", data), purpose="batch")
        except openai.APIError as exc:
            self._unsent(ids, lines, f"the batch file could not be uploaded: {self.prices.scrub(_described(exc))}")
            return
        try:
            batch = self.create_client.batches.create(
                input_file_id=upload.id, endpoint=ENDPOINT, completion_window="24h", metadata=metadata
            )
        except openai.APIError as exc:
            failure = f"the batch could not be created: {self.prices.scrub(_described(exc))}"
            if isinstance(exc, openai.APIStatusError) and exc.status_code < 500:
                self._unsent(ids, lines, failure)  # refused: no batch was made
                return
            # No answer, or a 5xx: the provider may have made the batch and lost only its answer.
            try:
                batch = self._find({submission}, since=time.time()).get(submission)
            except openai.APIError:
                # Unknown either way: the rows stay, linked to no batch, and the next start looks again (resume).
                self.engine.fail(
                    f"The endpoint refused the run: {failure}; it may have reached the provider: starting the run again looks for it."
                )
                return
            if batch is None:
                self._unsent(ids, lines, failure)
                return
        row = self._record(batch, submission)
        for custom_id, line in zip(ids, lines):
            self.held[custom_id] = line.reserved
        self.open.append(row)
        if self.engine.progress is not None:
            self.engine.progress(run)

    def _unsent(self, ids: list[str], lines: list[_Line], failure: str) -> None:
        """The file's rows written ahead, for requests that never left; the run fails with the reason."""
        JudgeCall.objects.filter(client_request_id__in=ids, status=JudgeCall.Status.SENT, batch__isnull=True).delete()
        for line in lines:
            self.engine.ledger.settle(line.reserved, Decimal(0))
        self.engine.fail(f"The endpoint refused the run: {failure}")

    # -- polling and reading

    def poll(self) -> None:
        """Polls the open batches until each has ended and been read, submitting a follow-up batch for
        the retries each round needs; a stop leaves the batches at the provider."""
        while True:
            if self.retries:
                retries, self.retries = self.retries, []
                if not self.engine.failed:
                    self.submit(retries)
            if not self.open or self.engine.should_stop():
                return
            for row in list(self.open):
                try:
                    batch = self.client.batches.retrieve(row.provider_batch_id)
                except (openai.APIConnectionError, openai.InternalServerError, openai.RateLimitError):
                    continue  # the client retried already: the next round asks again
                self._update(row, batch)
                if batch.status in ENDED:
                    self._read(row, batch)
                    self.open.remove(row)
            if self.engine.progress is not None:
                self.engine.progress(self.run)
            if self.open and not self.retries:
                self._wait()

    def _wait(self) -> None:
        deadline = time.monotonic() + self.poll_seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.engine.should_stop():
                return
            time.sleep(min(left, WAIT_SLICE_SECONDS))

    def _update(self, row: JudgeBatch, batch) -> None:
        row.provider_status = batch.status
        if batch.request_counts is not None:
            row.completed, row.failed = batch.request_counts.completed, batch.request_counts.failed
        if batch.status in ENDED:
            row.status = JudgeBatch.Status.ENDED
            row.output_file_id, row.error_file_id = batch.output_file_id or "", batch.error_file_id or ""
        row.save(update_fields=["provider_status", "completed", "failed", "status", "output_file_id", "error_file_id", "updated_at"])

    def _read(self, row: JudgeBatch, batch) -> None:
        """Stores the answer of each call still awaited from the ended batch; a call with no line never ran.
        Safe to repeat: a call already stored is no longer "sent", and its line is skipped."""
        awaited = {c.client_request_id: c for c in JudgeCall.objects.filter(batch=row, status=JudgeCall.Status.SENT)}
        results: list[tuple[Job, Outcome]] = []
        never_ran = 0  # lines the provider returned unanswered (an expired request has one), and calls with no line
        for file_id in (row.output_file_id, row.error_file_id):
            if not file_id:
                continue
            for raw in self.client.files.content(file_id).content.splitlines():
                try:
                    line = json.loads(raw) if raw.strip() else None
                except ValueError:
                    line = None
                call = awaited.pop(line.get("custom_id"), None) if isinstance(line, dict) else None
                if call is None:
                    continue
                results.append(self._answer(row, call, line))
                never_ran += results[-1][1].attempts[0].http_status is None
                if len(results) >= STORE_CHUNK:
                    self.engine.store(results)
                    results = []
        reason = _ended_reason(batch)
        for call in awaited.values():
            self._settle(call, Decimal(0))
            attempt = self._attempt(row, call)
            attempt.error = f"not run: {reason}"
            results.append((self._job(call.unit_id), Outcome(attempts=[attempt])))
            never_ran += 1
        if results:
            self.engine.store(results)
        if never_ran:
            self.notes.append(
                f"Batch {row.provider_batch_id} ended {batch.status}: {never_ran} request(s) never ran ({reason}); "
                "their units are pending, and starting the run again submits them."
            )
        row.status = JudgeBatch.Status.READ
        row.save(update_fields=["status", "updated_at"])

    def _attempt(self, row: JudgeBatch, call: JudgeCall) -> Attempt:
        return Attempt(
            number=call.attempt,
            request_hash=call.request_hash,
            client_request_id=call.client_request_id,
            reserved_usd=call.reserved_usd,
            batch_id=row.pk,
        )

    def _settle(self, call: JudgeCall, actual: Decimal) -> None:
        self.engine.ledger.settle(self.held.pop(call.client_request_id, Decimal(0)), actual)

    def _answer(self, row: JudgeBatch, call: JudgeCall, line: dict) -> tuple[Job, Outcome]:
        job = self._job(call.unit_id)
        attempt = self._attempt(row, call)
        outcome = Outcome(attempts=[attempt])
        response = line.get("response") if isinstance(line.get("response"), dict) else None
        status = response.get("status_code") if response else None
        if not isinstance(status, int):
            self._settle(call, Decimal(0))
            attempt.error = f"not run: {_line_error(line)}"
            return job, outcome  # pending: a later run sends it again
        attempt.http_status = status
        attempt.provider_request_id = str(response.get("request_id") or "")[:200]
        if status == 200:
            self._completed(job, call, attempt, outcome, response.get("body"))
        else:
            self._settle(call, Decimal(0))
            self._refused(job, call, attempt, outcome, _error_message(response.get("body")))
        return job, outcome

    def _completed(self, job: Job, call: JudgeCall, attempt: Attempt, outcome: Outcome, body) -> None:
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        completion = read_completion(text)
        if isinstance(body, dict) and isinstance(body.get("id"), str):
            attempt.response_id = body["id"][:200]
        attempt.prompt_tokens, attempt.cached_tokens = completion.prompt_tokens, completion.cached_tokens
        attempt.completion_tokens = completion.completion_tokens
        attempt.cost_usd = self.prices.cost(attempt.prompt_tokens, attempt.cached_tokens, attempt.completion_tokens)
        self._settle(call, attempt.cost_usd)
        # When the body is no completion at all, the body itself is the evidence kept.
        attempt.raw_response = self.prices.scrub((text if completion.problem else completion.content)[:MAX_STORED_RESPONSE])
        criteria = tuple(c.key for c in job.plan.criteria)
        try:
            outcome.verdicts = protocols.reader(job.plan.protocol).parse_verdicts(
                completion.content,
                criteria=criteria,
                allow_tie=self.plan.campaign.allow_tie,
                responses=tuple(c.response for c in job.plan.criteria),
            )
        except InvalidResponse as exc:
            reason = unreadable_reason(exc, completion, self.prices.max_tokens)
            attempt.error = reason
            self.invalid[job.unit_id] += 1
            before = self.feedback.get(job.unit_id)
            if before is not None and before[0] == completion.content:
                outcome.repeated = 1  # this retry's answer was the previous one again
            self.feedback[job.unit_id] = (completion.content, reason)
            if self.invalid[job.unit_id] >= self.prices.max_attempts:
                outcome.error = f"unreadable answer after {self.invalid[job.unit_id]} attempt(s): {reason}"
            elif job.unit_id not in self.outside:
                self.retries.append((job, call.attempt + 1))
                outcome.retries = 1
            return
        attempt.valid = True

    def _refused(self, job: Job, call: JudgeCall, attempt: Attempt, outcome: Outcome, message: str) -> None:
        status = attempt.http_status
        attempt.error = self.prices.scrub(f"HTTP {status}: {message}")
        planned = job.unit_id not in self.outside
        sent_schema = planned and self._request(job).response_format is not None and call.request_hash == job.request_hash
        refused_schema = sent_schema and status in (400, 422) and bool(SCHEMA_WORDS.search(message))
        if refused_schema:
            self.engine.plain.refuse(attempt.error)  # the retry, and every line after it, goes without the schema
        if status in FATAL_STATUSES:
            self.engine.fail(f"The endpoint refused the run: {attempt.error}")  # the unit stays pending
        elif refused_schema or status in RETRYABLE_STATUSES or status >= 500:
            self.http_failures[job.unit_id] += 1
            if self.http_failures[job.unit_id] > HTTP_RETRIES:
                outcome.error = f"{attempt.error} (gave up after {HTTP_RETRIES} retries)"
            elif planned:
                self.retries.append((job, call.attempt + 1))
        else:
            outcome.error = attempt.error

    def _job(self, unit_id: int) -> Job:
        """The unit's job; a unit of a batch taken over that this run did not plan (another limit, swap or
        seed, or done meanwhile) gets one from its row, enough to read and store its answer."""
        job = self.jobs.get(unit_id)
        if job is None:
            unit = JudgeUnit.objects.select_related("pair", "category", "criterion").get(pk=unit_id)
            if unit.question == JudgeUnit.Question.GUESS:
                job = self.jobs[unit_id] = Job(plan=UnitPlan(unit.pair, None, (), None, unit.a_first, protocol=GUESS), unit_id=unit_id)
                self.outside.add(unit_id)
                return job
            if self._criteria is None:
                self._criteria = {category.pk: criteria for category, criteria in campaign_categories(campaign=self.plan.campaign)}
            reading = unit.reading_id is not None
            everything = (unit.criterion,) if unit.criterion_id else self._criteria.get(unit.category_id, ())
            criteria = tuple(c for c in everything if on_pair(c.response) != reading and judged(c))
            protocol = criterion_protocol(criteria[0]) if reading and criteria else self.plan.campaign.protocol
            item = None if reading else unit.pair
            shown = unit.order if len(unit.order) > 2 else ""  # a group's unit keeps the order its call showed
            plan = UnitPlan(
                item, unit.category, criteria, unit.criterion, unit.a_first, reading=unit.reading, protocol=protocol, shown=shown
            )
            job = self.jobs[unit_id] = Job(plan=plan, unit_id=unit_id)
            self.outside.add(unit_id)
        return job

    def note(self) -> str:
        notes = list(self.notes)
        if self.open:
            names = ", ".join(row.provider_batch_id for row in self.open)
            notes.append(
                f"{len(self.open)} batch(es) left at the provider ({names}); "
                "starting the run again reads their results without submitting them again."
            )
        return " ".join(notes)
