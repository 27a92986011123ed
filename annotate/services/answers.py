"""The answer service: every human answer is written here, one path for all of them.

An answer comes from the annotation page (htmx or a plain form), from the JSON API, or from a
labels file (`interchange`), one at a time or in bulk. Each is checked by the
campaign's protocol (`protocols.get(campaign.protocol)`), stored as the protocol stores it
(pairwise: by side, "a" or "b"), and each change is recorded once in the audit trail
(`LabelChange`), by `AuditTrail`.

- `label_save`, `overall_save`: one answer about a pair, typed by an annotator, under the assignment's row lock;
- `value_save`: one answer given as a value (about one article alone), the same way;
- `answers_import`, `overall_import`, `spans_import`: imported work, in bulk (hundreds of thousands of labels);
- `answer_problems`, `value_problems`, `imported_answer_problems`, `imported_overall_problems`: the checks, in the
  words of each source (the page speaks of Article 1 and 2, a labels file of its columns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

import protocols
from annotate.answers import CANNOT_JUDGE, Rules, criterion_problems, on_pair, reading_problems, sentence
from annotate.bulk import rows_insert
from annotate.flag_selectors import VOIDED_PAIR
from annotate.kinds import criterion_kind
from annotate.models import Adjudication, Assignment, Campaign, Criterion, Item, Label, LabelChange, Span
from annotate.selectors import REMOVED_FROM_CAMPAIGN, removed_from_campaign
from annotate.services.campaign_locks import answers_share_lock
from protocols import order as orders
from protocols.pairwise import POSITIONS, SET_ORDER, TIE, side_of

MAX_RATIONALE = 5000
MAX_COMMENT = 2000
# Rows per INSERT, and rows held before writing them.
BATCH = 2000
# SQLite takes at most 32,766 values in one statement: stored labels are read in slices.
CHUNK = 30_000
CHANGE_FIELDS = ("assignment", "adjudication", "criterion", "field", "old_value", "new_value", "changed_by", "changed_at", "source", "step")
Source = LabelChange.Source
LABEL_FIELDS = ("assignment", "criterion", "winner", "cannot_judge", "acceptable", "rationale", "created_at", "saved_at")
# An answer about one article (or any number but two) has a value and no winner.
VALUE_FIELDS = ("assignment", "criterion", "value", "rationale", "created_at", "saved_at", "winner", "acceptable")


class Buffer:
    """Rows or objects written in batches of BATCH, so that a big import never holds them all."""

    def __init__(self, write) -> None:
        self.write, self.items, self.total = write, [], 0

    def add(self, item) -> None:
        self.items.append(item)
        if len(self.items) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if self.items:
            self.write(self.items)
            self.total += len(self.items)
            self.items = []


class AuditTrail(Buffer):
    """The audit trail of answers: one row per changed field (winner, rationale, overall, status)."""

    def __init__(self, *, source: str = Source.PAGE) -> None:
        super().__init__(lambda rows: rows_insert(LabelChange, CHANGE_FIELDS, rows))
        self.source = source

    def record(
        self,
        *,
        assignment_id: int | None,
        criterion_id: int | None,
        name: str,
        before: str,
        after: str,
        by: int,
        at: datetime,
        adjudication_id: int | None = None,
        step_id: int | None = None,
    ) -> None:
        self.add((assignment_id, adjudication_id, criterion_id, name, before, after, by, at, self.source, step_id))


def _audit_text(value: object) -> str:
    """A label field as the audit trail keeps it: text, cannot_judge as "true" / "false", a set joined by "|"."""
    if isinstance(value, list):
        return "|".join(value)  # the sides also acceptable
    return ("true" if value else "false") if isinstance(value, bool) else value


def _label_changes(old: tuple, new: tuple) -> list[tuple[str, object, object]]:
    """(field, before, after) for each of a label's winner, rationale and cannot_judge that changes."""
    names = ("winner", "rationale", "cannot_judge", "acceptable")
    return [(name, before, after) for name, before, after in zip(names, old, new) if before != after]


