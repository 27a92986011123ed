"""Writes for annotation campaigns: creating them, claiming work, saving labels, submitting.

Views, the API and commands call these; none of them writes to a campaign's
tables directly.
"""

from __future__ import annotations

import itertools
import random
import secrets
import time
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
    forbid_repeats: bool = False,
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
            forbid_repeats=forbid_repeats,
        )
        if annotators:
            campaign.annotators.set(annotators)
        # Interleave topics so that early work covers many topics. The order comes
        # from the operating system's random source: nothing an annotator can
        # know (such as the campaign's name) lets them recompute it.
        order = list(range(len(planned)))
        random.SystemRandom().shuffle(order)
        Pair.objects.bulk_create(
            [Pair(campaign=campaign, topic=t, article_a=a, article_b=b, order=order[i]) for i, (t, a, b) in enumerate(planned)]
        )
    return campaign


@dataclass(frozen=True)
class Design:
    """Whether a campaign's shape lets every annotator meet each topic at most once.

    Without repeats a topic holds at most one pair per annotator, so a topic
    with `s` slots (its pairs times the overlap) can use at most
    `min(s, annotators)` of them; the rest need somebody to meet it twice.
    """

    pairs_by_topic: tuple[int, ...]
    overlap: int
    annotators: int

    @property
    def pairs(self) -> int:
        return sum(self.pairs_by_topic)

    @property
    def topics(self) -> int:
        return len(self.pairs_by_topic)

    @property
    def slots(self) -> int:
        return self.pairs * self.overlap

    @property
    def forced_repeats(self) -> int:
        reachable = sum(min(pairs * self.overlap, self.annotators) for pairs in self.pairs_by_topic)
        return self.slots - reachable

    def warning(self, *, forbid_repeats: bool) -> str:
        if not self.forced_repeats:
            return ""
        shape = (
            f"{self.pairs} pairs on {self.topics} topics, each for {self.overlap} annotator(s), make {self.slots} slots, "
            f"but {self.annotators} annotator(s) meeting each topic once can fill only {self.slots - self.forced_repeats} of them."
        )
        if forbid_repeats:
            return f"{shape} Repeats are forbidden, so {self.forced_repeats} slot(s) will stay empty: add annotators or lower the overlap."
        return (
            f"{shape} {self.forced_repeats} assignment(s) will show an annotator a topic they have met, "
            "and with it the reference article they have already read: add annotators, lower the overlap, or forbid repeats."
        )


def campaign_annotator_count(*, campaign: Campaign) -> int:
    """Active annotators of the campaign; with no annotator list, every active non-staff account counts."""
    listed = campaign.annotators.filter(is_active=True)
    if not campaign.annotators.exists():
        listed = User.objects.filter(is_active=True, is_staff=False)
    return listed.exclude(pk__in=campaign.removed_annotators.values("pk")).count()


def campaign_design(*, campaign: Campaign) -> Design:
    """The campaign's shape, for the annotators it has now."""
    annotators = campaign_annotator_count(campaign=campaign)
    per_topic = campaign.pairs.order_by().values("topic_id").annotate(n=Count("id")).values_list("n", flat=True)
    return Design(pairs_by_topic=tuple(sorted(per_topic)), overlap=campaign.overlap, annotators=annotators)


def campaign_set_open(*, campaign: Campaign, is_open: bool) -> None:
    Campaign.objects.filter(pk=campaign.pk).update(is_open=is_open)
    campaign.is_open = is_open


# --- claiming work -------------------------------------------------------------


def can_annotate(campaign: Campaign, user: User) -> bool:
    """Active, not removed from the campaign, and on its list (or, with no list, not staff)."""
    if not user.is_active:
        return False
    if campaign.removed_annotators.filter(pk=user.pk).exists():
        return False
    if campaign.annotators.exists():
        return campaign.annotators.filter(pk=user.pk).exists()
    return not user.is_staff


# Claims that no longer hold a slot: the pair is free for somebody else.
RELEASED = (Assignment.Status.EXPIRED, Assignment.Status.REVOKED)
# How long a claimer keeps trying while other claimers hold the candidate rows.
CLAIM_PATIENCE_SECONDS = 10.0


