"""The study plan of a campaign: its record (reads), freezing it (the one write), and the report's `plan` section.

What a record holds (docs/calibration-report.md, "The study plan"):
- `rubric`: the criterion set's key and version, and the SHA-256 of its criteria (key, category, text, in order);
- `judges`: each judge of the campaign (a run on it or units on its pairs, or named when freezing) with its
  model, the SHA-256 of the pairwise prompt built for a fixed dummy item (`prompt_sha256`, LLM judges only),
  temperature, max tokens, confidence option, mode and structured output;
- `design`: protocol, pair mode, pairs, overlap, calibration pairs, gold rate, neutral emphasis and headings, the guess
  question and the reference's name in it, ties, rationale rules, reference;
- `epsilon` (value and reason), `alpha` and `delta` (selective judging), `planned_pairs` and `statistics`.
"""

from __future__ import annotations

import hashlib

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

import protocols.pairwise as pairwise
from annotate.models import Campaign, Item
from annotate.services.campaign_locks import answers_freeze_lock, first_answer_exists
from calibration.models import StudyPlan
from calibration.plan import check as plan_check
from judges.models import Judge, JudgeRun, JudgeUnit
from judges.selectors import campaign_judges_named
from protocols.base import CriterionSpec

SCHEMA = "pairwise-study-plan"
VERSION = 1

# The dummy item whose prompt stands for a judge's prompt template: any change to the template changes its hash.
_DUMMY = dict(
    topic="Dummy topic",
    article_1="Article one text.",
    article_2="Article two text.",
    category="Dummy category",
    category_description="A category that stands for every category.",
    criteria=[CriterionSpec("dummy_criterion", "A criterion that stands for every criterion.")],
)


class PlanRefused(Exception):
    """The plan cannot be frozen; the message says why (one line)."""


def prompt_sha256(judge: Judge, allow_tie: bool) -> str | None:
    if judge.kind != Judge.Kind.LLM:
        return None
    request = pairwise.build_request(**_DUMMY, allow_tie=allow_tie, structured=judge.structured_output)
    body = {"messages": request.messages, "response_format": request.response_format}
    return hashlib.sha256(plan_check.canonical_json(body).encode("utf-8")).hexdigest()


def _judge_entry(judge: Judge, allow_tie: bool) -> dict:
    return {
        "name": judge.name,
        "kind": judge.kind,
        "model": judge.model,
        "prompt_sha256": prompt_sha256(judge, allow_tie),
        "temperature": judge.temperature,
        "max_tokens": judge.max_tokens,
        "confidence": judge.confidence,
        "mode": judge.mode,
        "structured_output": judge.structured_output,
    }


def campaign_judges(campaign: Campaign) -> list[Judge]:
    """The judges that ran on the campaign (a run, or units on its pairs), by name."""
    # Two subqueries rather than joins: a big campaign's units would multiply the rows to make distinct.
    ran = Q(pk__in=JudgeRun.objects.filter(campaign=campaign).values("judge_id"))
    judged = Q(pk__in=JudgeUnit.objects.filter(pair__campaign=campaign, pair__kind=Item.Kind.PAIR).values("judge_id"))
    return list(Judge.objects.filter(ran | judged).order_by("name"))


def _rubric(campaign: Campaign) -> dict:
    criteria = [
        [key, category, text]
        for key, category, text in campaign.criterion_set.criteria.order_by("order").values_list("key", "category__key", "text")
    ]
    return {
        "key": campaign.criterion_set.key,
        "version": campaign.criterion_set.version,
        "n_criteria": len(criteria),
        "criteria_sha256": hashlib.sha256(plan_check.canonical_json({"criteria": criteria}).encode("utf-8")).hexdigest(),
    }


def _design(campaign: Campaign) -> dict:
    return {
        "protocol": campaign.protocol,
        "pair_mode": campaign.pair_mode,
        "pairs": campaign.pairs.filter(gold__isnull=True).count(),
        "overlap": campaign.overlap,
        "calibration_pairs": campaign.calibration_pairs,
        "gold_rate": campaign.gold_rate,
        "neutral_emphasis": campaign.neutral_emphasis,
        "neutral_headings": campaign.neutral_headings,
        "guess_question": campaign.guess_question,
        "reference_name": campaign.reference_name,
        "allow_tie": campaign.allow_tie,
        "rationale_required": campaign.rationale_required,
        "rationale_min_length": campaign.rationale_min_length,
        "reference_system": campaign.reference_system.key if campaign.reference_system_id else None,
    }