def _value_changes(old: tuple, new: tuple) -> list[tuple[str, object, object]]:
    """(field, before, after) for each of an answer's value and rationale that changes."""
    return [(name, before, after) for name, before, after in zip(("value", "rationale"), old, new) if before != after]


# --- checking ----------------------------------------------------------------------------


def answer_problems(
    *, campaign: Campaign, criterion: Criterion, position: str | None, rationale: str | None, acceptable: list[str] | None = None
) -> list[str]:
    """What is wrong with an answer typed on the page or sent to the API (None: not given), as sentences.

    `acceptable`: the positions also acceptable ("1", "2", "tie"), where the campaign asks for sets."""
    errors = []
    if acceptable is not None:
        if not campaign.accept_sets:
            errors.append("This campaign does not ask for every acceptable verdict.")
        elif any(p not in (*POSITIONS, TIE) for p in acceptable) or (TIE in acceptable and not campaign.allow_tie):
            errors.append("Mark as also acceptable only Article 1, Article 2" + (" or Tie." if campaign.allow_tie else "."))
    if criterion.criterion_set_id != campaign.criterion_set_id:
        errors.append("This criterion does not belong to the campaign's rubric.")
    elif not on_pair(criterion.response):
        return [f"This criterion is answered on {KIND_SHOWN[criterion_kind(criterion.response)]}, not on a pair."]
    if position == CANNOT_JUDGE:
        if not campaign.allow_cannot_judge:
            errors.append("This campaign does not allow “Cannot judge”: choose an answer.")
    elif position is not None:
        errors += protocols.get(campaign.protocol).answer_problems(position, allow_tie=campaign.allow_tie)
    if rationale is not None and len(rationale) > MAX_RATIONALE:
        errors.append(f"A rationale may be at most {MAX_RATIONALE} characters.")
    return errors


# What each kind of item is, in the message that refuses a criterion asked on another kind.
KIND_SHOWN = {Item.Kind.PAIR: "a pair", Item.Kind.READING: "one article alone", Item.Kind.GROUP: "a group of articles"}


def value_problems(
    *, campaign: Campaign, criterion: Criterion, value: str | None, rationale: str | None, kind: str = Item.Kind.READING
) -> list[str]:
    """What is wrong with an answer given as a value (None: not given) on an item of `kind` (one article
    alone, or a group), as sentences."""
    if criterion.criterion_set_id != campaign.criterion_set_id:
        return ["This criterion does not belong to the campaign's rubric."]
    if (asked := criterion_kind(criterion.response)) != kind:
        return [f"This criterion is answered on {KIND_SHOWN[asked]}, not on {KIND_SHOWN[kind]}."]
    errors = []
    if value is not None:
        errors += protocols.get(criterion.response["type"]).answer_problems(value, response=criterion.response)
    if rationale is not None and len(rationale) > MAX_RATIONALE:
        errors.append(f"A rationale may be at most {MAX_RATIONALE} characters.")
    return errors


def imported_answer_problems(*, campaign: Campaign, outcome: str, rationale: str) -> list[str]:
    """What is wrong with an imported answer, given as exports give it (a system key or a tie; "" for none).

    The campaign's rationale rules are not applied to imported work (external raters may not
    write rationales); only what the database can hold is.
    """
    errors = list(protocols.get(campaign.protocol).outcome_problems(outcome, allow_tie=campaign.allow_tie))
    if len(rationale) > MAX_RATIONALE:
        errors.append(f"rationale is longer than {MAX_RATIONALE} characters")
    return errors


def imported_spans_problems(*, campaign: Campaign) -> list[str]:
    """What keeps a campaign from taking imported passages."""
    return ["this campaign is labels-only: its articles have no text to mark passages in"] if campaign.labels_only else []


def imported_comment_problems(*, comment: str) -> list[str]:
    """What is wrong with an imported passage's comment."""
    return [f"comment is longer than {MAX_COMMENT} characters"] if len(comment) > MAX_COMMENT else []


