"""The pairwise protocol: two articles side by side, and which is better on each criterion.

- An item is a pair of articles, A and B, one shown first (`a_first`).
- An answer is a winner: stored by side ("a", "b" or "tie"), shown by position ("1",
  "2" or "tie"), exported and handed to the metrics by system key. The overall
  answer adds "both_bad" and is stored by side too.
- A judge is asked with `build_request` and its reply read by `parse_verdicts`
  (`protocols.pairwise.prompt`).
- The metrics get one outcome per answer, the winning system or a tie
  (`metric_outcome`); agreement is measured on those categories.

Pure: no Django.
"""

from __future__ import annotations

from protocols import order as orders
from protocols.pairwise.prompt import build_request, parse_verdicts
from protocols.pairwise.words import (
    BOTH_BAD,
    FIRST,
    POSITIONS,
    SECOND,
    SET_ORDER,
    SIDE_A,
    SIDE_B,
    SIDES,
    TIE,
    acceptable_set,
    position_of,
    side_for_system,
    side_of,
    system_of,
)

__all__ = [
    "NAME",
    "ARTICLES",
    "AGREEMENT_STATISTICS",
    "OVERALL_CHOICES",
    "answer_problems",
    "outcome_problems",
    "stored_answer",
    "shown_answer",
    "overall_problems",
    "stored_overall",
    "shown_overall",
    "read_response",
    "build_request",
    "parse_verdicts",
    "metric_outcome",
    "BOTH_BAD",
    "FIRST",
    "POSITIONS",
    "SECOND",
    "SIDE_A",
    "SIDE_B",
    "SET_ORDER",
    "SIDES",
    "TIE",
    "acceptable_set",
    "position_of",
    "side_for_system",
    "side_of",
    "system_of",
]

NAME = "pairwise"
# The template partial that draws a criterion's answer controls on the pair page (annotate's templates).
PARTIAL = "annotate/answers/pairwise.html"
ARTICLES = 2
JUDGED = True
# Agreement on categorical outcomes (the winner, or a tie), as the report computes it.
AGREEMENT_STATISTICS = ("percent_agreement", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha")

# The overall answer as the rater sees it: (shown value, label).
OVERALL_CHOICES = ((FIRST, "Article 1"), (SECOND, "Article 2"), (TIE, "Tie"), (BOTH_BAD, "Both bad"))
OVERALL_SHOWN = tuple(value for value, _ in OVERALL_CHOICES)
OVERALL_STORED = (SIDE_A, SIDE_B, TIE, BOTH_BAD)


def answer_problems(shown: str, *, allow_tie: bool) -> list[str]:
    """What is wrong with a winner as the rater gave it by position ("" clears it), as sentences."""
    if shown not in (*POSITIONS, TIE, ""):
        return ["Choose Article 1, Article 2" + (" or Tie." if allow_tie else ".")]
    if shown == TIE and not allow_tie:
        return ["This campaign does not allow ties: choose Article 1 or Article 2."]
    return []


def outcome_problems(outcome: str, *, allow_tie: bool) -> list[str]:
    """What is wrong with a winner given as exports give it (a system key or TIE; an imported answer), as short phrases."""
    if outcome == TIE and not allow_tie:
        return ["this campaign does not allow ties"]
    return []


def stored_answer(shown: str, *, order: str) -> str:
    """The side (slot) to store for the position the rater chose under `order` ("ab" or "ba"); "" (no
    answer), a tie and "both_bad" stay as they are."""
    return orders.slot_at(order, int(shown)) if shown in POSITIONS else shown


def shown_answer(stored: str, *, order: str) -> str:
    """The position to show for a stored side under `order`; anything else (no answer, a tie, "both_bad") stays as it is."""
    return str(orders.position_of(order, stored)) if stored in SIDES else stored


def overall_problems(shown: str) -> list[str]:
    """What is wrong with an overall answer as the rater gave it ("" clears it)."""
    if shown not in OVERALL_SHOWN and shown != "":
        return ["Choose Article 1, Article 2, Tie or Both bad."]
    return []


# The overall answer turns between positions and sides as a criterion's does; "both_bad", like a tie, has no side.
stored_overall, shown_overall = stored_answer, shown_answer


def metric_outcome(stored: str, *, system_a: str, system_b: str) -> str:
    """A stored winner as the metrics count it: the winning system's key, or TIE."""
    return system_of(stored, system_a, system_b)


def read_response(response: dict) -> tuple[dict, list[str]]:
    """A criterion's `response` object as stored ({}: pairwise is the default and needs no
    parameters), and what is wrong with it."""
    extra = sorted(set(response) - {"type"})
    if extra:
        return {}, [f"a pairwise response takes no parameters (got {', '.join(extra)})"]
    return {}, []
