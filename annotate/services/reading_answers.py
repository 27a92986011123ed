"""The answer service for readings: every human answer about one article alone, one path for all.

A reading's criteria are the rubric's one-article criteria (checklist, rating, count). An answer
comes from the single-article page (htmx or a plain form), the JSON API, or a labels file (`annotate.services.reading_imports`, in bulk); each is
checked by its criterion's protocol (`protocols.get(criterion.response["type"])`: `answer_problems`,
then `stored_answer`), with the campaign's rationale rules as for pairs, and each change is
recorded once in the audit trail (`LabelChange.assignment`, with its source). The pairs'
side of the same service is `annotate.services.answers`; this file mirrors it for readings:

- `answer_save`: one answer, typed by an annotator, under the reading assignment's row lock;
- `reading_submit`: refused while a criterion lacks its answer (or its rationale);
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

import protocols
from annotate.answers import Rules, one_article, reading_problems, sentence
from annotate.models import Answer, Assignment, Campaign, Criterion, LabelChange, ReadingAssignment
from annotate.reading_selectors import reading_criteria
from annotate.services.answers import MAX_RATIONALE, Source, assignment_check_editable, assignment_lock_for_change
from annotate.services.campaign_locks import answers_share_lock
from annotate.services.labelling import Incomplete

ACTIVE, SUBMITTED = Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED


def reading_answer_problems(*, campaign: Campaign, criterion: Criterion, value: str | None, rationale: str | None) -> list[str]:
    """What is wrong with an answer about one article (None: not given), as sentences."""
    if criterion.criterion_set_id != campaign.criterion_set_id:
        return ["This criterion does not belong to the campaign's rubric."]
    if not one_article(criterion.response):
        return ["This criterion compares two articles: it is answered on a pair, not on one article."]
    errors = []
    if value is not None:
        errors += protocols.get(criterion.response["type"]).answer_problems(value, response=criterion.response)
    if rationale is not None and len(rationale) > MAX_RATIONALE:
        errors.append(f"A rationale may be at most {MAX_RATIONALE} characters.")
    return errors


def _change(assignment_id: int, criterion_id: int | None, name: str, before: str, after: str, by: int, at: datetime, source: str):
    return LabelChange(
        assignment_id=assignment_id,
        criterion_id=criterion_id,
        field=name,
        old_value=before,
        new_value=after,
        changed_by_id=by,
        changed_at=at,
        source=source,
    )


@dataclass
class AnswerSaved:
    answer: Answer
    changed: bool


def answer_save(
    *,
    assignment: ReadingAssignment,
    criterion: Criterion,
    user: User,
    value: str | None = None,
    rationale: str | None = None,
    now: datetime | None = None,
    source: str = Source.PAGE,
) -> AnswerSaved:
    """Saves one criterion of a reading: the answer as the rater gave it ("" clears it) and/or the rationale."""
    campaign = assignment.pair.campaign
    assignment_check_editable(assignment)
    value = None if value is None else value.strip()
    errors = reading_answer_problems(campaign=campaign, criterion=criterion, value=value, rationale=rationale)
    if errors:
        raise ValidationError(errors)
    protocol = protocols.get(criterion.response["type"])
    with transaction.atomic():
        answers_share_lock(campaign.pk)  # a study plan's freeze lands before this answer or sees it
        assignment_lock_for_change(assignment, now or timezone.now())
        now = now or timezone.now()
        answer = Answer.every.filter(assignment=assignment, criterion=criterion).first()  # by its assignment: no kind join
        if answer is None:
            answer = Answer(assignment=assignment, criterion=criterion, created_at=now, saved_at=now)
        stored = answer.value if value is None else protocol.stored_answer(value)
        new = (stored, answer.rationale if rationale is None else rationale)
        changes = [
            (name, before, after)
            for name, before, after in zip(("value", "rationale"), (answer.value, answer.rationale), new)
            if before != after
        ]
        if not changes:
            return AnswerSaved(answer, False)
        answer.value, answer.rationale = new
        if assignment.status == SUBMITTED:
            # A submitted reading stays complete: an amendment may change an answer, never empty it.
            problems = reading_problems(Rules.of(campaign), value=answer.value, rationale=answer.rationale)
            if problems:
                raise ValidationError(
                    ["This article is submitted, so each answer must stay complete; the change was not saved."]
                    + [sentence(p) for p in problems]
                )
        answer.saved_at = now
        answer.save()
        LabelChange.objects.bulk_create(
            [_change(assignment.pk, criterion.pk, name, before, after, user.pk, now, source) for name, before, after in changes]
        )
    return AnswerSaved(answer, True)


def reading_missing(*, assignment: ReadingAssignment) -> list[str]:
    """What still blocks submission, one line per problem, in rubric order: "<criterion key>: <problem>"."""
    campaign = assignment.pair.campaign
    rules = Rules.of(campaign)
    answers = {answer.criterion_id: answer for answer in Answer.every.filter(assignment=assignment)}
    missing = []
    for criterion in reading_criteria(campaign):
        answer = answers.get(criterion.pk)
        problems = reading_problems(rules, value=answer.value if answer else "", rationale=answer.rationale if answer else "")
        missing += [f"{criterion.key}: {problem}" for problem in problems]
    return missing


def reading_submit(*, assignment: ReadingAssignment, user: User, now: datetime | None = None, source: str = Source.PAGE) -> None:
    """Submits a reading; `labelling.Incomplete` (its lines from `reading_missing`) while something lacks."""
    now = now or timezone.now()
    assignment_check_editable(assignment)
    with transaction.atomic():
        assignment_lock_for_change(assignment, now)
        if assignment.status == SUBMITTED:
            return
        missing = reading_missing(assignment=assignment)
        if missing:
            raise Incomplete(missing)
        old = assignment.status
        assignment.status, assignment.submitted_at = SUBMITTED, now
        assignment.save(update_fields=["status", "submitted_at", "last_activity_at"])
        _change(assignment.pk, None, "status", old, SUBMITTED, user.pk, now, source).save()