def imported_overall_problems(*, campaign: Campaign) -> list[str]:
    """What keeps a campaign from taking imported overall answers."""
    return [] if campaign.ask_overall else ["this campaign does not ask for an overall preference"]


# --- one answer at a time ------------------------------------------------------------------


def assignment_check_editable(assignment: Assignment) -> None:
    """Refuses a change to revoked, voided, closed or expired work, on a pair or a reading."""
    if assignment.status == Assignment.Status.REVOKED:
        raise PermissionDenied(REMOVED_FROM_CAMPAIGN)
    if assignment.status == Assignment.Status.VOIDED:
        raise PermissionDenied(VOIDED_PAIR)
    if not assignment.pair.campaign.is_open:
        raise ValidationError(["This campaign is closed; its answers can no longer be changed."])
    if assignment.status == Assignment.Status.EXPIRED:
        raise ValidationError(["This claim expired and went back to the pool; open your queue to continue."])


def assignment_lock_for_change(assignment: Assignment, now: datetime) -> None:
    """Locks the assignment row until the transaction ends and checks, on its current state, that it may change.

    Every write to one assignment passes here, so two tabs saving at once are
    serialized: the last write wins and each change reaches the audit trail.
    The lock is taken by recording the activity (an UPDATE locks the row on
    both databases), which saves a save one round trip to the database.

    Whether the annotator was removed from the campaign is read under the lock
    too: `campaign_annotator_remove` locks every assignment of theirs, submitted
    ones included, so a save under way commits before the removal does, and a
    save that comes after finds them on the removed list.
    """
    if not Assignment.every.filter(pk=assignment.pk).update(last_activity_at=now):
        raise PermissionDenied("This assignment no longer exists.")
    assignment.status, assignment.overall, removed = (
        Assignment.every.filter(pk=assignment.pk)
        .annotate(removed=removed_from_campaign())
        .values_list("status", "overall", "removed")
        .get()
    )
    assignment.last_activity_at = now
    if removed:
        raise PermissionDenied(REMOVED_FROM_CAMPAIGN)
    assignment_check_editable(assignment)


def position_from_winner(assignment: Assignment, winner: str) -> str:
    """The position to show for a stored side; "" (no answer) stays ""."""
    return protocols.get(assignment.pair.campaign.protocol).shown_answer(winner, order=assignment.order)


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
    acceptable: list[str] | None = None,
    now: datetime | None = None,
    source: str = Source.PAGE,
) -> SaveResult:
    """Saves one criterion: the choice (`1`, `2`, `tie`, or `` to clear) and/or the rationale, and
    (`acceptable`, positions) the verdicts also acceptable where the campaign asks for sets.

    `source` says where it was typed (the page or the API), for the audit trail."""
    campaign = assignment.pair.campaign
    assignment_check_editable(assignment)
    errors = answer_problems(campaign=campaign, criterion=criterion, position=position, rationale=rationale, acceptable=acceptable)
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        label, now = _label_locked(assignment, criterion, now)
        # "Cannot judge" is an answer without a winner; any other choice (or clearing) ends it.
        cannot = label.cannot_judge if position is None else position == CANNOT_JUDGE
        if position is None:
            winner = label.winner
        elif cannot:
            winner = ""
        else:
            winner = protocols.get(campaign.protocol).stored_answer(position, order=assignment.order)
        # Stored by side in a fixed order, as the winner is; no winner, no set.
        also = label.acceptable if acceptable is None else [side_of(p, assignment.a_first) for p in acceptable]
        also = [side for side in SET_ORDER if side in also and side != winner] if winner else []
        changes = _label_changes(
            (label.winner, label.rationale, label.cannot_judge, label.acceptable),
            (winner, label.rationale if rationale is None else rationale, cannot, also),
        )
        if not changes:
            return SaveResult(label, False)
        for name, _, after in changes:
            setattr(label, name, after)
        if assignment.status == Assignment.Status.SUBMITTED:
            # A submitted pair stays complete: an amendment may change an answer, never empty it.
            # The annotator reads this next to the criterion, so it does not name the criterion.
            rules = Rules.of(campaign)
            evidence = Span.objects.filter(assignment=assignment, criterion=criterion).count() if rules.needs_evidence(label.winner) else 0
            problems = criterion_problems(
                rules, winner=label.winner, rationale=label.rationale, evidence=evidence, cannot_judge=label.cannot_judge
            )
            if problems:
                raise ValidationError(
                    ["This pair is submitted, so each answer must stay complete; the change was not saved."]
                    + [sentence(p) for p in problems]
                )
        _label_write(label, changes, by=user, at=now, source=source)
    return SaveResult(label, True)


