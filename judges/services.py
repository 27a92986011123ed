"""Writes for judges: configuring them, and creating, starting and stopping their runs.

A run is executed by `judges.engine.judge_run_execute`, in a worker
(`judges.tasks.judge_run_task`, queued by `judge_run_start`) or by `manage.py run_judges`.
"""

from __future__ import annotations

import re
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.utils import timezone

from annotate.models import Campaign
from common.names import name_problem
from judges.confidence import confidence_mode
from judges.endpoints import api_key_env_refusal, base_url_refusal, configured_endpoint, endpoint_names, endpoint_refusal
from judges.engine import judge_run_execute  # noqa: F401  moved; tests import it from here
from judges.models import Judge, JudgeRun
from judges.selectors import guess_problem, steps_problem
from judges.serving import endpoint_defaults
from judges.tasks import judge_run_task
from judges.transport import openai_client as _client  # noqa: F401  moved; tests import it from here

MAX_CONCURRENCY = 64
MAX_RATE = 2**31 - 1  # the largest rpm/tpm the column holds


# --- judges -----------------------------------------------------------------------


def judge_create(**arguments) -> tuple[Judge, bool]:
    """Creates a judge, or updates it with `update`; returns (judge, created).

    The arguments are `judge_build`'s, which checks them: a ValidationError lists every problem.
    An update sets every field, so a limit or a price not given again is cleared.
    """
    judge = judge_build(**arguments)
    skipped = ("id", "name", "campaign", "created_at")
    values = {f.name: getattr(judge, f.name) for f in Judge._meta.concrete_fields if f.name not in skipped}
    # A configured judge is global: a campaign's imported judge of the same name is another judge.
    return Judge.objects.update_or_create(name=judge.name, campaign=None, defaults=values)


