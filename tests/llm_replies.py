"""What the fake model of tests/llm_server.py answers: the default policy and confidence, the
criterion keys read from a request, and the ``logprobs.content`` of a reply (see that module's docstring)."""

from __future__ import annotations

import hashlib
import json
import math
import re

_CRITERION_LINE_RE = re.compile(r"^- ([A-Za-z0-9_.-]+): ", re.MULTILINE)


def default_policy(criterion_key: str, user_message: str) -> str:
    digest = hashlib.sha256(f"{criterion_key}\0{user_message[:200]}".encode("utf-8")).digest()
    return "1" if digest[0] % 2 == 0 else "2"


def default_confidence(criterion_key: str, user_message: str) -> float:
    """The probability the fake model gives its answer: 0.5 to 1 by a hash, in steps of 1/256."""
    digest = hashlib.sha256(f"{criterion_key}\0{user_message[:200]}".encode("utf-8")).digest()
    return 0.5 + digest[1] / 512


# The guess question (protocols/pairwise/guess.py): its schema's name, and its words in a request without one.
GUESS_SCHEMA = "guess"
GUESS_WORDS = "Which article do you think is the "
_ARTICLE_RE = re.compile(r"^===== Article ([12]) =====\n(.*?)\n===== End of Article \1 =====$", re.MULTILINE | re.DOTALL)


def is_guess(schema_name: str, user_message: str) -> bool:
    return schema_name == GUESS_SCHEMA or GUESS_WORDS in user_message


# The vote on an agent's step (protocols/step_vote.py): its schema's name, and its words in a request without one.
STEP_SCHEMA = "step_vote"
STEP_WORDS = "The step to vote on:"


def is_step_vote(schema_name: str, user_message: str) -> bool:
    return schema_name == STEP_SCHEMA or STEP_WORDS in user_message


def default_step_vote(user_message: str) -> str:
    """The fake model's vote on a step: "up" or "down" by a hash of the step's own text (what follows
    the request's "The step to vote on:"), so one step gets one vote whatever came before it."""
    step = user_message.split(STEP_WORDS, 1)[-1]
    return "up" if hashlib.sha256(step.encode("utf-8")).digest()[0] % 3 else "down"


def default_guess(user_message: str) -> str:
    """The fake model's guess: the longer article is the reference ("first" or "second"), as a
    reader guesses from the leading tell; "unknown" when they are as long, or not found."""
    lengths = {number: len(text) for number, text in _ARTICLE_RE.findall(user_message)}
    first, second = lengths.get("1", 0), lengths.get("2", 0)
    return "first" if first > second else "second" if second > first else "unknown"


_WINNER_VALUE_RE = re.compile(r'"winner": "([^"]*)"')


def token_logprobs(content: str, confidences: list[float], top: int) -> list[dict]:
    """``logprobs.content`` for a reply: each winner's value is a token of its own whose
    ``top_logprobs`` give it probability p (its confidence) and the other position 1 - p; the text
    between is one token each, certain."""
    entries, at = [], 0

    def certain(text: str) -> None:
        if text:
            entries.append(
                {"token": text, "logprob": 0.0, "bytes": list(text.encode()), "top_logprobs": [{"token": text, "logprob": 0.0}][:top]}
            )

    for match, p in zip(_WINNER_VALUE_RE.finditer(content), confidences):
        certain(content[at : match.start(1)])
        chosen = match.group(1)
        other = "2" if chosen == "1" else "1"
        alternatives = [{"token": chosen, "logprob": math.log(p)}]
        if p < 1:
            alternatives.append({"token": other, "logprob": math.log(1 - p)})
        entries.append({"token": chosen, "logprob": math.log(p), "bytes": list(chosen.encode()), "top_logprobs": alternatives[:top]})
        at = match.end(1)
    certain(content[at:])
    return entries


def content_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": …}]
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else json.dumps(content)


def criterion_keys(user_message: str) -> list[str]:
    """Keys of the last contiguous block of ``- <key>: `` lines."""
    blocks: list[list[str]] = []
    previous_end = None
    for match in _CRITERION_LINE_RE.finditer(user_message):
        line_start = match.start()
        contiguous = previous_end is not None and user_message.count("\n", previous_end, line_start) == 1
        if contiguous:
            blocks[-1].append(match.group(1))
        else:
            blocks.append([match.group(1)])
        previous_end = user_message.find("\n", match.end())
        if previous_end == -1:
            previous_end = len(user_message)
    return blocks[-1] if blocks else []