def answer_save(*, assignment: Assignment, **given) -> SaveResult:
    """Saves one criterion's answer on an item of any kind, by what the item's kind answers with: a
    pair's winner (`label_save`: `position`, `acceptable`), or a value (`value_save`: one article's).
    A field of the other shape is refused with a message, never dropped."""
    one = assignment.pair.kind != Item.Kind.PAIR
    save, foreign = (value_save, ("position", "acceptable")) if one else (label_save, ("value",))
    if wrong := [name for name in foreign if given.get(name) is not None]:
        shape = f"{KIND_SHOWN[assignment.pair.kind]}: give `value`" if one else "a pair: give `position`"
        raise ValidationError(f"This work is on {shape}, not {', '.join(f'`{n}`' for n in wrong)}.")
    return save(assignment=assignment, **{name: value for name, value in given.items() if name not in foreign})


def _label_locked(assignment: Assignment, criterion: Criterion, now: datetime | None) -> tuple[Label, datetime]:
    """The criterion's answer of the assignment (new and unsaved if there is none) and the time of
    the save, read once the assignment's row lock is held so that save times follow the order the
    writes land in. Runs in the caller's transaction, after the campaign's share lock."""
    answers_share_lock(assignment.pair.campaign_id)  # a study plan's freeze lands before this answer or sees it
    assignment_lock_for_change(assignment, now or timezone.now())
    now = now or timezone.now()
    label = Label.every.filter(assignment=assignment, criterion=criterion).first()  # by its assignment: no kind join
    if label is None:
        label = Label(assignment=assignment, criterion=criterion, created_at=now, saved_at=now)
    return label, now


def _label_write(label: Label, changes: list[tuple[str, object, object]], *, by: User, at: datetime, source: str) -> None:
    """Saves a changed answer at `at` and records each (field, before, after) in the audit trail."""
    label.saved_at = at
    label.save()
    audit = AuditTrail(source=source)
    for name, before, after in changes:
        before, after = (_audit_text(v) for v in (before, after))
        audit.record(
            assignment_id=label.assignment_id, criterion_id=label.criterion_id, name=name, before=before, after=after, by=by.pk, at=at
        )
    audit.flush()


def value_save(
    *,
    assignment: Assignment,
    criterion: Criterion,
    user: User,
    value: str | None = None,
    rationale: str | None = None,
    now: datetime | None = None,
    source: str = Source.PAGE,
) -> SaveResult:
    """Saves one criterion whose answer is a value (about one article: a checklist's, a rating's, a
    count's): the answer as the rater gave it ("" clears it, the protocol's `stored_answer` keeps it)
    and/or the rationale."""
    campaign = assignment.pair.campaign
    assignment_check_editable(assignment)
    value = None if value is None else value.strip()
    errors = value_problems(campaign=campaign, criterion=criterion, value=value, rationale=rationale, kind=assignment.pair.kind)
    if errors:
        raise ValidationError(errors)
    protocol = protocols.get(criterion.response["type"])
    with transaction.atomic():
        label, now = _label_locked(assignment, criterion, now)
        # Stored by slot (a ranking names its articles), so that it means the same under any order shown.
        stored = label.value if value is None else protocol.stored_answer(value, order=assignment.order)
        new = (stored, label.rationale if rationale is None else rationale)
        changes = _value_changes((label.value, label.rationale), new)
        if not changes:
            return SaveResult(label, False)
        label.value, label.rationale = new
        if assignment.status == Assignment.Status.SUBMITTED:
            # A submitted item stays complete: an amendment may change an answer, never empty it.
            problems = reading_problems(Rules.of(campaign), value=label.value, rationale=label.rationale)
            if problems:
                raise ValidationError(
                    ["This article is submitted, so each answer must stay complete; the change was not saved."]
                    + [sentence(p) for p in problems]
                )
        _label_write(label, changes, by=user, at=now, source=source)
    return SaveResult(label, True)


