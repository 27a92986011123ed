"""Writes for annotation campaigns: creating them, claiming work, saving labels, submitting.

Views, the API and commands call these; none of them writes to a campaign's
tables directly.
"""

from __future__ import annotations

import itertools
import random
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotate.models import (
    Article,
    Assignment,
    Campaign,
    Criterion,
    CriterionSet,
    Label,
    LabelChange,
    Pair,
    Span,
    System,
    Topic,
)
from annotate.rendering import render_html

POSITIONS = ("1", "2")
MAX_RATIONALE = 5000
MAX_COMMENT = 2000


# --- creating ----------------------------------------------------------------


def campaign_create(
    *,
    name: str,
    criterion_set: CriterionSet,
    systems: list[str],
    topics: int | None = None,
    overlap: int = 1,
    pair_mode: str = Campaign.PairMode.REFERENCE,
    allow_tie: bool = False,
    rationale_required: bool = True,
    rationale_min_length: int = 10,
    ask_overall: bool = False,
    instructions: str = "",
    annotators: list[User] | None = None,
    reference: str = "wikipedia",
    claim_timeout_minutes: int = 120,
    benchmark: str | None = None,
) -> Campaign:
    """Creates a campaign and its pairs. `topics=None` takes every topic that has articles."""
    errors: list[str] = []
    name = name.strip()
    if not name:
        errors.append("A campaign needs a name.")
    elif Campaign.objects.filter(name=name).exists():
        errors.append(f"A campaign named '{name}' already exists.")
    if overlap < 1:
        errors.append("Overlap must be at least 1.")
    if annotators and overlap > len(annotators):
        errors.append(f"Overlap {overlap} needs at least {overlap} annotators; {len(annotators)} given.")
    if topics is not None and topics < 1:
        errors.append("The number of topics must be at least 1 (or 'all').")
    keys = list(dict.fromkeys(s.strip() for s in systems if s.strip()))
    found = {s.key: s for s in System.objects.filter(key__in=keys)}
    missing = [k for k in keys if k not in found]
    if missing:
        errors.append(f"Unknown system(s): {', '.join(missing)}.")
    if len(keys) < 2:
        errors.append("Choose at least two systems.")
    if pair_mode == Campaign.PairMode.REFERENCE and reference not in keys:
        errors.append(f"Pairs against the reference need the reference system '{reference}' among the systems.")
    if pair_mode not in Campaign.PairMode.values:
        errors.append(f"Pairs must be one of: {', '.join(Campaign.PairMode.values)}.")
    if errors:
        raise ValidationError(errors)

    topic_qs = Topic.objects.order_by("benchmark", "title")
    if benchmark:
        topic_qs = topic_qs.filter(benchmark=benchmark)
    articles: dict[int, dict[str, Article]] = {}
    for article in Article.objects.filter(topic__in=topic_qs, system__key__in=keys).select_related("system").only(
        "id", "topic_id", "system__key", "system__is_reference"
    ):
        articles.setdefault(article.topic_id, {})[article.system.key] = article
    chosen_topics = [t for t in topic_qs if len(articles.get(t.id, {})) >= 2]
    if pair_mode == Campaign.PairMode.REFERENCE:
        chosen_topics = [t for t in chosen_topics if reference in articles[t.id]]
    if topics is not None:
        chosen_topics = chosen_topics[:topics]
    planned: list[tuple[Topic, Article, Article]] = []
    for topic in chosen_topics:
        by_system = articles[topic.id]
        if pair_mode == Campaign.PairMode.REFERENCE:
            ref = by_system[reference]
            planned += [(topic, ref, by_system[k]) for k in keys if k != reference and k in by_system]
        else:
            # Article A is the reference when it takes part, else the lower system key.
            present = sorted((k for k in keys if k in by_system), key=lambda k: (k != reference, k))
            planned += [(topic, by_system[x], by_system[y]) for x, y in itertools.combinations(present, 2)]
    if not planned:
        raise ValidationError(["No topic has articles from two of the chosen systems: the campaign would have no pairs."])

    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=name,
            criterion_set=criterion_set,
            reference_system=found.get(reference) or System.objects.filter(key=reference).first(),
            pair_mode=pair_mode,
            overlap=overlap,
            allow_tie=allow_tie,
            rationale_required=rationale_required,
            rationale_min_length=rationale_min_length,
            ask_overall=ask_overall,
            instructions=instructions,
            instructions_html=render_html(instructions) if instructions.strip() else "",
            claim_timeout_minutes=claim_timeout_minutes,
        )
        if annotators:
            campaign.annotators.set(annotators)
        # Interleave topics so that early work covers many topics, reproducibly per campaign.
        order = list(range(len(planned)))
        random.Random(name).shuffle(order)
        Pair.objects.bulk_create(
            [Pair(campaign=campaign, topic=t, article_a=a, article_b=b, order=order[i]) for i, (t, a, b) in enumerate(planned)]
        )
    return campaign