def current_record(campaign: Campaign, judges: list[Judge] | None = None) -> dict:
    """The campaign as it is now, in the shape of a plan record (without what only a plan states)."""
    judges = campaign_judges(campaign) if judges is None else judges
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "campaign": campaign.name,
        "rubric": _rubric(campaign),
        "judges": [_judge_entry(j, campaign.allow_tie) for j in judges],
        "design": _design(campaign),
        "epsilon": {"value": campaign.alt_epsilon, "reason": campaign.alt_epsilon_reason or None},
    }


def plan_record(
    campaign: Campaign,
    *,
    planned_pairs: int,
    statistics: list[str],
    alpha: float | None = None,
    delta: float | None = None,
    judge_names: list[str] | None = None,
) -> dict:
    """The record a freeze would store; ValueError (one line) for a bad value."""
    if planned_pairs is None or int(planned_pairs) < 1:
        raise ValueError(f"planned pairs must be a whole number of at least 1, got '{planned_pairs}'")
    for name, value in (("alpha", alpha), ("delta", delta)):
        if value is not None and not 0.0 < float(value) < 1.0:
            raise ValueError(f"{name} must be between 0 and 1 (exclusive), got '{value}'")
    unknown = [s for s in statistics if s not in plan_check.STATISTICS]
    if unknown:
        raise ValueError(f"unknown statistic '{unknown[0]}' (choose from {', '.join(plan_check.STATISTICS)})")
    judges = campaign_judges(campaign)
    if judge_names:
        found = campaign_judges_named(campaign=campaign, names=judge_names)
        missing = [n for n in judge_names if n not in found]
        if missing:
            raise ValueError(f"no judge named '{missing[0]}'")
        judges = sorted({j.name: j for j in judges + list(found.values())}.values(), key=lambda j: j.name)
    record = current_record(campaign, judges)
    record.update(
        alpha=None if alpha is None else float(alpha),
        delta=None if delta is None else float(delta),
        planned_pairs=int(planned_pairs),
        statistics=[s for s in plan_check.STATISTICS if s in statistics],
    )
    return record


def first_label_exists(campaign: Campaign) -> bool:
    """Any human answer stored, of any kind (labels, overall answers, one-article answers, passages; typed or imported)."""
    return first_answer_exists(campaign)


def study_plan_freeze(*, campaign: Campaign, user, record: dict) -> StudyPlan:
    """Freezes `record` as the campaign's plan; PlanRefused when labels exist or a plan is frozen already.

    The unique campaign column decides between two staff freezing at once: one plan is stored, the other is refused.
    The check for answers and the insert hold the campaign's freeze lock, which every answer's save
    shares (annotate.services.campaign_locks): an answer under way commits first and is seen, or waits
    for the plan.
    """
    if StudyPlan.objects.filter(campaign=campaign).exists():
        raise PlanRefused(f"campaign '{campaign.name}' already has a frozen study plan; a frozen plan cannot change")
    try:
        with transaction.atomic():
            answers_freeze_lock(campaign.pk)
            if first_label_exists(campaign):
                raise PlanRefused(f"campaign '{campaign.name}' has answers already; a plan must be frozen before the first answer")
            return StudyPlan.objects.create(
                campaign=campaign, frozen_at=timezone.now(), frozen_by=user, record=record, sha256=plan_check.record_sha256(record)
            )
    except IntegrityError:
        raise PlanRefused(f"campaign '{campaign.name}' already has a frozen study plan; a frozen plan cannot change") from None


def frozen_plan(campaign: Campaign) -> StudyPlan | None:
    return StudyPlan.objects.filter(campaign=campaign).select_related("frozen_by").first()


def frozen_by_name(plan: StudyPlan) -> str:
    return plan.frozen_by.get_username() if plan.frozen_by_id else "the command line"


