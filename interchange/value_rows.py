"""Rows of a labels file whose answer is a value (a `response` given). Those about one article are checked,
then stored as readings; a ranking's rows (exported by `value_export`, each naming its systems) are
refused, each with why, until the import of groups is built.

A row of a one-article criterion (checklist, rating, count) names its article by `topic` and
`system` and carries the `answer` as the protocol stores it ("yes"/"no"/"na", the point of the
scale, the count); `left_system`, `right_system` and `winner_system` stay empty. Its `response`
(`responses`) must fit the criterion; a rubric that grows from its labels gets the criterion with
that response. The answer is checked by the criterion's protocol (`outcome_problems`): a point
outside the scale, a negative count or an N/A the criterion does not allow names its line.

Human rows become readings (one per article of the campaign), submitted reading assignments and
answers, through the one import of work on every kind of item (`annotate.services.answers.answers_import`);
judges' rows become units of a reading with their answers, through the one import of judges' units
(`judges.imports.imported_units_save`), or an error row in place of an answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import User
from django.db.models import Max

import protocols
from annotate.models import Article, Assignment, Criterion, Reading, Topic
from annotate.services.answers import MAX_RATIONALE, ImportedWork, answers_import
from annotate.services.items import readings_save
from common.batches import batches
from interchange.formats import CONFIDENCE_COLUMN, JUDGE, ORDER_COLUMN, time_field
from interchange.judge_rows import JudgeAnswersTally, answers_tally, confidence_value
from interchange.responses import response_mismatch, response_read
from interchange.targets import Context
from judges.imports import ImportedUnit, imported_judges_resolve, imported_units_save, unit_tally
from judges.models import Judge
from protocols import order as orders

PAIR_COLUMNS = ("left_system", "right_system", "winner_system")


@dataclass
class ReadingPlan:
    """One rater's answers (a human's), or one judge's, on one article, from the labels file."""

    topic: Topic
    article: Article
    rater: str
    line: int
    started_at: datetime | None = None
    model: str = ""
    # human: (criterion, answer, rationale, saved_at); judge: (criterion, answer or "", rationale, error, confidence)
    rows: list[tuple] = field(default_factory=list)


@dataclass
class ReadingsWritten:
    readings_created: int = 0
    raters_created: int = 0
    judges_created: int = 0
    assignments: dict[str, int] = field(default_factory=unit_tally)
    answers: dict[str, int] = field(default_factory=unit_tally)
    judge_units: dict[str, int] = field(default_factory=unit_tally)
    judge_answers: dict[str, JudgeAnswersTally] = field(default_factory=dict)


# A ranking's response cell (`responses.response_cell`): its rows are refused, each with why.
RANKING_CELL = re.compile(r"ranking\s+\d{1,2}(\+ties)?")


def _criterion(context: Context, values: dict[str, str], errors: list[str]) -> Criterion | None:
    criterion = context.criterion(values["criterion"], errors)
    try:
        given = response_read(values["response"])
    except ValueError as exc:
        errors.append(str(exc))
        return None
    if criterion is None:
        return None
    if criterion.pk is not None and criterion.pk < 0 and criterion.key not in context.decided:
        if given[1] is None:
            errors.append(
                f"response '{values['response']}': a new {given[0]} criterion needs its "
                + ("classes, e.g. 'nominal: yes | partly | no'" if given[0] == "nominal" else "scale, e.g. 'rating 1-5'")
            )
            return None
        context.decided.add(criterion.key)
        criterion.response = given[1]
        return criterion
    if problem := response_mismatch(values["response"], given, criterion.response):
        errors.append(problem)
        return None
    return criterion


def _answer_check(criterion: Criterion | None, answer: str, errors: list[str]) -> None:
    if criterion is None or not answer:
        return
    protocol = protocols.get(criterion.response["type"])
    errors += [f"answer {problem}" for problem in protocol.outcome_problems(answer, response=criterion.response)]


def reading_row_check(context: Context, line: int, values: dict[str, str], plans: dict, judge_plans: dict, seen: dict, bad: list) -> None:
    """Adds a one-article row to its plan, or its problems to `bad` as (line, message)."""
    errors: list[str] = []
    judge = values.get("rater_kind") == JUDGE
    if RANKING_CELL.fullmatch(" ".join(values["response"].split()).lower()):
        # Exported (each ranking by system key), never half-read: the import of groups is not built.
        bad.append((line, f"response '{values['response']}': rankings of several articles are exported but not imported yet"))
        return
    found = context.resolve_article(values, errors)
    criterion = _criterion(context, values, errors)
    if any(values[column] for column in PAIR_COLUMNS):
        errors.append("a one-article row leaves left_system, right_system and winner_system empty (its article is `system`)")
    if values.get(ORDER_COLUMN):
        errors.append(f"a one-article row has no display order ({ORDER_COLUMN} is for pairs)")
    answer, error = values["answer"], values.get("error", "").strip()
    if judge and not answer and not error:
        errors.append("answer is empty and error is empty (a judge row has one or the other)")
    elif judge and answer and error:
        errors.append("a judge row has either an answer or an error, not both")
    elif not judge and not answer:
        errors.append("answer is empty (leave out criteria without an answer)")
    _answer_check(criterion, answer, errors)
    if judge and criterion is not None and criterion.response and not protocols.get(criterion.response["type"]).JUDGED:
        errors.append(f"criterion '{criterion.key}' is free text: judges are not asked it (a human row only)")
    if len(values["rationale"]) > MAX_RATIONALE:
        errors.append(f"rationale is longer than {MAX_RATIONALE} characters")
    saved_at = time_field(values, "saved_at", errors, required=False)
    started_at = None if judge else time_field(values, "started_at", errors, required=False)
    confidence = confidence_value(values.get(CONFIDENCE_COLUMN, ""), errors) if judge else None
    identity = None
    if found is not None and criterion is not None:
        identity = ("reading", judge, found[1].pk, values["rater"], criterion.key)
        if identity in seen:
            errors.append(f"repeats line {seen[identity]} (same article, criterion and rater)")
    key = (found[1].pk, values["rater"]) if found is not None else None
    plan = (judge_plans if judge else plans).get(key)
    if plan is not None and not judge and values["started_at"] and plan.started_at != started_at:
        errors.append(f"started_at differs from line {plan.line} (same article and rater)")
    if errors:
        bad += [(line, message) for message in errors]
        return
    seen[identity] = line
    topic, article = found
    if plan is None:
        plan = ReadingPlan(
            topic=topic, article=article, rater=values["rater"], line=line, started_at=started_at, model=values.get("model", "")
        )
        (judge_plans if judge else plans)[key] = plan
    if judge:
        plan.rows.append((criterion, answer, values["rationale"], error, confidence))
    else:
        plan.rows.append((criterion, answer, values["rationale"], saved_at))


