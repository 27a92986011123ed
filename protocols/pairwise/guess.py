"""The guess question asked of a judge: which of the two articles it thinks is the reference.

The question the annotators answer after a pair (`annotate.services.guesses`), put to an LLM judge
in a conversation of its own: the verdicts' requests never see it, nor its answer, so asking it
reveals nothing to the verdicts (blindness). The user message opens with the same topic and
articles as the verdicts' requests (`prompt.article_lines`) and the same system prompt, so an
endpoint with prompt caching bills that long prefix once; then comes the question in the
annotators' words ("Which article do you think is the Wikipedia article?", the campaign's
reference name), with three answers, by position: ``first`` (Article 1), ``second`` (Article 2)
and ``unknown`` (don't know).

Under structured output the reply's schema is ``{"guess": <one of the three>}`` (schema name
``guess``). The reply is read as tolerantly as verdicts are (`prompt.read_json`), and also takes
``1``/``2``/``0`` and "Article 1", "don't know" and the like; anything else is
:class:`InvalidResponse`, never read as "don't know".

Pure: no Django.
"""

from __future__ import annotations

import re

from protocols.base import InvalidResponse, JudgeRequest, schema_format
from protocols.pairwise.prompt import SYSTEM_PROMPT, article_lines, read_json

NAME = "guess"  # the request's `protocol`: read by `parse_verdicts` below (`protocols.parse_reply`)
KEY = "guess"  # the one answer's key, in the reply and in the verdicts `parse_verdicts` returns
FIRST, SECOND, UNKNOWN = "first", "second", "unknown"
ANSWERS = (FIRST, SECOND, UNKNOWN)
_FIELDS = (KEY, "answer", "reference", "article", "choice")
_WORDS = {
    "first": FIRST,
    "1": FIRST,
    "article 1": FIRST,
    "second": SECOND,
    "2": SECOND,
    "article 2": SECOND,
    "unknown": UNKNOWN,
    "0": UNKNOWN,
    "dont know": UNKNOWN,
    "don't know": UNKNOWN,
    "do not know": UNKNOWN,
    "cannot tell": UNKNOWN,
    "can't tell": UNKNOWN,
}


def question(reference_name: str) -> str:
    """The question, in the words the annotation page uses."""
    return f"Which article do you think is the {' '.join(reference_name.split())} article?"


def response_schema() -> dict:
    return {
        "type": "object",
        "properties": {KEY: {"type": "string", "enum": list(ANSWERS)}},
        "required": [KEY],
        "additionalProperties": False,
    }


def build_request(*, topic: str, article_1: str, article_2: str, reference_name: str, structured: bool) -> JudgeRequest:
    """The guess question about a pair in the order shown; its reply is read by `parse_verdicts`."""
    user = "\n".join(
        [
            *article_lines(topic, article_1, article_2),
            question(reference_name),
            f'Answer "{FIRST}" for Article 1, "{SECOND}" for Article 2, or "{UNKNOWN}" if you cannot tell.',
            "",
            "Reply with a single JSON object and nothing else, shaped like this:",
            f'{{"{KEY}": "{FIRST}"}}',
        ]
    )
    response_format = schema_format(NAME, response_schema(), structured=structured)
    return JudgeRequest(
        messages=[{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}],
        response_format=response_format,
        criteria=(KEY,),
        allow_tie=False,
        protocol=NAME,
    )


def _answer(value) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return {1: FIRST, 2: SECOND, 0: UNKNOWN}.get(value)
    if isinstance(value, str):
        text = re.sub(r"[\s_-]+", " ", value.strip().lower()).strip(' .!"`*()[]')
        return _WORDS.get(text.replace("’", "'"))
    return None


def parse_verdicts(content: str, *, criteria: tuple[str, ...] = (KEY,), allow_tie: bool = False, responses: tuple = ()) -> dict:
    """``{"guess": (answer, "")}``, the answer ``first``, ``second`` or ``unknown``; raises
    :class:`InvalidResponse`. The signature is a protocol's `parse_verdicts`, so that the engine
    reads the reply as it reads any other (`protocols.parse_reply`)."""
    value = read_json(content, (KEY,))
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        answer = _answer(value)
    elif isinstance(value, dict):
        field = next((name for name in _FIELDS if name in value), None)
        if field is None:
            raise InvalidResponse(f"expected a JSON object with a '{KEY}', got keys {sorted(value)}")
        answer = _answer(value[field])
    else:
        raise InvalidResponse(f"expected a JSON object with a '{KEY}', got {type(value).__name__}")
    if answer is None:
        shown = value.get(field) if isinstance(value, dict) else value
        raise InvalidResponse(f"guess {shown!r} is not one of {', '.join(ANSWERS)}")
    return {KEY: (answer, "")}