def _recorded(record: dict, field: str) -> tuple[bool, object]:
    """Whether a frozen record states a campaign setting, and the value it states."""
    if field == "alt_epsilon":
        return "epsilon" in record, (record.get("epsilon") or {}).get("value")
    if field == "alt_epsilon_reason":
        return "epsilon" in record, (record.get("epsilon") or {}).get("reason") or ""
    design = record.get("design") or {}
    return field in design, design.get(field)


def plan_name(plan: StudyPlan) -> str:
    """How a refusal names a plan: its campaign, when and by whom it was frozen, and its hash."""
    return f"the study plan of '{plan.campaign.name}' frozen {plan.frozen_at:%Y-%m-%d %H:%M} UTC by {frozen_by_name(plan)} (SHA-256 {plan.sha256[:12]}…)"


def settings_guard(*, campaign: Campaign, changes: list) -> str | None:
    """Refuses a settings change (annotate.services.campaign_settings) that would alter a frozen plan:
    a value the plan records may not move away from it. Plans frozen before a field existed do not state it."""
    plan = StudyPlan.objects.filter(campaign=campaign).select_related("frozen_by", "campaign").first()
    if plan is None:
        return None
    altered = []
    for change in changes:
        stated, value = _recorded(plan.record, change.field)
        if stated and value != change.new:
            altered.append(f"{change.label} ({value!r} in the plan)")
    if not altered:
        return None
    return (
        f"Not changed: {plan_name(plan)} records {', '.join(altered)}, and a frozen plan cannot change. "
        "Create a new campaign (and freeze its own plan) to run another design."
    )


def planned_pairs_warning(*, campaign: Campaign, planned_pairs: int) -> str | None:
    """A plan counting on more pairs than the campaign has (known-answer pairs left out) cannot be met."""
    available = campaign.pairs.filter(gold__isnull=True).count()
    if planned_pairs <= available:
        return None
    return (
        f"The plan counts on {planned_pairs} pairs, but this campaign has {available} pair{'s' if available != 1 else ''} "
        f"(known-answer pairs left out): at most {available} can be labelled, so the planned n will not be reached."
    )


def statistics_used(report: dict) -> list[str]:
    """The statistics a report computed: PAR and κ always, the alt-test when it had an ε, selective judging when present."""
    used = ["par", "kappa"]
    if (report.get("alt_test") or {}).get("epsilon") is not None:
        used.append("alt-test")
    selective = report.get("selective") or {}
    if selective.get("requested") and "error" not in selective:
        used.append("selective")
    return used


def plan_section(campaign: Campaign, report: dict) -> dict:
    """The report's `plan` section: the frozen plan's hash and time, and every deviation from it."""
    plan = frozen_plan(campaign)
    if plan is None:
        # The design as it is (the methods paragraph states it), without reading the judges.
        return {
            "frozen": False,
            "altered": False,
            "sha256": None,
            "frozen_at": None,
            "frozen_by": None,
            "planned_pairs": None,
            "statistics": [],
            "deviations": [],
            "rubric": _rubric(campaign),
            "design": _design(campaign),
        }
    current = current_record(campaign)
    selective = report.get("selective") or {}
    if selective.get("source") == "options":  # α and δ given to the report, against the plan's
        current.update(alpha=selective["alpha"], delta=selective["delta"])
    found = plan_check.deviations(plan.record, current, n_pairs=report.get("n_pairs"), statistics_used=statistics_used(report))
    # The record as stored is hashed again: an edit in the database (or the admin) leaves the old hash behind.
    altered = plan_check.record_sha256(plan.record) != plan.sha256
    if altered:
        found.insert(0, plan_check.altered_deviation(plan.sha256, plan_check.record_sha256(plan.record)))
    return {
        "frozen": True,
        "altered": altered,
        "sha256": plan.sha256,
        "frozen_at": plan.frozen_at.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "frozen_by": frozen_by_name(plan),
        "planned_pairs": plan.record.get("planned_pairs"),
        "statistics": plan.record.get("statistics") or [],
        "rubric": current["rubric"],
        "design": current["design"],
        "deviations": found,
    }
