"""The `response` cell of a labels file: a criterion's response type in a few words, both ways.

Empty for a pairwise row. Otherwise one of:

* ``checklist`` (yes / no) or ``checklist+na`` (yes / no / na, the rubric allows "not applicable",
  left out of the figures) or ``checklist+na-class`` (the same answers, N/A a class of its own);
* ``rating 1-5``: a rating scale, its lowest and highest points (``rating`` alone is read for a
  criterion the rubric already has: its scale is the rubric's);
* ``count``: an error count (its score formula, if any, stays in the rubric);
* ``text``: a free-text answer (stored and exported, in no statistic);
* ``nominal: Yes | Partially | No``: one class of a list, the classes in order between ``|``
  (``nominal`` alone is read for a criterion the rubric already has); ``nominal+na: ...`` and
  ``nominal+na-class: ...`` add the "not applicable" answer ``na``, skipped or a class;
* ``ranking 4`` or ``ranking 4+ties``: a ranking of k articles (here 4), ties allowed or not; its
  answer names the systems best first (``atlas_agent > wikipedia = scribe``).

Exports write the criterion's cell (`response_cell`); imports read it (`response_read`) to check
a row against its criterion, or to make the criterion of a rubric that grows from its labels.
Pure: no Django.
"""

from __future__ import annotations

import re

from protocols import checklist, count, nominal, ranking, rating, text
from protocols.one_article import NA_CLASS, NA_SKIP

ONE_ARTICLE = (checklist.NAME, rating.NAME, count.NAME, nominal.NAME, text.NAME)
WITH_NA = checklist.NAME + "+na"
NA_SUFFIX = {NA_SKIP: "+na", NA_CLASS: "+na-class"}
WITH_NA_CLASS = checklist.NAME + NA_SUFFIX[NA_CLASS]
_NOMINAL = re.compile(r"nominal(\+na|\+na-class)?\s*:(.*)", re.IGNORECASE | re.DOTALL)
_RATING = re.compile(r"rating\s+(-?\d{1,12})\s*-\s*(-?\d{1,12})")
_RANKING = re.compile(r"ranking\s+(\d{1,2})(\+ties)?")
# The longest response cell read: a nominal criterion's classes at their longest, between separators.
MAX_CELL = nominal.MAX_CLASSES * (nominal.MAX_NAME + 3) + 32
FORMS = (
    f"{checklist.NAME}, {WITH_NA}, {WITH_NA_CLASS}, rating <lowest>-<highest> (e.g. rating 1-5), {count.NAME}, {text.NAME}, "
    "nominal: <class> | <class> | ... (or nominal+na: / nominal+na-class:), ranking <k> (or ranking <k>+ties)"
)


def response_type(response: dict | None) -> str:
    """The protocol of a criterion's stored response; "" for pairwise (an empty response)."""
    name = (response or {}).get("type", "")
    return name if name in ONE_ARTICLE else ""


def response_cell(response: dict | None) -> str:
    """The `response` cell of a criterion's rows ("" for pairwise)."""
    name = response_type(response)
    if name == checklist.NAME:
        if checklist.na_is_class(response):
            return WITH_NA_CLASS
        return WITH_NA if response.get("allow_na") else checklist.NAME
    if name == nominal.NAME:
        suffix = NA_SUFFIX.get(response.get("na"), "")
        return f"{nominal.NAME}{suffix}: " + f" {nominal.SEPARATOR} ".join(response["classes"])
    if name == rating.NAME:
        lowest, highest = rating.scale(response)
        return f"rating {lowest}-{highest}"
    if (response or {}).get("type") == ranking.NAME:
        return f"{ranking.NAME} {ranking.article_count(response)}" + ("+ties" if ranking.allows_ties(response) else "")
    return name


def response_read(cell: str) -> tuple[str, dict | None]:
    """(protocol, the criterion's response) a cell names; the response is None for ``rating`` without
    its scale. ValueError saying which forms there are for anything else."""
    if len(cell) > MAX_CELL:
        raise ValueError(f"response cell of {len(cell):,} characters: a response type takes at most {MAX_CELL:,}")
    if match := _NOMINAL.fullmatch(cell.strip()):
        return nominal.NAME, _nominal_read(cell, match)
    text = " ".join(cell.split()).lower()
    if text == nominal.NAME:
        return nominal.NAME, None
    if text == WITH_NA_CLASS:
        return checklist.NAME, {"type": checklist.NAME, "allow_na": True, "na": NA_CLASS}
    if text == checklist.NAME:
        return checklist.NAME, {"type": checklist.NAME, "allow_na": False}
    if text == WITH_NA:
        return checklist.NAME, {"type": checklist.NAME, "allow_na": True}
    if text == count.NAME:
        return count.NAME, {"type": count.NAME}
    if text == "text":
        return "text", {"type": "text"}
    if text == rating.NAME:
        return rating.NAME, None
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
    if match := _RANKING.fullmatch(text):
        response, problems = ranking.read_response({"type": ranking.NAME, "articles": int(match[1]), "ties": bool(match[2])})
        if problems:
            raise ValueError(f"response '{cell}': {'; '.join(problems)}")
        return ranking.NAME, response
    raise ValueError(f"unknown response type '{cell}' (one of: {FORMS}; empty for a pairwise row)")


def _nominal_read(cell: str, match: re.Match) -> dict:
    suffix = (match[1] or "").lower()
    given = {"type": nominal.NAME, "classes": match[2].split(nominal.SEPARATOR)}
    if suffix:
        given["na"] = next(mode for mode, text in NA_SUFFIX.items() if text == suffix)
    response, problems = nominal.read_response(given)
    if problems:
        raise ValueError(f"response '{cell}': {'; '.join(problems)}")
    return response


def response_mismatch(cell: str, given: tuple[str, dict | None], stored: dict) -> str | None:
    """Why a row's response (`given`, read from `cell`) does not fit its criterion's stored one, or None."""
    name, response = given
    if response_type(stored) != name:
        what = response_cell(stored) or "pairwise (answered on pairs)"
        return f"response is '{cell}' but the criterion is {what}"
    if name == rating.NAME and response is not None and rating.scale(response) != rating.scale(stored):
        return f"response is '{cell}' but the criterion is {response_cell(stored)}"
    if name == nominal.NAME and response is not None and nominal.answers(response) != nominal.answers(stored):
        return f"response is '{cell}' but the criterion is {response_cell(stored)}"
    if name == checklist.NAME and response is not None and checklist.na_is_class(response) != checklist.na_is_class(stored):
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
