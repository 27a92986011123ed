"""The text protocol: one article, and a free-text answer per criterion (a note, an extracted span).

- An item is one article.
- An answer is any text of up to ``MAX_TEXT`` characters (``"response": {"type": "text"}``),
  stored as given once its ends are stripped, shown as stored.
- No agreement statistic: free text has no classes to agree on, so its answers are stored,
  exported and imported, and the report leaves them out (`metric_table` is None).
- Judges are not asked a text criterion (``JUDGED`` is False): its answer is for people to read.
  `build_request` and `parse_verdicts` exist for the registry's contract and refuse.

Pure: no Django.
"""

from __future__ import annotations

from protocols.base import InvalidResponse
from protocols.one_article import no_overall

NAME = "text"
# The template partial that draws a criterion's answer controls on the page (annotate's templates).
PARTIAL = "annotate/answers/text.html"
ARTICLES = 1
JUDGED = False
METRIC_RESPONSE = None
AGREEMENT_STATISTICS = ()
OVERALL_CHOICES = ()
MAX_TEXT = 5000


def read_response(response: dict) -> tuple[dict, list[str]]:
    """A criterion's `response` object as stored, and what is wrong with it."""
    return {"type": NAME}, [f"a text response has no parameter '{name}'" for name in sorted(set(response) - {"type"})]


def answer_problems(shown: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    """What is wrong with a text answer as the rater gave it ("" clears it), as sentences."""
    return [] if len(shown.strip()) <= MAX_TEXT else [f"Write at most {MAX_TEXT:,} characters ({len(shown.strip()):,} given)."]


def outcome_problems(outcome: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    """What is wrong with a text answer given as exports give it, as short phrases."""
    return [] if len(outcome.strip()) <= MAX_TEXT else [f"is {len(outcome.strip()):,} characters long (at most {MAX_TEXT:,})"]


def stored_answer(answer: str, *, order: str = "a") -> str:
    return answer.strip()


def shown_answer(answer: str, *, order: str = "a") -> str:
    return answer


stored_overall = shown_overall = shown_answer
overall_problems = no_overall(NAME)


def metric_table(response: dict) -> None:
    """No table: text answers are in no statistic."""
    return None


def metric_outcome(stored: str, **_context) -> float:
    raise ValueError("a text answer has no statistic")


def build_request(**_arguments):
    raise ValueError("judges are not asked text criteria (their answers are for people to read)")


def parse_verdicts(content: str, **_arguments) -> dict[str, tuple[str, str]]:
    raise InvalidResponse("judges are not asked text criteria")