def overall_shown(assignment: Assignment) -> str:
    """The overall answer as the annotator sees it (by position); "" when there is none."""
    return protocols.get(assignment.pair.campaign.protocol).shown_overall(assignment.overall, order=assignment.order)


def overall_save(*, assignment: Assignment, user: User, value: str, now: datetime | None = None, source: str = Source.PAGE) -> None:
    """Saves the overall answer the annotator chose (by position, "tie", "both_bad", or "" to clear)."""
    now = now or timezone.now()
    assignment_check_editable(assignment)
    if not assignment.pair.campaign.ask_overall:
        raise ValidationError(["This campaign does not ask for an overall preference."])
    protocol = protocols.get(assignment.pair.campaign.protocol)
    if problems := protocol.overall_problems(value):
        raise ValidationError(problems)
    with transaction.atomic():
        answers_share_lock(assignment.pair.campaign_id)
        assignment_lock_for_change(assignment, now)
        # Stored by side, so that it names the same article whatever the order shown.
        value = protocol.stored_overall(value, order=assignment.order)
        if value == assignment.overall:
            return
        if value == "" and assignment.status == Assignment.Status.SUBMITTED:
            raise ValidationError(
                ["This pair is submitted, so the overall answer must stay; choose another answer instead of clearing it."]
            )
        audit = AuditTrail(source=source)
        audit.record(
            assignment_id=assignment.pk, criterion_id=None, name="overall", before=assignment.overall, after=value, by=user.pk, at=now
        )
        audit.flush()
        Assignment.every.filter(pk=assignment.pk).update(overall=value, last_activity_at=now)
        assignment.overall = value
        assignment.last_activity_at = now


# --- adjudicated answers -----------------------------------------------------------------

REASON_REQUIRED = "Give the reason for this final answer."
CAMPAIGN_CLOSED_FOR_ADJUDICATION = "This campaign is closed: no final answer can be recorded. Staff can reopen it on the campaign page."


class AdjudicationClosed(ValidationError):
    """The campaign is closed: its items take no final answer (the page answers 409)."""


class AlreadyAdjudicated(Exception):
    """Another adjudicator recorded this item's final answer first; it holds that answer."""

    def __init__(self, adjudication: Adjudication) -> None:
        super().__init__("This item was already adjudicated by someone else; their final answer is kept.")
        self.adjudication = adjudication


def adjudication_save(*, adjudication: Adjudication, user: User, position: str, reason: str, now: datetime | None = None) -> Adjudication:
    """Records an item's final answer (by position as the adjudicator saw it: `1`, `2` or `tie`) with its reason.

    Checked by the campaign's protocol like any answer. Exactly one final answer is recorded: the
    write only takes an item that is still open, so of two adjudicators at once the second gets
    `AlreadyAdjudicated`. Who may adjudicate is the caller's check (`adjudication_for_user`).
    """
    campaign = adjudication.campaign
    reason = (reason or "").strip()
    errors = answer_problems(campaign=campaign, criterion=adjudication.criterion, position=position or "", rationale=reason)
    if not position:
        errors.insert(0, "Choose the final answer.")
    if not reason:
        errors.append(REASON_REQUIRED)
    if errors:
        raise ValidationError(errors)
    winner = protocols.get(campaign.protocol).stored_answer(position, order=adjudication.order)
    with transaction.atomic():
        now = now or timezone.now()
        # Only an open item of an open campaign: closing a campaign ends its adjudication too, read in the same
        # statement. `winner=""` stays a condition on the updated row itself (not a join, which Django makes a
        # subquery), so PostgreSQL re-checks it after waiting for another adjudicator's update.
        open_campaigns = Campaign.objects.filter(pk=campaign.pk, is_open=True).values("pk")
        taken = Adjudication.objects.filter(pk=adjudication.pk, winner="", campaign_id__in=open_campaigns).update(
            winner=winner, reason=reason, decided_by=user, decided_at=now
        )
        if not taken:
            stored = Adjudication.objects.select_related("campaign").get(pk=adjudication.pk)
            if stored.winner:
                raise AlreadyAdjudicated(stored)
            raise AdjudicationClosed([CAMPAIGN_CLOSED_FOR_ADJUDICATION])
        audit = AuditTrail(source=Source.ADJUDICATED)
        for name, after in (("winner", winner), ("rationale", reason)):
            audit.record(
                assignment_id=None,
                adjudication_id=adjudication.pk,
                criterion_id=adjudication.criterion_id,
                name=name,
                before="",
                after=after,
                by=user.pk,
                at=now,
            )
        audit.flush()
    adjudication.winner, adjudication.reason, adjudication.decided_by, adjudication.decided_at = winner, reason, user, now
    return adjudication