def reading_articles(plans: dict, judge_plans: dict):
    yield from (plan.article for plan in plans.values())
    yield from (plan.article for plan in judge_plans.values())


def reading_criteria(plans: dict, judge_plans: dict):
    for plan in (*plans.values(), *judge_plans.values()):
        yield from (row[0] for row in plan.rows)


def _readings_ensure(context: Context, articles: list[Article], written: ReadingsWritten) -> dict[int, int]:
    """The campaign's reading id of each article, creating the missing readings at the end of its order."""
    campaign = context.campaign
    ids = dict(Reading.objects.filter(campaign=campaign).values_list("article_a_id", "id"))
    missing = list({a.pk: a for a in articles if a.pk not in ids}.values())
    if missing:
        order = (Reading.objects.filter(campaign=campaign).aggregate(top=Max("order"))["top"] or 0) + 1
        readings_save(
            [Reading(campaign=campaign, topic_id=a.topic_id, article_a_id=a.pk, order=order + i) for i, a in enumerate(missing)],
            batch_size=2000,
        )
        ids = dict(Reading.objects.filter(campaign=campaign).values_list("article_a_id", "id"))
        written.readings_created += len(missing)
    return ids


def readings_write(*, context: Context, plans: dict, judge_plans: dict, now: datetime) -> ReadingsWritten:
    """Stores the checked one-article rows (after the placeholders and new criteria are saved)."""
    written = ReadingsWritten()
    readings = _readings_ensure(context, list(reading_articles(plans, judge_plans)), written)
    raters = sorted({plan.rater for plan in plans.values()} - set(context.users))
    users = [User(username=rater, is_active=False) for rater in raters]
    for user in users:
        user.set_unusable_password()
    User.objects.bulk_create(users, batch_size=2000)
    context.users.update(zip(raters, users))
    written.raters_created = len(users)
    one = orders.natural(1)
    stored = {
        (a.pair_id, a.annotator_id): a for ids in batches(sorted(set(readings.values()))) for a in Assignment.every.filter(pair_id__in=ids)
    }
    work = []
    for key, plan in plans.items():
        reading_id, annotator_id = readings[plan.article.pk], context.users[plan.rater].pk
        work.append(
            ImportedWork(
                key=key,
                pair_id=reading_id,
                annotator_id=annotator_id,
                order=one,
                order_known=True,
                started_at=plan.started_at,
                stored=stored.get((reading_id, annotator_id)),
                values=[(criterion.pk, answer, rationale, saved_at) for criterion, answer, rationale, saved_at in plan.rows],
            )
        )
    done = answers_import(work=work, now=now)
    written.assignments, written.answers = done.assignment_tally, done.label_tally
    if judge_plans:
        _judge_units_write(judge_plans, readings, written, now, context.campaign, context.judge_scope)
    return written


def _judge_units_write(judge_plans: dict, readings: dict[int, int], written: ReadingsWritten, now: datetime, campaign, scope: str) -> None:
    models = {}
    for plan in judge_plans.values():
        if plan.model:
            models.setdefault(plan.rater, plan.model)
    judges, created = imported_judges_resolve(
        campaign=campaign, names={plan.rater for plan in judge_plans.values()}, models=models, scope=scope
    )
    written.judges_created += created
    units = []
    for plan in judge_plans.values():
        judge = judges[plan.rater]
        tally = answers_tally(written.judge_answers, judge.name)
        for _, answer, _, error, _ in plan.rows:
            if answer:
                tally.imported += 1
            else:
                tally.error_add(error)
        grouped: dict[tuple, list] = {}
        for row in plan.rows:
            one = row[0].pk if judge.mode == Judge.Mode.CRITERION else None
            grouped.setdefault((row[0].category_id, one), []).append(row)
        for (category_id, criterion_id), rows in grouped.items():
            units.append(
                ImportedUnit(
                    judge=judge,
                    pair_id=readings[plan.article.pk],
                    category_id=category_id,
                    criterion_id=criterion_id,
                    order=orders.natural(1),
                    verdicts=[(c.pk, answer, rationale, sure) for c, answer, rationale, _, sure in rows if answer],
                    errors=list(dict.fromkeys(error for _, answer, _, error, _ in rows if not answer)),
                )
            )
    for outcome in imported_units_save(units=units, now=now):
        written.judge_units[outcome] += 1
