"""What an LLM judge is asked about a pair, and how its answer is read.

Pure Python, no Django: the run engine (``judges.engine``) turns a pair and a
criterion category into a :class:`JudgeRequest` with :func:`build_request`, sends
it to any OpenAI-compatible chat-completions endpoint (``judges.wire``), and reads
the answer with :func:`parse_verdicts`.

The prompt
----------
One system message and one user message. The user message opens with the topic
and the two articles, so the calls for the three categories of one pair share a
long common prefix (endpoints with prompt caching bill it once), then gives the
category, its criteria one per line as ``- <key>: <text>``, and the answer format
in words. The words are the same with and without structured output, so an
endpoint that ignores ``response_format`` still answers JSON. Nothing in the
template tells the judge where either article came from.

Reading the answer (``parse_verdicts``)
---------------------------------------
Tolerated, because real endpoints do it:

* code fences (```` ```json … ``` ````), prose before or after the JSON, and
  ``<think>…</think>`` blocks of reasoning models;
* the list under ``verdicts`` or ``results``, a bare top-level list, a mapping
  ``{"<key>": {"winner": …, "reason": …}}`` or ``{"<key>": "1"}``, and a single
  verdict object when a single criterion was asked;
* the criterion named in ``criterion`` (also ``criterion_key``, ``key``,
  ``criterion_id``, ``id``) by its key (exact, then case-insensitive, then the
  leading token of an echoed line such as ``"ww_cc_1: A better article …"``) or
  by its 1-based position in the request (``3``, ``"3"``, or
  ``criterion_index``/``index``/``number``); a single asked criterion may go
  unnamed;
* the winner in ``winner`` (also ``better``, ``preferred``, ``choice``) as
  ``1``/``2`` (number or string), ``"Article 1"``, ``"article_2"``, ``"first"``/
  ``"second"``, or ``"A"``/``"B"`` (A is the first article shown, B the second:
  the prompt never uses letters, so a letter can only mean a position); ``"tie"``
  (also ``"draw"``, ``"equal"``) only when ties are allowed;
* a missing reason (read as ``""``).

Everything else raises :class:`InvalidResponse` with a message naming the
problem: no JSON or truncated JSON, an unknown criterion or position, a criterion
answered twice, a criterion left out, a winner that is none of the above (``3``,
``"both"``, ``"neither"``, ``null``), or ``"tie"`` when ties are not allowed. An
unreadable verdict is never turned into a tie or a win.
"""

from __future__ import annotations

import json
import re

from protocols.base import CriterionSpec, InvalidResponse, JudgeRequest, criterion_keys, schema_format
from protocols.pairwise.words import FIRST, SECOND, TIE

__all__ = ["SYSTEM_PROMPT", "article_lines", "build_request", "parse_verdicts", "read_json", "response_schema"]


# ------------------------------------------------------------------ the prompt

SYSTEM_PROMPT = (
    "You compare two encyclopedia-style articles written about the same topic and decide, "
    "criterion by criterion, which of the two meets each criterion better. Judge each criterion "
    "on its own terms and only on what it asks about. The order in which the articles are shown "
    "says nothing about their quality, and length or polish is not a merit unless the criterion "
    "makes it one. Answer with JSON only."
)

_TIE_ALLOWED = 'Answer "tie" only when the two articles cannot be told apart on that criterion; if one is even slightly better, choose it.'
_TIE_FORBIDDEN = 'There is no "tie" answer: when the articles are close, choose the one that is even slightly better.'


def _one_line(text: str) -> str:
    return " ".join(text.split())


def response_schema(criteria: tuple[str, ...], allow_tie: bool) -> dict:
    """The strict JSON schema of an answer: one required property per criterion, in the order asked,
    so a grammar-constrained decoder (llama.cpp, vLLM, Ollama) can neither close the answer before
    every criterion is answered, nor answer one twice, nor go on past the last. An array of verdicts
    without a fixed length let a 0.5B model stop after one verdict and a 135M one repeat a criterion
    until max_tokens (docs/how-to/local-judge.md). Only keywords of the strict subset hosted providers accept
    (type, properties, required, additionalProperties, enum). ``reason`` comes before ``winner`` so a
    model that writes its fields in schema order explains before it decides."""
    winners = [FIRST, SECOND, TIE] if allow_tie else [FIRST, SECOND]
    verdict = {
        "type": "object",
        "properties": {"reason": {"type": "string"}, "winner": {"type": "string", "enum": winners}},
        "required": ["reason", "winner"],
        "additionalProperties": False,
    }
    by_criterion = {
        "type": "object",
        "properties": {key: verdict for key in criteria},
        "required": list(criteria),
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"verdicts": by_criterion},
        "required": ["verdicts"],
        "additionalProperties": False,
    }


def article_lines(topic: str, article_1: str, article_2: str) -> list[str]:
    """The opening of every user message about a pair: the topic and the two articles, in the order shown.
    Shared by the verdicts' requests and the guess question's (`protocols.pairwise.guess`), so that an
    endpoint with prompt caching bills the long common prefix once."""
    return [
        f"Topic: {_one_line(topic)}",
        "",
        "===== Article 1 =====",
        article_1.strip(),
        "===== End of Article 1 =====",
        "",
        "===== Article 2 =====",
        article_2.strip(),
        "===== End of Article 2 =====",
        "",
    ]


