"""Reads of the catalogue and of campaigns, shared by pages, the API, commands and services."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import (
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce
from django.http import Http404

import protocols
from annotate.answers import CANNOT_JUDGE, CHOOSE_OVERALL, EVIDENCE_NONE, Rules, answer_state, criterion_problems, on_pair, shorten
from annotate.design import Design
from annotate.flag_selectors import VOIDED_PAIR
from annotate.models import (
    LABELS_ONLY_PREFIX,
    ORIGINAL,
    PLACEHOLDER_SOURCE,
    Article,
    ArticleStep,
    Assignment,
    Campaign,
    Criterion,
    CriterionSet,
    Item,
    ItemArticle,
    Label,
    Pair,
    PairFlag,
    Span,
    StepVote,
    Topic,
)
from annotate.pace_selectors import pair_time_estimate
from annotate.removal import Removal, article_removal
from annotate.rendering import emphasis_plain, headings_neutral, toc_neutral
from protocols import order as orders
from protocols.pairwise import FIRST, POSITIONS, SECOND, SIDE_A, SIDE_B, position_of, side_of


def article_export_rows(*, benchmark: str | None = None, campaign: Campaign | None = None) -> Iterator[dict]:
    """Every article with its text; the text-less placeholders of labels-only campaigns are left out.

    With a `campaign`, only the articles its pairs show, each once, and each row says how the
    campaign showed them: `campaign` and `neutral_emphasis` (bold and italic as plain text).
    """
    articles = (
        Article.objects.exclude(source=PLACEHOLDER_SOURCE)
        .select_related("topic", "system")
        .prefetch_related("steps")
        .order_by("topic__benchmark", "topic__title", "system__key")
    )
    if benchmark:
        articles = articles.filter(topic__benchmark=benchmark)
    shown = {}
    if campaign is not None:
        pairs = Pair.objects.filter(campaign=campaign)
        articles = articles.filter(Q(pk__in=pairs.values("article_a")) | Q(pk__in=pairs.values("article_b")))
        shown = {"campaign": campaign.name, "neutral_emphasis": campaign.neutral_emphasis}
    for article in articles.iterator(chunk_size=200):
        yield {
            **shown,
            "benchmark": article.topic.benchmark,
            "topic": article.topic.title,
            "system": article.system.key,
            "reference": article.system.is_reference,
            "category": article.topic.category,
            "raw_markdown": article.raw_markdown,
            "display_markdown": article.display_markdown,
            "word_count": article.word_count,
            "content_hash": article.content_hash,
            # The agent's steps as imported (`content`, and `display_content` as shown); only when it has any.
            **({"steps": [step_export_row(step) for step in steps]} if (steps := list(article.steps.all())) else {}),
        }


def step_export_row(step) -> dict:
    return {
        "type": step.kind,
        "content": step.raw_content,
        "display_content": step.content,
        "query": step.query,
        "url": step.url,
        "title": step.title,
    }


def topic_list() -> QuerySet[Topic]:
    """Topics with texts: the topics of labels-only campaigns (one per imported battle, no text) are left out."""
    return (
        Topic.objects.exclude(benchmark__startswith=LABELS_ONLY_PREFIX)
        .annotate(article_count=Count("articles"))
        .order_by("benchmark", "title")
    )


def topic_articles(*, topic: Topic) -> list[Article]:
    return list(topic.articles.select_related("system").order_by("-system__is_reference", "system__key"))


def criterion_set_latest(*, key: str) -> CriterionSet | None:
    return CriterionSet.objects.filter(key=key).order_by("-version").first()


# --- campaigns -------------------------------------------------------------------


# What an annotator taken off a campaign is told on every route (page, htmx, API), for reads and writes alike.
REMOVED_FROM_CAMPAIGN = (
    "You were removed from this campaign: you can no longer open or change its pairs, submitted ones included. Your saved labels are kept."
)

# The kinds of item the work page draws (`annotate.views.PAGES`) and the API serves: the work page,
# its criteria's saves and its submission take these; everything else a pair's alone.
WORK_KINDS = (Item.Kind.PAIR, Item.Kind.READING, Item.Kind.GROUP)

# What a part of the pair page (a guess, a flag, a marked passage, a step's vote, the overall verdict)
# says when it is asked of work on an item of another kind.
NOT_OF_THIS_KIND = "This work is not on a pair of articles: this part of the pair page does not apply to it."


def removed_from_campaign() -> Exists:
    """Whether an assignment's annotator is on its campaign's removed list: a subquery to annotate assignments with."""
    on_list = Campaign.removed_annotators.through.objects.filter(
        campaign_id=OuterRef("pair__campaign_id"), user_id=OuterRef("annotator_id")
    )
    return Exists(on_list)


def can_annotate(campaign: Campaign, user: User) -> bool:
    """Active, not removed from the campaign, not one of its adjudicators, and on its list (or, with no list, not staff)."""
    if not user.is_active:
        return False
    if campaign.adjudicators.filter(pk=user.pk).exists():
        return False
    if campaign.removed_annotators.filter(pk=user.pk).exists():
        return False
    if campaign.annotators.exists():
        return campaign.annotators.filter(pk=user.pk).exists()
    return not user.is_staff


def not_annotator_reason(campaign: Campaign, user: User) -> str:
    """What somebody `can_annotate` refuses is told: that they were removed, when they were."""
    if campaign.removed_annotators.filter(pk=user.pk).exists():
        return REMOVED_FROM_CAMPAIGN
    if campaign.adjudicators.filter(pk=user.pk).exists():
        return "You adjudicate this campaign, so you cannot annotate it."
    return "You are not an annotator of this campaign."


def campaign_annotators_now(*, campaign: Campaign) -> QuerySet[User]:
    """Who may annotate the campaign now: its active, not removed annotators; with no list, every active non-staff account."""
    listed = campaign.annotators.filter(is_active=True)
    if not campaign.annotators.exists():
        listed = User.objects.filter(is_active=True, is_staff=False)
    return listed.exclude(pk__in=campaign.removed_annotators.values("pk")).exclude(pk__in=campaign.adjudicators.values("pk"))


def campaign_annotator_count(*, campaign: Campaign) -> int:
    """Active annotators of the campaign; with no annotator list, every active non-staff account counts."""
    return campaign_annotators_now(campaign=campaign).count()


def calibration_pair_ids(*, campaign: Campaign) -> list[int]:
    """The campaign's calibration set: its first `calibration_pairs` pairs in the order work is handed out."""
    if not campaign.calibration_pairs:
        return []
    pairs = Pair.objects.filter(campaign=campaign, gold__isnull=True).order_by("order", "id")
    return list(pairs.values_list("id", flat=True)[: campaign.calibration_pairs])


