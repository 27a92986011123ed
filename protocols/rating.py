"""The rating protocol: one article, and a point of a labelled scale per criterion (a Likert item).

- An item is one article.
- An answer is one point of the criterion's scale, given in the criteria file as
  ``"response": {"type": "rating", "points": [{"value": 1, "label": "Poor"}, ...]}``: consecutive
  integers (1-5, 1-10, 0-4, ...), each with its label. Stored and shown as the point's digits.
- A judge is asked with `build_request` and read with `parse_verdicts`: an integer of the scale
  (a number, or a string of digits); anything else, or a point outside the scale, is an
  InvalidResponse, never an answer.
- The metrics get the point as a number (`metric_outcome`, the "rating" table of
  `calibration.metrics.pointwise`, with the scale from `scale`).

Pure: no Django.
"""

from __future__ import annotations

import re

from protocols.base import CriterionSpec, InvalidResponse
from protocols.one_article import as_given, no_overall, request_builder, verdicts_reader, whole_number

NAME = "rating"
# The template partial that draws a criterion's answer controls on the page (annotate's templates).
PARTIAL = "annotate/answers/choices.html"
ARTICLES = 1
JUDGED = True
METRIC_RESPONSE = "rating"
# Figure names of `calibration.metrics.pointwise_agreement` / `pointwise_panel` that fit a scale.
AGREEMENT_STATISTICS = (
    "exact",
    "within_one",
    "kappa_linear",
    "kappa_quadratic",
    "alpha_ordinal",
    "alpha_interval",
    "icc2_1",
    "icc2_k",
    "spearman",
    "kendall",
)
OVERALL_CHOICES = ()
MAX_POINTS = 11  # 0-10 is the widest scale a rater can answer by one key press

SYSTEM_PROMPT = (
    "You rate one article on a labelled scale, criterion by criterion. Rate each criterion on its own "
    "terms and only on what it asks about, using the labels to place the article on the scale; length "
    "or polish is not a merit unless the criterion makes it one. Answer with JSON only."
)
_DIGITS = re.compile(r"-?\d+")


def read_response(response: dict) -> tuple[dict, list[str]]:
    """A criterion's `response` object as stored, and what is wrong with it."""
    problems = [f"a rating response has no parameter '{name}'" for name in sorted(set(response) - {"type", "points"})]
    points = response.get("points")
    if not isinstance(points, list) or not 2 <= len(points) <= MAX_POINTS:
        return {}, [*problems, f"points must be a list of 2 to {MAX_POINTS} {{value, label}} objects"]
    stored = []
    for number, point in enumerate(points, start=1):
        value = point.get("value") if isinstance(point, dict) else None
        label = point.get("label") if isinstance(point, dict) else None
        if not isinstance(value, int) or isinstance(value, bool) or not isinstance(label, str) or not label.strip():
            problems.append(f"point {number} must be an object with an integer 'value' and a non-empty 'label'")
            continue
        stored.append({"value": value, "label": " ".join(label.split())})
    values = [point["value"] for point in stored]
    if not problems and values != list(range(values[0], values[0] + len(values))):
        problems.append(f"the points' values must be consecutive integers in increasing order, not {values}")
    labels = [point["label"].casefold() for point in stored]
    if len(set(labels)) != len(labels):
        problems.append("two points have the same label")
    return {"type": NAME, "points": stored}, problems


def points(response: dict | None) -> tuple[int, ...]:
    return tuple(point["value"] for point in (response or {}).get("points", ()))


def scale(response: dict) -> tuple[int, int]:
    """(lowest, highest) point, as the metrics' rating tables take it."""
    values = points(response)
    return values[0], values[-1]


def metric_table(response: dict) -> tuple[str, tuple[int, int]]:
    """(response type, scale) of the metrics' table these answers go to."""
    return METRIC_RESPONSE, scale(response)


def answer_problems(shown: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    """What is wrong with a rating as the rater gave it ("" clears it), as sentences."""
    values = points(response)
    if not values:
        return ["This criterion has no scale."]
    if shown == "" or (_DIGITS.fullmatch(shown) and int(shown) in values):
        return []
    return [f"Choose a point from {values[0]} to {values[-1]}."]


def outcome_problems(outcome: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    values = points(response)
    if values and _DIGITS.fullmatch(outcome) and int(outcome) in values:
        return []
    return [f"'{outcome}' is not a point of the scale {values[0]}-{values[-1]}" if values else "the criterion has no scale"]


stored_answer = shown_answer = stored_overall = shown_overall = as_given
overall_problems = no_overall(NAME)


def metric_outcome(stored: str, **_context) -> float:
    """The point as a number."""
    return float(int(stored))


def _choices(spec: CriterionSpec) -> str:
    return ", ".join(f"{point['value']} = {point['label']}" for point in spec.response["points"])


def _answer_schema(spec: CriterionSpec) -> dict:
    return {"type": "integer", "enum": list(points(spec.response))}


def _check_scales(criteria: list[CriterionSpec]) -> None:
    for spec in criteria:
        if not points(spec.response):
            raise ValueError(f"criterion {spec.key} has no rating scale")


build_request = request_builder(
    protocol=NAME,
    system_prompt=SYSTEM_PROMPT,
    choices=_choices,
    task="For each criterion above, answer with the number of the point of its scale that fits the article best.",
    answer_schema=_answer_schema,
    check=_check_scales,
)


def read_answer(value: object, response: dict) -> str:
    """The stored answer for a judge's `value` (an integer of the scale), or InvalidResponse."""
    values = points(response)
    number = whole_number(value)
    if number is None or number not in values:
        raise InvalidResponse(f"answer {value!r} is not a point of the scale {values[0]}-{values[-1]}")
    return str(number)


parse_verdicts = verdicts_reader(read_answer)  # {criterion_key: (point, reason)}, the point as digits; raises InvalidResponse
