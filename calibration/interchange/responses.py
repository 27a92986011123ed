"""The `response` cell of a labels file: a criterion's response type in a few words, both ways.

Empty for a pairwise row. Otherwise one of:

* ``checklist`` (yes / no) or ``checklist+na`` (yes / no / na, the rubric allows "not applicable");
* ``rating 1-5``: a rating scale, its lowest and highest points (``rating`` alone is read for a
  criterion the rubric already has: its scale is the rubric's);
* ``count``: an error count (its score formula, if any, stays in the rubric).

Exports write the criterion's cell (`response_cell`); imports read it (`response_read`) to check
a row against its criterion, or to make the criterion of a rubric that grows from its labels.
Pure: no Django.
"""

from __future__ import annotations

import re

from protocols import checklist, count, rating

ONE_ARTICLE = (checklist.NAME, rating.NAME, count.NAME)
WITH_NA = checklist.NAME + "+na"
_RATING = re.compile(r"rating\s+(-?\d{1,12})\s*-\s*(-?\d{1,12})")
# The longest response cell read: the longest form (`rating -2147483648-2147483647`) with room to spare.
MAX_CELL = 64
FORMS = f"{checklist.NAME}, {WITH_NA}, rating <lowest>-<highest> (e.g. rating 1-5), {count.NAME}"


def response_type(response: dict | None) -> str:
    """The protocol of a criterion's stored response; "" for pairwise (an empty response)."""
    name = (response or {}).get("type", "")
    return name if name in ONE_ARTICLE else ""


def response_cell(response: dict | None) -> str:
    """The `response` cell of a criterion's rows ("" for pairwise)."""
    name = response_type(response)
    if name == checklist.NAME:
        return WITH_NA if response.get("allow_na") else checklist.NAME
    if name == rating.NAME:
        lowest, highest = rating.scale(response)
        return f"rating {lowest}-{highest}"
    return name


def response_read(cell: str) -> tuple[str, dict | None]:
    """(protocol, the criterion's response) a cell names; the response is None for ``rating`` without
    its scale. ValueError saying which forms there are for anything else."""
    text = " ".join(cell.split()).lower()
    if text == checklist.NAME:
        return checklist.NAME, {"type": checklist.NAME, "allow_na": False}
    if text == WITH_NA:
        return checklist.NAME, {"type": checklist.NAME, "allow_na": True}
    if text == count.NAME:
        return count.NAME, {"type": count.NAME}
    if text == rating.NAME:
        return rating.NAME, None
    if len(text) > MAX_CELL:
        raise ValueError(f"response cell of {len(text):,} characters: a response type takes at most {MAX_CELL}")
    if match := _RATING.fullmatch(text):
        lowest, highest = int(match[1]), int(match[2])
        # The scale's size is checked before a point of it is built: `rating 1-1000000000` is refused as it is read.
        if not 2 <= highest - lowest + 1 <= rating.MAX_POINTS:
            raise ValueError(f"response '{cell}': a rating scale has 2 to {rating.MAX_POINTS} points, not {highest - lowest + 1:,}")
        points = [{"value": v, "label": str(v)} for v in range(lowest, highest + 1)]
        response, problems = rating.read_response({"type": rating.NAME, "points": points})
        if problems:
            raise ValueError(f"response '{cell}': {'; '.join(problems)}")
        return rating.NAME, response
    raise ValueError(f"unknown response type '{cell}' (one of: {FORMS}; empty for a pairwise row)")


def response_mismatch(cell: str, given: tuple[str, dict | None], stored: dict) -> str | None:
    """Why a row's response (`given`, read from `cell`) does not fit its criterion's stored one, or None."""
    name, response = given
    if response_type(stored) != name:
        what = response_cell(stored) or "pairwise (answered on pairs)"
        return f"response is '{cell}' but the criterion is {what}"
    if name == rating.NAME and response is not None and rating.scale(response) != rating.scale(stored):
        return f"response is '{cell}' but the criterion is {response_cell(stored)}"
    return None


def pairwise_criterion_check(context, criterion, errors: list[str]) -> None:
    """A pairwise row's criterion must be pairwise; a planned one becomes pairwise."""
    if criterion is None:
        return
    if criterion.pk is not None and criterion.pk < 0 and criterion.key not in context.decided:
        context.decided.add(criterion.key)
        return
    if response_type(criterion.response):
        errors.append(
            f"criterion '{criterion.key}' is answered on one article ({response_cell(criterion.response)}): "
            "give its rows a response, a system and an answer"
        )
