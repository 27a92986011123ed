"""The nominal protocol: one article, and one class of a list per criterion.

- An item is one article.
- An answer is one of the criterion's classes, given in the criteria file as
  ``"response": {"type": "nominal", "classes": ["Yes", "Partially", "No"]}``: two classes or more,
  in any script, each named once (case and spacing aside), stored and shown as the class's name.
  ``"na"`` (optional) adds a "not applicable" answer, stored as ``"na"``: ``"skip"`` leaves it out of
  every figure (it is counted, as a checklist's N/A is), ``"class"`` counts it as one more class.
- A judge is asked with `build_request` (its JSON schema gives the classes as an enum) and read with
  `parse_verdicts`: the name of a class, case and spacing aside; anything else is an InvalidResponse.
- The metrics get the class's position in `classes` (0 for the first; the N/A class last when it
  is one), NaN for a skipped N/A (`metric_outcome`, the "nominal" table of
  `calibration.metrics.pointwise`, its scale the class names of `metric_classes`).

Pure: no Django.
"""

from __future__ import annotations

import math

from protocols.base import CriterionSpec, InvalidResponse
from protocols.one_article import NA_CLASS, NA_SKIP, as_given, na_problems, no_overall, request_builder, verdicts_reader

NAME = "nominal"
# The template partial that draws a criterion's answer controls on the page (annotate's templates).
PARTIAL = "annotate/answers/choices.html"
ARTICLES = 1
JUDGED = True
METRIC_RESPONSE = "nominal"
# Figure names of `calibration.metrics.pointwise_agreement` / `pointwise_panel` that fit classes.
AGREEMENT_STATISTICS = ("agreement", "kappa", "agreement_majority", "kappa_majority", "fleiss_kappa", "alpha_nominal")
OVERALL_CHOICES = ()
NA = "na"
# A class's name is stored as the answer (`annotate.Answer.value`, `judges.JudgeVerdict.answer`: 20 characters).
MAX_NAME = 20
MAX_CLASSES = 200
# Labels files write a criterion's classes in one cell, between these.
SEPARATOR = "|"

SYSTEM_PROMPT = (
    "You classify one article, criterion by criterion, into one of the classes each criterion lists. "
    "Judge each criterion on its own terms and only on what it asks about; length or polish is not a "
    "merit unless the criterion makes it one. Answer with JSON only."
)


def fold(text: str) -> str:
    """A class name as it is compared: case and spacing aside."""
    return " ".join(text.split()).casefold()


def read_response(response: dict) -> tuple[dict, list[str]]:
    """A criterion's `response` object as stored, and what is wrong with it."""
    problems = [f"a nominal response has no parameter '{name}'" for name in sorted(set(response) - {"type", "classes", "na"})]
    mode, wrong = na_problems(response)
    problems += wrong
    classes = response.get("classes")
    if not isinstance(classes, list) or not 2 <= len(classes) <= MAX_CLASSES:
        return {}, [*problems, f"classes must be a list of 2 to {MAX_CLASSES} class names"]
    stored = []
    for number, name in enumerate(classes, start=1):
        if not isinstance(name, str) or not name.strip():
            problems.append(f"class {number} must be a non-empty string")
            continue
        name = " ".join(name.split())
        if len(name) > MAX_NAME:
            problems.append(f"class {number} ({name[:30]!r}) is longer than {MAX_NAME} characters (it is stored as the answer)")
        if SEPARATOR in name:
            problems.append(f"class {number} ({name!r}) contains '{SEPARATOR}' (labels files list the classes between them)")
        stored.append(name)
    folded = [fold(name) for name in stored]
    if len(set(folded)) != len(folded):
        problems.append("two classes have the same name (case and spacing aside)")
    if mode is not None and NA in folded:
        problems.append(f"with na given, no class may be named '{NA}' (it is the N/A answer)")
    out = {"type": NAME, "classes": stored}
    if mode is not None:
        out["na"] = mode
    return out, problems


def answers(response: dict | None) -> tuple[str, ...]:
    """The stored answers a criterion allows: its classes, then "na" when it has an N/A answer."""
    response = response or {}
    return (*response.get("classes", ()), *((NA,) if response.get("na") else ()))


def metric_classes(response: dict) -> tuple[str, ...]:
    """The classes of the metrics' table, in code order: the N/A class last when it is one."""
    return (*response["classes"], *((NA,) if response.get("na") == NA_CLASS else ()))


def metric_table(response: dict) -> tuple[str, tuple[str, ...]]:
    """(response type, scale) of the metrics' table these answers go to: a nominal scale is its classes."""
    return METRIC_RESPONSE, metric_classes(response)


def _matching(value: str, response: dict | None) -> str | None:
    folded = fold(value)
    return next((answer for answer in answers(response) if fold(answer) == folded), None)


def answer_problems(shown: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    """What is wrong with an answer as the rater gave it ("" clears it), as sentences."""
    allowed = answers(response)
    if not allowed:
        return ["This criterion has no classes."]
    if shown == "" or shown in allowed:
        return []
    return [f"Choose one of: {', '.join(allowed)}."]


def outcome_problems(outcome: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    """What is wrong with an answer given as exports give it, as short phrases."""
    allowed = answers(response)
    return [] if outcome in allowed else [f"'{outcome}' is not one of {', '.join(allowed) or '(no classes)'}"]


stored_answer = shown_answer = stored_overall = shown_overall = as_given
overall_problems = no_overall(NAME)


def metric_outcome(stored: str, *, response: dict, **_context) -> float:
    """The class's position in `metric_classes`; NaN for an N/A the rubric skips."""
    classes = metric_classes(response)
    if stored in classes:
        return float(classes.index(stored))
    if stored == NA and response.get("na") == NA_SKIP:
        return math.nan
    raise ValueError(f"'{stored}' is not a class of this criterion")


def _choices(spec: CriterionSpec) -> str:
    return ", ".join(f'"{answer}"' for answer in answers(spec.response))


def _answer_schema(spec: CriterionSpec) -> dict:
    return {"type": "string", "enum": list(answers(spec.response))}


def _check_classes(criteria: list[CriterionSpec]) -> None:
    for spec in criteria:
        if not answers(spec.response):
            raise ValueError(f"criterion {spec.key} has no classes")


build_request = request_builder(
    protocol=NAME,
    system_prompt=SYSTEM_PROMPT,
    choices=_choices,
    task='For each criterion above, answer with the one class of its list that fits the article, copied exactly; "na" '
    "only where it is listed and the criterion does not apply to this article.",
    answer_schema=_answer_schema,
    check=_check_classes,
)


def read_answer(value: object, response: dict) -> str:
    """The stored answer (the class's name as the rubric gives it) for a judge's `value`, or InvalidResponse."""
    answer = _matching(value, response) if isinstance(value, str) else None
    if answer is None:
        raise InvalidResponse(f"answer {value!r} is not one of {', '.join(answers(response))}")
    return answer


parse_verdicts = verdicts_reader(read_answer)  # {criterion_key: (class name, reason)}; raises InvalidResponse
