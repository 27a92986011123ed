"""A small mixed rubric (pairwise criteria beside one-article ones) and campaigns on it, for the tests of
annotating one article (`tests/reading_builders.py` has the judge tests' rubric and readings)."""

from __future__ import annotations

from annotate.models import CriterionSet
from annotate.services import criterion_set_import
from annotate.services.campaigns import campaign_create
from annotate.sources import parse_rubric

SCALE = [{"value": v, "label": label} for v, label in enumerate(["Poor", "Weak", "Fair", "Good", "Excellent"], start=1)]
TEN = [{"value": v, "label": f"Point {v}"} for v in range(1, 11)]

PAIRWISE = {"id": "pair", "name": "Compared", "criteria": [{"id": "pw_clear", "text": "Which article is clearer?"}]}
ONE_ARTICLE = {
    "id": "alone",
    "name": "On its own",
    "criteria": [
        {"id": "ck_summary", "text": "Does it open with a summary?", "response": {"type": "checklist", "allow_na": True}},
        {"id": "rt_style", "text": "How well is it written?", "response": {"type": "rating", "points": SCALE}},
    ],
}
COUNT = {
    "id": "errors",
    "name": "Errors",
    "criteria": [{"id": "ct_typos", "text": "How many typos?", "response": {"type": "count", "max": 500}}],
}
RATED_TEN = {
    "id": "ten",
    "name": "Ten",
    "criteria": [{"id": "rt_ten", "text": "Rate it out of ten.", "response": {"type": "rating", "points": TEN}}],
}
NOMINAL_CLASSES = ["Oui", "Partiellement", "Non", "Sans réponse", "Hors sujet"]
NOMINAL = {
    "id": "classes",
    "name": "Classes",
    "criteria": [
        {"id": "nm_stance", "text": "What does it say of the claim?", "response": {"type": "nominal", "classes": NOMINAL_CLASSES}},
        {"id": "ck_dated", "text": "Is the claim dated?", "response": {"type": "checklist", "na": "class"}},
    ],
}
STRICT = {
    "id": "strict",
    "name": "Strict",
    "criteria": [{"id": "ck_strict", "text": "Are all dates given?", "response": {"type": "checklist", "allow_na": False}}],
}


def rubric(key: str, *categories: dict) -> CriterionSet:
    record, problems = parse_rubric({"name": key, "categories": list(categories)}, key=key, source=f"{key}.json")
    assert not problems, problems
    criterion_set, _ = criterion_set_import(rubric=record)
    return criterion_set


def mixed_rubric() -> CriterionSet:
    """One pairwise criterion, then a checklist (N/A allowed) and a 1-5 rating."""
    return rubric("mixed", PAIRWISE, ONE_ARTICLE)


def mixed_campaign(*, name: str = "Mixed", criterion_set: CriterionSet | None = None, topics: int = 2, **options):
    """The demo catalogue's reference against one agent on `topics` topics: a pair and two readings per topic."""
    return campaign_create(
        name=name,
        criterion_set=criterion_set or mixed_rubric(),
        systems=["wikipedia", "atlas_agent"],
        topics=topics,
        rationale_min_length=5,
        **options,
    )
