"""The OpenAI chat-completions wire format: what identifies a request, what it will cost, and reading a reply.

Pure Python, no Django. A protocol (``protocols``) builds the :class:`JudgeRequest`
and parses the answer's text; this module hashes the request for the cache,
estimates its tokens for budgets, and reads the body of a ``/chat/completions``
reply into a :class:`Completion`.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

from protocols.base import InvalidResponse, JudgeRequest

__all__ = [
    "cache_endpoint",
    "request_hashes",
    "estimate_prompt_tokens",
    "estimate_completion_tokens",
    "Completion",
    "read_completion",
    "unreadable_reason",
    "CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD_TOKENS",
    "REPLY_OVERHEAD_TOKENS",
    "COMPLETION_TOKENS_PER_CRITERION",
    "COMPLETION_OVERHEAD_TOKENS",
]

# Token estimates, used for budgets before a call is made (the bill uses the
# endpoint's own usage figures). English prose averages about four characters a
# token with the common BPE tokenizers; chat formatting adds a few tokens per
# message and a few to open the reply.
CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
REPLY_OVERHEAD_TOKENS = 3
# A verdict is about 25 tokens of JSON around a one-or-two-sentence reason
# (up to ~40 words, ~55 tokens); rounded up so a budget errs on the safe side.
COMPLETION_TOKENS_PER_CRITERION = 80
COMPLETION_OVERHEAD_TOKENS = 10


def request_hashes(*, model: str, request: JudgeRequest, temperature: float, max_tokens: int) -> tuple[str, str]:
    """sha256 of everything that determines the answer, so an identical call can be
    answered from a cache, for the request as built and without its JSON schema (as
    sent to an endpoint that refused the schema; "" when there is no schema).
    ``temperature`` is compared as a float (``0`` and ``0.0`` hash alike).

    The message texts (the two articles, tens of kilobytes) are hashed once, as
    they are, each preceded by its length so no two requests can run together;
    serialising them to JSON first doubled the time and held the interpreter
    lock, where hashing bytes does not. Each hash is then that digest and the
    settings as canonical JSON.
    """
    texts = hashlib.sha256()
    for message in request.messages:
        data = _content_text(message.get("content", "")).encode("utf-8")
        texts.update(len(data).to_bytes(8, "big"))
        texts.update(data)
    texts_digest = texts.digest()

    def combined(response_format: dict | None) -> str:
        settings = json.dumps(
            {
                "version": 2,
                "model": model,
                "messages": [{k: v for k, v in message.items() if k != "content"} for message in request.messages],
                "response_format": response_format,
                "criteria": list(request.criteria),
                "allow_tie": request.allow_tie,
                "temperature": float(temperature),
                "max_tokens": int(max_tokens),
            },
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return hashlib.sha256(texts_digest + settings.encode("utf-8")).hexdigest()

    plain = combined(None)
    if request.response_format is None:
        return plain, ""
    return combined(request.response_format), plain


def cache_endpoint(base_url: str) -> str:
    """What the response cache keys on besides the request's hash: the endpoint's base URL, without a
    trailing slash, its scheme and host in lower case. The hash holds the model's name, but a name
    does not identify a model: a local server answers any name with the one model it has loaded."""
    url = base_url.strip().rstrip("/")
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}"


def _content_text(content) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


def estimate_prompt_tokens(request: JudgeRequest) -> int:
    """Characters / CHARS_PER_TOKEN (rounded up) per message plus
    MESSAGE_OVERHEAD_TOKENS each, REPLY_OVERHEAD_TOKENS, and the JSON schema's own
    characters / CHARS_PER_TOKEN when one is sent (endpoints bill it as input)."""
    tokens = REPLY_OVERHEAD_TOKENS
    for message in request.messages:
        tokens += math.ceil(len(_content_text(message.get("content", ""))) / CHARS_PER_TOKEN)
        tokens += MESSAGE_OVERHEAD_TOKENS
    if request.response_format is not None:
        tokens += math.ceil(len(json.dumps(request.response_format)) / CHARS_PER_TOKEN)
    return tokens


def estimate_completion_tokens(request: JudgeRequest) -> int:
    """COMPLETION_TOKENS_PER_CRITERION per asked criterion plus
    COMPLETION_OVERHEAD_TOKENS. Hidden reasoning tokens are not foreseen."""
    return COMPLETION_OVERHEAD_TOKENS + COMPLETION_TOKENS_PER_CRITERION * len(request.criteria)


# ------------------------------------------------------------------ reading the reply


@dataclass(frozen=True)
class Completion:
    """What the engine keeps of a chat-completions reply: the text, the billed tokens,
    why generation stopped, and `problem` when the body is not a completion at all."""

    content: str = ""
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""
    problem: str = ""
    logprobs: tuple = ()  # the choice's ``logprobs.content`` entries, when the endpoint gave them


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def read_completion(body: bytes | str) -> Completion:
    """Reads the body of a 200 reply of ``/chat/completions``.

    Read here rather than by the client's typed models, which cost the worker
    threads about as much interpreter time as sending the request. Tolerant the
    way endpoints differ: usage may be missing (nothing billed) or partial;
    cached prompt tokens come from ``prompt_tokens_details.cached_tokens`` or
    DeepSeek's ``prompt_cache_hit_tokens`` and never exceed the prompt; a
    refusal is reported as the problem. Token probabilities, when asked for and
    given, are the choice's ``logprobs.content`` list.
    """
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        return Completion(problem=f"the reply is not JSON: {_snippet(text)}")
    if not isinstance(data, dict):
        return Completion(problem=f"the reply is not a chat completion: {_snippet(json.dumps(data))}")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    prompt = _count(usage.get("prompt_tokens"))
    details = usage.get("prompt_tokens_details") if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    cached = _count(details.get("cached_tokens")) or _count(usage.get("prompt_cache_hit_tokens"))
    tokens = {"prompt_tokens": prompt, "cached_tokens": min(cached, prompt), "completion_tokens": _count(usage.get("completion_tokens"))}
    choices = data.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    if choice is None:
        error = data.get("error")
        detail = error.get("message") if isinstance(error, dict) else None
        return Completion(problem=f"the reply has no choices{f': {detail}' if detail else ''}", **tokens)
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    content = message.get("content")
    if isinstance(content, list):  # content parts, as a few endpoints answer
        content = "".join(part.get("text") or "" for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    finish = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else ""
    problem = ""
    logprobs = choice.get("logprobs") if isinstance(choice.get("logprobs"), dict) else {}
    entries = logprobs.get("content") if isinstance(logprobs.get("content"), list) else []
    entries = tuple(e for e in entries if isinstance(e, dict))
    if not isinstance(content, str) or not content:
        refusal = message.get("refusal")
        problem = f"the model refused: {_snippet(refusal)}" if isinstance(refusal, str) and refusal else "the reply has no text"
        content = ""
    return Completion(content=content, finish_reason=finish, problem=problem, logprobs=entries, **tokens)


def unreadable_reason(exc: InvalidResponse, completion, max_tokens: int) -> str:
    """Why a billed answer gave no verdicts: no completion at all, cut off at `max_tokens`, or what
    `parse_verdicts` found wrong (synchronous and batch answers alike)."""
    if completion.problem:
        return completion.problem
    if completion.finish_reason == "length":
        return f"cut off at max_tokens ({max_tokens}): {exc}"
    return str(exc)


_SNIPPET = 80


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= _SNIPPET else text[:_SNIPPET] + "…")