def campaign_set_open(*, campaign: Campaign, is_open: bool) -> None:
    Campaign.objects.filter(pk=campaign.pk).update(is_open=is_open)
    campaign.is_open = is_open


# --- claiming work -------------------------------------------------------------


def can_annotate(campaign: Campaign, user: User) -> bool:
    if not user.is_active:
        return False
    if campaign.annotators.exists():
        return campaign.annotators.filter(pk=user.pk).exists()
    return not user.is_staff


def assignments_expire(*, campaign: Campaign, now: datetime | None = None) -> int:
    """Returns claims left untouched longer than the campaign allows to the pool."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=campaign.claim_timeout_minutes)
    return Assignment.objects.filter(
        pair__campaign=campaign, status=Assignment.Status.ACTIVE, last_activity_at__lt=cutoff
    ).update(status=Assignment.Status.EXPIRED)


def assignment_claim_next(*, campaign: Campaign, user: User, now: datetime | None = None) -> Assignment | None:
    """The user's unfinished work first, else a new claim on a pair that still needs annotators.

    On PostgreSQL the candidate pair row is locked (`SKIP LOCKED`, so parallel
    claimers move on to other pairs) and the annotator count re-checked under
    the lock; on SQLite the IMMEDIATE transaction serializes claimers.
    """
    now = now or timezone.now()
    if not can_annotate(campaign, user):
        raise PermissionDenied("You are not an annotator of this campaign.")
    if not campaign.is_open:
        return None
    unfinished = (
        Assignment.objects.filter(pair__campaign=campaign, annotator=user, status=Assignment.Status.ACTIVE)
        .order_by("claimed_at", "id")
        .first()
    )
    if unfinished is not None:
        return unfinished
    assignments_expire(campaign=campaign, now=now)
    counted = ~Q(assignments__status=Assignment.Status.EXPIRED)
    for _ in range(5):
        with transaction.atomic():
            candidates = (
                Pair.objects.filter(campaign=campaign)
                .exclude(id__in=Assignment.objects.filter(annotator=user).exclude(status=Assignment.Status.EXPIRED).values("pair_id"))
                .annotate(taken=Count("assignments", filter=counted))
                .filter(taken__lt=campaign.overlap)
                .order_by("taken", "order", "id")
                .values_list("id", flat=True)[:20]
            )
            ids = list(candidates)
            if not ids:
                return None
            for pair in Pair.objects.select_for_update(skip_locked=True).filter(id__in=ids).order_by("order", "id"):
                taken = pair.assignments.exclude(status=Assignment.Status.EXPIRED).count()
                if taken >= campaign.overlap:
                    continue
                mine = pair.assignments.filter(annotator=user).first()
                if mine is not None:
                    # Coming back to a pair whose earlier claim expired: keep that work.
                    if mine.status != Assignment.Status.EXPIRED:
                        continue
                    mine.status = Assignment.Status.ACTIVE
                    mine.claimed_at = mine.last_activity_at = now
                    mine.save(update_fields=["status", "claimed_at", "last_activity_at"])
                    return mine
                try:
                    with transaction.atomic():
                        return Assignment.objects.create(
                            pair=pair,
                            annotator=user,
                            a_on_left=secrets.randbelow(2) == 1,
                            claimed_at=now,
                            last_activity_at=now,
                        )
                except IntegrityError:
                    continue
    return None


# --- the annotation page -----------------------------------------------------


def assignment_for_user(*, assignment_id: int, user: User) -> Assignment:
    """The assignment if it is the user's own; 403 for anybody else's, staff included."""
    assignment = (
        Assignment.objects.select_related("pair__campaign__criterion_set", "pair__topic", "pair__article_a", "pair__article_b")
        # The page shows the rendered HTML; the markdown versions are never needed here.
        .defer(*(f"pair__{side}__{field}" for side in ("article_a", "article_b") for field in ("raw_markdown", "display_markdown")))
        .filter(pk=assignment_id)
        .first()
    )
    if assignment is None or assignment.annotator_id != user.pk:
        raise PermissionDenied("This is not your assignment.")
    return assignment


def assignment_open(*, assignment: Assignment, now: datetime | None = None) -> None:
    if assignment.first_opened_at is None:
        now = now or timezone.now()
        Assignment.objects.filter(pk=assignment.pk, first_opened_at__isnull=True).update(first_opened_at=now, last_activity_at=now)
        assignment.first_opened_at = assignment.last_activity_at = now


def _editable(assignment: Assignment) -> None:
    if not assignment.pair.campaign.is_open:
        raise ValidationError(["This campaign is closed; its labels can no longer be changed."])
    if assignment.status == Assignment.Status.EXPIRED:
        raise ValidationError(["This claim expired and went back to the pool; open your queue to continue."])


def winner_from_position(assignment: Assignment, position: str) -> str:
    if position == "tie":
        return Label.Winner.TIE
    if position == "":
        return ""
    left_is_a = assignment.a_on_left
    return Label.Winner.A if (position == "1") == left_is_a else Label.Winner.B


def position_from_winner(assignment: Assignment, winner: str) -> str:
    if winner in ("", Label.Winner.TIE):
        return winner
    return "1" if (winner == Label.Winner.A) == assignment.a_on_left else "2"


@dataclass
class SaveResult:
    label: Label
    changed: bool


def label_save(
    *,
    assignment: Assignment,
    criterion: Criterion,
    user: User,
    position: str | None = None,
    rationale: str | None = None,
    now: datetime | None = None,
) -> SaveResult:
    """Saves one criterion: the choice (`1`, `2`, `tie`, or `` to clear) and/or the rationale."""
    now = now or timezone.now()
    campaign = assignment.pair.campaign
    _editable(assignment)
    errors = []
    if criterion.criterion_set_id != campaign.criterion_set_id:
        errors.append("This criterion does not belong to the campaign's rubric.")
    if position is not None and position not in ("1", "2", "tie", ""):
        errors.append("Choose Article 1, Article 2" + (" or Tie." if campaign.allow_tie else "."))
    if position == "tie" and not campaign.allow_tie:
        errors.append("This campaign does not allow ties: choose Article 1 or Article 2.")
    if rationale is not None and len(rationale) > MAX_RATIONALE:
        errors.append(f"A rationale may be at most {MAX_RATIONALE} characters.")
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        label = Label.objects.select_for_update().filter(assignment=assignment, criterion=criterion).first()
        changes: list[LabelChange] = []
        if label is None:
            label = Label(assignment=assignment, criterion=criterion, created_at=now, saved_at=now)
        if position is not None:
            winner = winner_from_position(assignment, position)
            if winner != label.winner:
                changes.append(LabelChange(field="winner", old_value=label.winner, new_value=winner))
                label.winner = winner
        if rationale is not None and rationale != label.rationale:
            changes.append(LabelChange(field="rationale", old_value=label.rationale, new_value=rationale))
            label.rationale = rationale
        if not changes:
            return SaveResult(label, False)
        label.saved_at = now
        label.save()
        for change in changes:
            change.assignment = assignment
            change.criterion = criterion
            change.changed_by = user
            change.changed_at = now
        LabelChange.objects.bulk_create(changes)
        Assignment.objects.filter(pk=assignment.pk).update(last_activity_at=now)
    return SaveResult(label, True)


def overall_save(*, assignment: Assignment, user: User, value: str, now: datetime | None = None) -> None:
    now = now or timezone.now()
    _editable(assignment)
    if not assignment.pair.campaign.ask_overall:
        raise ValidationError(["This campaign does not ask for an overall preference."])
    if value not in Assignment.Overall.values and value != "":
        raise ValidationError(["Choose Article 1, Article 2, Tie or Both bad."])
    if value == assignment.overall:
        return
    with transaction.atomic():
        LabelChange.objects.create(
            assignment=assignment, field="overall", old_value=assignment.overall, new_value=value, changed_by=user, changed_at=now
        )
        Assignment.objects.filter(pk=assignment.pk).update(overall=value, last_activity_at=now)
        assignment.overall = value
        assignment.last_activity_at = now


def assignment_missing(*, assignment: Assignment) -> list[str]:
    """What still blocks submission, one line per problem, in rubric order."""
    campaign = assignment.pair.campaign
    labels = {label.criterion_id: label for label in assignment.labels.all()}
    missing = []
    for criterion in campaign.criterion_set.criteria.order_by("order"):
        label = labels.get(criterion.pk)
        if label is None or not label.winner:
            missing.append(f"{criterion.key}: choose a winner")
        elif label.winner == Label.Winner.TIE and not campaign.allow_tie:
            missing.append(f"{criterion.key}: ties are not allowed in this campaign")
        if campaign.rationale_required:
            length = len((label.rationale if label else "").strip())
            if length < campaign.rationale_min_length:
                missing.append(f"{criterion.key}: write a rationale of at least {campaign.rationale_min_length} characters ({length} so far)")
    if campaign.ask_overall and not assignment.overall:
        missing.append("overall: choose which article is better overall")
    return missing


def assignment_submit(*, assignment: Assignment, user: User, now: datetime | None = None) -> None:
    now = now or timezone.now()
    _editable(assignment)
    with transaction.atomic():
        missing = assignment_missing(assignment=assignment)
        if missing:
            raise ValidationError(missing)
        old = assignment.status
        assignment.status = Assignment.Status.SUBMITTED
        assignment.submitted_at = now
        assignment.last_activity_at = now
        assignment.save(update_fields=["status", "submitted_at", "last_activity_at"])
        LabelChange.objects.create(
            assignment=assignment, field="status", old_value=old, new_value=assignment.status, changed_by=user, changed_at=now
        )


def span_add(
    *,
    assignment: Assignment,
    position: str,
    start: int,
    end: int,
    quote: str,
    polarity: int,
    comment: str = "",
    now: datetime | None = None,
) -> Span:
    """Stores feedback on a passage; offsets count characters of the article's displayed text."""
    from annotate.rendering import plain_text

    now = now or timezone.now()
    _editable(assignment)
    if position not in POSITIONS:
        raise ValidationError(["Say which article the passage is in (1 or 2)."])
    if polarity not in (1, -1):
        raise ValidationError(["Mark the passage up or down."])
    if len(comment) > MAX_COMMENT:
        raise ValidationError([f"A comment may be at most {MAX_COMMENT} characters."])
    on_left_is_a = assignment.a_on_left
    article = assignment.pair.article_a if (position == "1") == on_left_is_a else assignment.pair.article_b
    text = plain_text(article.html)
    if not (0 <= start < end <= len(text)):
        raise ValidationError(["The selection is outside the article."])
    if text[start:end] != quote:
        raise ValidationError(["The selected text does not match the article at those offsets; select it again."])
    span = Span.objects.create(
        assignment=assignment, article=article, start=start, end=end, quote=quote, polarity=polarity, comment=comment, created_at=now
    )
    Assignment.objects.filter(pk=assignment.pk).update(last_activity_at=now)
    return span


def span_delete(*, assignment: Assignment, span_id: int) -> None:
    _editable(assignment)
    deleted, _ = Span.objects.filter(assignment=assignment, pk=span_id).delete()
    if not deleted:
        raise ValidationError(["No such passage."])
