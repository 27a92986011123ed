"""Writes to a campaign itself: creating it with its pairs, opening and closing it, and who may annotate it.

Handing out its work is `claims`; answering is `labelling`.
"""

from __future__ import annotations

import itertools
import random
from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

import protocols
from annotate.kinds import rubric_kinds
from annotate.models import (
    PLACEHOLDER_SOURCE,
    Article,
    ArticleStep,
    Assignment,
    Campaign,
    CriterionSet,
    Item,
    LabelChange,
    Pair,
    System,
    Topic,
)
from annotate.rendering import render_html
from annotate.services.campaign_locks import roles_lock
from annotate.services.gold import gold_pause_problems, gold_rate_problem
from annotate.services.items import pairs_save
from annotate.services.placeholders import criterion_set_for_labels
from annotate.services.readings import groups_create, readings_create
from annotate.services.repeats import repeat_gap_problem, repeat_rate_problem
from annotate.services.sampling import sampling_problems
from common.names import REFERENCE_SYSTEM, name_problem

CLAIM_TIMEOUT_MINUTES = Campaign._meta.get_field("claim_timeout_minutes").default
RATIONALE_MIN_LENGTH = Campaign._meta.get_field("rationale_min_length").default
GOLD_PAUSE_AFTER = Campaign._meta.get_field("gold_pause_after").default
REPEAT_GAP = Campaign._meta.get_field("repeat_gap").default
# The largest value a PositiveSmallIntegerField holds on every database Django supports.
CALIBRATION_PAIRS_MAX = 32767


def _name_problems(name: str) -> list[str]:
    """Why a (stripped) campaign name cannot be used: empty, or taken."""
    if not name:
        return ["A campaign needs a name."]
    if Campaign.objects.filter(name=name).exists():
        return [NAME_TAKEN.format(name=name)]
    return []


NAME_TAKEN = "A campaign named '{name}' already exists: choose another name."
NAME_TAKEN_CODE = "name_taken"


def _campaign_insert(**fields) -> Campaign:
    """Inserts the campaign row; a name another request took since `_name_problems` looked answers a
    ValidationError (code NAME_TAKEN_CODE), not an IntegrityError. The savepoint keeps the caller's
    transaction usable on PostgreSQL, so the caller's atomic block rolls back as a whole."""
    try:
        with transaction.atomic():
            return Campaign.objects.create(**fields)
    except IntegrityError:
        if Campaign.objects.filter(name=fields["name"]).exists():
            raise ValidationError(NAME_TAKEN.format(name=fields["name"]), code=NAME_TAKEN_CODE) from None
        raise


def _steps_missing(articles: list[Article]) -> str | None:
    """Why the pairs' steps cannot be shown: the articles without any (at most ten named), or None."""
    with_steps = set(ArticleStep.objects.filter(article__in={a.pk for a in articles}).values_list("article_id", flat=True).distinct())
    missing = sorted({a.pk: a for a in articles if a.pk not in with_steps}.values(), key=lambda a: (a.topic_id, a.system.key))
    if not missing:
        return None
    named = ", ".join(f"'{a.topic.title}' by {a.system.key}" for a in missing[:10])
    more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
    return (
        f"Steps can be shown only when every article of every pair has them (a side without steps beside one with "
        f"steps would tell them apart): {len(missing)} article{'s have' if len(missing) > 1 else ' has'} none: {named}{more}."
    )


