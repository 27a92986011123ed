"""Reads for the pointwise statistics: a campaign's answers about one article alone, as arrays.

`pointwise_inputs` gives the human answers (`annotate.Answer`, submitted readings) and the judges'
(`JudgeVerdict.answer` of finished reading units) as the tables of `calibration.metrics.pointwise`,
one per response type and scale, each answer as its protocol hands it to the metrics
(`metric_outcome`: 1/0/NaN for a checklist, the point of a scale, a count or its score, a class's
code; the table by the protocol's `metric_table`: a checklist whose N/A is a class is nominal). Articles
are named by id, topics by id (the bootstrap's units), systems by key.

For the cross-protocol check it also gives the pairwise verdicts on pairs of the same articles
with the same criterion keys, from any campaign (a rubric asks a criterion one way only, so the
pairwise verdicts on the same criteria are another campaign's, on the same articles): human labels
of submitted assignments and finished judges' verdicts, one row per judge order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import protocols
from annotate.models import Answer, Assignment, Campaign, Item, Label, Pair
from calibration.metrics.crossprotocol import A_PREFERRED, B_PREFERRED, TIE_PREFERRED, PairVerdict
from calibration.metrics.pointwise import Answer as Row
from calibration.metrics.pointwise import PointwiseAnswers, pointwise_tables
from common.batches import batches
from interchange.responses import response_cell, response_type
from judges.models import JudgeUnit, JudgeVerdict

CHUNK = 5000
PREFERRED = {"a": A_PREFERRED, "b": B_PREFERRED, "tie": TIE_PREFERRED}


@dataclass
class PointwiseInputs:
    tables: dict[tuple[str, tuple | None], PointwiseAnswers]
    responses: dict[str, str]  # criterion key -> its response cell ("rating 1-5", ...)
    verdicts: list[PairVerdict] = field(default_factory=list)
    pairwise_campaigns: list[str] = field(default_factory=list)
    judge_answers: dict[str, dict] = field(default_factory=dict)  # `pointwise_judge_answers`


def judge_name(name: str, humans: set[str]) -> str:
    """A judge's name in the tables: as it is, unless an annotator has that username."""
    return f"{name} (judge)" if name in humans else name


def measured(response: dict | None) -> bool:
    """Whether a criterion's answers are about one article and go to a table of the metrics."""
    return bool(response_type(response)) and protocols.get(response["type"]).metric_table(response) is not None


def _value(criterion_response: dict, stored: str) -> float:
    return protocols.get(criterion_response["type"]).metric_outcome(stored, response=criterion_response)


def pointwise_rows(*, campaign: Campaign, include_unsubmitted: bool = False) -> tuple[list[Row], dict[int, dict]]:
    """(one row per non-empty answer, humans' then judges', {criterion id: (key, response)})."""
    # Free text (`protocols.text`) has no table: its answers are in no statistic.
    criteria = {c.id: c for c in campaign.criterion_set.criteria.all() if measured(c.response)}
    if not criteria:  # a pairwise rubric: nothing to read
        return [], criteria
    humans = Answer.objects.filter(assignment__pair__campaign=campaign, criterion_id__in=list(criteria)).exclude(value="")
    if not include_unsubmitted:
        humans = humans.filter(assignment__status=Assignment.Status.SUBMITTED)
    human_rows = humans.values_list(
        "criterion_id", "value", "assignment__annotator__username", "assignment__pair__article_a_id",
        "assignment__pair__article_a__system__key", "assignment__pair__topic_id",
    )  # fmt: skip
    judge_rows = (
        JudgeVerdict.objects.filter(unit__pair__campaign=campaign, unit__pair__kind=Item.Kind.READING, unit__status=JudgeUnit.Status.DONE, criterion_id__in=list(criteria))
        .exclude(answer="")
        .values_list("criterion_id", "answer", "unit__judge__name", "unit__pair__article_a_id",
                     "unit__pair__article_a__system__key", "unit__pair__topic_id")
    )  # fmt: skip
    rows = []
    outcome = {}
    kinds = {cid: protocols.get(c.response["type"]).metric_table(c.response) for cid, c in criteria.items()}
    for is_judge, source in ((False, human_rows), (True, judge_rows)):
        for criterion_id, stored, rater, article_id, system, topic_id in source.iterator(chunk_size=CHUNK):
            criterion = criteria[criterion_id]
            key = (criterion_id, stored)
            if key not in outcome:  # few distinct answers: each is converted once
                outcome[key] = _value(criterion.response, stored)
            kind, scale = kinds[criterion_id]
            rows.append(Row(str(article_id), system, str(topic_id), criterion.key, rater, outcome[key], kind, is_judge, scale))
    return rows, criteria