def campaign_design(*, campaign: Campaign) -> Design:
    """The campaign's shape, for the annotators it has now: of the items it hands out, its pairs, or, when
    its rubric asks nothing of pairs, its readings or groups."""
    annotators = campaign_annotator_count(campaign=campaign)
    per_topic = campaign.pairs.filter(gold__isnull=True).order_by().values("topic_id").annotate(n=Count("id")).values_list("topic_id", "n")
    noun = "pairs"
    not_pairs = Item.objects.filter(campaign=campaign).exclude(kind=Item.Kind.PAIR).order_by()
    others = dict(not_pairs.values("kind").annotate(n=Count("id")).values_list("kind", "n"))
    if others and not _asks_pairs(campaign):  # a pairwise campaign has no other items: no rubric read
        per_topic = not_pairs.values("topic_id").annotate(n=Count("id")).values_list("topic_id", "n")
        noun = "groups of articles" if Item.Kind.GROUP in others else "single articles"
    calibration: dict[int, int] = {}
    if noun == "pairs":
        for topic_id in Pair.objects.filter(pk__in=calibration_pair_ids(campaign=campaign)).values_list("topic_id", flat=True):
            calibration[topic_id] = calibration.get(topic_id, 0) + 1
    shape = sorted((n, calibration.get(topic_id, 0)) for topic_id, n in per_topic)
    return Design(
        pairs_by_topic=tuple(n for n, _ in shape),
        overlap=campaign.overlap,
        annotators=annotators,
        calibration_by_topic=tuple(c for _, c in shape) if calibration else (),
        noun=noun,
    )


def group_systems(*, campaign: Campaign) -> dict[int, dict[str, str]]:
    """Each group of the campaign (an item of three articles or more): {slot letter: system key}, in one
    query. What turns a group's answers, stored by slot, into the systems they rank."""
    out: dict[int, dict[str, str]] = {}
    rows = ItemArticle.objects.filter(item__campaign=campaign, item__kind=Item.Kind.GROUP).values_list(
        "item_id", "slot", "article__system__key"
    )
    for item_id, slot, system in rows.iterator(chunk_size=5000):
        out.setdefault(item_id, {})[orders.SLOTS[slot]] = system
    return out


