"""Votes on the agent's steps shown beside the articles of a pair (campaign.show_steps): up or down
per step, with an optional comment, saved as the annotator goes and audited like every answer."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotate.models import ArticleStep, Assignment, StepVote
from annotate.services.answers import MAX_COMMENT, AuditTrail, Source, assignment_check_editable, assignment_lock_for_change
from annotate.services.campaign_locks import answers_share_lock

VOTES = {"up": 1, "down": -1, "": 0}
SHOWN = {1: "up", -1: "down", 0: ""}


def step_of(assignment: Assignment, step_id: int) -> ArticleStep:
    """The step, when it is one of the pair's articles' steps shown on this assignment's page; else
    a ValidationError (never which article or system it belongs to)."""
    campaign = assignment.pair.campaign
    if not campaign.show_steps:
        raise ValidationError(["This campaign does not show the agents' steps."])
    pair = assignment.pair
    if not 0 < step_id < 1 << 63:  # no database holds such an id (and SQLite refuses to compare one)
        raise ValidationError(["No such step on this pair."])
    # order_by(): the models' default orderings would join the tables they order by, for one row.
    step = ArticleStep.objects.filter(pk=step_id, article_id__in=(pair.article_a_id, pair.article_b_id)).order_by().first()
    if step is None:
        raise ValidationError(["No such step on this pair."])
    return step


def step_vote_save(
    *,
    assignment: Assignment,
    step_id: int,
    vote: str,
    comment: str | None = None,
    user,
    now: datetime | None = None,
    source: str = Source.PAGE,
) -> tuple[ArticleStep, StepVote | None]:
    """Saves the vote (`up`, `down`, or `` to take it back, with its comment) on a step of the pair;
    ``comment`` None leaves the comment as it is. Returns the step and the vote as stored (None once
    taken back, or when there was none to take back)."""
    assignment_check_editable(assignment)
    if vote not in VOTES:
        raise ValidationError(["Vote up or down (or clear the vote)."])
    if comment is not None and len(comment) > MAX_COMMENT:
        raise ValidationError([f"A comment may be at most {MAX_COMMENT} characters."])
    step = step_of(assignment, step_id)
    with transaction.atomic():
        answers_share_lock(assignment.pair.campaign_id)
        assignment_lock_for_change(assignment, now or timezone.now())
        now = now or timezone.now()
        stored = StepVote.objects.filter(assignment=assignment, step=step).order_by().first()
        before = (SHOWN[stored.vote], stored.comment) if stored else ("", "")
        after = (vote, before[1] if comment is None else comment.strip())
        if after[0] == "" and stored is not None:
            stored.delete()
            after = ("", "")
            result = None
        elif after[0] == "":
            return step, None  # nothing to take back
        else:
            stored = stored or StepVote(assignment=assignment, step=step)
            stored.vote, stored.comment, stored.saved_at = VOTES[after[0]], after[1], now
            stored.save()
            result = stored
        audit = AuditTrail(source=source)
        for name, old, new in (("step_vote", before[0], after[0]), ("step_comment", before[1], after[1])):
            if old != new:
                audit.record(
                    assignment_id=assignment.pk, criterion_id=None, step_id=step.pk, name=name, before=old, after=new, by=user.pk, at=now
                )
        audit.flush()
    return step, result


def steps_unvoted(assignment: Assignment) -> int:
    """The pair's steps without this assignment's vote (what a campaign asking for a vote on every step waits for)."""
    pair = assignment.pair
    steps = ArticleStep.objects.filter(article_id__in=(pair.article_a_id, pair.article_b_id))
    return steps.exclude(votes__assignment=assignment).count()


def step_votes_import(
    *, votes: list[tuple[Assignment, ArticleStep, int, str, datetime | None]], tally: dict[str, int], now: datetime
) -> None:
    """Stores imported votes on steps, (assignment, step, vote 1 or -1, comment, saved_at or None) each,
    in place of a stored vote on the same step, counting them in `tally` (new, updated, unchanged) and
    auditing what changed. The file's time is kept as it is, an empty one too."""
    if not votes:
        return
    stored = {(v.assignment_id, v.step_id): v for v in StepVote.objects.filter(assignment__in={a.pk for a, *_ in votes})}
    audit = AuditTrail(source=Source.IMPORT)
    new, changed = [], []
    for assignment, step, vote, comment, saved_at in votes:
        old = stored.get((assignment.pk, step.pk))
        before = (SHOWN[old.vote], old.comment) if old else ("", "")
        after = (SHOWN[vote], comment)
        if old is not None and before == after and old.saved_at == saved_at:
            tally["unchanged"] += 1
            continue
        if old is None:
            new.append(StepVote(assignment=assignment, step=step, vote=vote, comment=comment, saved_at=saved_at))
            tally["new"] += 1
        else:
            old.vote, old.comment, old.saved_at = vote, comment, saved_at
            changed.append(old)
            tally["updated"] += 1
        for name, was, now_is in (("step_vote", before[0], after[0]), ("step_comment", before[1], after[1])):
            if was != now_is:
                audit.record(
                    assignment_id=assignment.pk, criterion_id=None, step_id=step.pk, name=name, before=was, after=now_is,
                    by=assignment.annotator_id, at=now,
                )  # fmt: skip
    StepVote.objects.bulk_create(new)
    StepVote.objects.bulk_update(changed, ["vote", "comment", "saved_at"])
    audit.flush()
