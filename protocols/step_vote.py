"""The step-vote question asked of a judge: is this step of an agent's work helpful, up or down?

The question annotators answer with the ▲/▼ buttons beside a step (`annotate.services.step_votes`),
put to an LLM judge one step at a time, as a process judge would be: the request gives the task
(the topic the agent was asked to write about), the agent's steps before this one, in order, and
then the step itself, each with its kind, query and page title as the page shows them (never a
URL or a system name: the judge is as blind as the annotators). The final article is not shown:
the vote is about the step as the work stood when it was taken.

Under structured output the reply's schema is ``{"vote": "up" | "down", "reason": <text>}``
(schema name ``step_vote``). The reply is read as tolerantly as verdicts are (`prompt.read_json`),
and also takes ``helpful``/``not helpful``, ``+``/``-``, ``yes``/``no``, ``1``/``0``, ``true``/
``false``; anything else is :class:`InvalidResponse`, never read as either vote.

Pure: no Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from protocols.base import InvalidResponse, JudgeRequest, schema_format
from protocols.pairwise.prompt import read_json

NAME = "step_vote"  # the request's `protocol`, read by `parse_verdicts` below (`protocols.parse_reply`)
KEY = "vote"  # the one answer's key, in the reply and in the verdicts `parse_verdicts` returns
UP, DOWN = "up", "down"
VOTES = (UP, DOWN)
SYSTEM_PROMPT = (
    "You review the intermediate steps of a research agent that was asked to write an encyclopedic article. "
    "For the step you are shown, say whether it helps the work (a sound plan, a relevant search, a useful page read, "
    "a correct note or summary) or not (off topic, redundant, wrong, or a dead end), judging it as the work stood then."
)
_FIELDS = (KEY, "answer", "verdict", "rating", "helpful")
_WORDS = {
    "up": UP, "upvote": UP, "helpful": UP, "yes": UP, "good": UP, "+": UP, "1": UP, "true": UP, "thumbs up": UP,
    "down": DOWN, "downvote": DOWN, "not helpful": DOWN, "unhelpful": DOWN, "no": DOWN, "bad": DOWN, "-": DOWN,
    "0": DOWN, "false": DOWN, "thumbs down": DOWN,
}  # fmt: skip


@dataclass(frozen=True)
class Step:
    """A step as the judge is shown it (what the pair page shows: no URL)."""

    kind: str
    content: str
    query: str = ""
    title: str = ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def step_lines(number: int, step: Step) -> list[str]:
    head = f"Step {number} ({_one_line(step.kind)})"
    if step.query:
        head += f", query: {_one_line(step.query)}"
    if step.title:
        head += f", page: {_one_line(step.title)}"
    return [head + ":", step.content.strip() or "(no text)", ""]


def response_schema() -> dict:
    return {
        "type": "object",
        "properties": {KEY: {"type": "string", "enum": list(VOTES)}, "reason": {"type": "string"}},
        "required": [KEY, "reason"],
        "additionalProperties": False,
    }


def build_request(*, topic: str, before: list[Step], step: Step, structured: bool) -> JudgeRequest:
    """The vote on `step`, the agent's step after `before` (its earlier steps, in order), on `topic`."""
    lines = [f"Task: write an encyclopedic article about {_one_line(topic)}.", ""]
    if before:
        lines += ["The agent's steps so far:", ""]
        for number, earlier in enumerate(before, start=1):
            lines += step_lines(number, earlier)
    else:
        lines += ["This is the agent's first step.", ""]
    lines += ["The step to vote on:", "", *step_lines(len(before) + 1, step)]
    lines += [
        f'Is this step helpful? Answer "{UP}" if it is, "{DOWN}" if it is not, with a short reason.',
        "",
        "Reply with a single JSON object and nothing else, shaped like this:",
        f'{{"{KEY}": "{UP}", "reason": "..."}}',
    ]
    response_format = schema_format(NAME, response_schema(), structured=structured)
    return JudgeRequest(
        messages=[{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}],
        response_format=response_format,
        criteria=(KEY,),
        allow_tie=False,
        protocol=NAME,
    )


def _vote(value) -> str | None:
    if isinstance(value, bool):
        return UP if value else DOWN
    if isinstance(value, int):
        return {1: UP, 0: DOWN, -1: DOWN}.get(value)
    if isinstance(value, str):
        text = re.sub(r"[\s_]+", " ", value.strip().lower()).strip(' .!"`*()[]')
        return _WORDS.get(text)
    return None


def parse_verdicts(content: str, *, criteria: tuple[str, ...] = (KEY,), allow_tie: bool = False, responses: tuple = ()) -> dict:
    """``{"vote": (vote, reason)}``, the vote ``up`` or ``down``; raises :class:`InvalidResponse`.
    The signature is a protocol's `parse_verdicts`, so the engine reads the reply as any other."""
    value = read_json(content, (KEY,))
    reason = ""
    if isinstance(value, dict):
        field = next((name for name in _FIELDS if name in value), None)
        if field is None:
            raise InvalidResponse(f"expected a JSON object with a '{KEY}', got keys {sorted(value)}")
        shown, reason = value[field], value.get("reason", "")
        if not isinstance(reason, str):
            reason = str(reason)
    elif isinstance(value, (str, int)):
        shown = value
    else:
        raise InvalidResponse(f"expected a JSON object with a '{KEY}', got {type(value).__name__}")
    vote = _vote(shown)
    if vote is None:
        raise InvalidResponse(f"vote {shown!r} is not {UP} or {DOWN}")
    return {KEY: (vote, reason.strip())}
