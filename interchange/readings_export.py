"""Reads for the export: a campaign's answers about one article alone, as rows of the long format.

Human answers (`annotate.Answer`, non-empty) and judges' answers on readings (`JudgeVerdict.answer`
of a reading's unit; an error row for a unit in error) with `response` (`responses.response_cell`),
`system` (the article's) and `answer` (as stored); the pair columns stay empty. Ordered by topic,
system, rater and criterion, independent of the campaign's shuffled order.
"""

from __future__ import annotations

from annotate.models import Answer, Campaign, Criterion, Item, article_texts
from interchange.formats import EMPHASIS_COLUMN, HUMAN, JUDGE, REMOVED_COLUMN, iso
from interchange.responses import response_cell
from judges.models import JudgeCall, JudgeUnit, JudgeVerdict

EMPTY_PAIR = {"left_system": "", "right_system": "", "winner_system": ""}


def reading_label_rows(campaign: Campaign) -> list[dict]:
    """Every human answer about one article that is not empty."""
    answers = (
        Answer.objects.filter(assignment__pair__campaign=campaign)
        .exclude(value="")
        .select_related("criterion", "assignment__annotator", "assignment__pair__topic", "assignment__pair__article_a__system")
        .defer(*article_texts("assignment__pair__article_a"))
    )
    removed = set(campaign.removed_annotators.values_list("pk", flat=True))

    def order(answer: Answer) -> tuple:
        reading = answer.assignment.pair
        return (reading.topic.title, reading.topic_id, reading.article_a.system.key, answer.assignment.annotator.username,
                answer.criterion.order, answer.criterion.key)  # fmt: skip

    rows = []
    for answer in sorted(answers, key=order):
        assignment = answer.assignment
        reading = assignment.pair
        rows.append({
            "campaign": campaign.name, "topic": reading.topic.title, "criterion": answer.criterion.key, "rater_kind": HUMAN,
            "rater": assignment.annotator.username, **EMPTY_PAIR, "rationale": answer.rationale,
            "started_at": iso(assignment.first_opened_at or assignment.claimed_at), "saved_at": iso(answer.saved_at),
            REMOVED_COLUMN: assignment.annotator_id in removed, EMPHASIS_COLUMN: campaign.neutral_emphasis,
            "response": response_cell(answer.criterion.response), "system": reading.article_a.system.key, "answer": answer.value,
        })  # fmt: skip
    return rows


def usd(value) -> str | None:
    """A stored amount to 1e-8 USD; None (an empty cell) when unknown: the judge had no prices."""
    return None if value is None else f"{value:.8f}"


def call_columns(call: JudgeCall | None) -> dict:
    if call is None:
        return {
            "prompt_tokens": None,
            "completion_tokens": None,
            "cost_usd": None,
            "latency_ms": None,
            "call_id": None,
        }
    return {
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "cost_usd": usd(call.cost_usd),
        "latency_ms": call.latency_ms,
        "call_id": call.id,
    }


def unit_results(units: list[JudgeUnit]) -> tuple[dict[int, dict[int, JudgeVerdict]], dict[int, JudgeCall]]:
    """The units' verdicts by unit and criterion (with their calls), and each failed unit's last call."""
    verdicts: dict[int, dict[int, JudgeVerdict]] = {}
    for verdict in JudgeVerdict.objects.filter(unit__in=units).select_related("call"):
        verdicts.setdefault(verdict.unit_id, {})[verdict.criterion_id] = verdict
    last_calls: dict[int, JudgeCall] = {}
    for call in JudgeCall.objects.filter(unit__in=[u for u in units if u.status == JudgeUnit.Status.ERROR]).order_by("id"):
        last_calls[call.unit_id] = call
    return verdicts, last_calls


def judge_reading_rows(campaign: Campaign) -> list[dict]:
    """An answer or an error row for every criterion of every finished judge unit of a reading."""
    units = list(
        JudgeUnit.objects.filter(pair__campaign=campaign, pair__kind=Item.Kind.READING)
        .exclude(status=JudgeUnit.Status.PENDING)
        .select_related("judge", "pair__topic", "pair__article_a__system")
        .defer(*article_texts("pair__article_a"))
    )
    if not units:
        return []
    verdicts, last_calls = unit_results(units)
    criteria = list(campaign.criterion_set.criteria.order_by("order", "id"))
    by_category: dict[int, list[Criterion]] = {}
    for criterion in criteria:
        if response_cell(criterion.response):
            by_category.setdefault(criterion.category_id, []).append(criterion)
    by_id = {c.id: c for c in criteria}
    rows = []
    for unit in sorted(units, key=lambda u: (u.reading.topic.title, u.reading.topic_id, u.reading.article_a.system.key, u.judge.name)):
        reading = unit.reading
        head = {
            "campaign": campaign.name, "topic": reading.topic.title, "rater_kind": JUDGE, "rater": unit.judge.name, **EMPTY_PAIR,
            "started_at": "", "saved_at": iso(unit.updated_at), "model": unit.judge.model, "position": "",
            "system": reading.article_a.system.key,
        }  # fmt: skip
        found = verdicts.get(unit.id, {})
        for criterion in [by_id[unit.criterion_id]] if unit.criterion_id else by_category.get(unit.category_id, []):
            verdict = found.get(criterion.id)
            cell = response_cell(criterion.response)
            if verdict is not None:
                rows.append({**head, "criterion": criterion.key, "rationale": verdict.rationale, **call_columns(verdict.call),
                             "error": "", "response": cell, "answer": verdict.answer, "confidence": verdict.confidence})  # fmt: skip
            elif unit.status == JudgeUnit.Status.ERROR:
                rows.append({**head, "criterion": criterion.key, "rationale": "", **call_columns(last_calls.get(unit.id)),
                             "error": unit.error or "error", "response": cell, "answer": ""})  # fmt: skip
    return rows
