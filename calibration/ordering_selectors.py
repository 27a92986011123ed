"""Reads for the rankings' statistics: a campaign's orderings of its groups (items of k articles).

`ordering_inputs` gives, per ranking criterion, the humans' orderings (submitted original work on
groups; every saved answer with `include_unsubmitted`) and each judge's (finished units), as the
`calibration.metrics.orderings.Ordering` the metrics take: each stored answer turned into groups of
slots by its protocol (`metric_outcome`), and each slot named by its system. Items are named by id.
It also counts what it leaves out, with why: judges' units in error, per judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

import protocols
from annotate.kinds import criterion_kind
from annotate.models import Assignment, Campaign, Item, Label
from annotate.selectors import group_systems
from calibration.metrics.orderings import Ordering, ordering_of
from judges.models import JudgeUnit, JudgeVerdict

CHUNK = 5000
# Originals only (a swapped repeat is a position check, never a second vote), by the answer's assignment.
ORIGINAL_WORK = Q(assignment__repeat_of__isnull=True)


@dataclass
class CriterionOrderings:
    key: str
    text: str
    articles: int  # k, the articles of each ranking
    ties: bool  # whether the criterion lets two articles share a place
    humans: list[Ordering] = field(default_factory=list)
    judges: dict[str, list[Ordering]] = field(default_factory=dict)


@dataclass
class OrderingInputs:
    criteria: list[CriterionOrderings]
    judge_errors: dict[str, dict]  # judge -> {"errors": units, "reasons": {first line: units}}
    n_groups: int


def ordering_inputs(*, campaign: Campaign, include_unsubmitted: bool = False) -> OrderingInputs | None:
    """The campaign's orderings per ranking criterion; None when its rubric asks no criterion on groups."""
    criteria = {
        c.id: c
        for c in campaign.criterion_set.criteria.order_by("order", "id")
        if criterion_kind(c.response) == Item.Kind.GROUP and protocols.for_criterion(c.response).JUDGED
    }
    if not criteria:
        return None
    systems = group_systems(campaign=campaign)
    found = {
        cid: CriterionOrderings(c.key, c.text, protocols.arity(c.response), protocols.for_criterion(c.response).allows_ties(c.response))
        for cid, c in criteria.items()
    }
    humans = Label.every.filter(
        ORIGINAL_WORK, assignment__pair__campaign=campaign, assignment__pair__kind=Item.Kind.GROUP, criterion_id__in=list(criteria)
    ).exclude(value="")
    if not include_unsubmitted:
        humans = humans.filter(assignment__status=Assignment.Status.SUBMITTED)
    rows = humans.values_list("criterion_id", "value", "assignment__annotator__username", "assignment__pair_id")
    for criterion_id, stored, rater, item_id in rows.iterator(chunk_size=CHUNK):
        groups = protocols.for_criterion(criteria[criterion_id].response).metric_outcome(stored)
        found[criterion_id].humans.append(ordering_of(str(item_id), rater, groups, systems[item_id]))
    verdicts = (
        JudgeVerdict.objects.filter(
            unit__pair__campaign=campaign,
            unit__pair__kind=Item.Kind.GROUP,
            unit__status=JudgeUnit.Status.DONE,
            criterion_id__in=list(criteria),
        )
        .exclude(answer="")
        .values_list("criterion_id", "answer", "unit__judge__name", "unit__pair_id")
    )
    for criterion_id, stored, judge, item_id in verdicts.iterator(chunk_size=CHUNK):
        groups = protocols.for_criterion(criteria[criterion_id].response).metric_outcome(stored)
        found[criterion_id].judges.setdefault(judge, []).append(ordering_of(str(item_id), judge, groups, systems[item_id]))
    errors: dict[str, dict] = {}
    failed = JudgeUnit.objects.filter(pair__campaign=campaign, pair__kind=Item.Kind.GROUP, status=JudgeUnit.Status.ERROR)
    for judge, error in failed.values_list("judge__name", "error").iterator(chunk_size=CHUNK):
        entry = errors.setdefault(judge, {"errors": 0, "reasons": {}})
        entry["errors"] += 1
        reason = (error.strip().splitlines() or [""])[0][:80] or "(no reason given)"
        entry["reasons"][reason] = entry["reasons"].get(reason, 0) + 1
    return OrderingInputs(list(found.values()), dict(sorted(errors.items())), len(systems))
