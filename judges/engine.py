"""The database side of a judge run (`judge_run_execute`): planning units, storing answers, resuming.

A run judges the units planned by `selectors.run_plan` that are not done yet,
so a run that was stopped, ran out of budget or was killed is resumed by
starting the same run again: finished verdicts are never redone.

The worker threads of `judges.transport` only talk HTTP. The calling thread
builds the requests, answers what it can from the cache, and does every database
write: one short transaction per batch of finished units (their calls, verdicts
and statuses, and the run's counters), so a unit is either fully stored or still
pending, and the workers never wait for the database. At least every half second
it re-reads the run's status: "stopping" (the web Stop button) or any status set
by someone else ends the run cleanly, after the units in flight.

Only valid responses are cached. A unit whose answer stays unreadable is ERROR
with the raw response and the reason, never a tie or a win. A budget that the
next attempt's worst case would exceed stops the run with status BUDGET and
leaves the unit pending.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import openai
from django.conf import settings as django_settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

import protocols
from annotate.services.guesses import guess_side
from common.hooks import hooks_run_logged
from judges import baselines
from judges.batch import run_batch
from judges.endpoints import api_key_env_refusal, base_url_refusal
from judges.heartbeat import Heartbeat
from judges.models import CachedResponse, Judge, JudgeCall, JudgeRun, JudgeUnit, JudgeVerdict
from judges.queued_rows import QueuedRows, take
from judges.selectors import RunPlan, UnitPlan, run_plan, stored_units
from judges.transport import (
    BATCH_SECONDS,
    Ahead,
    Attempt,
    CallSettings,
    Job,
    Ledger,
    Outcome,
    PlainJson,
    Reach,
    Release,
    openai_client,
    work_loop,
)
from judges.verdict_rows import verdict_rows, verdicts_insert
from judges.wire import cache_endpoint
from judges.workers import this_worker
from protocols import step_vote
from protocols.base import InvalidResponse
from protocols.pairwise import guess as guess_question

logger = logging.getLogger(__name__)
STATUS_POLL_SECONDS = 0.5
# A run fails when every unit it ended is in error, or more than this share of them (README "Judges
# fail loudly"); once FAIL_FAST_UNITS have ended past that share, it stops early rather than pay on.
MAX_ERROR_SHARE = 0.5
FAIL_FAST_UNITS = 10


def _baseline_verdicts(plan: UnitPlan, texts: dict[int, str], kind: str, seed: int, allow_tie: bool) -> dict[str, tuple[str, str]]:
    pair = plan.pair
    first, second = (pair.article_a_id, pair.article_b_id) if plan.a_first else (pair.article_b_id, pair.article_a_id)
    criteria = [(criterion.key, criterion.watch_class) for criterion in plan.criteria]
    return baselines.baseline_verdicts(
        kind, texts[first], texts[second], criteria, seed=seed, parts=(pair.pk, plan.a_first), allow_tie=allow_tie
    )


class Engine:
    """One run's database side; `run_llm` here and `judges.batch` drive it through its public methods."""

    def __init__(self, run: JudgeRun, progress: Callable[[JudgeRun], None] | None) -> None:
        self.run = run
        self.judge = run.judge
        self.progress = progress
        self.ledger = Ledger(None if run.budget_usd is None else Decimal(run.budget_usd))
        self.stop_reason = ""
        self._budget_hit = False
        self._fatal = ""
        self.plain = PlainJson()
        self.reach = Reach()
        # Units this run ended (earlier runs' are not counted), its last unit error, and why it is
        # failing early when more than MAX_ERROR_SHARE of its first units ended in error.
        self.done_now = 0
        self.errors_now = 0
        self.last_error = ""
        self.failing = ""
        self.seen_done = self.seen_errors = 0  # as answers come, before they are stored
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

    def store(self, results: list[tuple[Job, Outcome]]) -> None:
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
                    unit_id=job.unit_id,
                    run_id=run.pk,
                    batch_id=a.batch_id,
                    attempt=a.number,
                    request_hash=a.request_hash,
                    from_cache=a.from_cache,
                    valid=a.valid,
                    http_status=a.http_status,
                    error=a.error,
                    raw_response=a.raw_response,
                    prompt_tokens=a.prompt_tokens,
                    cached_tokens=a.cached_tokens,
                    completion_tokens=a.completion_tokens,
                    cost_usd=a.cost_usd,
                    latency_ms=a.latency_ms,
                    reserved_usd=a.reserved_usd,
                    client_request_id=a.client_request_id,
                    provider_request_id=a.provider_request_id,
                    response_id=a.response_id,
                )
                calls.append(call)
                if a.valid:
                    valid_calls[job.unit_id] = call
        finished = [(job, outcome) for job, outcome in results if outcome.verdicts is not None or outcome.error]
        fresh = {
            a.request_hash: CachedResponse(
                endpoint=cache_endpoint(self.judge.base_url),
                request_hash=a.request_hash,
                model=self.judge.model,
                content=a.raw_response,
                prompt_tokens=a.prompt_tokens,
                cached_tokens=a.cached_tokens,
                completion_tokens=a.completion_tokens,
            )
            for _, outcome in results
            for a in outcome.attempts
            if a.valid and not a.from_cache
        }
        with transaction.atomic():
            # Locked and re-read: if another run finished a unit meanwhile, its verdicts stand.
            statuses = dict(
                JudgeUnit.objects.select_for_update().filter(pk__in=[job.unit_id for job, _ in finished]).values_list("pk", "status")
            )
            taken = {pk for pk, status in statuses.items() if status == JudgeUnit.Status.DONE}
            # The rows written ahead of these units' attempts give way to the completed ones (a unit
            # answered from the cache had none).
            sent = [job.unit_id for job, outcome in results if not outcome.attempts or not all(a.from_cache for a in outcome.attempts)]
            if sent:
                JudgeCall.objects.filter(run_id=run.pk, unit_id__in=sent, status=JudgeCall.Status.SENT).delete()
            JudgeCall.objects.bulk_create(calls)
            done = [(job, outcome) for job, outcome in finished if outcome.verdicts is not None and job.unit_id not in taken]
            failed = [(job, outcome) for job, outcome in finished if outcome.verdicts is None and job.unit_id not in taken]
            if done:
                ids = [job.unit_id for job, _ in done]
                JudgeUnit.objects.filter(pk__in=ids).update(status=JudgeUnit.Status.DONE, error="", run=run, updated_at=now)
                if any(statuses.get(pk) == JudgeUnit.Status.ERROR for pk in ids):
                    # An imported unit in error may hold the verdicts it had.
                    JudgeVerdict.objects.filter(unit_id__in=ids).delete()
                # The guess question's answers go on their units (by side), a step's vote and reason on
                # its unit; every other unit's, into verdicts.
                by_answer: dict[str, list[int]] = {}
                voted: list[JudgeUnit] = []
                for job, outcome in done:
                    if job.plan.asks_guess:
                        by_answer.setdefault(guess_side(outcome.verdicts[guess_question.KEY][0], job.plan.a_first), []).append(job.unit_id)
                    elif job.plan.asks_step:
                        vote, reason = outcome.verdicts[step_vote.KEY]
                        voted.append(JudgeUnit(pk=job.unit_id, vote=1 if vote == step_vote.UP else -1, reason=reason))
                for answer, units in by_answer.items():  # at most three statements
                    JudgeUnit.objects.filter(pk__in=units).update(guess=answer)
                if voted:
                    JudgeUnit.objects.bulk_update(voted, ["vote", "reason"])
                asked = [item for item in done if not (item[0].plan.asks_guess or item[0].plan.asks_step)]
                verdicts_insert(verdict_rows(asked, valid_calls))
            for job, outcome in failed:
                JudgeUnit.objects.filter(pk=job.unit_id).update(status=JudgeUnit.Status.ERROR, error=outcome.error, run=run, updated_at=now)
            self.done_now += len(done)
            self.errors_now += len(failed)
            if failed:
                self.last_error = failed[-1][1].error
            if fresh:
                CachedResponse.objects.bulk_create(list(fresh.values()), ignore_conflicts=True)
            counters = {
                "units_done": len(done),
                "errors": len(failed),
                "calls": len(calls),
                "prompt_tokens": sum(c.prompt_tokens for c in calls),
                "cached_tokens": sum(c.cached_tokens for c in calls),
                "completion_tokens": sum(c.completion_tokens for c in calls),
                "cost_usd": sum((c.cost_usd for c in calls if c.cost_usd is not None), Decimal(0)),
                "paced_ms": sum(outcome.paced_ms for _, outcome in results),
                "rate_limited": sum(outcome.rate_limited for _, outcome in results),
                "retries": sum(outcome.retries for _, outcome in results),
                "retries_repeated": sum(outcome.repeated for _, outcome in results),
            }
            changed = {name: F(name) + value for name, value in counters.items() if value}
            # A call billed at no known price makes the run's cost unknown for good (NULL + x is NULL).
            cost_unknown = any(c.cost_usd is None for c in calls)
            if cost_unknown:
                changed["cost_usd"] = None
            if changed:
                JudgeRun.objects.filter(pk=run.pk).update(**changed)
        for name, value in counters.items():
            if name == "cost_usd" and (cost_unknown or run.cost_usd is None):
                run.cost_usd = None
            else:
                setattr(run, name, getattr(run, name) + value)
        if self.progress is not None:
            self.progress(run)

    # -- planning

    def prepare(self) -> tuple[RunPlan, list[Job]]:
        """The plan and a job per unit not done yet; their rows come later, from `units_ensure`."""
        run = self.run
        plan = run_plan(
            campaign=run.campaign, judge=self.judge, swap=run.swap, limit=run.limit, seed=run.seed, guess=run.guess, steps=run.steps
        )
        jobs = [Job(plan=u, unit_id=0) for u in plan.pending()]
        run.units_total = len(plan.units)
        run.units_done = len(plan.units) - len(jobs)
        JudgeRun.objects.filter(pk=run.pk).update(units_total=run.units_total, units_done=run.units_done)
        return plan, jobs

    def units_ensure(self, plan: RunPlan, jobs: list[Job]) -> None:
        """Creates the rows of units never planned before and gives every job its unit's id.

        Separate from `prepare` so that the first requests are on their way meanwhile.
        """
        missing = [u for u in plan.units if u.key not in plan.stored]
        if missing:
            JudgeUnit.objects.bulk_create(
                [
                    JudgeUnit(
                        judge=self.judge, pair=u.pair or u.reading, category=u.category, criterion=u.criterion, a_first=u.a_first,
                        order=u.order, run=self.run, question=u.question, step=u.step,
                    )
                    for u in missing
                ],
                ignore_conflicts=True,
            )  # fmt: skip
            # ignore_conflicts gives no primary keys back: read the units again.
            pairs = list({u.pair.pk for u in plan.units if u.pair})
            readings = list({u.reading.pk for u in plan.units if u.reading})
            plan.stored = stored_units(judge=self.judge, pairs=pairs, readings=readings)
        for job in jobs:
            job.unit_id = plan.stored[job.plan.key].pk

    # -- writing ahead

    def write_notes(self, notes: list[Ahead | Release], *, halted: bool) -> None:
        """The "sent" rows of attempts the workers are about to send (one insert), and the removal of
        rows whose attempts cost nothing (never connected, or refused); each worker waits for its own
        note. Once the run is `halted`, attempts are refused instead: nothing more leaves."""
        sent = [n for n in notes if isinstance(n, Ahead)]
        if halted:
            for n in sent:
                n.refused = True
            sent = []
        released = [n.client_request_id for n in notes if isinstance(n, Release)]
        if sent:
            JudgeCall.objects.bulk_create(
                [
                    JudgeCall(
                        unit_id=n.job.unit_id, run_id=self.run.pk, attempt=n.number, status=JudgeCall.Status.SENT, reserved_usd=n.reserved,
                        client_request_id=n.client_request_id, request_hash=n.request_hash,
                    )
                    for n in sent
                ]
            )  # fmt: skip
        if released:
            JudgeCall.objects.filter(run_id=self.run.pk, client_request_id__in=released, status=JudgeCall.Status.SENT).delete()
        for n in notes:
            n.written.set()

    # -- running

    def run_baseline(self, plan: RunPlan, jobs: list[Job], batch: int = 50) -> None:
        self.units_ensure(plan, jobs)
        for start in range(0, len(jobs), batch):
            if self.should_stop():
                return
            self.store(
                [
                    (
                        job,
                        Outcome(verdicts=_baseline_verdicts(job.plan, plan.texts, self.judge.kind, self.run.seed, plan.campaign.allow_tie)),
                    )
                    for job in jobs[start : start + batch]
                ]
            )

    def run_llm(self, plan: RunPlan, jobs: list[Job], client: openai.OpenAI, settings: CallSettings) -> None:
        """`run.concurrency` worker loops take prepared requests from `ready` and put answers in `answers`.

        This thread keeps `ready` stocked (building requests, answering from the cache), writes
        each attempt's row when its worker is about to send it (the notes of `QueuedRows`, answered
        first, as soon as they come), and writes the answers in batches gathered over
        `BATCH_SECONDS`, so that workers wait for a row and never for a batch.
        """
        concurrency = self.run.concurrency
        ready: queue.Queue[Job | None] = queue.Queue()
        answers: queue.Queue = queue.Queue()  # (job, outcome), notes (Ahead, Release), None when a loop ends
        halt = threading.Event()
        closing = threading.Event()  # this thread no longer writes rows
        rows = QueuedRows(answers, closing)

        # Unit rows first: every request's call row names its unit.
        self.units_ensure(plan, jobs)
        pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"judge-run-{self.run.pk}")
        loops = [
            pool.submit(work_loop, ready, answers, halt, client, settings, self.ledger, self.plain, rows, self.reach) for _ in range(concurrency)
        ]  # fmt: skip
        source = self.requests_with_cache(plan, jobs)
        sealed = False
        running = concurrency
        outstanding = 0  # requests handed to the workers and not answered yet
        gathered: list[tuple[Job, Outcome]] = []  # answers not stored yet
        store_by = 0.0  # when the gathered answers are stored at the latest

        def seal() -> None:
            # One end marker per loop: each takes one and returns.
            nonlocal sealed
            if not sealed:
                sealed = True
                for _ in loops:
                    ready.put(None)

        try:
            while True:
                if self._budget_hit or self._fatal or self.failing or self.should_stop():
                    halt.set()
                    seal()
                cached: list[tuple[Job, Outcome]] = []
                fresh = 0
                exhausted = False
                # Building requests gives way as soon as a worker waits for its row (or an answer came).
                while not sealed and ready.qsize() < 2 * concurrency and len(cached) < 50 and (answers.empty() or ready.empty()):
                    item = next(source, None)
                    if item is None:
                        exhausted = True
                        break
                    elif item[1] is not None:
                        cached.append(item)
                    else:
                        ready.put(item[0])
                        fresh += 1
                outstanding += fresh
                if exhausted:
                    seal()
                if cached:
                    self.store(cached)
                wait = max(0.0, store_by - time.monotonic()) if gathered else STATUS_POLL_SECONDS
                items, ended = take(answers, timeout=wait)
                done = [item for item in items if not isinstance(item, (Ahead, Release))]
                self.count_ended(done)
                if self.failing:
                    halt.set()
                notes = [item for item in items if isinstance(item, (Ahead, Release))]
                if notes:
                    self.write_notes(notes, halted=halt.is_set())
                if done and not gathered:
                    store_by = time.monotonic() + BATCH_SECONDS
                gathered += done
                running -= ended
                outstanding -= len(done)
                if gathered and (time.monotonic() >= store_by or outstanding <= 0 or not running):
                    for _, outcome in gathered:
                        if outcome.budget:
                            self.stop_at_budget()
                        if outcome.fatal:
                            self.fail(outcome.fatal)
                    self.store(gathered)
                    gathered = []
                if not running:
                    break
        except BaseException:
            # Ctrl-C or a database error: send nothing more; answers in flight are lost, their units stay
            # pending, and their rows written ahead stay "sent": possibly billed.
            closing.set()
            halt.set()
            seal()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        closing.set()
        pool.shutdown()
        for loop in loops:
            loop.result()  # a bug in a worker fails the run rather than vanishing

    # -- what a transport (`run_llm` above, `judges.batch`) tells the run and asks of it

    def stop_at_budget(self) -> None:
        """The next request's worst case did not fit what is left of the budget: nothing new is sent, and the run ends BUDGET."""
        self._budget_hit = True

    def fail(self, reason: str) -> None:
        """An error that ends the run FAILED, such as the endpoint refusing it; the first reason given is kept."""
        self._fatal = self._fatal or reason

    @property
    def failed(self) -> bool:
        return bool(self._fatal)

    def requests_with_cache(self, plan: RunPlan, jobs: list[Job], *, first: int = 4, chunk: int = 16):
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
            # A judge with a confidence option never reads the cache: it keeps no token probabilities, and samples must differ.
            fresh = self.judge.confidence not in ("", "none")
            served = CachedResponse.objects.filter(endpoint=cache_endpoint(self.judge.base_url), request_hash__in=hashes)
            cached = {} if fresh else {c.request_hash: c for c in served}
            for job in batch:
                hit = cached.get(job.request_hash) or cached.get(job.plain_hash)
                yield job, (self._from_cache(job, hit) if hit is not None else None)

    def _from_cache(self, job: Job, hit: CachedResponse) -> Outcome | None:
        try:
            verdicts = protocols.parse_reply(job.request, hit.content)
        except InvalidResponse:
            return None
        attempt = Attempt(number=1, request_hash=hit.request_hash, from_cache=True, valid=True, raw_response=hit.content)
        return Outcome(attempts=[attempt], verdicts=verdicts)

    def count_ended(self, results: list[tuple[Job, Outcome]]) -> None:
        """Counts units ended as their answers come (before they are stored, in batches), so that a
        run failing past MAX_ERROR_SHARE stops as soon as FAIL_FAST_UNITS have ended."""
        self.seen_done += sum(outcome.verdicts is not None for _, outcome in results)
        self.seen_errors += sum(outcome.verdicts is None and bool(outcome.error) for _, outcome in results)
        seen = self.seen_done + self.seen_errors
        too_many = self.seen_errors > 0 and (self.seen_done == 0 or self.seen_errors > MAX_ERROR_SHARE * seen)
        if not self.failing and seen >= FAIL_FAST_UNITS and too_many:
            self.failing = f"{self.seen_errors} of the first {seen} units ended in error"

    def _too_many_errors(self) -> bool:
        """The rule that fails a run: every unit it ended is in error, or more than MAX_ERROR_SHARE of them."""
        ended = self.done_now + self.errors_now
        return self.errors_now > 0 and (self.done_now == 0 or self.errors_now > MAX_ERROR_SHARE * ended)

    def finish(self, note: str = "") -> None:
        """Sets the run's final status and message; `note` is what a batch run adds (see `judges.batch`)."""
        run = self.run
        ended = self.done_now + self.errors_now
        last = f" Last error: {self.last_error}" if self.last_error else ""
        if self._fatal:
            status, message = JudgeRun.Status.FAILED, self._fatal
        elif self._too_many_errors() and (self.failing or not self.stop_reason or self.stop_reason == JudgeRun.Status.STOPPING):
            status = JudgeRun.Status.FAILED
            early = f" (stopped early: {self.failing})" if self.failing else ""
            message = f"Failed: {self.errors_now} of the {ended} unit(s) this run ended are in error{early}.{last}"
            last = ""
        elif self._budget_hit:
            status = JudgeRun.Status.BUDGET
            message = f"Stopped at the budget: ${run.cost_usd:.8f} spent of ${Decimal(run.budget_usd):f}; the next request could have cost more than what was left."
        elif self.stop_reason == JudgeRun.Status.STOPPING:
            status, message = JudgeRun.Status.STOPPED, "Stopped on request."
        elif self.stop_reason:
            return  # someone else set the status (a newer run took over): leave it
        else:
            status, message = JudgeRun.Status.FINISHED, ""
        pending = run.units_total - run.units_done - run.errors
        if run.errors and status != JudgeRun.Status.FAILED or (self._fatal and run.errors):
            message = f"{message} {run.errors} unit(s) in error (no verdict).{last}".strip()
        if note:
            message = f"{message} {note}".strip()
        if run.retries_repeated:
            message = (
                f"{message} {run.retries_repeated} of the {run.retries} retries after an unreadable answer returned the same answer "
                "as the attempt before, though each retry told the model what was wrong: a deterministic endpoint (temperature 0) "
                "repeats itself, and every repeat is billed. Raise the judge's max_tokens or temperature, or use a stronger model."
            ).strip()
        if self.plain.reason:
            message = (
                f"{message} The endpoint refused the JSON schema ({self.plain.reason}); the run asked for plain JSON "
                "instead and read the answers tolerantly. Turn structured output off for this judge to skip the refused requests."
            ).strip()
        # A batch run can finish with units pending: requests its provider never ran (see the note).
        if pending and (status != JudgeRun.Status.FINISHED or run.batch):
            message = f"{message} {pending} unit(s) left; start the run again to resume.".strip()
        _run_close(run, status=status, message=message)