def read_json(content: str, keys: tuple[str, ...]):
    """The JSON value in a reply, read as tolerantly as verdicts are (fences, prose, think blocks);
    raises :class:`InvalidResponse`. An object naming one of `keys` is preferred among several."""
    return _decode(content, tuple(keys))


def build_request(
    *,
    topic: str,
    article_1: str,
    article_2: str,
    category: str,
    category_description: str,
    criteria: list[CriterionSpec],
    allow_tie: bool,
    structured: bool,
) -> JudgeRequest:
    keys = criterion_keys(criteria)

    winners = '"1", "2" or "tie"' if allow_tie else '"1" or "2"'
    choices = '"1" for Article 1, "2" for Article 2' + (', "tie" if neither is better' if allow_tie else "")
    criterion_lines = "\n".join(f"- {spec.key}: {_one_line(spec.text)}" for spec in criteria)
    description = _one_line(category_description)
    user = "\n".join(
        [
            *article_lines(topic, article_1, article_2),
            f"Category: {_one_line(category)}" + (f" ({description})" if description else ""),
            "",
            "Criteria, one per line as key: what to look for:",
            criterion_lines,
            "",
            f"For each criterion above, decide which article meets it better: {choices}. "
            "Give a short reason, one or two sentences, pointing to what in the articles decided it.",
            _TIE_ALLOWED if allow_tie else _TIE_FORBIDDEN,
            "",
            "Reply with a single JSON object and nothing else, shaped like this:",
            '{"verdicts": {"<key>": {"reason": "<short reason>", "winner": "1"}}}',
            f"The object under verdicts holds exactly one entry per criterion, in the order given above, with the key "
            f'copied exactly; "winner" is {winners}.',
        ]
    )
    response_format = schema_format("verdicts", response_schema(keys, allow_tie), structured=structured)
    return JudgeRequest(
        messages=[{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}],
        response_format=response_format,
        criteria=keys,
        allow_tie=allow_tie,
    )


# ------------------------------------------------------------------ reading the answer

_THINK_RE = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_FENCE_RE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)
_OPENING_RE = re.compile(r"[{\[]")
_LIST_KEYS = ("verdicts", "results")
_CRITERION_FIELDS = ("criterion", "criterion_key", "key", "criterion_id", "id")
_INDEX_FIELDS = ("criterion_index", "index", "criterion_number", "number")
_WINNER_FIELDS = ("winner", "better", "preferred", "choice")
_REASON_FIELDS = ("reason", "reasoning", "rationale", "explanation", "justification")
_WINNER_WORDS = {
    "1": "1",
    "2": "2",
    "a": "1",
    "b": "2",
    "first": "1",
    "second": "2",
    TIE: TIE,
    "draw": TIE,
    "equal": TIE,
}
_WINNER_PREFIX_RE = re.compile(r"^(?:article|text|option)\s*")
_SNIPPET = 80


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= _SNIPPET else text[:_SNIPPET] + "…")


def _looks_like_answer(value, criteria: tuple[str, ...]) -> bool:
    if isinstance(value, list):
        return bool(value) and all(isinstance(item, dict) for item in value)
    if isinstance(value, dict):
        return any(name in value for name in _LIST_KEYS + _WINNER_FIELDS) or any(key in value for key in criteria)
    return False


def _decode(content: str, criteria: tuple[str, ...]):
    if not isinstance(content, str) or not content.strip():
        raise InvalidResponse("the response is empty")
    text = _THINK_RE.sub("", content).strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    for block in _FENCE_RE.findall(text):
        try:
            return json.loads(block.strip())
        except ValueError:
            continue
    # JSON somewhere inside prose: decode from each opening bracket in turn and
    # keep the first value shaped like an answer.
    decoder = json.JSONDecoder()
    first_value, first_error = None, None
    position = 0
    while True:
        match = _OPENING_RE.search(text, position)
        if match is None:
            break
        try:
            value, end = decoder.raw_decode(text, match.start())
        except ValueError as error:
            first_error = first_error or error
            if text[match.start() :].lstrip("[ \t\r\n").startswith("{"):
                # A broken object (or list of objects) is the answer cut short:
                # pieces decoded from inside it would be a partial answer.
                break
            position = match.start() + 1
            continue
        if _looks_like_answer(value, criteria):
            return value
        if first_value is None:
            first_value = value
        position = end
    if first_error is not None:
        raise InvalidResponse(f"the JSON is incomplete or malformed (truncated?): {first_error.msg} in {_snippet(text)}")
    if first_value is not None:
        return first_value
    raise InvalidResponse(f"the response holds no JSON: {_snippet(text)}")


