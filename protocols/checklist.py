"""The checklist protocol: one article, and a yes/no question per criterion.

- An item is one article.
- An answer is "yes" or "no", or "na" (not applicable) when the criterion allows it: the
  criteria file's ``"response": {"type": "checklist", "allow_na": true}`` (the same as
  ``"na": "skip"``: N/A is no answer in the figures), or ``"na": "class"`` (N/A is a class of its
  own, counted in every figure). Stored and shown alike (no order to undo).
- A judge is asked with `build_request` and read with `parse_verdicts`; anything but yes, no
  (or N/A where allowed) is an InvalidResponse, never an answer.
- The metrics get 1.0 for yes, 0.0 for no and NaN for N/A (`metric_outcome`, the "binary"
  table of `calibration.metrics.pointwise`); where N/A is a class, the answers are three classes,
  yes, no and na (codes 0, 1, 2 of a "nominal" table: `metric_table`).

Pure: no Django.
"""

from __future__ import annotations

import math

from protocols.base import CriterionSpec, InvalidResponse
from protocols.one_article import NA_CLASS, as_given, na_problems, no_overall, request_builder, verdicts_reader

NAME = "checklist"
# The template partial that draws a criterion's answer controls on the page (annotate's templates).
PARTIAL = "annotate/answers/choices.html"
ARTICLES = 1
JUDGED = True
YES, NO, NA = "yes", "no", "na"
# The response type of `calibration.metrics.pointwise` these answers make.
METRIC_RESPONSE = "binary"
# Figure names of `calibration.metrics.pointwise_agreement` / `pointwise_panel` that fit yes/no answers.
AGREEMENT_STATISTICS = ("agreement", "kappa", "agreement_majority", "kappa_majority", "fleiss_kappa")
OVERALL_CHOICES = ()  # a checklist has no overall answer

SYSTEM_PROMPT = (
    "You check one article against a list of yes/no questions. Answer each question on its own "
    "terms and only on what it asks about; length or polish is not a merit unless the question makes "
    "it one. Answer with JSON only."
)
_WORDS = {"yes": YES, "y": YES, "true": YES, "no": NO, "n": NO, "false": NO, "na": NA, "n/a": NA, "not applicable": NA}


def read_response(response: dict) -> tuple[dict, list[str]]:
    """A criterion's `response` object as stored, and what is wrong with it."""
    problems = [f"a checklist response has no parameter '{name}'" for name in sorted(set(response) - {"type", "allow_na", "na"})]
    allow_na = response.get("allow_na", False)
    if not isinstance(allow_na, bool):
        problems.append(f"allow_na must be true or false, not {allow_na!r}")
    mode, wrong = na_problems(response)
    problems += wrong
    if mode is not None and "allow_na" in response and allow_na is not True:
        problems.append("na is given but allow_na is false: give one of them")
    stored = {"type": NAME, "allow_na": allow_na is True or mode is not None}
    if mode == NA_CLASS:
        stored["na"] = NA_CLASS
    return stored, problems


def na_is_class(response: dict | None) -> bool:
    """Whether N/A is a class of its own in the figures (``"na": "class"``), not a skipped answer."""
    return (response or {}).get("na") == NA_CLASS


# The classes of a checklist whose N/A is a class, in the metrics' code order.
CLASSES = (YES, NO, NA)


def metric_table(response: dict) -> tuple[str, tuple | None]:
    """(response type, scale) of the metrics' table these answers go to: yes/no as "binary", or,
    where N/A is a class, the three classes as "nominal"."""
    return ("nominal", CLASSES) if na_is_class(response) else (METRIC_RESPONSE, None)


def _choices(response: dict | None) -> tuple[str, ...]:
    return (YES, NO, NA) if (response or {}).get("allow_na") else (YES, NO)


def answer_problems(shown: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    """What is wrong with an answer as the rater gave it ("" clears it), as sentences."""
    choices = _choices(response)
    if shown in (*choices, ""):
        return []
    return ["Answer Yes, No or N/A." if NA in choices else "Answer Yes or No."]


def outcome_problems(outcome: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    """What is wrong with an answer given as exports give it, as short phrases."""
    choices = _choices(response)
    return [] if outcome in choices else [f"'{outcome}' is not one of {', '.join(choices)}"]


stored_answer = shown_answer = stored_overall = shown_overall = as_given
overall_problems = no_overall(NAME)


def metric_outcome(stored: str, *, response: dict | None = None, **_context) -> float:
    """1.0 yes, 0.0 no, NaN N/A; where N/A is a class, the answer's code in `CLASSES`."""
    if na_is_class(response):
        return float(CLASSES.index(stored))
    return {YES: 1.0, NO: 0.0}.get(stored, math.nan)


def _answer_schema(spec: CriterionSpec) -> dict:
    return {"type": "string", "enum": list(_choices(spec.response))}


build_request = request_builder(
    protocol=NAME,
    system_prompt=SYSTEM_PROMPT,
    choices=lambda spec: ", ".join(f'"{choice}"' for choice in _choices(spec.response)),
    task='For each criterion above, answer "yes" if the article meets it and "no" if it does not; '
    '"na" only where it is allowed and the question does not apply to this article.',
    answer_schema=_answer_schema,
)


def read_answer(value: object, response: dict) -> str:
    """The stored answer for a judge's `value`, or InvalidResponse saying why it is none."""
    choices = _choices(response)
    answer = _WORDS.get(value.strip().lower()) if isinstance(value, str) else None
    if answer is None or answer not in choices:
        raise InvalidResponse(f"answer {value!r} is not one of {', '.join(choices)}")
    return answer


parse_verdicts = verdicts_reader(read_answer)  # {criterion_key: ("yes" | "no" | "na", reason)}; raises InvalidResponse