def campaign_create(
    *,
    name: str,
    criterion_set: CriterionSet | None,
    systems: list[str] = (),
    topics: int | None = None,
    overlap: int = 1,
    pair_mode: str = Campaign.PairMode.REFERENCE,
    allow_tie: bool = False,
    rationale_required: bool = True,
    rationale_min_length: int = RATIONALE_MIN_LENGTH,
    evidence_required: str = Campaign.Evidence.NONE,
    allow_cannot_judge: bool = False,
    accept_sets: bool = False,
    ask_overall: bool = False,
    instructions: str = "",
    annotators: list[User] | None = None,
    reference: str | None = None,
    claim_timeout_minutes: int = CLAIM_TIMEOUT_MINUTES,
    benchmark: str | None = None,
    forbid_repeats: bool = False,
    topic_back_to_back: bool = False,
    labels_only: bool = False,
    neutral_emphasis: bool = False,
    neutral_headings: bool = False,
    show_steps: bool = False,
    step_votes: str = "optional",
    guess_question: bool = False,
    reference_name: str = "Wikipedia",
    calibration_pairs: int = 0,
    protocol: str = protocols.DEFAULT,
    gold_rate: float = 0.0,
    gold_pause_below: float | None = None,
    gold_pause_after: int = GOLD_PAUSE_AFTER,
    repeat_rate: float = 0.0,
    repeat_gap: int = REPEAT_GAP,
    sampling: str = "uniform",
    sampling_burn_in: int = 0,
    sampling_uniform_share: float = 0.2,
    human_cost_per_pair: Decimal | None = None,
    sampling_budget: int | None = None,
) -> Campaign:
    """Creates a campaign and its pairs. `topics=None` takes every topic that has articles.

    The reference defaults to `common.names.REFERENCE_SYSTEM`. Articles without text
    (the placeholders of labels-only campaigns) are never paired.

    `neutral_emphasis` shows bold and italic as plain text on both sides of
    every pair (rendered so on the page; the stored articles are untouched).
    `neutral_headings` shows headings in sentence case without numbering, their levels renumbered
    from the top, on both sides (`annotate.rendering.headings_neutral`).

    `show_steps` shows each side's agent steps (`ArticleStep`) beside its article; it is refused,
    naming them, unless every article of every pair has steps: a side without beside a side with
    would tell them apart.

    `guess_question` asks, after each pair is submitted, "Which article do you think is the
    <`reference_name`> article?" (Article 1, Article 2, Don't know; `annotate.services.guesses`).

    `labels_only` creates a campaign for imported verdicts without texts: no
    pairs (`import_labels` brings them, with the topics, systems and text-less
    articles they name), never offered to annotators, and no reference system
    unless `reference` names one. The options about annotators and choosing
    articles are refused for it rather than silently ignored. Without a
    `criterion_set` it gets an empty rubric of its own, which its imports fill
    with the criteria their rows name (`placeholders.criterion_set_for_labels`).

    `protocol` is one of `protocols.NAMES`: the protocol of the rubric's pairwise criteria. A rubric's
    one-article criteria (checklist, rating, count) are answered on readings, one per article of the
    pairs (`readings.readings_create`); a rubric of only those hands out no pairs.

    `gold_rate` (0 to 1) is the share of claims that silently give a known-answer pair once
    `make_gold` has made some; `gold_pause_below` (an accuracy) pauses an annotator's new claims
    when their gold accuracy is clearly below it after `gold_pause_after` gold pairs.

    `repeat_rate` (0 to 1) is the share of an annotator's submitted pairs they meet again, in the
    other order, once they have submitted `repeat_gap` other pairs (`annotate.services.repeats`).

    `sampling` "active" puts in the human queue only the pairs `sample_pairs` admits: the first
    `sampling_burn_in` at the uniform rate budget / pairs, the others with a probability from the
    judges' predicted error, `sampling_uniform_share` of the `sampling_budget` (expected pairs to
    label) spread evenly; `human_cost_per_pair` is recorded for the planner.

    `evidence_required` (`Campaign.Evidence`: none, every, winners) asks for at least one passage
    marked as each criterion's evidence: on every criterion, or on every one whose winner is not a tie.
    `allow_cannot_judge` offers "Cannot judge" as an answer per criterion (no winner: left out of
    every statistic, counted on its own). `accept_sets` lets annotators also mark every other verdict
    they find acceptable (a judge then agrees when its verdict is in the set; the report reads both ways).
    """
    if problem := protocols.problem(protocol):
        raise ValidationError([f"The {problem}."])
    if evidence_required not in Campaign.Evidence.values:
        raise ValidationError([f"Evidence must be one of {', '.join(Campaign.Evidence.values)}, not '{evidence_required}'."])
    gold_errors = [p for p in [gold_rate_problem(gold_rate)] if p] + gold_pause_problems(gold_pause_below, gold_pause_after)
    if gold_errors:
        raise ValidationError(gold_errors)
    repeat_errors = [p for p in (repeat_rate_problem(repeat_rate), repeat_gap_problem(repeat_gap)) if p]
    if repeat_errors:
        raise ValidationError(repeat_errors)
    sampling_errors = sampling_problems(
        sampling=sampling,
        burn_in=sampling_burn_in,
        uniform_share=sampling_uniform_share,
        human_cost=human_cost_per_pair,
        budget=sampling_budget,
    )
    if sampling_errors:
        raise ValidationError(sampling_errors)
    if labels_only:
        unused = [
            option
            for option, given in (
                ("systems", any(s.strip() for s in systems)),
                ("topics", topics is not None),
                ("overlap", overlap != 1),
                ("annotators", bool(annotators)),
                ("instructions", bool(instructions.strip())),
                ("claim timeout", claim_timeout_minutes != CLAIM_TIMEOUT_MINUTES),
                ("benchmark", bool(benchmark)),
                ("no repeats", forbid_repeats),
                ("topic back to back", topic_back_to_back),
                ("neutral emphasis", neutral_emphasis),
                ("neutral headings", neutral_headings),
                ("agent steps", show_steps),
                ("guess question", guess_question),
                ("calibration set", calibration_pairs != 0),
                ("gold pairs", bool(gold_rate) or gold_pause_below is not None),
                ("swapped repeats", bool(repeat_rate)),
                ("active sampling", sampling != "uniform"),
                ("rationale rules", not rationale_required or rationale_min_length != RATIONALE_MIN_LENGTH),
                ("evidence", evidence_required != Campaign.Evidence.NONE),
                ("cannot judge", allow_cannot_judge),
            )
            if given
        ]
        if unused:
            raise ValidationError(
                f"A labels-only campaign pairs no articles and is never offered to annotators: "
                f"{', '.join(unused)} {'does' if len(unused) == 1 else 'do'} not apply to it."
            )
        return _labels_only_create(
            name=name,
            criterion_set=criterion_set,
            reference=reference,
            pair_mode=pair_mode,
            allow_tie=allow_tie,
            ask_overall=ask_overall,
            protocol=protocol,
        )
    reference = reference or REFERENCE_SYSTEM
    name = name.strip()
    errors = _name_problems(name)
    if criterion_set is None:
        errors.append("Choose a criterion set (only a labels-only campaign can take its criteria from its labels).")
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
    hidden = [k for k in keys if k in found and found[k].is_gold]
    if hidden:
        errors.append(f"Known-answer system(s) cannot be compared: {', '.join(hidden)} (make_gold adds their pairs).")
    if len(keys) < 2:
        errors.append("Choose at least two systems.")
    if pair_mode == Campaign.PairMode.REFERENCE and reference not in keys:
        errors.append(f"Pairs against the reference need the reference system '{reference}' among the systems.")
    if pair_mode not in Campaign.PairMode.values:
        errors.append(f"Pairs must be one of: {', '.join(Campaign.PairMode.values)}.")
    errors += _calibration_problems(calibration_pairs)
    reference_name = " ".join(reference_name.split())
    if guess_question and not reference_name:
        errors.append("The guess question needs a name for the reference (such as Wikipedia).")
    if len(reference_name) > 60:
        errors.append("The reference's name may have at most 60 characters.")
    if criterion_set is not None and Item.Kind.PAIR not in rubric_kinds(criterion_set_id=criterion_set.pk):
        # Only one-article criteria: the pairs are a record, never handed out (README "Annotating one article").
        errors += [f"This rubric has no pairwise criterion: {option} applies to pairs only." for option, given in (
            ("the overall question", ask_overall), ("a calibration set", calibration_pairs), ("gold pairs", gold_rate)) if given]  # fmt: skip
    if errors:
        raise ValidationError(errors)

    topic_qs = Topic.objects.order_by("benchmark", "title")
    if benchmark:
        topic_qs = topic_qs.filter(benchmark=benchmark)
    articles: dict[int, dict[str, Article]] = {}
    placeholders = Article.objects.filter(source=PLACEHOLDER_SOURCE)
    for article in (
        Article.objects.filter(topic__in=topic_qs, system__key__in=keys)
        .exclude(pk__in=placeholders)
        .select_related("system")
        .only("id", "topic_id", "system__key", "system__is_reference")
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
    if calibration_pairs > len(planned):
        raise ValidationError(
            [f"The calibration set ({calibration_pairs} pairs) cannot be larger than the campaign ({len(planned)} pairs)."]
        )
    if step_votes not in Campaign.StepVotes.values:
        raise ValidationError([f"Step votes must be one of {', '.join(Campaign.StepVotes.values)}, not '{step_votes}'."])
    if show_steps and (problem := _steps_missing([a for _, x, y in planned for a in (x, y)])):
        raise ValidationError([problem])
    if forbid_repeats and calibration_pairs > len(chosen_topics):
        raise ValidationError(
            [
                f"Every member labels every calibration pair, so with repeats forbidden a calibration set of {calibration_pairs} pairs "
                f"needs {calibration_pairs} topics; this campaign has {len(chosen_topics)}."
            ]
        )

    with transaction.atomic():
        campaign = _campaign_insert(
            name=name,
            protocol=protocol,
            criterion_set=criterion_set,
            reference_system=found.get(reference) or System.objects.filter(key=reference).first(),
            pair_mode=pair_mode,
            overlap=overlap,
            allow_tie=allow_tie,
            rationale_required=rationale_required,
            rationale_min_length=rationale_min_length,
            evidence_required=evidence_required,
            allow_cannot_judge=allow_cannot_judge,
            accept_sets=accept_sets,
            ask_overall=ask_overall,
            instructions=instructions,
            # Instructions are often written wrapped: their lines join as CommonMark says.
            instructions_html=render_html(instructions, paragraph_per_line=False) if instructions.strip() else "",
            claim_timeout_minutes=claim_timeout_minutes,
            forbid_repeats=forbid_repeats,
            topic_back_to_back=topic_back_to_back,
            neutral_emphasis=neutral_emphasis,
            neutral_headings=neutral_headings,
            show_steps=show_steps,
            step_votes=step_votes,
            guess_question=guess_question,
            reference_name=reference_name,
            calibration_pairs=calibration_pairs,
            gold_rate=gold_rate,
            gold_pause_below=gold_pause_below,
            gold_pause_after=gold_pause_after,
            repeat_rate=repeat_rate,
            repeat_gap=repeat_gap,
            sampling=sampling,
            sampling_burn_in=sampling_burn_in,
            sampling_uniform_share=sampling_uniform_share,
            human_cost_per_pair=human_cost_per_pair,
            sampling_budget=sampling_budget,
        )
        if annotators:
            campaign.annotators.set(annotators)
        # Interleave topics so that early work covers many topics. The order comes
        # from the operating system's random source: nothing an annotator can
        # know (such as the campaign's name) lets them recompute it.
        order = list(range(len(planned)))
        random.SystemRandom().shuffle(order)
        order = _calibration_first(order, [topic.pk for topic, _, _ in planned], calibration_pairs)
        pairs_save([Pair(campaign=campaign, topic=t, article_a=a, article_b=b, order=order[i]) for i, (t, a, b) in enumerate(planned)])
        # One-article criteria in the rubric: a reading per article of the pairs; rankings: groups of
        # their articles (annotate.services.readings).
        readings_create(campaign=campaign)
        groups_create(campaign=campaign)
    return campaign


def _calibration_problems(calibration_pairs: int) -> list[str]:
    """What is wrong with a calibration set's size on its own (against the pairs: `campaign_create`)."""
    if calibration_pairs < 0:
        return [f"The calibration set is a number of pairs, 0 for none; not {calibration_pairs}."]
    if calibration_pairs > CALIBRATION_PAIRS_MAX:
        return [f"The calibration set can hold at most {CALIBRATION_PAIRS_MAX} pairs; {calibration_pairs} asked."]
    return []


def _calibration_first(order: list[int], topic_of: list[int], calibration_pairs: int) -> list[int]:
    """The drawn order (a rank per planned pair), changed so that its first `calibration_pairs`
    pairs are on different topics while there are topics left; the rest keep their drawn order."""
    if not calibration_pairs:
        return order
    drawn = sorted(range(len(order)), key=order.__getitem__)
    chosen: list[int] = []
    topics: set[int] = set()
    for i in drawn:
        if len(chosen) < calibration_pairs and topic_of[i] not in topics:
            chosen.append(i)
            topics.add(topic_of[i])
    # Fewer topics than calibration pairs: the set takes further pairs of its topics (repeats within it).
    picked = set(chosen)
    chosen += [i for i in drawn if i not in picked][: calibration_pairs - len(chosen)]
    picked = set(chosen)
    new_order = [0] * len(order)
    for rank, i in enumerate(chosen + [i for i in drawn if i not in picked]):
        new_order[i] = rank
    return new_order


def _labels_only_create(
    *,
    name: str,
    criterion_set: CriterionSet | None,
    reference: str | None,
    pair_mode: str,
    allow_tie: bool,
    ask_overall: bool,
    protocol: str,
) -> Campaign:
    """The labels-only campaign of `campaign_create`.

    A `reference` not in the catalogue yet is added as a system: a labels-only
    campaign's systems come with its labels. With a reference and `pair_mode`
    REFERENCE, imported pairs must include it.
    """
    name = name.strip()
    errors = _name_problems(name)
    if pair_mode not in Campaign.PairMode.values:
        errors.append(f"Pairs must be one of: {', '.join(Campaign.PairMode.values)}.")
    if reference is not None and (problem := name_problem(reference, what="reference system")):
        errors.append(f"The {problem}.")
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        reference_system = None
        if reference is not None:
            reference_system, _ = System.objects.get_or_create(key=reference, defaults={"name": reference})
        if criterion_set is None:
            criterion_set = criterion_set_for_labels(campaign_name=name)
        return _campaign_insert(
            name=name,
            protocol=protocol,
            criterion_set=criterion_set,
            reference_system=reference_system,
            pair_mode=pair_mode,
            allow_tie=allow_tie,
            ask_overall=ask_overall,
            labels_only=True,
        )


def campaign_create_from_pairs(*, name: str, source: Campaign, pair_ids: list[int]) -> Campaign:
    """A new campaign of some of `source`'s pairs (the same articles), for humans to label: the same
    rubric, reference, pair mode, overlap, answer and claim rules, instructions and members (the
    annotator list and the removed list); no calibration set and no known-answer pairs. The pairs
    are handed out in a freshly drawn order. A ValidationError says why it cannot be made."""
    name = name.strip()
    errors = _name_problems(name)
    if source.labels_only:
        errors.append(f"Campaign '{source.name}' is labels-only: its pairs have no texts for humans to read here.")
    pairs = list(source.pairs.filter(pk__in=pair_ids).order_by("order", "pk"))
    if not pairs:
        errors.append("No pair to send: the new campaign would have no pairs.")
    if errors:
        raise ValidationError(errors)
    copied = (
        "protocol", "criterion_set", "reference_system", "pair_mode", "overlap", "allow_tie", "rationale_required",
        "rationale_min_length", "evidence_required", "allow_cannot_judge", "accept_sets", "ask_overall", "instructions", "instructions_html", "claim_timeout_minutes",
        "forbid_repeats", "topic_back_to_back", "neutral_emphasis", "neutral_headings", "show_steps", "step_votes", "guess_question", "reference_name",
        "alt_epsilon", "alt_epsilon_reason",
    )  # fmt: skip
    with transaction.atomic():
        campaign = _campaign_insert(name=name, **{field: getattr(source, field) for field in copied})
        campaign.annotators.set(source.annotators.all())
        campaign.removed_annotators.set(source.removed_annotators.all())
        order = list(range(len(pairs)))
        random.SystemRandom().shuffle(order)
        pairs_save(
            [Pair(campaign=campaign, topic_id=p.topic_id, article_a_id=p.article_a_id, article_b_id=p.article_b_id, order=order[i])
             for i, p in enumerate(pairs)]
        )  # fmt: skip
        readings_create(campaign=campaign)
        groups_create(campaign=campaign)
    return campaign


def campaign_set_open(*, campaign: Campaign, is_open: bool) -> None:
    Campaign.objects.filter(pk=campaign.pk).update(is_open=is_open)
    campaign.is_open = is_open


def campaign_set_neutral_emphasis(*, campaign: Campaign, neutral_emphasis: bool) -> None:
    """Turns neutral emphasis on or off, before launch only: once a pair has been claimed,
    annotators have seen the articles one way, and the campaign must say which."""
    if campaign.labels_only:
        raise ValidationError(["A labels-only campaign shows no articles: neutral emphasis does not apply to it."])
    # One statement: the check and the change cannot be split by a claim that commits in between.
    changed = (
        Campaign.objects.filter(pk=campaign.pk)
        .exclude(Exists(Assignment.every.filter(pair__campaign_id=OuterRef("pk"))))  # pairs and readings
        .update(neutral_emphasis=neutral_emphasis)
    )
    if not changed:
        raise ValidationError(
            ["Annotators have started: what they saw cannot change now. Create a new campaign to show emphasis another way."]
        )
    campaign.neutral_emphasis = neutral_emphasis


# --- who may annotate ----------------------------------------------------------


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
    with transaction.atomic():
        # The roles lock: an account added to the adjudicators at the same moment is seen, or waits (adjudication.py).
        roles_lock(campaign.pk)
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
        adjudicators = sorted(campaign.adjudicators.filter(pk__in=[user.pk for user in users]).values_list("username", flat=True))
        if adjudicators:
            problems.append(f"Adjudicators of this campaign cannot annotate it: {', '.join(adjudicators)}.")
        if problems:
            raise ValidationError(problems)
        pks = [user.pk for user in users]
        removed = set(campaign.removed_annotators.filter(pk__in=pks).values_list("pk", flat=True))
        on_list = set(campaign.annotators.filter(pk__in=pks).values_list("pk", flat=True))
        admitted = [user for user in users if user.pk in removed or (listed and user.pk not in on_list)]
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

    Removal is final for every assignment of theirs in the campaign: from the
    moment this returns, no save, passage or submission of theirs lands, on
    submitted pairs either (`labelling` checks the removed list under the
    assignment's lock), and they cannot open their pairs to read them.
    """
    now = now or timezone.now()
    with transaction.atomic():
        # A claim holds this lock while it hands out work: one under way
        # finishes first, and what it handed out is revoked below.
        User.objects.select_for_update(no_key=True).filter(pk=user.pk).values_list("pk", flat=True).first()
        campaign.removed_annotators.add(user)
        if campaign.annotators.exclude(pk=user.pk).exists():
            campaign.annotators.remove(user)
        # Saves lock the assignment row too. Every assignment of theirs is locked, submitted
        # ones included: a save under way commits before the removal, and any later one reads
        # the removed list under its own lock and is refused.
        # Their pairs and readings alike.
        revoked = _revoke_active(Assignment.every.filter(pair__campaign=campaign, annotator=user), by=by, now=now)
    return revoked


def _revoke_active(work, *, by: User, now: datetime) -> int:
    """Locks every row of `work` (assignments of pairs and readings, submitted ones included) and revokes
    the active ones, an audit row each; returns how many were revoked."""
    mine = list(work.select_for_update(of=("self",)).order_by("pk").values_list("pk", "status"))
    active = [pk for pk, status in mine if status == Assignment.Status.ACTIVE]
    Assignment.every.filter(pk__in=active).update(status=Assignment.Status.REVOKED)
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