def _asks_pairs(campaign: Campaign) -> bool:
    """Whether the campaign's rubric has a criterion answered on a pair (else its pairs are a record only)."""
    return any(on_pair(r) for r in Criterion.objects.filter(criterion_set_id=campaign.criterion_set_id).values_list("response", flat=True))


# --- the annotation page -----------------------------------------------------------


def assignment_for_user(
    *, assignment_id: int, user: User, with_articles: bool = True, kinds: tuple[str, ...] = (Item.Kind.PAIR,)
) -> Assignment:
    """The assignment if it is the user's own and its item is of one of `kinds`; 403 for anybody
    else's, staff included, and for an item of another kind (a part of the pair page, such as a
    guess or a marked passage, asked of one article alone). The work page, its saves and its
    submission pass every kind (`annotate.views.WORK_KINDS`) and go on by the item's.

    `with_articles=False` is for saves: they never show the articles, and on
    PostgreSQL reading two long (compressed) HTML texts was most of a save's time.
    """
    assignments = Assignment.every.filter(pair__kind__in=kinds).select_related("pair__campaign__criterion_set", "pair__topic")
    if with_articles:
        # The page shows the rendered HTML; the markdown versions are never needed here.
        # The page shows the annotator's flag on the pair, if any, in the same query.
        assignments = assignments.select_related("pair__article_a", "pair__article_b", "flag").defer(
            *(f"pair__{side}__{field}" for side in ("article_a", "article_b") for field in ("raw_markdown", "display_markdown"))
        )
    assignment = assignments.filter(pk=assignment_id).annotate(removed=removed_from_campaign()).first()
    if assignment is None or assignment.annotator_id != user.pk:
        if Assignment.every.filter(pk=assignment_id, annotator_id=user.pk).exists():
            raise PermissionDenied(NOT_OF_THIS_KIND)
        raise PermissionDenied("This is not your assignment.")
    if assignment.pair.campaign.labels_only:
        # Imported work of a rater who happens to have an account: there is no text to show or label.
        raise PermissionDenied(
            "These labels were imported into a labels-only campaign: its articles have no texts, so there is nothing "
            "to show or annotate here."
        )
    if assignment.status == Assignment.Status.VOIDED:
        raise PermissionDenied(VOIDED_PAIR)
    if assignment.removed or assignment.status == Assignment.Status.REVOKED:
        # Removal is final: no reading either, submitted pairs included (README "Accounts for a lab").
        raise PermissionDenied(REMOVED_FROM_CAMPAIGN)
    return assignment


@dataclass
class CriterionRow:
    criterion: Criterion
    position: str = ""
    rationale: str = ""
    saved_at: object = None
    problems: list[str] = field(default_factory=list)  # what the answer lacks (annotate.answers); empty: complete
    state: str = ""  # its border: annotate.answers.answer_state
    evidence: list[dict] = field(default_factory=list)  # passages marked as its evidence
    also: list[str] = field(default_factory=list)  # positions also acceptable (campaigns that ask for sets)
    partial: str = protocols.get(protocols.DEFAULT).PARTIAL  # the template drawing its answer controls (the pairwise protocol's)


@dataclass
class CategoryBlock:
    key: str
    name: str
    rows: list[CriterionRow] = field(default_factory=list)


@dataclass(frozen=True)
class Gap:
    """One incomplete criterion (or the overall question, key "overall") as the page names it."""

    key: str
    anchor: str
    short_text: str
    problems: list[str]


