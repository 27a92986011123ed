"""The count protocol: one article, and a number of errors (or other occurrences) per criterion.

- An item is one article.
- An answer is a non-negative integer, stored and shown as its digits.
- A criterion may map the count to a score by a rubric formula, given in the criteria file as
  ``"response": {"type": "count", "score": [{"at_most": 0, "score": 5}, {"at_most": 2, "score": 3},
  {"score": 1}]}``: thresholds in increasing order, each with the score of a count up to it, and a
  last rule without ``at_most`` for every count above. A table, never an expression: nothing in a
  rubric file is evaluated. ``"max"`` (optional) is the largest plausible count.
- A judge is asked with `build_request` and read with `parse_verdicts`: a non-negative integer
  (a number, or a string of digits), at most ``max``; anything else is an InvalidResponse.
- The metrics get the score, or the count itself when there is no formula (`metric_outcome`, the
  "count" table of `calibration.metrics.pointwise`).

Pure: no Django.
"""

from __future__ import annotations

import math
import re

from protocols.base import CriterionSpec, InvalidResponse
from protocols.one_article import as_given, no_overall, request_builder, verdicts_reader, whole_number

NAME = "count"
# The template partial that draws a criterion's answer controls on the page (annotate's templates).
PARTIAL = "annotate/answers/count.html"
ARTICLES = 1
JUDGED = True
METRIC_RESPONSE = "count"
# Figure names of `calibration.metrics.pointwise_agreement` / `pointwise_panel` that fit counts.
AGREEMENT_STATISTICS = ("mae", "rmse", "bias", "alpha_interval")
OVERALL_CHOICES = ()
MAX_COUNT = 100_000

SYSTEM_PROMPT = (
    "You count, criterion by criterion, the problems of one article that the criterion describes. "
    "Count each occurrence once, only of what the criterion asks about; when there is none, the count "
    "is 0. Answer with JSON only."
)
_DIGITS = re.compile(r"\d+")


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_response(response: dict) -> tuple[dict, list[str]]:
    """A criterion's `response` object as stored, and what is wrong with it."""
    problems = [f"a count response has no parameter '{name}'" for name in sorted(set(response) - {"type", "score", "max"})]
    stored: dict = {"type": NAME}
    most = response.get("max", MAX_COUNT)
    if not isinstance(most, int) or isinstance(most, bool) or not 0 < most <= MAX_COUNT:
        problems.append(f"max must be an integer from 1 to {MAX_COUNT}, not {most!r}")
    elif "max" in response:
        stored["max"] = most
    rules = response.get("score")
    if rules is None:
        return stored, problems
    if not isinstance(rules, list) or not rules:
        return stored, [*problems, "score must be a list of {at_most, score} rules"]
    previous = -1
    table = []
    for number, rule in enumerate(rules, start=1):
        last = number == len(rules)
        if not isinstance(rule, dict) or not _number(rule.get("score")) or set(rule) - {"at_most", "score"}:
            problems.append(f"score rule {number} must be an object with a number 'score' (and 'at_most')")
            continue
        at_most = rule.get("at_most")
        if last and at_most is not None:
            problems.append("the last score rule must have no 'at_most': it scores every larger count")
        elif not last and (not isinstance(at_most, int) or isinstance(at_most, bool) or at_most <= previous):
            problems.append(f"score rule {number}: at_most must be an integer above {previous}, not {at_most!r}")
        else:
            previous = at_most if at_most is not None else previous
            table.append({"at_most": at_most, "score": rule["score"]} if not last else {"score": rule["score"]})
    stored["score"] = table
    return stored, problems


def score(count: int, response: dict | None) -> float:
    """The rubric formula's score for `count`; the count itself when there is no formula."""
    for rule in (response or {}).get("score", ()):
        if "at_most" not in rule or count <= rule["at_most"]:
            return float(rule["score"])
    return float(count)


def _most(response: dict | None) -> int:
    return (response or {}).get("max", MAX_COUNT)


def answer_problems(shown: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    """What is wrong with a count as the rater gave it ("" clears it), as sentences."""
    if shown == "" or (_DIGITS.fullmatch(shown) and int(shown) <= _most(response)):
        return []
    return [f"Give a whole number from 0 to {_most(response)}."]


def outcome_problems(outcome: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    if _DIGITS.fullmatch(outcome) and int(outcome) <= _most(response):
        return []
    return [f"'{outcome}' is not a count from 0 to {_most(response)}"]


def stored_answer(shown: str, *, order: str = "a") -> str:
    return str(int(shown)) if shown else ""  # "007" is stored as "7"


shown_answer = stored_overall = shown_overall = as_given
overall_problems = no_overall(NAME)


def metric_table(response: dict) -> tuple[str, None]:
    """(response type, scale) of the metrics' table these answers go to."""
    return METRIC_RESPONSE, None


def metric_outcome(stored: str, *, response: dict | None = None, **_context) -> float:
    """The count's score by the criterion's formula, or the count."""
    return score(int(stored), response)


def _choices(spec: CriterionSpec) -> str:
    return f"a whole number from 0 to {_most(spec.response)}"


def _answer_schema(spec: CriterionSpec) -> dict:
    return {"type": "integer", "minimum": 0, "maximum": _most(spec.response)}


build_request = request_builder(
    protocol=NAME,
    system_prompt=SYSTEM_PROMPT,
    choices=_choices,
    task="For each criterion above, answer with the number of times the article has the problem it describes (0 if never).",
    answer_schema=_answer_schema,
)


def read_answer(value: object, response: dict) -> str:
    """The stored answer for a judge's `value` (a non-negative integer), or InvalidResponse."""
    number = whole_number(value)
    if number is None or not 0 <= number <= _most(response):
        raise InvalidResponse(f"answer {value!r} is not a count from 0 to {_most(response)}")
    return str(number)


parse_verdicts = verdicts_reader(read_answer)  # {criterion_key: (count, reason)}, the count as digits; raises InvalidResponse
