"""What the one-article protocols (checklist, rating, count) share: the judge prompt and reply reading,
and the answers that need no order undone.

Each of them asks a question about ONE article per criterion. The prompt opens with the topic and
the article (so the calls for the categories of one article share a long prefix), then the
category, the criteria one per line as ``- <key>: <text>`` with the answers each allows, and the
answer format in words. The reply is one JSON object ``{"answers": {"<key>": {"reason",
"answer"}, ...}}`` (the list ``{"answers": [{"criterion", "reason", "answer"}, ...]}`` is read too); the structured-output schema is named after the protocol (``checklist``,
``rating``, ``count``), so a test server can tell which one it is answering.

Reading is strict about the answer and tolerant only about the wrapping: code fences, prose around
the JSON and ``<think>`` blocks are stripped, a criterion may be named case-insensitively. A reply
without an answer for every asked criterion, an answer twice, an unknown criterion or an answer
the criterion does not allow raises :class:`InvalidResponse` with the reason; nothing is ever
turned into an answer it was not.

A protocol module binds the shared parts under its own names: `request_builder` and
`verdicts_reader` make its ``build_request`` and ``parse_verdicts`` from what is its own (the
system prompt, the words of its answers, their schema and how one is read); `as_given` is its
``shown_answer`` and overall answers (one article has no order to undo), `no_overall` its
``overall_problems``.

Pure: no Django.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from protocols.base import CriterionSpec, InvalidResponse, JudgeRequest, criterion_keys, schema_format

__all__ = [
    "ANSWERS_FIELD",
    "NA_CLASS",
    "NA_SKIP",
    "as_given",
    "build_one_article_request",
    "criteria_request",
    "na_problems",
    "no_overall",
    "read_answers",
    "request_builder",
    "request_text",
    "verdicts_reader",
    "whole_number",
]

ANSWERS_FIELD = "answers"
THINK_RE = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
FENCE_RE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)
WHOLE_NUMBER_RE = re.compile(r"-?\d+")
SNIPPET = 80


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def snippet(text: str) -> str:
    text = one_line(text)
    return repr(text if len(text) <= SNIPPET else text[:SNIPPET] + "…")


def build_one_article_request(
    *,
    protocol: str,
    system_prompt: str,
    topic: str,
    article: str,
    category: str,
    category_description: str,
    criteria: list[CriterionSpec],
    choices: Callable[[CriterionSpec], str],
    task: str,
    answer_schema: Callable[[CriterionSpec], dict],
    structured: bool,
) -> JudgeRequest:
    """A request asking one answer per criterion about one article; `choices(spec)` says in words
    what a criterion's answer may be, `answer_schema(spec)` the JSON schema of that answer."""
    criterion_keys(criteria)
    user = request_text(
        topic=topic,
        articles=[("Article", article)],
        category=category,
        category_description=category_description,
        heading="Criteria, one per line as key: what to look for [allowed answers]:",
        lines=[f"- {spec.key}: {one_line(spec.text)} [{choices(spec)}]" for spec in criteria],
        task=task + " Give a short reason, one or two sentences, pointing to what in the article decided it.",
        example="<answer>",
    )
    return criteria_request(
        protocol=protocol, system_prompt=system_prompt, user=user, criteria=criteria, answer_schema=answer_schema, structured=structured
    )


def request_text(
    *,
    topic: str,
    articles: list[tuple[str, str]],
    category: str,
    category_description: str,
    heading: str,
    lines: list[str],
    task: str,
    example: str,
) -> str:
    """The user message of a request about the articles of one item, (heading, text) each in the order
    shown, asking one answer per criterion of one category: the topic and the articles first (so the
    calls for the categories of one item share a long prefix), then the category, the criteria under
    `heading` as `lines`, the `task`, and the reply's shape with `example` as the answer."""
    description = one_line(category_description)
    shown = []
    for name, text in articles:
        shown += [f"===== {name} =====", text.strip(), f"===== End of {name} =====", ""]
    return "\n".join(
        [
            f"Topic: {one_line(topic)}",
            "",
            *shown,
            f"Category: {one_line(category)}" + (f" ({description})" if description else ""),
            "",
            heading,
            "\n".join(lines),
            "",
            task,
            "",
            "Reply with a single JSON object and nothing else, shaped like this:",
            '{"answers": {"<key>": {"reason": "<short reason>", "answer": ' + example + "}}}",
            "The object under answers holds exactly one entry per criterion, in the order given above, with the key copied exactly.",
        ]
    )