def annotation_page(*, assignment: Assignment) -> dict:
    """Everything the annotation page shows, in a fixed number of queries.

    Articles are named only by position; nothing here says which system wrote which.
    `gaps` lists what still blocks submission by criterion text, in rubric order (the
    same rule as `labelling.assignment_missing`); `first_open` is the anchor of the
    first of them, where the page puts the cursor.
    """
    pair = assignment.pair
    campaign = pair.campaign
    protocol = protocols.get(campaign.protocol)
    rules = Rules.of(campaign)
    shown = shown_articles(pair, assignment.a_first)
    labels = {label.criterion_id: label for label in Label.every.filter(assignment=assignment)}
    marked = list(assignment.spans.all())
    # A passage of an agent's step is listed with the step's number (one query, only when there is one).
    step_numbers = {}
    if any(s.step_id for s in marked):
        step_numbers = {
            pk: order + 1 for pk, order in ArticleStep.objects.filter(pk__in={s.step_id for s in marked}).values_list("pk", "order")
        }
    evidence: dict[int, list[dict]] = {}
    spans = []
    for s in marked:
        item = {
            "id": s.pk,
            "position": FIRST if s.article_id == shown[FIRST].pk else SECOND,
            "step": s.step_id or "",
            "step_n": step_numbers.get(s.step_id),
            "start": s.start,
            "end": s.end,
            "quote": s.quote,
            "polarity": s.polarity,
            "comment": s.comment,
        }
        # A criterion's evidence shows beside its rationale; free marks in the list of marked passages.
        (evidence.setdefault(s.criterion_id, []) if s.criterion_id else spans).append(item)
    blocks: dict[int, CategoryBlock] = {}
    gaps: list[Gap] = []
    done = total = 0
    for criterion in Criterion.objects.filter(criterion_set_id=campaign.criterion_set_id).select_related("category").order_by("order"):
        if not on_pair(criterion.response):
            continue  # asked on the campaign's readings (one article alone) or groups
        block = blocks.get(criterion.category_id)
        if block is None:
            block = blocks[criterion.category_id] = CategoryBlock(criterion.category.key, criterion.category.name)
        label = labels.get(criterion.pk)
        row = CriterionRow(criterion, partial=protocol.PARTIAL)
        if label is not None:
            # An unanswered criterion has no winner, and so no position.
            row.position = position_of(label.winner, assignment.a_first) if label.winner else CANNOT_JUDGE if label.cannot_judge else ""
            row.rationale = label.rationale
            row.saved_at = label.saved_at
            row.also = [position_of(side, assignment.a_first) for side in label.acceptable]
        winner = label.winner if label else ""
        cannot = bool(label and label.cannot_judge)
        row.evidence = evidence.get(criterion.pk, [])
        row.problems = criterion_problems(rules, winner=winner, rationale=row.rationale, evidence=len(row.evidence), cannot_judge=cannot)
        row.state = answer_state(row.problems, winner=CANNOT_JUDGE if cannot else winner)
        if row.problems:
            gaps.append(Gap(criterion.key, f"c-{criterion.key}", shorten(criterion.text), row.problems))
        block.rows.append(row)
        total += 1
        done += not row.problems
    if campaign.ask_overall and not assignment.overall:
        gaps.append(Gap("overall", "overall", "Overall, which article is better?", [CHOOSE_OVERALL]))
    return {
        "assignment": assignment,
        "campaign": campaign,
        "topic": pair.topic,
        # Only what is shown goes to the template: no article object, so no system can leak.
        "columns": article_columns(
            shown,
            neutral_emphasis=campaign.neutral_emphasis,
            neutral_headings=campaign.neutral_headings,
            steps=campaign.show_steps,
            votes=step_votes_of(assignment) if campaign.show_steps else None,
        ),
        "categories": list(blocks.values()),
        "done": done,
        "total": total,
        "gaps": gaps,
        "first_open": gaps[0].anchor if gaps else "",
        "spans": spans,
        "flag": _flag_of(assignment),
        "flag_reasons": PairFlag.Reason.choices,
        "overall_choices": protocol.OVERALL_CHOICES,
        "overall": protocol.shown_overall(assignment.overall, order=assignment.order),
    }


def _flag_of(assignment: Assignment) -> PairFlag | None:
    try:
        return assignment.flag  # select_related by assignment_for_user: no query
    except PairFlag.DoesNotExist:
        return None


def label_state(*, campaign: Campaign, label: Label) -> str:
    """The border of a criterion holding `label` (annotate.answers.answer_state).

    Its evidence is counted (one query) only where the campaign asks for it on this answer."""
    rules = Rules.of(campaign)
    evidence = 0
    if rules.needs_evidence(label.winner) and label.pk:
        evidence = Span.objects.filter(assignment_id=label.assignment_id, criterion_id=label.criterion_id).count()
    problems = criterion_problems(rules, winner=label.winner, rationale=label.rationale, evidence=evidence, cannot_judge=label.cannot_judge)
    return answer_state(problems, winner=CANNOT_JUDGE if label.cannot_judge else label.winner)