# --- imported work, in bulk ------------------------------------------------------------------


@dataclass
class ImportedWork:
    """One rater's submitted work on one item, from a labels file. A pair's answers are its winners
    by side (or tie) in `labels`; an answer about any other number of articles is the protocol's
    stored form, in `values`."""

    key: object  # the importer's name for this work, under which `answers_import` returns its assignment
    pair_id: int
    annotator_id: int
    order: str  # the slots in the order shown ("ab" or "ba" for a pair, "a" for one article)
    order_known: bool
    started_at: datetime | None
    stored: Assignment | None  # the assignment already stored for this item and rater, if any
    # (criterion id, winner by side or tie, rationale, saved_at or None)
    labels: list[tuple[int, str, str, datetime | None]] = field(default_factory=list)
    acceptable: dict[int, list[str]] = field(default_factory=dict)  # criterion id -> sides also acceptable (sets)
    guess: str = ""  # the guess question's answer by side ("a", "b", "unknown"); "" leaves a stored one as it is
    # (criterion id, the answer as its protocol stores it, rationale, saved_at or None)
    values: list[tuple[int, str, str, datetime | None]] = field(default_factory=list)


def _tally() -> dict[str, int]:
    return {"new": 0, "updated": 0, "unchanged": 0}


@dataclass
class Imported:
    """What `answers_import` wrote: each work's assignment by its key, and the tallies."""

    assignments: dict[object, Assignment] = field(default_factory=dict)
    assignment_tally: dict[str, int] = field(default_factory=_tally)
    label_tally: dict[str, int] = field(default_factory=_tally)


def answers_import(*, work: list[ImportedWork], now: datetime) -> Imported:
    """Stores imported work on items of any kind as submitted assignments with their answers, in bulk,
    in the caller's transaction.

    New assignments are created submitted; stored ones take the file's order and times and become
    submitted. An answer equal to the stored one (winner or value, rationale and save time) is left as it is.
    Every change reaches the audit trail, by the rater, at `now`.
    """
    imported = Imported()
    submitted: list[tuple[Assignment, str, int]] = []  # (assignment, status before, rater), in the work's order
    for item in work:
        assignment, before = _assignment_import(item, imported.assignment_tally, now)
        if before is not None:
            submitted.append((assignment, before, item.annotator_id))
        imported.assignments[item.key] = assignment
    Assignment.objects.bulk_create([a for a in imported.assignments.values() if a.pk is None], batch_size=BATCH)
    # Written once the new assignments have their ids.
    audit = AuditTrail(source=Source.IMPORT)
    for assignment, before, rater in submitted:
        audit.record(
            assignment_id=assignment.pk, criterion_id=None, name="status", before=before, after=assignment.status, by=rater, at=now
        )
    _labels_import(work, imported, audit, now)
    audit.flush()
    return imported


