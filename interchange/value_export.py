"""Reads for the export: a campaign's answers given as values, on readings (one article alone) and on
groups (k articles ranked), as rows of the long format.

Human answers (non-empty) and judges' answers (`JudgeVerdict.answer` of a reading's or a group's unit;
an error row for a unit in error) with `response` (`responses.response_cell`), `system` (a reading's
article's; empty for a group, whose answer names its systems) and `answer` (as stored; a group's
ranking by system key, best first: `atlas_agent > wikipedia = scribe`); the pair columns stay empty.
Ordered by topic, system, rater and criterion, independent of the campaign's shuffled order.
"""

from __future__ import annotations

import protocols
from annotate.models import Campaign, Criterion, Item, Label, article_texts
from annotate.selectors import group_systems
from interchange.formats import EMPHASIS_COLUMN, HUMAN, JUDGE, REMOVED_COLUMN, iso
from interchange.responses import response_cell
from judges.models import JudgeCall, JudgeUnit, JudgeVerdict

EMPTY_PAIR = {"left_system": "", "right_system": "", "winner_system": ""}


VALUE_KINDS = (Item.Kind.READING, Item.Kind.GROUP)


def _system_cell(item: Item) -> str:
    """The `system` cell of an answer on `item`: a reading's article's system; empty for a group, whose
    answer names its systems."""
    return "" if item.kind == Item.Kind.GROUP else item.article_a.system.key


def _cells(item: Item, criterion: Criterion, stored: str, groups: dict[int, dict[str, str]]) -> tuple[str, str]:
    """(system, answer) of one answer: a reading's article's system and the answer as stored, or, for a
    group, no system and the answer naming its systems (`named_answer` of its protocol)."""
    if item.kind != Item.Kind.GROUP:
        return _system_cell(item), stored
    return "", protocols.for_criterion(criterion.response).named_answer(stored, groups[item.pk]) if stored else ""


def value_label_rows(campaign: Campaign) -> list[dict]:
    """Every human answer given as a value (on a reading or a group) that is not empty."""
    groups = group_systems(campaign=campaign)
    answers = (
        Label.every.filter(assignment__pair__campaign=campaign, assignment__pair__kind__in=VALUE_KINDS, assignment__repeat_of__isnull=True)
        .exclude(value="")
        .select_related("criterion", "assignment__annotator", "assignment__pair__topic", "assignment__pair__article_a__system")
        .defer(*article_texts("assignment__pair__article_a"))
    )
    removed = set(campaign.removed_annotators.values_list("pk", flat=True))

    def order(answer: Label) -> tuple:
        reading = answer.assignment.pair
        return (reading.topic.title, reading.topic_id, _system_cell(reading), reading.pk,
                answer.assignment.annotator.username, answer.criterion.order, answer.criterion.key)  # fmt: skip

    rows = []
    for answer in sorted(answers, key=order):
        assignment = answer.assignment
        reading = assignment.pair
        system, value = _cells(reading, answer.criterion, answer.value, groups)
        rows.append({
            "campaign": campaign.name, "topic": reading.topic.title, "criterion": answer.criterion.key, "rater_kind": HUMAN,
            "rater": assignment.annotator.username, **EMPTY_PAIR, "rationale": answer.rationale,
            "started_at": iso(assignment.first_opened_at or assignment.claimed_at), "saved_at": iso(answer.saved_at),
            REMOVED_COLUMN: assignment.annotator_id in removed, EMPHASIS_COLUMN: campaign.neutral_emphasis,
            "response": response_cell(answer.criterion.response), "system": system, "answer": value,
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


def judge_value_rows(campaign: Campaign) -> list[dict]:
    """An answer or an error row for every criterion of every finished judge unit of a reading or a group."""
    groups = group_systems(campaign=campaign)
    units = list(
        JudgeUnit.objects.filter(pair__campaign=campaign, pair__kind__in=VALUE_KINDS)
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

    def order(unit: JudgeUnit) -> tuple:
        return (unit.pair.topic.title, unit.pair.topic_id, _system_cell(unit.pair), unit.pair_id, unit.judge.name)

    for unit in sorted(units, key=order):
        reading = unit.pair
        head = {
            "campaign": campaign.name, "topic": reading.topic.title, "rater_kind": JUDGE, "rater": unit.judge.name, **EMPTY_PAIR,
            "started_at": "", "saved_at": iso(unit.updated_at), "model": unit.judge.model, "position": "",
        }  # fmt: skip
        found = verdicts.get(unit.id, {})
        for criterion in [by_id[unit.criterion_id]] if unit.criterion_id else by_category.get(unit.category_id, []):
            verdict = found.get(criterion.id)
            cell = response_cell(criterion.response)
            if verdict is not None:
                system, value = _cells(reading, criterion, verdict.answer, groups)
                rows.append({**head, "criterion": criterion.key, "rationale": verdict.rationale, **call_columns(verdict.call), "system": system,
                             "error": "", "response": cell, "answer": value, "confidence": verdict.confidence})  # fmt: skip
            elif unit.status == JudgeUnit.Status.ERROR:
                rows.append({**head, "criterion": criterion.key, "rationale": "", **call_columns(last_calls.get(unit.id)),
                             "system": _system_cell(reading), "error": unit.error or "error", "response": cell, "answer": ""})  # fmt: skip
    return rows