def assignment_progress(*, assignment: Assignment) -> tuple[int, int]:
    """(complete criteria, pairwise criteria in the rubric), in one query: it runs after every htmx save.

    Complete as `annotate.answers` says, counted here in Python: SQL's TRIM strips
    spaces only, where the rule strips every kind of white space.
    """
    mine = Label.every.filter(assignment_id=assignment.pk, criterion_id=OuterRef("pk"))
    marks = (
        Span.objects.filter(assignment_id=assignment.pk, criterion_id=OuterRef("pk"))
        .order_by()
        .values("criterion_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    rules = Rules.of(assignment.pair.campaign)
    # Evidence is counted only where the campaign asks for it: the save's hot path stays as it was.
    counted = Coalesce(Subquery(marks, output_field=IntegerField()), 0) if rules.evidence != EVIDENCE_NONE else Value(0)
    answers = Criterion.objects.filter(criterion_set_id=assignment.pair.campaign.criterion_set_id).annotate(
        winner=Subquery(mine.values("winner")[:1]),
        rationale=Subquery(mine.values("rationale")[:1]),
        # Read only where the campaign allows it, as evidence is counted only where it is asked for.
        cannot_judge=Subquery(mine.values("cannot_judge")[:1]) if rules.allow_cannot_judge else Value(False),
        evidence=counted,
    )
    rows = [
        (winner, rationale, bool(cannot), evidence)
        for winner, rationale, cannot, evidence, response in answers.values_list(
            "winner", "rationale", "cannot_judge", "evidence", "response"
        )
        if on_pair(response)
    ]
    done = sum(
        not criterion_problems(rules, winner=winner or "", rationale=rationale or "", evidence=evidence, cannot_judge=cannot)
        for winner, rationale, cannot, evidence in rows
    )
    return done, len(rows)


def campaign_members(*, campaign: Campaign) -> list[User]:
    """Everybody listed on, removed from, or holding work in the campaign, with their counts, in one query.

    Each user carries `is_listed`, `is_removed` and the number of their
    assignments `submitted`, `active` and `revoked`.
    """

    def mine(status: str) -> Coalesce:
        counted = (
            Assignment.objects.filter(pair__campaign=campaign, annotator=OuterRef("pk"), status=status)
            .order_by()
            .values("annotator")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return Coalesce(Subquery(counted, output_field=IntegerField()), 0)

    listed = Exists(Campaign.annotators.through.objects.filter(campaign=campaign, user=OuterRef("pk")))
    removed = Exists(Campaign.removed_annotators.through.objects.filter(campaign=campaign, user=OuterRef("pk")))
    worked = Assignment.objects.filter(pair__campaign=campaign).values("annotator_id")
    return list(
        User.objects.filter(listed | removed | Q(pk__in=worked))
        .annotate(
            is_listed=listed,
            is_removed=removed,
            submitted=mine(Assignment.Status.SUBMITTED),
            active=mine(Assignment.Status.ACTIVE),
            revoked=mine(Assignment.Status.REVOKED),
        )
        .order_by("username")
    )


def shown_articles(pair: Pair, a_first: bool) -> dict[str, Article]:
    """The pair's articles by the position they are shown at."""
    by_side = {SIDE_A: pair.article_a, SIDE_B: pair.article_b}
    return {position: by_side[side_of(position, a_first)] for position in POSITIONS}


def article_columns(
    shown: dict[str, Article], *, neutral_emphasis: bool, neutral_headings: bool = False, steps: bool = False, votes: dict | None = None
) -> list[dict]:
    """The columns of a page showing two articles by position (the annotation and adjudication pages):
    only what is shown, no article object, so no system can leak. ``steps``: each column also lists
    its agent's steps (kind, query, page title and text; never the URL), presented as its article is,
    each with the annotator's vote and comment from ``votes`` (step id -> (vote, comment))."""
    by_article = article_steps_shown([a.pk for a in shown.values()], votes=votes) if steps else {}
    return [
        {
            **_column(position, shown[position], neutral_emphasis=neutral_emphasis, neutral_headings=neutral_headings),
            "steps": [
                {**step, "html": _presented(step["html"], neutral_emphasis=neutral_emphasis, neutral_headings=neutral_headings)}
                for step in by_article.get(shown[position].pk, [])
            ],
        }
        for position in POSITIONS
    ]


def article_steps_shown(article_ids: list[int], *, votes: dict | None = None) -> dict[int, list[dict]]:
    """The steps of these articles as a page shows them, in order, by article id (one query), with
    the vote and comment of ``votes`` (step id -> (vote, comment)) on each."""
    out: dict[int, list[dict]] = {}
    votes = votes or {}
    rows = ArticleStep.objects.filter(article_id__in=article_ids).order_by("article_id", "order")
    for step in rows.values("pk", "article_id", "order", "kind", "query", "title", "html"):
        vote, comment = votes.get(step["pk"], ("", ""))
        out.setdefault(step["article_id"], []).append(
            {
                "pk": step["pk"], "n": step["order"] + 1, "kind": step["kind"], "query": step["query"], "title": step["title"],
                "html": step["html"], "vote": vote, "comment": comment,
            }
        )  # fmt: skip
    return out


def step_votes_of(assignment: Assignment) -> dict[int, tuple[str, str]]:
    """The assignment's votes on steps: step id -> ("up" or "down", comment)."""
    return {v.step_id: ("up" if v.vote > 0 else "down", v.comment) for v in StepVote.objects.filter(assignment=assignment)}


def step_shown(assignment: Assignment, step_id: int) -> tuple[str, dict]:
    """One step as its page shows it (`article_steps_shown`'s form, presented as the campaign presents
    articles), with the position of its article on this assignment's page."""
    pair = assignment.pair
    row = (
        ArticleStep.objects.filter(pk=step_id, article_id__in=(pair.article_a_id, pair.article_b_id))
        .values("pk", "article_id", "order", "kind", "query", "title", "html")
        .order_by()
        .first()
    )
    if row is None:
        raise Http404("No such step on this pair.")
    vote = StepVote.objects.filter(assignment=assignment, step_id=step_id).values_list("vote", "comment").order_by().first()
    return step_presented(assignment, row, vote)


def step_presented(assignment: Assignment, row: dict, vote: tuple[int, str] | None) -> tuple[str, dict]:
    """`step_shown` of a step already read (`row`: its pk, article_id, order, kind, query, title and html)
    and its vote (vote, comment) or None: what a save answers with, without reading them again."""
    pair, campaign = assignment.pair, assignment.pair.campaign
    side = SIDE_A if row["article_id"] == pair.article_a_id else SIDE_B
    step = {
        "pk": row["pk"], "n": row["order"] + 1, "kind": row["kind"], "query": row["query"], "title": row["title"],
        "html": _presented(row["html"], neutral_emphasis=campaign.neutral_emphasis, neutral_headings=campaign.neutral_headings),
        "vote": "" if vote is None else ("up" if vote[0] > 0 else "down"), "comment": "" if vote is None else vote[1],
    }  # fmt: skip
    return position_of(side, assignment.a_first), step


def _presented(html: str, *, neutral_emphasis: bool, neutral_headings: bool) -> str:
    html = emphasis_plain(html) if neutral_emphasis else html
    return headings_neutral(html) if neutral_headings else html


def _column(position: str, article: Article, *, neutral_emphasis: bool = False, neutral_headings: bool = False) -> dict:
    # Both articles use ids sec-1, sec-2, ...; a per-column prefix keeps them unique on one page.
    prefix = f"a{position}-"
    # Neutral emphasis and headings are applied here, as the page is drawn: the stored text stays
    # exact, and the text's length (so every span offset) is the same either way.
    html = emphasis_plain(article.html) if neutral_emphasis else article.html
    toc = article.toc
    if neutral_headings:
        html, toc = headings_neutral(html), toc_neutral(toc)
    return {
        "position": position,
        "html": html.replace(' id="sec-', f' id="{prefix}sec-'),
        "toc": [(level, text, prefix + anchor) for level, text, anchor in toc],
    }


def annotator_queue(*, user: User) -> list[dict]:
    """Open campaigns the user belongs to, with their own progress (never a labels-only one: it has no texts).

    They belong to a campaign on whose list of annotators they are, or in which they already have work. A
    campaign without a list is open to every annotator's claims (`can_annotate`) but listed on nobody's
    home until they have worked in it: staff add its members to offer it (docs/annotators.md)."""
    rows = []
    campaigns = (
        Campaign.objects.filter(is_open=True, labels_only=False)
        .filter(Q(annotators=user) | Q(items__assignments__annotator=user))  # work on a pair or a reading
        .distinct()
        .order_by("display_name", "name")
    )
    for campaign in campaigns:
        if not can_annotate(campaign, user):
            continue
        mine = Assignment.objects.filter(pair__campaign=campaign, annotator=user)
        # Work on the items that are not pairs: readings (one article alone) and groups (articles ranked).
        readings = Assignment.every.filter(pair__campaign=campaign, annotator=user).exclude(pair__kind=Item.Kind.PAIR)
        grouped = Item.objects.filter(campaign=campaign, kind=Item.Kind.GROUP).exists()
        rows.append(
            {
                "campaign": campaign,
                "submitted": mine.filter(status=Assignment.Status.SUBMITTED).count(),
                # The item in progress, a pair or else a reading or a group.
                "active": mine.filter(status=Assignment.Status.ACTIVE).order_by("claimed_at").first()
                or readings.filter(status=Assignment.Status.ACTIVE).order_by("claimed_at").first(),
                "submitted_readings": readings.filter(status=Assignment.Status.SUBMITTED).count(),
                # What the items that are not pairs are called on the card, one and many.
                "other_nouns": ("group of articles", "groups of articles") if grouped else ("single article", "single articles"),
                "submitted_list": list(
                    mine.filter(status=Assignment.Status.SUBMITTED).select_related("pair__topic").order_by("-submitted_at")[:50]
                ),
                "pair_time": pair_time_estimate(campaign=campaign),
            }
        )
    return rows


def _pairs_progress(campaign: Campaign) -> QuerySet[Pair]:
    # Known-answer pairs are not the campaign's work to fill: the gold page (calibration) has them.
    return (
        Pair.objects.filter(campaign=campaign, gold__isnull=True)
        .select_related("topic", "article_a__system", "article_b__system")
        .only("id", "order", "topic__title", "article_a__system__key", "article_b__system__key")
        .annotate(
            # Swapped repeats are the same annotator again: never a slot of the overlap.
            submitted=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED, assignments__repeat_of__isnull=True)),
            active=Count("assignments", filter=Q(assignments__status=Assignment.Status.ACTIVE, assignments__repeat_of__isnull=True)),
        )
        .order_by("order", "id")
    )


def _annotators_progress(campaign: Campaign) -> QuerySet:
    return (
        Assignment.objects.filter(pair__campaign=campaign)
        .values("annotator__username")
        .annotate(
            submitted=Count("id", filter=Q(status=Assignment.Status.SUBMITTED), distinct=True),
            active=Count("id", filter=Q(status=Assignment.Status.ACTIVE), distinct=True),
            expired=Count("id", filter=Q(status=Assignment.Status.EXPIRED), distinct=True),
            labels=Count("labels", filter=~Q(labels__winner="")),
        )
        .order_by("annotator__username")
    )


def _criteria_progress(campaign: Campaign) -> list[tuple[Criterion, int]]:
    criteria = list(Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order"))
    per_criterion = dict(
        Label.objects.filter(assignment__pair__campaign=campaign, assignment__repeat_of__isnull=True)
        .exclude(winner="")
        .values_list("criterion_id")
        .annotate(n=Count("id"))
    )
    return [(c, per_criterion.get(c.pk, 0)) for c in criteria]


def _pairs_needed(pairs, *, campaign: Campaign, calibration: dict | None) -> None:
    """Marks what each pair needs: every member for a calibration pair, else the overlap."""
    for pair in pairs:
        pair.calibration = calibration is not None and pair.pk in calibration["pair_ids"]
        pair.needed = calibration["members"] if pair.calibration else campaign.overlap


def _needed(*, campaign: Campaign, n_pairs: int, calibration: dict | None) -> int:
    """Assignments the whole campaign needs: the overlap per pair, every member per calibration pair."""
    if calibration is None:
        return n_pairs * campaign.overlap
    return (n_pairs - calibration["size"]) * campaign.overlap + calibration["size"] * calibration["members"]


def campaign_progress(*, campaign: Campaign) -> dict:
    """Per annotator, per pair and per criterion counts for researchers (every row: the API's)."""
    pairs = list(_pairs_progress(campaign))
    calibration = campaign_calibration_progress(campaign=campaign)
    _pairs_needed(pairs, campaign=campaign, calibration=calibration)
    return {
        "pairs": pairs,
        "annotators": list(_annotators_progress(campaign)),
        "criteria": _criteria_progress(campaign),
        "needed": _needed(campaign=campaign, n_pairs=len(pairs), calibration=calibration),
        "submitted": sum(p.submitted for p in pairs),
        "calibration": calibration,
    }


def campaign_calibration_progress(*, campaign: Campaign) -> dict | None:
    """How far the members are through the calibration set (None without one).

    Members are counted now: a
    removed annotator no longer counts, somebody added later does (and starts
    with the set). A pair is complete when every current member submitted it.
    """
    if not campaign.calibration_pairs:
        return None
    pair_ids = calibration_pair_ids(campaign=campaign)
    members = set(campaign_annotators_now(campaign=campaign).values_list("pk", flat=True))
    done: dict[int, set[int]] = {}
    for pair_id, annotator_id in Assignment.objects.filter(
        pair_id__in=pair_ids, status=Assignment.Status.SUBMITTED, annotator_id__in=members
    ).values_list("pair_id", "annotator_id"):
        done.setdefault(annotator_id, set()).add(pair_id)
    return {
        "pair_ids": set(pair_ids),
        "size": len(pair_ids),
        "members": len(members),
        "members_done": sum(len(submitted) == len(pair_ids) for submitted in done.values()),
        "pairs_complete": sum(all(pair_id in done.get(member, ()) for member in members) for pair_id in pair_ids) if members else 0,
    }


PROGRESS_PAGE_SIZE = 100


def campaign_progress_page(
    *, campaign: Campaign, pairs_page: object = 1, annotators_page: object = 1, size: int = PROGRESS_PAGE_SIZE
) -> dict:
    """The campaign page's figures: totals over every pair, and one page of pairs and of annotators
    (a campaign of tens of thousands of imported pairs would otherwise be a page of megabytes)."""
    per_pair = dict(
        Assignment.objects.filter(ORIGINAL, pair__campaign=campaign, pair__gold__isnull=True, status=Assignment.Status.SUBMITTED)
        .values_list("pair_id")
        .annotate(n=Count("id"))
    )
    n_pairs = Pair.objects.filter(campaign=campaign, gold__isnull=True).count()
    calibration = campaign_calibration_progress(campaign=campaign)
    calibrating = calibration["pair_ids"] if calibration else set()
    complete = sum(1 for pair_id, n in per_pair.items() if n >= (calibration["members"] if pair_id in calibrating else campaign.overlap))
    pairs = Paginator(_pairs_progress(campaign), size)
    pairs.count = n_pairs  # known: no second count over the annotated query
    page = pairs.get_page(pairs_page)
    page.object_list = list(page.object_list)
    _pairs_needed(page.object_list, campaign=campaign, calibration=calibration)
    return {
        "pairs": page,
        "calibration": calibration,
        # Grouped over every annotator whatever the page, so read once and paged here.
        "annotators": Paginator(list(_annotators_progress(campaign)), size).get_page(annotators_page),
        "criteria": _criteria_progress(campaign),
        "n_pairs": n_pairs,
        "needed": _needed(campaign=campaign, n_pairs=n_pairs, calibration=calibration),
        "submitted": sum(per_pair.values()),
        "pairs_complete": complete,
        "pairs_started": len(per_pair) - complete,
        "pairs_untouched": n_pairs - len(per_pair),
    }


def campaign_list() -> QuerySet[Campaign]:
    """Every campaign with its pairs (`pair_count`) and submitted assignments (`submitted`): the one
    list of campaigns, for the campaigns page, the API and the judges page."""
    return Campaign.objects.select_related("criterion_set").annotate(
        pair_count=Count("items", filter=Q(items__kind=Item.Kind.PAIR), distinct=True),
        submitted=Count(
            "items__assignments",
            filter=Q(
                items__kind=Item.Kind.PAIR,
                items__assignments__status=Assignment.Status.SUBMITTED,
                items__assignments__repeat_of__isnull=True,
            ),
            distinct=True,
        ),
    )


# --- cleaning audit --------------------------------------------------------------


@dataclass
class RemovalRow:
    """One article and what the cleaner removed from it (recomputed, never stored)."""

    article: Article
    removal: Removal


def cleaning_removals(*, benchmark: str | None = None) -> Iterator[RemovalRow]:
    """Every article (of `benchmark`), by system then topic, with its removal audit."""
    articles = (
        Article.objects.exclude(source=PLACEHOLDER_SOURCE)
        .select_related("topic", "system")
        .defer("html", "toc")
        .order_by("system__key", "topic__benchmark", "topic__title")
    )
    if benchmark:
        articles = articles.filter(topic__benchmark=benchmark)
    for article in articles.iterator(chunk_size=100):
        yield RemovalRow(
            article=article,
            removal=article_removal(article.raw_markdown, article.display_markdown, is_reference=article.system.is_reference),
        )


def topic_article_removal(*, topic: Topic, system_key: str) -> RemovalRow | None:
    article = topic.articles.select_related("system").defer("html", "toc").filter(system__key=system_key).first()
    if article is None:
        return None
    return RemovalRow(
        article=article, removal=article_removal(article.raw_markdown, article.display_markdown, is_reference=article.system.is_reference)
    )
