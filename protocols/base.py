"""What every annotation protocol provides, and the judge request shape they share.

A protocol is one module (or package) registered in `protocols.REGISTRY`. It says:

- what an item is: ``ARTICLES``, the number of articles an item holds (a whole number of at least
  1), or a range of them, each criterion then saying its own (``article_count(response)``, the
  ranking's "articles"); the registry refuses a protocol of an arity no item can hold yet
  (`protocols.ITEM_ARTICLES`);
- how the page draws a criterion's answer controls: ``PARTIAL``, the template that does (a
  rubric naming a protocol whose partial no template folder holds is refused at import:
  `annotate.services.catalogue.rubric_read`);
- what an answer is, and how it is validated, stored and shown: ``answer_problems``
  (what is wrong with an answer as the rater gave it), ``outcome_problems`` (the same for an
  answer given as exports give it, in an imported file), ``stored_answer`` and
  ``shown_answer`` (as stored, by slot / as the rater sees it, by position, given ``order=``, the
  permutation of the item's slots shown: `protocols.order`), and the
  same for the item's overall answer (``OVERALL_CHOICES``, ``overall_problems``,
  ``stored_overall``, ``shown_overall``);
- what a criterion of a rubric may say about its answers (the criteria file's ``response``
  object): ``read_response`` gives its stored form and what is wrong with it;
- how a judge is asked and how its reply is parsed: ``build_request`` and
  ``parse_verdicts`` (raising :class:`InvalidResponse`); ``protocols.parse_reply`` reads a
  reply with the protocol its request names. A protocol of one article (``ARTICLES == 1``)
  takes ``article=``, one of two ``article_1=``/``article_2=``, one of k ``articles=`` (a list, in
  the order drawn for the call);
- whether judges are asked its criteria (``JUDGED``: False for free text, whose answers are for
  people to read);
- which rows it hands to the metrics (``metric_outcome``: a stored answer as the
  metrics' outcome) and which agreement statistics fit its answers
  (``AGREEMENT_STATISTICS``).

`tests/test_protocols.py` checks every registered protocol against ``REQUIRED``.
Pure: no Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The names a protocol module defines.
REQUIRED = (
    "NAME",
    "ARTICLES",
    "PARTIAL",
    "JUDGED",
    "answer_problems",
    "outcome_problems",
    "stored_answer",
    "shown_answer",
    "OVERALL_CHOICES",
    "overall_problems",
    "stored_overall",
    "shown_overall",
    "read_response",
    "build_request",
    "parse_verdicts",
    "metric_outcome",
    "AGREEMENT_STATISTICS",
)


@dataclass(frozen=True)
class CriterionSpec:
    key: str
    text: str
    # The criterion's stored `response` (its protocol's `read_response`); {} for pairwise.
    response: dict = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeRequest:
    """What a judge is sent: chat messages, an optional JSON schema, and what the reply must answer."""

    messages: list[dict]
    response_format: dict | None
    criteria: tuple[str, ...]
    allow_tie: bool
    protocol: str = "pairwise"
    responses: tuple[dict, ...] = ()  # per criterion, what `parse_verdicts` needs to read its answer


KEY_RE = re.compile(r"[A-Za-z0-9_.-]+")


def criterion_keys(criteria: list[CriterionSpec]) -> tuple[str, ...]:
    """The keys of the criteria a judge is asked about; ValueError unless there is at least one and
    each is letters, digits, '_', '.' or '-' and given once."""
    if not criteria:
        raise ValueError("at least one criterion is needed")
    keys = tuple(spec.key for spec in criteria)
    for key in keys:
        if not KEY_RE.fullmatch(key):
            raise ValueError(f"criterion key {key!r} must be letters, digits, '_', '.' or '-'")
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate criterion keys in {keys}")
    return keys


class InvalidResponse(Exception):
    """The judge's answer cannot be read as one verdict per asked criterion."""


@dataclass(frozen=True)
class AnswerRules:
    """What a campaign asks of each criterion's answer, as a protocol's validation reads it."""

    allow_tie: bool
    rationale_max_length: int


# An unreadable answer fed back on a retry is cut to this many characters: enough to show the model
# what it wrote, never a runaway answer billed again as prompt.
RETRY_ANSWER_CHARS = 4000


def retry_messages(request: JudgeRequest, answer: str, reason: str) -> list[dict]:
    """The conversation of a retry after an unreadable answer: the request's messages, the answer as
    the assistant gave it, and what was wrong with it, so that the retry can differ from the answer
    (at temperature 0 the same request gets the same answer, billed again each time)."""
    keys = ", ".join(request.criteria)
    problem = (
        f"Your answer could not be used: {reason}. Answer again with a single JSON object and nothing else, "
        f"shaped as asked, with exactly one entry for each of these criteria, keys copied exactly: {keys}."
    )
    return [*request.messages, {"role": "assistant", "content": answer[:RETRY_ANSWER_CHARS]}, {"role": "user", "content": problem}]


def schema_format(name: str, schema: dict, *, structured: bool) -> dict | None:
    """A request's `response_format` asking for a reply under `schema` (strict JSON schema output,
    named `name`), or None when the judge does not use structured output."""
    if not structured:
        return None
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}