def criteria_request(
    *,
    protocol: str,
    system_prompt: str,
    user: str,
    criteria: list[CriterionSpec],
    answer_schema: Callable[[CriterionSpec], dict],
    structured: bool,
) -> JudgeRequest:
    """A request of `protocol` asking the `user` message's criteria, each answer under `answer_schema(spec)`."""
    return JudgeRequest(
        messages=[{"role": "system", "content": system_prompt}, {"role": "user", "content": user}],
        response_format=schema_format(protocol, response_schema(criteria, answer_schema), structured=structured),
        criteria=criterion_keys(criteria),
        allow_tie=False,
        protocol=protocol,
        responses=tuple(spec.response for spec in criteria),
    )


def response_schema(criteria: list[CriterionSpec], answer_schema: Callable[[CriterionSpec], dict]) -> dict:
    """One required property per criterion, in the order asked, each with its own answer's schema:
    under grammar-constrained decoding the answer cannot leave a criterion out, answer one twice or
    run on past the last (``protocols.pairwise.prompt.response_schema`` says why)."""

    def entry(spec: CriterionSpec) -> dict:
        return {
            "type": "object",
            "properties": {"reason": {"type": "string"}, "answer": answer_schema(spec)},
            "required": ["reason", "answer"],
            "additionalProperties": False,
        }

    by_criterion = {
        "type": "object",
        "properties": {spec.key: entry(spec) for spec in criteria},
        "required": [spec.key for spec in criteria],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {ANSWERS_FIELD: by_criterion},
        "required": [ANSWERS_FIELD],
        "additionalProperties": False,
    }


def decode(content: object) -> object:
    if not isinstance(content, str) or not content.strip():
        raise InvalidResponse("the response is empty")
    text = THINK_RE.sub("", content).strip()
    candidates = [text, *(block.strip() for block in FENCE_RE.findall(text))]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    raise InvalidResponse(f"the response holds no complete JSON object: {snippet(text)}")


def criterion_named(value: object, number: int, criteria: tuple[str, ...]) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidResponse(f"answer {number} does not name its criterion")
    folded = {key.lower(): key for key in criteria}
    key = folded.get(value.strip().lower())
    if key is None:
        raise InvalidResponse(f"answer {number}: unknown criterion {value!r}; expected one of {', '.join(criteria)}")
    return key


def read_answers(
    content: object,
    *,
    criteria: tuple[str, ...],
    responses: tuple[dict, ...],
    read_answer: Callable[[object, dict], str],
) -> dict[str, tuple[str, str]]:
    """``{criterion_key: (answer, reason)}`` in the order of ``criteria``; `read_answer(value,
    response)` gives the stored form of one answer or raises InvalidResponse saying why not."""
    criteria = tuple(criteria)
    if len(responses) != len(criteria):
        raise ValueError("one response description per criterion is needed")
    by_key = dict(zip(criteria, responses))
    value = decode(content)
    listed = value.get(ANSWERS_FIELD) if isinstance(value, dict) else None
    if isinstance(listed, dict):  # keyed by criterion, as the schema asks: {"<key>": {"reason", "answer"}}
        listed = [{**item, "criterion": key} if isinstance(item, dict) else item for key, item in listed.items()]
    if not isinstance(listed, list):
        raise InvalidResponse(f"expected a JSON object with an '{ANSWERS_FIELD}' list, got {snippet(json.dumps(value))}")
    found: dict[str, tuple[str, str]] = {}
    for number, item in enumerate(listed, start=1):
        if not isinstance(item, dict):
            raise InvalidResponse(f"answer {number} is not a JSON object: {snippet(json.dumps(item))}")
        key = criterion_named(item.get("criterion"), number, criteria)
        if key in found:
            raise InvalidResponse(f"criterion {key} is answered twice")
        if "answer" not in item:
            raise InvalidResponse(f"{key}: no answer given")
        try:
            answer = read_answer(item["answer"], by_key[key])
        except InvalidResponse as exc:
            raise InvalidResponse(f"{key}: {exc}") from None
        reason = item.get("reason")
        found[key] = (answer, reason.strip() if isinstance(reason, str) else "")
    missing = [key for key in criteria if key not in found]
    if missing:
        raise InvalidResponse(f"{len(missing)} of {len(criteria)} criteria have no answer: {', '.join(missing)}")
    return {key: found[key] for key in criteria}