def pointwise_judge_answers(*, campaign: Campaign) -> dict[str, dict]:
    """Per judge, its one-article answers the figures use and those it failed to give, with why:
    {judge: {"answers": n, "errors": n, "reasons": {first line of the error: n}}}. A unit in error of a
    judge in criterion mode is one answer; one in category mode stands for its category's one-article criteria."""
    criteria = [c for c in campaign.criterion_set.criteria.all() if measured(c.response)]
    if not criteria:
        return {}
    per_category: dict[int, int] = {}
    for c in criteria:
        per_category[c.category_id] = per_category.get(c.category_id, 0) + 1
    out: dict[str, dict] = {}
    answered = (
        JudgeVerdict.objects.filter(
            unit__pair__campaign=campaign,
            unit__pair__kind=Item.Kind.READING,
            unit__status=JudgeUnit.Status.DONE,
            criterion_id__in=[c.id for c in criteria],
        )
        .exclude(answer="")
        .values_list("unit__judge__name", flat=True)
    )
    for name in answered.iterator(chunk_size=CHUNK):
        out.setdefault(name, {"answers": 0, "errors": 0, "reasons": {}})["answers"] += 1
    failed = JudgeUnit.objects.filter(pair__campaign=campaign, pair__kind=Item.Kind.READING, status=JudgeUnit.Status.ERROR).values_list(
        "judge__name", "category_id", "criterion_id", "error"
    )
    for name, category_id, criterion_id, error in failed.iterator(chunk_size=CHUNK):
        n = 1 if criterion_id is not None else per_category.get(category_id, 0)
        entry = out.setdefault(name, {"answers": 0, "errors": 0, "reasons": {}})
        entry["errors"] += n
        reason = (error.strip().splitlines() or [""])[0][:80] or "(no reason given)"
        entry["reasons"][reason] = entry["reasons"].get(reason, 0) + n
    return dict(sorted(out.items()))


def _pairwise_verdicts(article_ids: set[int], keys: set[str]) -> tuple[list[PairVerdict], list[str]]:
    ids = sorted(article_ids)
    pairs = {
        p[0]: p
        for chunk in batches(ids)
        for p in Pair.objects.filter(article_a_id__in=chunk).values_list("id", "article_a_id", "article_b_id", "topic_id", "campaign__name")
        if p[2] in article_ids
    }
    verdicts, campaigns = [], set()
    pair_ids = sorted(pairs)
    for chunk in batches(pair_ids):
        labels = (
            Label.objects.filter(assignment__pair_id__in=chunk, criterion__key__in=keys, assignment__status=Assignment.Status.SUBMITTED)
            .exclude(winner="")
            .values_list("assignment__pair_id", "criterion__key", "assignment__annotator__username", "winner")
        )
        judged = JudgeVerdict.objects.filter(unit__pair_id__in=chunk, criterion__key__in=keys, unit__status=JudgeUnit.Status.DONE)
        judged = judged.exclude(winner="").values_list("unit__pair_id", "criterion__key", "unit__judge__name", "winner")
        for is_judge, rows in ((False, labels), (True, judged)):
            for pair_id, key, rater, winner in rows:
                _, a, b, topic_id, campaign = pairs[pair_id]
                campaigns.add(campaign)
                verdicts.append(PairVerdict(str(topic_id), key, rater, str(a), str(b), PREFERRED[winner], is_judge))
    return verdicts, sorted(campaigns)


def pointwise_inputs(*, campaign: Campaign, include_unsubmitted: bool = False) -> PointwiseInputs | None:
    """The campaign's pointwise answers as tables, with the pairwise verdicts on the same articles;
    None when it has no answer about one article."""
    rows, criteria = pointwise_rows(campaign=campaign, include_unsubmitted=include_unsubmitted)
    if not rows:
        return None
    # A judge named like an annotator's account would be one rater of two kinds: its answers get a suffix.
    humans = {row.rater for row in rows if not row.is_judge}
    rows = [row._replace(rater=judge_name(row.rater, humans)) if row.is_judge else row for row in rows]
    tables = pointwise_tables(rows)
    keys = {row.criterion for row in rows}
    articles = {int(row.article) for row in rows}
    verdicts, campaigns = _pairwise_verdicts(articles, keys)
    verdicts = [v._replace(rater=judge_name(v.rater, humans)) if v.is_judge else v for v in verdicts]
    responses = {c.key: response_cell(c.response) for c in criteria.values() if c.key in keys}
    return PointwiseInputs(tables, responses, verdicts, campaigns, pointwise_judge_answers(campaign=campaign))
