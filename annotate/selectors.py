"""Reads of the catalogue and of campaigns, shared by pages, the API, commands and services."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import (
    Count,
    Exists,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Coalesce

from annotate import vocabulary
from annotate.design import Design
from annotate.models import (
    Article,
    Assignment,
    Campaign,
    Criterion,
    CriterionSet,
    Label,
    Pair,
    Topic,
)
from annotate.removal import Removal, article_removal
from annotate.services.placeholders import LABELS_ONLY_PREFIX, PLACEHOLDER_SOURCE


def article_export_rows(*, benchmark: str | None = None) -> Iterator[dict]:
    """Every article with its text; the text-less placeholders of labels-only campaigns are left out."""
    articles = (
        Article.objects.exclude(source=PLACEHOLDER_SOURCE)
        .select_related("topic", "system")
        .order_by("topic__benchmark", "topic__title", "system__key")
    )
    if benchmark:
        articles = articles.filter(topic__benchmark=benchmark)
    for article in articles.iterator(chunk_size=200):
        yield {
            "benchmark": article.topic.benchmark,
            "topic": article.topic.title,
            "system": article.system.key,
            "reference": article.system.is_reference,
            "category": article.topic.category,
            "raw_markdown": article.raw_markdown,
            "display_markdown": article.display_markdown,
            "word_count": article.word_count,
            "content_hash": article.content_hash,
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


def can_annotate(campaign: Campaign, user: User) -> bool:
    """Active, not removed from the campaign, and on its list (or, with no list, not staff)."""
    if not user.is_active:
        return False
    if campaign.removed_annotators.filter(pk=user.pk).exists():
        return False
    if campaign.annotators.exists():
        return campaign.annotators.filter(pk=user.pk).exists()
    return not user.is_staff


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


# --- the annotation page -----------------------------------------------------------


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
    if assignment.pair.campaign.labels_only:
        # Imported work of a rater who happens to have an account: there is no text to show or label.
        raise PermissionDenied(
            "These labels were imported into a labels-only campaign: its articles have no texts, so there is nothing "
            "to show or annotate here."
        )
    if assignment.status == Assignment.Status.REVOKED:
        raise PermissionDenied("You were removed from this campaign; your saved labels are kept, but this work is closed to you.")
    return assignment


@dataclass
class CriterionRow:
    criterion: Criterion
    position: str = ""
    rationale: str = ""
    saved_at: object = None


@dataclass
class CategoryBlock:
    key: str
    name: str
    rows: list[CriterionRow] = field(default_factory=list)


def annotation_page(*, assignment: Assignment) -> dict:
    """Everything the annotation page shows, in a fixed number of queries.

    Articles are named only by position; nothing here says which system wrote which.
    """
    pair = assignment.pair
    campaign = pair.campaign
    by_side = {vocabulary.SIDE_A: pair.article_a, vocabulary.SIDE_B: pair.article_b}
    shown = {position: by_side[vocabulary.side_of(position, assignment.a_first)] for position in vocabulary.POSITIONS}
    labels = {label.criterion_id: label for label in Label.objects.filter(assignment=assignment)}
    blocks: dict[int, CategoryBlock] = {}
    done = total = 0
    for criterion in Criterion.objects.filter(criterion_set_id=campaign.criterion_set_id).select_related("category").order_by("order"):
        block = blocks.get(criterion.category_id)
        if block is None:
            block = blocks[criterion.category_id] = CategoryBlock(criterion.category.key, criterion.category.name)
        label = labels.get(criterion.pk)
        row = CriterionRow(criterion)
        if label is not None:
            # An unanswered criterion has no winner, and so no position.
            row.position = vocabulary.position_of(label.winner, assignment.a_first) if label.winner else ""
            row.rationale = label.rationale
            row.saved_at = label.saved_at
        block.rows.append(row)
        total += 1
        done += bool(row.position)
    spans = [
        {"id": s.pk, "position": vocabulary.FIRST if s.article_id == shown[vocabulary.FIRST].pk else vocabulary.SECOND, "start": s.start, "end": s.end, "quote": s.quote, "polarity": s.polarity, "comment": s.comment}
        for s in assignment.spans.all()
    ]
    return {
        "assignment": assignment,
        "campaign": campaign,
        "topic": pair.topic,
        # Only what is shown goes to the template: no article object, so no system can leak.
        "columns": [_column(position, shown[position]) for position in vocabulary.POSITIONS],
        "categories": list(blocks.values()),
        "done": done,
        "total": total,
        "spans": spans,
        "overall_choices": Assignment.Overall.choices,
    }


def _count(rows: QuerySet, by: str) -> Subquery:
    """A scalar subquery counting `rows`, grouped on `by` (one group, as each filter pins it)."""
    return Subquery(rows.order_by().values(by).annotate(n=Func("id", function="COUNT")).values("n")[:1])


def assignment_progress(*, assignment: Assignment) -> tuple[int, int]:
    """(criteria with a winner, criteria in the rubric), in one query: it runs after every htmx save."""
    done = Label.objects.filter(assignment_id=OuterRef("pk")).exclude(winner="")
    total = Criterion.objects.filter(criterion_set_id=OuterRef("pair__campaign__criterion_set_id"))
    counts = Assignment.objects.filter(pk=assignment.pk).annotate(
        done=_count(done, "assignment_id"), total=_count(total, "criterion_set_id")
    ).values_list("done", "total").get()
    return counts[0] or 0, counts[1] or 0


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


def _column(position: str, article: Article) -> dict:
    # Both articles use ids sec-1, sec-2, ...; a per-column prefix keeps them unique on one page.
    prefix = f"a{position}-"
    return {
        "position": position,
        "html": article.html.replace(' id="sec-', f' id="{prefix}sec-'),
        "toc": [(level, text, prefix + anchor) for level, text, anchor in article.toc],
    }


def annotator_queue(*, user: User) -> list[dict]:
    """Open campaigns the user may work on, with their own progress (never a labels-only one: it has no texts)."""
    rows = []
    campaigns = (
        Campaign.objects.filter(is_open=True, labels_only=False)
        .filter(Q(annotators=user) | Q(annotators__isnull=True))
        .distinct()
        .order_by("name")
    )
    for campaign in campaigns:
        if not can_annotate(campaign, user):
            continue
        mine = Assignment.objects.filter(pair__campaign=campaign, annotator=user)
        rows.append(
            {
                "campaign": campaign,
                "submitted": mine.filter(status=Assignment.Status.SUBMITTED).count(),
                "active": mine.filter(status=Assignment.Status.ACTIVE).order_by("claimed_at").first(),
                "submitted_list": list(mine.filter(status=Assignment.Status.SUBMITTED).select_related("pair__topic").order_by("-submitted_at")[:50]),
            }
        )
    return rows


def campaign_progress(*, campaign: Campaign) -> dict:
    """Per annotator, per pair and per criterion counts for researchers."""
    pairs = list(
        Pair.objects.filter(campaign=campaign)
        .select_related("topic", "article_a__system", "article_b__system")
        .only("id", "order", "topic__title", "article_a__system__key", "article_b__system__key")
        .annotate(
            submitted=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
            active=Count("assignments", filter=Q(assignments__status=Assignment.Status.ACTIVE)),
        )
        .order_by("order", "id")
    )
    annotators = list(
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
    criteria = list(Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order"))
    per_criterion = dict(
        Label.objects.filter(assignment__pair__campaign=campaign).exclude(winner="").values_list("criterion_id").annotate(n=Count("id"))
    )
    return {
        "pairs": pairs,
        "annotators": annotators,
        "criteria": [(c, per_criterion.get(c.pk, 0)) for c in criteria],
        "needed": len(pairs) * campaign.overlap,
        "submitted": sum(p.submitted for p in pairs),
    }


def campaign_list() -> QuerySet[Campaign]:
    return Campaign.objects.select_related("criterion_set").annotate(
        pair_count=Count("pairs", distinct=True),
        submitted=Count("pairs__assignments", filter=Q(pairs__assignments__status=Assignment.Status.SUBMITTED), distinct=True),
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
        yield RemovalRow(article=article, removal=article_removal(article.raw_markdown, article.display_markdown))


def topic_article_removal(*, topic: Topic, system_key: str) -> RemovalRow | None:
    article = topic.articles.select_related("system").defer("html", "toc").filter(system__key=system_key).first()
    if article is None:
        return None
    return RemovalRow(article=article, removal=article_removal(article.raw_markdown, article.display_markdown))