def _run_close(run: JudgeRun, *, status: str, message: str) -> None:
    now = timezone.now()
    JudgeRun.objects.filter(pk=run.pk, status__in=[JudgeRun.Status.RUNNING, JudgeRun.Status.STOPPING, JudgeRun.Status.QUEUED]).update(
        status=status, message=message, finished_at=now
    )
    run.refresh_from_db()


def judge_run_execute(*, run: JudgeRun, progress: Callable[[JudgeRun], None] | None = None) -> JudgeRun:
    """Judges every pending unit of the run, then sets its final status (see the module docstring)."""
    now = timezone.now()
    taken = JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.QUEUED).update(
        status=JudgeRun.Status.RUNNING, started_at=now, worker=this_worker(), heartbeat_at=now
    )
    if not taken:
        run.refresh_from_db()
        return run  # stopped before it started, or already taken by another worker
    run.refresh_from_db()
    with Heartbeat(run.pk):
        return _execute(run, now, progress)


def _execute(run: JudgeRun, now, progress: Callable[[JudgeRun], None] | None) -> JudgeRun:
    judge = run.judge
    # A run of the same judge on the same campaign left "running" was killed (or is superseded): this one takes over.
    JudgeRun.objects.filter(
        campaign_id=run.campaign_id, judge=judge, status__in=[JudgeRun.Status.RUNNING, JudgeRun.Status.STOPPING]
    ).exclude(pk=run.pk).update(
        status=JudgeRun.Status.STOPPED, message=f"Interrupted; run #{run.pk} took over its remaining units.", finished_at=now
    )
    engine = Engine(run, progress)
    note = ""
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
            client = openai_client(judge, secret, run.concurrency, django_settings.JUDGE_ALLOW_ADDRESSES)
            settings = CallSettings.of(judge, secret)
            if run.batch:
                note = run_batch(engine, plan, jobs, client, settings)
            else:
                engine.run_llm(plan, jobs, client, settings)
    except KeyboardInterrupt:
        _run_close(run, status=JudgeRun.Status.STOPPED, message="Interrupted; start the run again to resume.")
        raise
    except Exception as exc:
        _run_close(run, status=JudgeRun.Status.FAILED, message=f"{type(exc).__name__}: {exc}")
        raise
    engine.finish(note)
    # settings.HOOKS "after_run" (calibration: the report computed ahead); a failure is logged, the run stays as stored.
    hooks_run_logged("after_run", run=run, verdicts=engine.done_now)
    return run