# --- what the protocols' modules bind under their own names ---------------------------

# A criterion's "not applicable" answer ("na" of its response object): left out of every figure
# (counted, as no answer), or a class of its own counted in every figure.
NA_SKIP, NA_CLASS = "skip", "class"
NA_MODES = (NA_SKIP, NA_CLASS)


def na_problems(response: dict) -> tuple[str | None, list[str]]:
    """The `na` mode a response object gives (None: no N/A answer), and what is wrong with it."""
    if "na" not in response:
        return None, []
    mode = response["na"]
    if mode not in NA_MODES:
        return None, [f"na must be one of {', '.join(repr(m) for m in NA_MODES)}, not {mode!r}"]
    return mode, []


def as_given(answer: str, *, order: str = "a") -> str:
    """An answer about one article, stored as the rater gave it and shown as stored: no order to undo."""
    return answer


def no_overall(name: str) -> Callable[[str], list[str]]:
    """The ``overall_problems`` of protocol `name`, which has no overall answer: only "" is one."""

    def overall_problems(shown: str) -> list[str]:
        return [] if shown == "" else [f"A {name} has no overall answer."]

    return overall_problems


def request_builder(
    *,
    protocol: str,
    system_prompt: str,
    choices: Callable[[CriterionSpec], str],
    task: str,
    answer_schema: Callable[[CriterionSpec], dict],
    check: Callable[[list[CriterionSpec]], None] | None = None,
) -> Callable[..., JudgeRequest]:
    """The ``build_request`` of `protocol` (see `build_one_article_request`); `check(criteria)`,
    when given, raises ValueError first for criteria the protocol cannot ask about."""

    def build_request(
        *,
        topic: str,
        article: str,
        category: str,
        category_description: str,
        criteria: list[CriterionSpec],
        structured: bool,
        allow_tie: bool = False,
    ) -> JudgeRequest:
        if check is not None:
            check(criteria)
        return build_one_article_request(
            protocol=protocol,
            system_prompt=system_prompt,
            topic=topic,
            article=article,
            category=category,
            category_description=category_description,
            criteria=criteria,
            choices=choices,
            task=task,
            answer_schema=answer_schema,
            structured=structured,
        )

    return build_request


def verdicts_reader(read_answer: Callable[[object, dict], str]) -> Callable[..., dict[str, tuple[str, str]]]:
    """The ``parse_verdicts`` of a protocol whose `read_answer(value, response)` stores one answer."""

    def parse_verdicts(
        content: str, *, criteria: tuple[str, ...], allow_tie: bool = False, responses: tuple[dict, ...]
    ) -> dict[str, tuple[str, str]]:
        """``{criterion_key: (answer, reason)}``, each answer as the protocol stores it; raises InvalidResponse."""
        return read_answers(content, criteria=criteria, responses=responses, read_answer=read_answer)

    return parse_verdicts


def whole_number(value: object) -> int | None:
    """A judge's answer as an integer (a JSON number, or a string of digits), or None if it is none."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and WHOLE_NUMBER_RE.fullmatch(value.strip()):
        return int(value.strip())
    return None
