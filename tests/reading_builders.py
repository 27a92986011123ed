"""Campaigns whose rubric has one-article criteria (checklist, rating, count), with their readings
made directly: a reading per distinct article of the campaign's pairs, as `campaign_create` will
(issue 25). Used by the judge tests of readings and by bench/judges.py."""

from __future__ import annotations

import json
from pathlib import Path

from annotate.models import Campaign, Pair, Reading
from annotate.services import criterion_set_import
from annotate.services.campaigns import campaign_create
from annotate.services.items import readings_save
from annotate.sources import read_rubric

SCALE = [{"value": value, "label": label} for value, label in enumerate(("Poor", "Fair", "Good", "Very good", "Excellent"), start=1)]

# Pairwise criteria alone, pairwise and checklist in one category, and a category mixing two
# one-article protocols (a rating and a count).
MIXED_RUBRIC = {
    "name": "Mixed rubric",
    "description": "Pairwise, checklist, rating and count criteria.",
    "version": "1.0",
    "categories": [
        {
            "id": "prose",
            "name": "Prose",
            "description": "How it reads.",
            "criteria": [
                {"id": "p_clear", "index": 0, "text": "A better article is clearer."},
                {"id": "p_short", "index": 1, "text": "A better article says it in fewer words."},
            ],
        },
        {
            "id": "layout",
            "name": "Layout",
            "description": "",
            "criteria": [
                {"id": "l_better", "index": 0, "text": "A better article is laid out better."},
                {"id": "l_intro", "index": 1, "text": "Does it open with a summary?", "response": {"type": "checklist"}},
                {
                    "id": "l_refs",
                    "index": 2,
                    "text": "Does it end with references?",
                    "response": {"type": "checklist", "allow_na": True},
                },
            ],
        },
        {
            "id": "scores",
            "name": "Scores",
            "description": "Marks.",
            "criteria": [
                {"id": "s_overall", "index": 0, "text": "How well is it written?", "response": {"type": "rating", "points": SCALE}},
                {"id": "s_typos", "index": 1, "text": "How many typos are there?", "response": {"type": "count", "max": 20}},
            ],
        },
    ],
}


def rubric_import(path: Path, key: str):
    rubric, problems = read_rubric(path, key=key)
    assert not problems, problems
    criterion_set, _ = criterion_set_import(rubric=rubric)
    return criterion_set


def mixed_rubric(folder: Path):
    path = folder / "mixed.json"
    path.write_text(json.dumps(MIXED_RUBRIC), encoding="utf-8")
    return rubric_import(path, "mixed")


def readings_create(campaign: Campaign) -> list[Reading]:
    """A reading per distinct article of the campaign's pairs (reference articles included), in pair order."""
    seen: dict[int, Reading] = {}
    # Idempotent: a campaign_create that makes readings itself leaves nothing to add.
    made = set(Reading.objects.filter(campaign=campaign).values_list("article_a_id", flat=True))
    for pair in Pair.objects.filter(campaign=campaign).order_by("order", "id"):
        for article_id in (pair.article_a_id, pair.article_b_id):
            if article_id not in seen:
                seen[article_id] = Reading(campaign=campaign, topic_id=pair.topic_id, article_a_id=article_id, order=len(seen))
    readings_save([reading for article_id, reading in seen.items() if article_id not in made])
    return list(Reading.objects.filter(campaign=campaign).order_by("order", "id"))


def campaign_with_readings(*, name: str, criterion_set, systems: list[str], annotators: list) -> Campaign:
    campaign = campaign_create(name=name, criterion_set=criterion_set, systems=systems, overlap=1, annotators=annotators)
    readings_create(campaign)
    return campaign
