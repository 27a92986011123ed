"""Reads for the page of an item whose answers are values: a reading (one article alone) or a group (three
to six articles, ranked): the annotator's own work, the articles and the criteria.

The articles are shown exactly as on the pair page (the same cleaned HTML, neutral emphasis applied
the same way), a group's in the order drawn for the annotator and numbered by position, and nothing on
the page names a system: only the topic, the texts and the criteria.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from urllib.parse import quote

from django.db.models import Count, OuterRef, Subquery
from django.urls import reverse
from django.utils.safestring import mark_safe

import protocols
from annotate.answers import Rules, answer_state, reading_problems, shorten
from annotate.kinds import criterion_kind, kind_of_type
from annotate.models import Answer, Assignment, Campaign, Criterion, Item, ItemArticle, Reading, ReadingAssignment
from annotate.selectors import Gap, _column
from protocols import order as orders

# Where each protocol's answer is typed on the page, and the keys that give it (README "Annotating one article").
WIDGETS = {"checklist": "choices", "rating": "choices", "count": "number", "nominal": "choices", "text": "text", "ranking": "text"}
NOMINAL_KEYS = 9  # keys 1-9 choose a nominal criterion's first nine classes


def item_criteria(campaign: Campaign, kind: str = Item.Kind.READING) -> list[Criterion]:
    """The rubric's criteria asked on items of `kind`, in rubric order: what every reading of the campaign
    asks (its one-article criteria), or every group (its rankings)."""
    criteria = Criterion.objects.filter(criterion_set_id=campaign.criterion_set_id).select_related("category").order_by("order")
    return [criterion for criterion in criteria if criterion_kind(criterion.response) == kind]


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
    save_url: str = ""
    numbers: range = range(0)  # a ranking's: the articles' numbers as shown, 1 to k
    ties: bool = False  # a ranking's: whether articles may share a place

    @property
    def partial(self) -> str:
        """The template that draws this criterion's answer controls: its protocol's."""
        return protocols.get(self.protocol).PARTIAL

    @property
    def choices_html(self) -> str:
        """The radio buttons, built here rather than by a template loop: a rubric of 39 five-point
        scales made the loop most of the page's time (bench/annotate.py). The labels come from the
        rubric: escaped here as the template would."""
        return mark_safe(
            "".join(
                f'<label><input type="radio" name="value" value="{escape(value)}"{" checked" if value == self.value else ""}> '
                f"{escape(label)}</label>"
                for value, label in self.choices
            )
        )


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
    if kind == "nominal":
        classes = [(name, name) for name in response["classes"]] + ([("na", "N/A")] if response.get("na") else [])
        # The key that chooses each class is shown before it (1-9); classes past the ninth are clicked.
        return [(value, f"{n} {label}" if n <= NOMINAL_KEYS else label) for n, (value, label) in enumerate(classes, start=1)], None
    if kind in ("text", "ranking"):
        return [], None
    return [], response.get("max", protocols.get("count").MAX_COUNT)


def criterion_row(criterion, answer: Answer | None, rules: Rules, order: str = "a") -> AnswerRow:
    """One criterion's row, its answer shown as the annotator gave it under `order` (a ranking's stored
    slots turned back into the numbers they were shown as)."""
    choices, maximum = _choices(criterion.response)
    protocol = protocols.for_criterion(criterion.response)
    row = AnswerRow(criterion, criterion.response["type"], choices, maximum)
    if len(order) > 1:
        row.numbers, row.ties = range(1, len(order) + 1), protocol.allows_ties(criterion.response)
    if answer is not None:
        row.value, row.rationale, row.saved_at = protocol.shown_answer(answer.value, order=order), answer.rationale, answer.saved_at
    row.problems = reading_problems(rules, value=row.value, rationale=row.rationale)
    row.state = answer_state(row.problems, winner=row.value)
    return row


def reading_page(*, assignment: ReadingAssignment) -> dict:
    """Everything the page of a reading or a group shows, in a fixed number of queries: the articles (by
    themselves, no system; a group's in the order drawn), the criteria asked on the item with their
    saved answers, and what blocks submission."""
    reading = assignment.pair
    campaign = reading.campaign
    rules = Rules.of(campaign)
    answers = {answer.criterion_id: answer for answer in Answer.every.filter(assignment=assignment)}
    blocks: dict[int, Block] = {}
    gaps: list[Gap] = []
    done = total = 0
    # One reverse, then the key swapped in: a reverse per criterion costs a millisecond on a long rubric.
    save_url = reverse("label-save", args=[assignment.pk, "KEY"])
    for criterion in item_criteria(campaign, reading.kind):
        block = blocks.get(criterion.category_id)
        if block is None:
            block = blocks[criterion.category_id] = Block(criterion.category.key, criterion.category.name)
        row = criterion_row(criterion, answers.get(criterion.pk), rules, assignment.order)
        row.save_url = save_url.replace("/KEY/", f"/{quote(criterion.key, safe='')}/")
        if row.problems:
            gaps.append(Gap(criterion.key, f"c-{criterion.key}", shorten(criterion.text), row.problems))
        block.rows.append(row)
        total += 1
        done += not row.problems
    # A reading's one article is its slot a, read with the assignment; a group's come from its slots.
    held = (
        {0: reading.article_a}
        if len(assignment.order) == 1
        else {slot.slot: slot.article for slot in ItemArticle.objects.filter(item=reading).select_related("article")}
    )
    columns = []
    for position, slot in enumerate(assignment.order, start=1):
        article = held[orders.SLOTS.index(slot)]
        column = _column(str(position), article, neutral_emphasis=campaign.neutral_emphasis, neutral_headings=campaign.neutral_headings)
        columns.append({"position": position, "html": column["html"], "toc": column["toc"]})
    return {
        "assignment": assignment,
        "campaign": campaign,
        "topic": reading.topic,
        # Only what is shown goes to the template: no article object, so no system can leak.
        "columns": columns,
        "categories": list(blocks.values()),
        "done": done,
        "total": total,
        "gaps": gaps,
        "first_open": gaps[0].anchor if gaps else "",
    }


def reading_progress(*, assignment: ReadingAssignment) -> tuple[int, int]:
    """(complete criteria, criteria asked on the item), in one query: the counter after each save."""
    campaign: Campaign = assignment.pair.campaign
    rules = Rules.of(campaign)
    mine = Answer.every.filter(assignment_id=assignment.pk, criterion_id=OuterRef("pk"))
    rows = (
        Criterion.objects.filter(criterion_set_id=campaign.criterion_set_id)
        .annotate(value=Subquery(mine.values("value")[:1]), rationale=Subquery(mine.values("rationale")[:1]))
        .values_list("response__type", "value", "rationale")  # the type alone: no scale decoded per save
    )
    kind = assignment.pair.kind
    answers = [(value or "", rationale or "") for name, value, rationale in rows if name and kind_of_type(name) == kind]
    return sum(not reading_problems(rules, value=value, rationale=rationale) for value, rationale in answers), len(answers)


def readings_progress(*, campaign: Campaign) -> dict | None:
    """The campaign page's figures for its readings (one article alone): how many there are, the
    answers submitted against those needed (overlap each), and the readings complete, started and
    untouched; None for a campaign without readings."""
    n_readings = Reading.objects.filter(campaign=campaign).count()
    if not n_readings:
        return None
    per_reading = dict(
        ReadingAssignment.objects.filter(pair__campaign=campaign, status=Assignment.Status.SUBMITTED)
        .values_list("pair_id")
        .annotate(n=Count("id"))
    )
    complete = sum(1 for n in per_reading.values() if n >= campaign.overlap)
    return {
        "n_readings": n_readings,
        "submitted": sum(per_reading.values()),
        "needed": n_readings * campaign.overlap,
        "complete": complete,
        "started": len(per_reading) - complete,
        "untouched": n_readings - len(per_reading),
    }
