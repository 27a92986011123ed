"""Reads for the single-article page (a reading): the annotator's own work, the article and the criteria.

The article is shown exactly as on the pair page (the same cleaned HTML, neutral emphasis applied
the same way), and nothing on the page names its system: only the topic, the text and the criteria.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied

import protocols
from annotate.answers import Rules, answer_state, one_article, reading_problems, shorten
from annotate.models import Answer, Assignment, Campaign, Criterion, ReadingAssignment
from annotate.selectors import REMOVED_FROM_CAMPAIGN, Gap, _column

# Where each protocol's answer is typed on the page, and the keys that give it (README "Annotating one article").
WIDGETS = {"checklist": "choices", "rating": "choices", "count": "number"}


def reading_assignment_for_user(*, assignment_id: int, user: User, with_article: bool = True) -> ReadingAssignment:
    """The reading assignment if it is the user's own; 403 for anybody else's (staff included), and
    for work in a campaign they were removed from. `with_article=False` is for saves (no HTML read)."""
    rows = ReadingAssignment.objects.select_related("reading__campaign__criterion_set", "reading__topic")
    if with_article:
        rows = rows.select_related("reading__article").defer("reading__article__raw_markdown", "reading__article__display_markdown")
    assignment = rows.filter(pk=assignment_id).first()
    if assignment is None or assignment.annotator_id != user.pk:
        raise PermissionDenied("This is not your assignment.")
    campaign = assignment.reading.campaign
    if assignment.status == Assignment.Status.REVOKED or campaign.removed_annotators.filter(pk=user.pk).exists():
        raise PermissionDenied(REMOVED_FROM_CAMPAIGN)
    return assignment


def reading_criteria(campaign: Campaign) -> list[Criterion]:
    """The rubric's one-article criteria, in rubric order: what every reading of the campaign asks."""
    criteria = Criterion.objects.filter(criterion_set_id=campaign.criterion_set_id).select_related("category").order_by("order")
    return [criterion for criterion in criteria if one_article(criterion.response)]


@dataclass
class AnswerRow:
    criterion: object
    protocol: str
    choices: list[tuple[str, str]]  # (value, label) for checklist and rating; empty for a count
    maximum: int | None = None  # a count's largest answer
    value: str = ""
    rationale: str = ""
    saved_at: object = None
    problems: list[str] = field(default_factory=list)
    state: str = ""


@dataclass
class Block:
    key: str
    name: str
    rows: list[AnswerRow] = field(default_factory=list)


def _choices(response: dict) -> tuple[list[tuple[str, str]], int | None]:
    kind = response["type"]
    if kind == "checklist":
        choices = [("yes", "Yes"), ("no", "No")] + ([("na", "N/A")] if response.get("allow_na") else [])
        return choices, None
    if kind == "rating":
        return [(str(point["value"]), f"{point['value']} {point['label']}") for point in response["points"]], None
    return [], response.get("max", protocols.get("count").MAX_COUNT)


def criterion_row(criterion, answer: Answer | None, rules: Rules) -> AnswerRow:
    choices, maximum = _choices(criterion.response)
    row = AnswerRow(criterion, criterion.response["type"], choices, maximum)
    if answer is not None:
        row.value, row.rationale, row.saved_at = answer.value, answer.rationale, answer.saved_at
    row.problems = reading_problems(rules, value=row.value, rationale=row.rationale)
    row.state = answer_state(row.problems, winner=row.value)
    return row


def reading_page(*, assignment: ReadingAssignment) -> dict:
    """Everything the single-article page shows, in a fixed number of queries: the article (by
    itself, no system), the one-article criteria with their saved answers, and what blocks submission."""
    reading = assignment.reading
    campaign = reading.campaign
    rules = Rules.of(campaign)
    answers = {answer.criterion_id: answer for answer in Answer.objects.filter(assignment=assignment)}
    blocks: dict[int, Block] = {}
    gaps: list[Gap] = []
    done = total = 0
    for criterion in reading_criteria(campaign):
        block = blocks.get(criterion.category_id)
        if block is None:
            block = blocks[criterion.category_id] = Block(criterion.category.key, criterion.category.name)
        row = criterion_row(criterion, answers.get(criterion.pk), rules)
        if row.problems:
            gaps.append(Gap(criterion.key, f"c-{criterion.key}", shorten(criterion.text), row.problems))
        block.rows.append(row)
        total += 1
        done += not row.problems
    column = _column("1", reading.article, neutral_emphasis=campaign.neutral_emphasis)
    return {
        "assignment": assignment,
        "campaign": campaign,
        "topic": reading.topic,
        # Only what is shown goes to the template: no article object, so no system can leak.
        "column": {"html": column["html"], "toc": column["toc"]},
        "categories": list(blocks.values()),
        "done": done,
        "total": total,
        "gaps": gaps,
        "first_open": gaps[0].anchor if gaps else "",
    }


def reading_progress(*, assignment: ReadingAssignment) -> tuple[int, int]:
    """(complete criteria, one-article criteria): the counter after each save."""
    campaign: Campaign = assignment.reading.campaign
    rules = Rules.of(campaign)
    answers = {
        criterion_id: (value, rationale)
        for criterion_id, value, rationale in Answer.objects.filter(assignment=assignment).values_list("criterion_id", "value", "rationale")
    }
    criteria = reading_criteria(campaign)
    done = sum(
        not reading_problems(rules, value=answers.get(c.pk, ("", ""))[0], rationale=answers.get(c.pk, ("", ""))[1]) for c in criteria
    )
    return done, len(criteria)