def _assignment_import(item: ImportedWork, tally: dict[str, int], now: datetime) -> tuple[Assignment, str | None]:
    """The work's assignment, new (not saved yet) or updated, and its status before when it becomes submitted."""
    times = [saved_at for *_, saved_at in (*item.labels, *item.values) if saved_at is not None]
    last_saved = max(times) if times else None
    assignment = item.stored
    if assignment is None:
        # Times the file does not give stay empty (the export gives them back empty), except the
        # last activity, which every assignment has: the last save, else the start, else now.
        assignment = Assignment(
            pair_id=item.pair_id,
            annotator_id=item.annotator_id,
            a_first=orders.a_first(item.order),
            order=item.order,
            order_known=item.order_known,
            status=Assignment.Status.SUBMITTED,
            claimed_at=item.started_at,
            first_opened_at=item.started_at,
            last_activity_at=last_saved or item.started_at or now,
            submitted_at=last_saved,
            guess=item.guess,
        )
        tally["new"] += 1
        return assignment, ""
    updated = []
    # The overall answer is stored by side: a new order leaves it naming the same article.
    changes = (("a_first", orders.a_first(item.order)), ("order", item.order), ("order_known", item.order_known))
    for name, value in (*changes, *((("guess", item.guess),) if item.guess else ())):
        if getattr(assignment, name) != value:
            setattr(assignment, name, value)
            updated.append(name)
    before = _submitted_work_update(assignment, started_at=item.started_at, last_saved=last_saved, tally=tally, updated=updated)
    return assignment, before


def _submitted_work_update(assignment, *, started_at, last_saved, tally: dict[str, int], updated: list[str]) -> str | None:
    """Brings a stored assignment up to an imported, submitted copy of it: SUBMITTED, first
    opened at `started_at` (when given), submitted and last active no earlier than `last_saved`. Saves
    the fields changed, with `updated` (those the caller changed), and counts it in `tally` ("updated"
    or "unchanged"). Returns its status before when it was not submitted yet, else None."""
    before = None
    if assignment.status != Assignment.Status.SUBMITTED:
        before = assignment.status
        assignment.status = Assignment.Status.SUBMITTED
        updated.append("status")
    if started_at is not None and assignment.first_opened_at != started_at:
        assignment.first_opened_at = started_at
        updated.append("first_opened_at")
    if last_saved is not None and (assignment.submitted_at is None or assignment.submitted_at < last_saved):
        assignment.submitted_at = last_saved
        updated.append("submitted_at")
    if last_saved is not None and assignment.last_activity_at < last_saved:
        assignment.last_activity_at = last_saved
        updated.append("last_activity_at")
    if updated:
        assignment.save(update_fields=updated)
        tally["updated"] += 1
    else:
        tally["unchanged"] += 1
    return before


