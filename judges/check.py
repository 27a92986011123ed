"""Testing a judge's connection before a run: one minimal call, and what went wrong in words.

`judge_check` sends one chat completion of a few tokens to the judge's endpoint, with its model,
its key, and its JSON schema when the judge asks for structured output, through the same client
as runs (`judges.transport.openai_client`, so the outbound policy applies). What fails is named
by the part of the set-up to fix: the URL (nothing answers, the host does not resolve, the
outbound policy refuses its address, no chat-completions route there), the authentication (the
key variable is unset, or the key is refused), the model (unknown to the endpoint) or the schema
(structured output refused). The call is billed like any other, a few tokens; nothing is stored.
After a good answer it reports what the endpoint says it serves (`judges.serving`): its models,
with a warning when the judge's is not among them (llama.cpp's server answers any model name), and
its slots. Used by `add_judge --check` and the "Test connection" buttons of the judges page.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlsplit

import httpx2
import openai
from django.conf import settings

from judges.endpoints import api_key_env_refusal, base_url_refusal
from judges.models import Judge
from judges.outbound import POLICY_PREFIX
from judges.pricing import token_cost
from judges.serving import is_local, served_models, server_slots
from judges.transport import SCHEMA_WORDS, http_error, never_connected, openai_client
from judges.wire import read_completion

CHECK_TIMEOUT_SECONDS = 30.0
CHECK_MAX_TOKENS = 16
PROMPT = 'Connection test: answer with the JSON {"verdicts": []} and nothing else.'
# The smallest schema of the judges' own shape: an endpoint that refuses it refuses theirs.
CHECK_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "connection_test",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"verdicts": {"type": "array", "items": {"type": "string"}}},
            "required": ["verdicts"],
            "additionalProperties": False,
        },
    },
}


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    problem: str  # "" when ok; else "settings", "url", "authentication", "model", "schema", "rate limit" or "endpoint"
    message: str
    latency_ms: int | None = None
    cost_usd: Decimal | None = None


def _failure(problem: str, message: str, secret: str) -> CheckResult:
    return CheckResult(ok=False, problem=problem, message=message.replace(secret, "[key]") if secret else message)


def _words(exc: Exception) -> str:
    """An exception in one line: its kind and message."""
    return f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__


def _described(exc: Exception, judge: Judge, secret: str) -> CheckResult:
    """The failed call, named by the part of the set-up to fix."""
    status, message = http_error(exc)
    parts = urlsplit(judge.base_url)
    where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    if status is None:
        if never_connected(exc):
            if POLICY_PREFIX in message:
                reason = message.removeprefix("connection error: ")
                return _failure("url", f"URL: {judge.base_url} is not reachable from this server: {reason}.", secret)
            if "resolve" in message:
                return _failure("url", f"URL: the host '{parts.hostname}' cannot be resolved ({message}).", secret)
            return _failure("url", f"URL: nothing answers at {where} ({message}).", secret)
        if isinstance(exc, openai.APITimeoutError):
            waited = f"{CHECK_TIMEOUT_SECONDS:g} s"
            return _failure("endpoint", f"The endpoint at {where} accepted the connection but gave no answer within {waited}.", secret)
        return _failure("url", f"URL: the connection to {where} failed ({message}).", secret)
    lowered = message.lower()
    if status in (401, 403):
        return _failure("authentication", f"Authentication: the endpoint refused the key in ${judge.api_key_env} ({message}).", secret)
    if status in (400, 422) and judge.structured_output and SCHEMA_WORDS.search(message):
        return _failure(
            "schema",
            f"Schema: the endpoint refuses the JSON schema of structured output ({message}). Turn structured output off for this judge "
            "(add_judge --update --no-structured-output): the prompt asks for JSON in words too.",
            secret,
        )
    if status in (400, 404, 422) and "model" in lowered:
        return _failure("model", f"Model: the endpoint does not serve the model '{judge.model}' ({message}).", secret)
    if status in (404, 405):
        return _failure(
            "url",
            f"URL: {judge.base_url.rstrip('/')}/chat/completions is not a chat-completions endpoint ({message}); "
            "an OpenAI-compatible base URL usually ends in /v1.",
            secret,
        )
    if status == 429:
        return _failure(
            "rate limit", f"The endpoint answered but asks to slow down ({message}); try again, and set the judge's rpm/tpm limits.", secret
        )
    if status >= 500:
        return _failure("endpoint", f"The endpoint failed ({message}); try again later.", secret)
    return _failure("endpoint", f"The endpoint refused the test request ({message}).", secret)


def judge_check(*, judge: Judge) -> CheckResult:
    """One minimal call to the judge's endpoint (saved or not), and what it shows."""
    if judge.kind != Judge.Kind.LLM:
        offline = f"'{judge.name}' is judged offline ({judge.get_kind_display()}): there is no connection to test."
        return CheckResult(ok=True, problem="", message=offline)
    if refusal := api_key_env_refusal(judge.api_key_env) or base_url_refusal(judge.base_url):
        return CheckResult(ok=False, problem="settings", message=f"Nothing was sent: {refusal}")
    secret = os.environ.get(judge.api_key_env, "")
    if not secret:
        return CheckResult(
            ok=False, problem="authentication",
            message=f"Authentication: the variable {judge.api_key_env} that should hold the API key is not set on this server; nothing was sent.",
        )  # fmt: skip
    try:
        client = openai_client(judge, secret, 1, settings.JUDGE_ALLOW_ADDRESSES)
        # A model on this machine's CPU may need longer than a hosted one for even a few tokens.
        waited = judge.timeout_seconds if is_local(judge.base_url) else min(judge.timeout_seconds, CHECK_TIMEOUT_SECONDS)
        client = client.with_options(timeout=waited)
    except Exception as exc:  # whatever the client library rejects in the set-up is reported, not raised
        return _failure("settings", f"Nothing was sent: the client for {judge.base_url!r} cannot be built ({_words(exc)}).", secret)
    body = {"model": judge.model, "messages": [{"role": "user", "content": PROMPT}], "max_tokens": CHECK_MAX_TOKENS, "temperature": 0}
    if judge.structured_output:
        body["response_format"] = CHECK_SCHEMA
    started = time.monotonic()
    try:
        response = client.post("/chat/completions", body=body, cast_to=openai.APIResponse[bytes])
        raw = response.parse()
    except (openai.APIStatusError, openai.APIConnectionError, httpx2.HTTPError) as exc:
        return _described(exc, judge, secret)
    except (httpx2.InvalidURL, ValueError, TypeError, UnicodeError) as exc:  # the request could not be built from the set-up
        return _failure("url", f"URL: no request could be made to {judge.base_url!r} ({_words(exc)}).", secret)
    latency = round((time.monotonic() - started) * 1000)
    completion = read_completion(raw)
    if completion.problem:
        return _failure("endpoint", f"The endpoint answered HTTP 200, but not with a chat completion: {completion.problem}.", secret)
    cost = token_cost(
        judge=judge,
        prompt_tokens=completion.prompt_tokens,
        cached_tokens=completion.cached_tokens,
        completion_tokens=completion.completion_tokens,
    )
    priced = f"${cost:.8f}" if cost is not None else "cost unknown: the judge has no prices"
    schema = " and the JSON schema" if judge.structured_output else ""
    message = (
        f"Connected: {judge.base_url} took the key in ${judge.api_key_env}{schema}, and the model '{judge.model}' answered in "
        f"{latency} ms ({completion.prompt_tokens} prompt + {completion.completion_tokens} completion tokens, {priced})."
    )
    return CheckResult(ok=True, problem="", latency_ms=latency, cost_usd=cost, message=message + _served(client, judge))


def _served(client, judge: Judge) -> str:
    """What the endpoint says it serves: its models (a warning when the judge's is not among them,
    since a local server answers under any model name) and its slots, when it says."""
    told = ""
    models = served_models(client)
    if models is not None:
        listed = ", ".join(f"'{name}'" for name in models[:5]) + (f" and {len(models) - 5} more" if len(models) > 5 else "")
        if judge.model in models:
            told += f" The endpoint serves {listed}."
        else:
            told += (
                f" Warning: the endpoint serves {listed}, not '{judge.model}': it answered under a name it does not list "
                "(llama.cpp's server answers any name with the one model it has loaded), so the answers are that model's."
            )
    slots = server_slots(client, judge.base_url)
    if slots is not None:
        told += f" It serves {slots} request(s) at once (its slots): run with --concurrency {slots} or less."
    return told