def _items(value, criteria: tuple[str, ...]) -> list:
    if isinstance(value, list):
        return value
    if not isinstance(value, dict):
        raise InvalidResponse(f"expected a JSON object with a 'verdicts' list, got {type(value).__name__} {_snippet(json.dumps(value))}")
    for name in _LIST_KEYS:
        if name in value:
            inner = value[name]
            if isinstance(inner, dict) and not any(field in inner for field in _WINNER_FIELDS):
                return _mapping_items(inner)
            if isinstance(inner, dict):
                return [inner]
            if not isinstance(inner, list):
                raise InvalidResponse(f"'{name}' must be a list, got {type(inner).__name__}")
            return inner
    if any(field in value for field in _WINNER_FIELDS):
        return [value]
    if any(key in value for key in criteria):
        return _mapping_items(value)
    raise InvalidResponse(f"expected a JSON object with a 'verdicts' list, got keys {sorted(value)}")


def _mapping_items(mapping: dict) -> list:
    # {"<key>": {"winner": …}} or {"<key>": "1"}
    items = []
    for key, verdict in mapping.items():
        if isinstance(verdict, dict):
            items.append({**verdict, "criterion": key})
        else:
            items.append({"criterion": key, "winner": verdict})
    return items


def _by_position(value, number: int, criteria: tuple[str, ...]) -> str:
    if not 1 <= value <= len(criteria):
        raise InvalidResponse(f"verdict {number}: criterion position {value} is out of range 1..{len(criteria)}")
    return criteria[value - 1]


def _criterion_named(text: str, criteria: tuple[str, ...]) -> str | None:
    text = text.strip().strip("`'\"*").strip()
    if text in criteria:
        return text
    folded = {key.lower(): key for key in criteria}
    if text.lower() in folded:
        return folded[text.lower()]
    # An echoed criterion line: "ww_cc_1: A better article …"
    token = re.match(r"[A-Za-z0-9_-]+", text)
    if token and token.group().lower() in folded and text[token.end() : token.end() + 1] in (":", " "):
        return folded[token.group().lower()]
    return None


def _criterion_of(item: dict, number: int, criteria: tuple[str, ...]) -> str:
    field = next((name for name in _CRITERION_FIELDS + _INDEX_FIELDS if item.get(name) is not None), None)
    if field is None:
        if len(criteria) == 1:
            return criteria[0]
        raise InvalidResponse(f"verdict {number} does not name its criterion (fields: {', '.join(sorted(item))})")
    value = item[field]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _by_position(value, number, criteria)
    if isinstance(value, str):
        key = _criterion_named(value, criteria)
        if key is not None:
            return key
        if value.strip().isdigit():
            return _by_position(int(value.strip()), number, criteria)
        raise InvalidResponse(f"verdict {number}: unknown criterion {value!r}; expected one of {', '.join(criteria)}")
    raise InvalidResponse(f"verdict {number}: criterion {value!r} is neither a key nor a position")


def _winner_of(item: dict, key: str, allow_tie: bool) -> str:
    field = next((name for name in _WINNER_FIELDS if name in item), None)
    if field is None:
        raise InvalidResponse(f"{key}: no winner given")
    value = item[field]
    winner = None
    if isinstance(value, int) and not isinstance(value, bool):
        winner = {1: FIRST, 2: SECOND}.get(value)
    elif isinstance(value, str):
        text = re.sub(r"[\s_-]+", " ", value.strip().lower()).strip(" .!\"'`*()[]")
        winner = _WINNER_WORDS.get(_WINNER_PREFIX_RE.sub("", text))
    if winner is None:
        raise InvalidResponse(f"{key}: winner {value!r} is not one of 1, 2" + (", tie" if allow_tie else ""))
    if winner == TIE and not allow_tie:
        raise InvalidResponse(f"{key}: winner {value!r} but ties are not allowed")
    return winner


def _reason_of(item: dict) -> str:
    for field in _REASON_FIELDS:
        value = item.get(field)
        if value is None:
            continue
        return value.strip() if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return ""


def parse_verdicts(
    content: str, *, criteria: tuple[str, ...], allow_tie: bool, responses: tuple[dict, ...] = ()
) -> dict[str, tuple[str, str]]:
    """``{criterion_key: (winner, reason)}`` in the order of ``criteria``, winner
    ``"1"``, ``"2"`` or ``"tie"``; raises :class:`InvalidResponse` (rules in the
    module docstring). ``responses`` is unused: a pairwise criterion has no parameters."""
    criteria = tuple(criteria)
    items = _items(_decode(content, criteria), criteria)
    found: dict[str, tuple[str, str]] = {}
    first_seen: dict[str, int] = {}
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise InvalidResponse(f"verdict {number} is not a JSON object: {_snippet(json.dumps(item))}")
        key = _criterion_of(item, number, criteria)
        if key in found:
            raise InvalidResponse(f"criterion {key} is answered twice (verdicts {first_seen[key]} and {number})")
        first_seen[key] = number
        found[key] = (_winner_of(item, key, allow_tie), _reason_of(item))
    missing = [key for key in criteria if key not in found]
    if missing:
        raise InvalidResponse(f"{len(missing)} of {len(criteria)} criteria have no verdict: {', '.join(missing)}")
    return {key: found[key] for key in criteria}