def _labels_import(work: list[ImportedWork], imported: Imported, audit: AuditTrail, now: datetime) -> None:
    ids = sorted(a.id for a in imported.assignments.values() if a.id is not None)
    # What is stored, as plain tuples: (assignment, criterion) -> (label id, winner, rationale, saved_at, cannot_judge, acceptable, value).
    stored = {
        (assignment_id, criterion_id): rest
        for start in range(0, len(ids), CHUNK)
        for assignment_id, criterion_id, *rest in Label.every.filter(assignment_id__in=ids[start : start + CHUNK]).values_list(
            "assignment_id", "criterion_id", "id", "winner", "rationale", "saved_at", "cannot_judge", "acceptable", "value"
        )
    }
    new = Buffer(lambda rows: rows_insert(Label, LABEL_FIELDS, rows))
    new_values = Buffer(lambda rows: rows_insert(Label, VALUE_FIELDS, rows))
    changed = Buffer(lambda items: Label.objects.bulk_update(items, ["winner", "cannot_judge", "acceptable", "rationale", "saved_at"]))
    changed_values = Buffer(lambda items: Label.every.bulk_update(items, ["value", "rationale", "saved_at"]))
    tally = imported.label_tally

    def record(assignment_id: int, criterion_id: int, changes, by: int) -> None:
        for name, before, after in changes:
            audit.record(
                assignment_id=assignment_id,
                criterion_id=criterion_id,
                name=name,
                before=_audit_text(before),
                after=_audit_text(after),
                by=by,
                at=now,
            )

    for item in work:
        assignment = imported.assignments[item.key]
        for criterion_id, given, rationale, saved_at in item.labels:
            # CANNOT_JUDGE comes where a side would: stored as no winner and the flag.
            cannot = given == CANNOT_JUDGE
            winner = "" if cannot else given
            also = [side for side in SET_ORDER if side in item.acceptable.get(criterion_id, ()) and side != winner] if winner else []
            old = stored.get((assignment.id, criterion_id))
            if old is None:
                old_answer = ("", "", False, [])
                # Created when it was saved, or now if the file does not say when.
                new.add((assignment.id, criterion_id, winner, cannot, also, rationale, saved_at or now, saved_at))
            else:
                label_id, old_winner, old_rationale, old_saved, old_cannot, old_also, _ = old
                if (old_winner, old_rationale, old_saved, old_cannot, old_also) == (winner, rationale, saved_at, cannot, also):
                    tally["unchanged"] += 1
                    continue
                old_answer = (old_winner, old_rationale, old_cannot, old_also)
                changed.add(Label(id=label_id, winner=winner, cannot_judge=cannot, acceptable=also, rationale=rationale, saved_at=saved_at))
            record(assignment.id, criterion_id, _label_changes(old_answer, (winner, rationale, cannot, also)), item.annotator_id)
        for criterion_id, value, rationale, saved_at in item.values:
            old = stored.get((assignment.id, criterion_id))
            if old is None:
                before = ("", "")
                new_values.add((assignment.id, criterion_id, value, rationale, saved_at or now, saved_at, "", []))
            else:
                label_id, _, old_rationale, old_saved, _, _, old_value = old
                if (old_value, old_rationale, old_saved) == (value, rationale, saved_at):
                    tally["unchanged"] += 1
                    continue
                before = (old_value, old_rationale)
                changed_values.add(Label(id=label_id, value=value, rationale=rationale, saved_at=saved_at))
            record(assignment.id, criterion_id, _value_changes(before, (value, rationale)), item.annotator_id)
    for buffer in (new, new_values, changed, changed_values, audit):
        buffer.flush()
    tally["new"] += new.total + new_values.total
    tally["updated"] += changed.total + changed_values.total


def overall_import(*, answers: list[tuple[Assignment, str]], tally: dict[str, int], now: datetime) -> None:
    """Stores imported overall answers (by side, tie or both_bad), counting them in `tally` (new, updated, unchanged)."""
    audit = AuditTrail(source=Source.IMPORT)
    for assignment, value in answers:
        if assignment.overall == value:
            tally["unchanged"] += 1
            continue
        tally["new" if assignment.overall == "" else "updated"] += 1
        audit.record(
            assignment_id=assignment.pk,
            criterion_id=None,
            name="overall",
            before=assignment.overall,
            after=value,
            by=assignment.annotator_id,
            at=now,
        )
        Assignment.every.filter(pk=assignment.pk).update(overall=value)
        assignment.overall = value
    audit.flush()


def spans_import(*, spans: list[Span], tally: dict[str, int]) -> None:
    """Adds imported passages (each with its assignment set) not stored yet, counting them in `tally` (new, unchanged).

    A passage equal to a stored one (same article or step of it, offsets, polarity, comment, time and
    criterion it is evidence for) counts as unchanged.
    """
    if not spans:
        return

    def identity(span: Span) -> tuple:
        return (
            span.assignment_id, span.article_id, span.step_id, span.start, span.end, span.polarity, span.comment, span.created_at,
            span.criterion_id,
        )  # fmt: skip

    stored = {identity(s) for s in Span.objects.filter(assignment__in={span.assignment_id for span in spans})}
    new = [span for span in spans if identity(span) not in stored]
    Span.objects.bulk_create(new)
    tally["unchanged"] += len(spans) - len(new)
    tally["new"] += len(new)