def judge_build(
    *,
    name: str,
    kind: str = Judge.Kind.LLM,
    model: str = "",
    base_url: str = "",
    api_key_env: str = "",
    endpoint: str = "",
    input_price: Decimal | float | str | None = None,
    output_price: Decimal | float | str | None = None,
    cached_input_price: Decimal | float | str | None = None,
    temperature: float = 0.0,
    max_tokens: int = 4096,
    per_criterion: bool = False,
    structured_output: bool = True,
    timeout_seconds: float | None = None,
    max_attempts: int | None = None,
    rpm: int | None = None,
    tpm: int | None = None,
    batch_input_price: Decimal | float | str | None = None,
    batch_output_price: Decimal | float | str | None = None,
    confidence: str = "none",
    update: bool = False,
    by=None,
) -> Judge:
    """The judge `judge_create` would save, checked and unsaved; a ValidationError lists every problem.
    "Test connection" checks one without saving it.

    The API key itself is never taken: only the name of the environment variable
    that holds it, checked to look like a variable name so a pasted key is refused.
    `endpoint` names one of the endpoints configured on the server (JUDGE_ENDPOINTS), which gives
    the base URL and the key variable; `by` is the user saving the judge (None: a command on the
    server), and only a superuser may type a base URL and a key variable instead
    (`judges.endpoints`). Prices left None are unknown, and so are the judge's costs; give both
    or neither. `rpm`/`tpm` are the provider's limits its runs pace themselves under (None: no
    limit); the batch prices left None are half the synchronous ones. `confidence` is none,
    logprobs or samples:N (`judges.confidence`). `update` lets an existing judge of that name change.
    """
    errors: list[str] = []
    name = name.strip()
    base_url, api_key_env = base_url.strip(), api_key_env.strip()
    if problem := name_problem(name, what="judge name"):
        errors.append(f"The {problem}.")
    if kind not in Judge.Kind.values:
        errors.append(f"The kind must be one of: {', '.join(Judge.Kind.values)}.")
    if kind == Judge.Kind.LLM:
        if not model.strip():
            errors.append("An LLM judge needs a model.")
        if endpoint.strip():
            chosen = configured_endpoint(endpoint.strip())
            if chosen is None:
                errors.append(
                    f"No endpoint named '{endpoint.strip()}' is configured (JUDGE_ENDPOINTS: {', '.join(endpoint_names()) or 'none'})."
                )
            elif (base_url and base_url.rstrip("/") != chosen["base_url"]) or (api_key_env and api_key_env != chosen["api_key_env"]):
                errors.append("Give an endpoint, or a base URL and a key variable, not both.")
            else:
                base_url, api_key_env = chosen["base_url"], chosen["api_key_env"]
        if not re.match(r"https?://", base_url):
            errors.append("An LLM judge needs a base URL starting with http:// or https:// (or one of the configured endpoints).")
        elif refusal := base_url_refusal(base_url):
            errors.append(refusal)
        if refusal := api_key_env_refusal(api_key_env):
            errors.append(refusal)
        elif refusal := endpoint_refusal(may_type=by is None or by.is_superuser, base_url=base_url, api_key_env=api_key_env):
            errors.append(refusal)
        if (input_price is None) != (output_price is None):
            errors.append(
                "Give both the input and the output price (USD per million tokens), or neither: the judge's costs are then unknown."
            )
    else:
        base_url = api_key_env = ""
        input_price = output_price = cached_input_price = batch_input_price = batch_output_price = None  # offline: nothing to pay
    prices = {}
    given = (
        ("input", input_price),
        ("output", output_price),
        ("cached input", cached_input_price),
        ("batch input", batch_input_price),
        ("batch output", batch_output_price),
    )
    for label, value in given:
        if value is None or value == "":
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
    for label, value, unit in (("rpm", rpm, "requests"), ("tpm", tpm, "tokens")):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RATE):
            errors.append(f"The {label} must be a whole number from 1 to {MAX_RATE} ({unit} per minute), or empty for no limit.")
    if not 0 <= temperature <= 2:
        errors.append("The temperature must be between 0 and 2.")
    if max_tokens < 1:
        errors.append("max_tokens must be at least 1.")
    if timeout_seconds is not None and timeout_seconds <= 0:
        errors.append("The timeout must be positive.")
    if max_attempts is not None and not 1 <= max_attempts <= 10:
        errors.append("max_attempts must be between 1 and 10.")
    try:
        kind_of_confidence, samples = confidence_mode(confidence)
        confidence = kind_of_confidence if samples == 1 else f"{kind_of_confidence}:{samples}"
    except ValueError as exc:
        errors.append(str(exc))
    if kind != Judge.Kind.LLM and confidence != "none":
        errors.append("Only an LLM judge can give confidences (imported verdicts bring theirs in a confidence column).")
    existing = None if problem else Judge.objects.filter(name=name, campaign__isnull=True).first()
    if existing is not None and not update:
        errors.append(f"A judge named '{name}' already exists; pass --update (or tick 'update') to change it.")
    if errors:
        raise ValidationError(errors)
    judge = existing or Judge(name=name)
    values = {
        "kind": kind,
        "model": model.strip(),
        "base_url": base_url,
        "api_key_env": api_key_env,
        "input_price": prices["input"],
        "output_price": prices["output"],
        "cached_input_price": prices["cached input"],
        "temperature": temperature,
        "max_tokens": max_tokens,
        "mode": Judge.Mode.CRITERION if per_criterion else Judge.Mode.CATEGORY,
        "structured_output": structured_output,
        "rpm": rpm,
        "tpm": tpm,
        "batch_input_price": prices["batch input"],
        "batch_output_price": prices["batch output"],
        "confidence": confidence,
    }
    if timeout_seconds is not None:
        values["timeout_seconds"] = timeout_seconds
    elif judge.pk is None and kind == Judge.Kind.LLM:
        values["timeout_seconds"] = endpoint_defaults(base_url).timeout_seconds  # 600 s on this machine, 120 s hosted
    if max_attempts is not None:
        values["max_attempts"] = max_attempts
    for field, value in values.items():
        setattr(judge, field, value)
    return judge


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
    batch: bool = False,
    guess: bool = False,
    steps: bool = False,
) -> JudgeRun:
    """A queued run; `batch` sends its units through the provider's Batch API (`judges.batch`), LLM judges only;
    `guess` also asks the judge the guess question, one call per pair and order, and `steps` a vote on
    each of the agents' steps, one call per step (`selectors.run_plan`)."""
    errors = []
    if guess and (problem := guess_problem(campaign=campaign, judge=judge)):
        errors.append(problem)
    if steps and (problem := steps_problem(campaign=campaign, judge=judge)):
        errors.append(problem)
    if campaign.labels_only:
        errors.append(f"'{campaign.name}' is a labels-only campaign: its articles have no texts for a judge to read.")
    if judge.kind == Judge.Kind.IMPORTED:
        errors.append(f"'{judge.name}' holds imported verdicts; it cannot be run.")
    elif batch and judge.kind != Judge.Kind.LLM:
        errors.append(f"'{judge.name}' is an offline baseline ({judge.get_kind_display()}): only an LLM judge runs through the Batch API.")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        errors.append(f"Concurrency must be between 1 and {MAX_CONCURRENCY}.")
    if budget_usd is not None and budget_usd < 0:
        errors.append("The budget cannot be negative.")
    if limit is not None and limit < 1:
        errors.append("The pair limit must be at least 1.")
    unpriced = judge.kind == Judge.Kind.LLM and not judge.costs_known
    if budget_usd is not None and unpriced:
        errors.append(
            f"'{judge.name}' has no prices, so what its calls cost is unknown and no budget can be kept: "
            "give it an input and an output price (add_judge --update), or run it without a budget."
        )
    if errors:
        raise ValidationError(errors)
    return JudgeRun.objects.create(
        campaign=campaign, judge=judge, swap=swap, concurrency=concurrency, budget_usd=budget_usd, limit=limit, seed=seed, batch=batch,
        guess=guess, steps=steps, cost_usd=None if unpriced else Decimal(0),  # unknown from the start: never shown as $0
    )  # fmt: skip


def judge_run_start(*, campaign: Campaign, judge: Judge, **options) -> JudgeRun:
    """Creates a run (the options of `judge_run_create`, `batch` included) and queues it for a worker
    (`manage.py db_worker`); nothing runs here. A batch run holds its worker while it polls."""
    run = judge_run_create(campaign=campaign, judge=judge, **options)
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