def assignments_expire(*, campaign: Campaign, now: datetime | None = None) -> int:
    """Returns claims left untouched longer than the campaign allows to the pool."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=campaign.claim_timeout_minutes)
    return Assignment.objects.filter(
        pair__campaign=campaign, status=Assignment.Status.ACTIVE, last_activity_at__lt=cutoff
    ).update(status=Assignment.Status.EXPIRED)


def claim_candidates(*, campaign: Campaign, user: User) -> list[int]:
    """Pairs with a free slot for the user, best first.

    Best means: the user's own released claim (their work is kept), then a pair
    on a topic the user has not met (the reference article stays unseen), then
    the topic under the most pressure (free slots per annotator who has not met
    it), then the pair with the fewest annotators, then the campaign's random
    order. With `forbid_repeats`, pairs on a topic already met are left out.

    A repeat is given only when every pair with a free slot is on a topic the
    user has met. Claims arrive one at a time, so this cannot promise zero
    repeats where a perfect schedule exists: in a simulation of 15 annotators,
    K=2, 20 topics x 4 agents (160 slots, a schedule without repeats exists) and
    12 random arrival orders, ranking by pressure gave 9 repeats in all against
    17 when ranking by free slots alone (tests/test_schedule.py checks the rule).
    """
    rows = list(
        Pair.objects.filter(campaign=campaign)
        .annotate(taken=Count("assignments", filter=~Q(assignments__status__in=RELEASED)))
        .values_list("id", "topic_id", "taken", "order")
    )
    mine = {
        pair_id: (topic_id, status)
        for pair_id, topic_id, status in Assignment.objects.filter(annotator=user, pair__campaign=campaign).values_list(
            "pair_id", "pair__topic_id", "status"
        )
    }
    met = {topic_id for topic_id, _ in mine.values()}
    free_by_topic: dict[int, int] = {}
    for _, topic_id, taken, _ in rows:
        free_by_topic[topic_id] = free_by_topic.get(topic_id, 0) + max(0, campaign.overlap - taken)
    # How many annotators have met each topic (a released claim still showed them its reference).
    seen_by = dict(
        Assignment.objects.filter(pair__campaign=campaign)
        .values("pair__topic_id")
        .annotate(n=Count("annotator", distinct=True))
        .values_list("pair__topic_id", "n")
    )
    annotators = max(1, campaign_annotator_count(campaign=campaign))

    def pressure(topic_id: int) -> float:
        # Free slots per annotator who can still fill them without a repeat:
        # the topic that most needs this user goes first, so that the end of a
        # campaign does not leave slots only people who met the topic could take.
        return free_by_topic[topic_id] / max(1, annotators - seen_by.get(topic_id, 0))
    ranked = []
    for pair_id, topic_id, taken, order in rows:
        if taken >= campaign.overlap:
            continue
        own = mine.get(pair_id)
        if own is not None and own[1] not in RELEASED:
            continue
        resume = own is not None
        repeat = topic_id in met and not resume
        if repeat and campaign.forbid_repeats:
            continue
        ranked.append((not resume, repeat, -pressure(topic_id), taken, order, pair_id))
    ranked.sort()
    return [row[-1] for row in ranked]


def _claim_pair(*, pair: Pair, user: User, overlap: int, now: datetime) -> Assignment | None:
    """Claims a locked pair for the user if it still has a free slot."""
    if pair.assignments.exclude(status__in=RELEASED).count() >= overlap:
        return None
    mine = pair.assignments.filter(annotator=user).first()
    if mine is not None:
        if mine.status not in RELEASED:
            return None
        # Coming back to a pair whose earlier claim was released: keep that work.
        old = mine.status
        mine.status = Assignment.Status.ACTIVE
        mine.claimed_at = mine.last_activity_at = now
        mine.save(update_fields=["status", "claimed_at", "last_activity_at"])
        LabelChange.objects.create(assignment=mine, field="status", old_value=old, new_value=mine.status, changed_by=user, changed_at=now)
        return mine
    return Assignment.objects.create(
        pair=pair, annotator=user, a_on_left=secrets.randbelow(2) == 1, claimed_at=now, last_activity_at=now
    )


def _unfinished(campaign: Campaign, user: User) -> Assignment | None:
    return (
        Assignment.objects.filter(pair__campaign=campaign, annotator=user, status=Assignment.Status.ACTIVE)
        .order_by("claimed_at", "id")
        .first()
    )


def assignment_claim_next(*, campaign: Campaign, user: User, now: datetime | None = None) -> Assignment | None:
    """The user's unfinished work first, else a new claim on a pair that still needs annotators.

    None means that no pair has a free slot for this user. Two rules hold
    whatever arrives at once:
    - one user holds at most one active assignment per campaign: the user's row
      is locked (`FOR NO KEY UPDATE`) for the whole claim, so a double click or
      a second tab waits and then gets the same assignment back;
    - a pair never has more than `overlap` live claims: candidates are locked
      one at a time with `SKIP LOCKED` and counted again under the lock, so
      parallel claimers spread over the pairs instead of queueing on one.
    A pass that finds every candidate locked by others is repeated; past
    CLAIM_PATIENCE_SECONDS the claimer waits for the locks in id order instead
    of skipping them, so it never gives up while a slot may still be free.
    On SQLite the IMMEDIATE transaction serializes the whole claim.
    """
    now = now or timezone.now()
    if not can_annotate(campaign, user):
        raise PermissionDenied("You are not an annotator of this campaign.")
    if not campaign.is_open:
        return None
    assignments_expire(campaign=campaign, now=now)
    give_up_skipping = time.monotonic() + CLAIM_PATIENCE_SECONDS
    for _ in range(10_000):
        patient = time.monotonic() >= give_up_skipping
        with transaction.atomic():
            User.objects.select_for_update(no_key=True).filter(pk=user.pk).values_list("pk", flat=True).first()
            # Asked again under the lock: a removal from the campaign takes the same lock.
            if not can_annotate(campaign, user):
                raise PermissionDenied("You are not an annotator of this campaign.")
            unfinished = _unfinished(campaign, user)
            if unfinished is not None:
                return unfinished
            candidates = claim_candidates(campaign=campaign, user=user)
            if not candidates:
                return None
            skipped = 0
            for pair_id in sorted(candidates) if patient else candidates:
                locked = Pair.objects.select_for_update(skip_locked=not patient).filter(pk=pair_id)
                pair = locked.first()
                if pair is None:
                    skipped += 1
                    continue
                claimed = _claim_pair(pair=pair, user=user, overlap=campaign.overlap, now=now)
                if claimed is not None:
                    return claimed
        # Every candidate was taken or held by another claimer: look again.
        time.sleep(random.uniform(0.005, 0.02) if skipped else 0)
    raise RuntimeError("A claim kept finding free slots it could not take; the pair counts disagree with the candidates.")


# --- the annotation page -----------------------------------------------------


def assignment_for_user(*, assignment_id: int, user: User, with_articles: bool = True) -> Assignment:
    """The assignment if it is the user's own; 403 for anybody else's, staff included.

    `with_articles=False` is for saves: they never show the articles, and on
    PostgreSQL reading two long (compressed) HTML texts was most of a save's time.
    """
    assignments = Assignment.objects.select_related("pair__campaign__criterion_set", "pair__topic")
    if with_articles:
        # The page shows the rendered HTML; the markdown versions are never needed here.
        assignments = assignments.select_related("pair__article_a", "pair__article_b").defer(
            *(f"pair__{side}__{field}" for side in ("article_a", "article_b") for field in ("raw_markdown", "display_markdown"))
        )
    assignment = assignments.filter(pk=assignment_id).first()
    if assignment is None or assignment.annotator_id != user.pk:
        raise PermissionDenied("This is not your assignment.")
    if assignment.status == Assignment.Status.REVOKED:
        raise PermissionDenied("You were removed from this campaign; your saved labels are kept, but this work is closed to you.")
    return assignment


def assignment_open(*, assignment: Assignment, now: datetime | None = None) -> None:
    if assignment.first_opened_at is None:
        now = now or timezone.now()
        Assignment.objects.filter(pk=assignment.pk, first_opened_at__isnull=True).update(first_opened_at=now, last_activity_at=now)
        assignment.first_opened_at = assignment.last_activity_at = now


def _editable(assignment: Assignment) -> None:
    if assignment.status == Assignment.Status.REVOKED:
        raise PermissionDenied("You were removed from this campaign; your saved labels are kept, but this work is closed to you.")
    if not assignment.pair.campaign.is_open:
        raise ValidationError(["This campaign is closed; its labels can no longer be changed."])
    if assignment.status == Assignment.Status.EXPIRED:
        raise ValidationError(["This claim expired and went back to the pool; open your queue to continue."])


def _lock_for_change(assignment: Assignment, now: datetime) -> None:
    """Locks the assignment row until the transaction ends and checks, on its current state, that it may change.

    Every write to one assignment passes here, so two tabs saving at once are
    serialized: the last write wins and each change reaches the audit trail.
    The lock is taken by recording the activity (an UPDATE locks the row on
    both databases), which saves a save one round trip to the database.
    """
    if not Assignment.objects.filter(pk=assignment.pk).update(last_activity_at=now):
        raise PermissionDenied("This assignment no longer exists.")
    assignment.status, assignment.overall = Assignment.objects.filter(pk=assignment.pk).values_list("status", "overall").get()
    assignment.last_activity_at = now
    _editable(assignment)


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
        _lock_for_change(assignment, now or timezone.now())
        # Read the clock once the lock is held, so that save times follow the order writes land in.
        now = now or timezone.now()
        label = Label.objects.filter(assignment=assignment, criterion=criterion).first()
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
        if assignment.status == Assignment.Status.SUBMITTED:
            # A submitted pair stays complete: an amendment may change an answer, never empty it.
            problems = _criterion_missing(campaign, criterion.key, label)
            if problems:
                raise ValidationError(["This pair is submitted, so each answer must stay complete; the change was not saved."] + problems)
        label.saved_at = now
        label.save()
        for change in changes:
            change.assignment = assignment
            change.criterion = criterion
            change.changed_by = user
            change.changed_at = now
        LabelChange.objects.bulk_create(changes)
    return SaveResult(label, True)


def overall_save(*, assignment: Assignment, user: User, value: str, now: datetime | None = None) -> None:
    now = now or timezone.now()
    _editable(assignment)
    if not assignment.pair.campaign.ask_overall:
        raise ValidationError(["This campaign does not ask for an overall preference."])
    if value not in Assignment.Overall.values and value != "":
        raise ValidationError(["Choose Article 1, Article 2, Tie or Both bad."])
    with transaction.atomic():
        _lock_for_change(assignment, now)
        if value == assignment.overall:
            return
        if value == "" and assignment.status == Assignment.Status.SUBMITTED:
            raise ValidationError(["This pair is submitted, so the overall answer must stay; choose another answer instead of clearing it."])
        LabelChange.objects.create(
            assignment=assignment, field="overall", old_value=assignment.overall, new_value=value, changed_by=user, changed_at=now
        )
        Assignment.objects.filter(pk=assignment.pk).update(overall=value, last_activity_at=now)
        assignment.overall = value
        assignment.last_activity_at = now


def _criterion_missing(campaign: Campaign, key: str, label: Label | None) -> list[str]:
    """What one criterion's answer lacks under the campaign's rules."""
    missing = []
    winner = label.winner if label else ""
    if not winner:
        missing.append(f"{key}: choose a winner")
    elif winner == Label.Winner.TIE and not campaign.allow_tie:
        missing.append(f"{key}: ties are not allowed in this campaign")
    if campaign.rationale_required:
        length = len((label.rationale if label else "").strip())
        if length < campaign.rationale_min_length:
            missing.append(f"{key}: write a rationale of at least {campaign.rationale_min_length} characters ({length} so far)")
    return missing


def assignment_missing(*, assignment: Assignment) -> list[str]:
    """What still blocks submission, one line per problem, in rubric order."""
    campaign = assignment.pair.campaign
    labels = {label.criterion_id: label for label in assignment.labels.all()}
    missing = []
    for criterion in campaign.criterion_set.criteria.order_by("order"):
        missing += _criterion_missing(campaign, criterion.key, labels.get(criterion.pk))
    if campaign.ask_overall and not assignment.overall:
        missing.append("overall: choose which article is better overall")
    return missing


def assignment_submit(*, assignment: Assignment, user: User, now: datetime | None = None) -> None:
    now = now or timezone.now()
    _editable(assignment)
    with transaction.atomic():
        _lock_for_change(assignment, now)
        if assignment.status == Assignment.Status.SUBMITTED:
            return
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


# --- who may annotate ----------------------------------------------------------

# What a member asking a closed campaign for work is told (page and API alike).
CAMPAIGN_CLOSED = "This campaign is closed: it hands out no more work, and its labels can no longer be changed."


def campaign_annotators_add(*, campaign: Campaign, users: list[User], by: User | None = None) -> list[User]:
    """Lets the users annotate the campaign; returns those of them who could not before.

    A removed user comes back with their work: their revoked assignments count
    as released claims, which the claim logic hands back to them first (if the
    pair still has a free slot). A campaign without a list stays open to every
    non-staff account: adding non-staff users only takes them off the removed
    list, and adding staff is refused, because listing anybody would shut out
    everybody else. `by` is who asked; adding changes no work, so nothing is
    audited.
    """
    users = list({user.pk: user for user in users}.values())
    listed = campaign.annotators.exists()
    problems = []
    inactive = sorted(user.username for user in users if not user.is_active)
    if inactive:
        problems.append(f"Deactivated account(s): {', '.join(inactive)}. Reactivate them in the admin first.")
    staff = sorted(user.username for user in users if user.is_staff)
    if staff and not listed:
        problems.append(
            f"This campaign has no annotator list, so every non-staff account may annotate; listing staff "
            f"({', '.join(staff)}) would shut everybody else out. Create a campaign that lists its annotators instead."
        )
    if problems:
        raise ValidationError(problems)
    pks = [user.pk for user in users]
    removed = set(campaign.removed_annotators.filter(pk__in=pks).values_list("pk", flat=True))
    on_list = set(campaign.annotators.filter(pk__in=pks).values_list("pk", flat=True))
    admitted = [user for user in users if user.pk in removed or (listed and user.pk not in on_list)]
    with transaction.atomic():
        campaign.removed_annotators.remove(*users)
        if listed:
            campaign.annotators.add(*users)
    return admitted


def campaign_annotator_remove(*, campaign: Campaign, user: User, by: User, now: datetime | None = None) -> int:
    """Ends the user's access to the campaign at once; returns how many assignments were revoked.

    The user joins `removed_annotators`, which refuses them whatever the list
    says, so this works on a campaign open to every non-staff account too. They
    leave the annotator list unless they are its last name, since an empty list
    would open the campaign to everybody. Their assignments in progress become
    REVOKED, with an audit row each, and free their slots for others; submitted
    assignments stay SUBMITTED, and every saved label stays.
    """
    now = now or timezone.now()
    with transaction.atomic():
        # A claim holds this lock while it hands out work: one under way
        # finishes first, and what it handed out is revoked below.
        User.objects.select_for_update(no_key=True).filter(pk=user.pk).values_list("pk", flat=True).first()
        campaign.removed_annotators.add(user)
        if campaign.annotators.exclude(pk=user.pk).exists():
            campaign.annotators.remove(user)
        # Saves lock the assignment row too: one under way lands before the
        # revocation, and any later one finds the row REVOKED and is refused.
        active = list(
            Assignment.objects.select_for_update(of=("self",))
            .filter(pair__campaign=campaign, annotator=user, status=Assignment.Status.ACTIVE)
            .values_list("pk", flat=True)
        )
        Assignment.objects.filter(pk__in=active).update(status=Assignment.Status.REVOKED)
        LabelChange.objects.bulk_create(
            [
                LabelChange(
                    assignment_id=pk,
                    field="status",
                    old_value=Assignment.Status.ACTIVE,
                    new_value=Assignment.Status.REVOKED,
                    changed_by=by,
                    changed_at=now,
                )
                for pk in active
            ]
        )
    return len(active)
