"""The catalogue of a labels-only campaign: the topics, systems and text-less articles its imported labels name.

A labels-only campaign (`Campaign.labels_only`) holds verdicts imported without
the texts they judged, such as a crowd's votes and LLM judges' verdicts on
chatbot battles. Its pairs still need two articles each, so the import plans
what is missing while it checks the rows, and saves it in bulk once every row
has been checked:

- topics go to the campaign's own benchmark, `labels_only_benchmark(name)` when
  it is first imported into (renaming the campaign later keeps that one), never
  to a real benchmark: a placeholder never joins a topic that has texts;
- systems are shared with the rest of the catalogue (a key is a key);
- articles have no text and `source` PLACEHOLDER_SOURCE, which is how the pages,
  exports and campaign creation that need texts leave them out.

Planned objects carry provisional, negative ids, so the import can tell them
apart and pair them before they exist; `save` gives them their real ids.

A labels-only campaign created without a rubric file gets an empty rubric of its
own (`criterion_set_for_labels`); its imports add the criteria their rows name
(`NewCriteria`), planned and saved the same way. No other rubric ever grows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Max

from annotate.models import LABELS_ONLY_PREFIX, PLACEHOLDER_SOURCE, Article, Category, Criterion, CriterionSet, System, Topic
from annotate.services.catalogue import topic_slug

EMPTY_HASH = hashlib.sha256(b"").hexdigest()
BENCHMARK_MAX_LENGTH = Topic._meta.get_field("benchmark").max_length
TITLE_MAX_LENGTH = Topic._meta.get_field("title").max_length
SLUG_MAX_LENGTH = Topic._meta.get_field("slug").max_length


def labels_only_benchmark(campaign_name: str) -> str:
    """The benchmark of a labels-only campaign's topics: `labels-only:<campaign name>`.

    A name too long for the field keeps its start and ends in `~` and a digest of the whole name,
    so two long names sharing their first 80 characters still get two benchmarks.
    """
    benchmark = LABELS_ONLY_PREFIX + campaign_name
    if len(benchmark) <= BENCHMARK_MAX_LENGTH:
        return benchmark
    digest = hashlib.sha256(campaign_name.encode("utf-8")).hexdigest()[:12]
    return f"{benchmark[: BENCHMARK_MAX_LENGTH - len(digest) - 1]}~{digest}"


def topic_title_problem(title: str) -> str | None:
    """Why `title` cannot become a placeholder topic, or None."""
    if not title:
        return "topic is empty"
    if len(title) > TITLE_MAX_LENGTH:
        return f"topic is longer than {TITLE_MAX_LENGTH} characters ({len(title)})"
    return None


@dataclass
class PlaceholdersSaved:
    topics: int = 0
    systems: int = 0
    articles: int = 0


class Placeholders:
    """What a labels-only import will add to the catalogue, planned row by row and saved at once."""

    def __init__(self, *, benchmark: str, taken_slugs: Iterable[str]) -> None:
        self.benchmark = benchmark
        self._taken = set(taken_slugs)
        self._next_id = 0

    def _provisional(self, obj):
        self._next_id -= 1
        obj.pk = self._next_id
        return obj

    def _slug(self, title: str) -> str:
        slug = topic_slug(title)
        if slug in self._taken:
            # Titles that slugify alike ("C" and "C++", "Ärger" and "ärger") are two topics.
            base = f"{slug[: SLUG_MAX_LENGTH - 10]}-{hashlib.sha256(title.encode('utf-8')).hexdigest()[:8]}"
            slug, n = base, 1
            while slug in self._taken:
                n += 1
                slug = f"{base[: SLUG_MAX_LENGTH - len(str(n)) - 1]}-{n}"
        self._taken.add(slug)
        return slug

    def topic(self, title: str) -> Topic:
        """A new topic of the benchmark (check the title with `topic_title_problem` first)."""
        return self._provisional(Topic(benchmark=self.benchmark, title=title, slug=self._slug(title)))

    def system(self, key: str) -> System:
        """A new system (check the key with `common.names.name_problem` first)."""
        return self._provisional(System(key=key, name=key))

    def article(self, topic: Topic, system: System) -> Article:
        return self._provisional(
            Article(
                topic=topic,
                system=system,
                raw_markdown="",
                display_markdown="",
                html="",
                toc=[],
                word_count=0,
                raw_word_count=0,
                content_hash=EMPTY_HASH,
                source=PLACEHOLDER_SOURCE,
            )
        )

    @staticmethod
    def save(articles: Iterable[Article]) -> PlaceholdersSaved:
        """Saves the planned `articles` with their planned topics and systems, in bulk; they get their real ids.

        Only what is named is saved: a plan made for a row later found bad (and
        skipped) leaves nothing behind. The caller holds the transaction.
        """
        articles = list({a.pk: a for a in articles if a.pk < 0}.values())
        topics = list({a.topic.pk: a.topic for a in articles if a.topic.pk < 0}.values())
        systems = list({a.system.pk: a.system for a in articles if a.system.pk < 0}.values())
        if systems:
            for system in systems:
                system.pk = None
            # Another import may add the same key meanwhile: keys are shared, so take theirs.
            System.objects.bulk_create(systems, ignore_conflicts=True)
            ids = dict(System.objects.filter(key__in=[s.key for s in systems]).values_list("key", "pk"))
            for system in systems:
                system.pk = ids[system.key]
        for topic in topics:
            topic.pk = None
        Topic.objects.bulk_create(topics, batch_size=2000)
        for article in articles:
            article.pk = None
            # Assigned again: their ids changed since the article was built (and the objects stay cached).
            article.topic, article.system = article.topic, article.system
        Article.objects.bulk_create(articles, batch_size=2000)
        return PlaceholdersSaved(topics=len(topics), systems=len(systems), articles=len(articles))


# --- criteria named by the labels ------------------------------------------------------------

# The source of a rubric made for a labels-only campaign without a criteria file: its imports add
# the criteria their rows name. No other rubric grows: a real one is versioned, never edited.
CRITERIA_FROM_LABELS = "criteria named by imported labels"
CATEGORY_KEY = "criteria"


def criterion_set_for_labels(*, campaign_name: str) -> CriterionSet:
    """A new, empty rubric for a labels-only campaign (`labels-<campaign slug>`, next version), which
    its imports fill with the criteria their rows name. The caller holds the transaction."""
    key = ("labels-" + topic_slug(campaign_name))[: CriterionSet._meta.get_field("key").max_length].rstrip("-")
    latest = CriterionSet.objects.filter(key=key).order_by("-version").first()
    return CriterionSet.objects.create(
        key=key,
        version=(latest.version + 1) if latest else 1,
        name=f"Criteria of the labels of '{campaign_name}'"[:200],
        description="Made for a labels-only campaign: each criterion was first named by a row of an imported labels file.",
        content_hash=EMPTY_HASH,
        source=CRITERIA_FROM_LABELS,
    )


def criteria_grow(criterion_set: CriterionSet) -> bool:
    """Whether imports may add criteria to this rubric (one made by `criterion_set_for_labels`)."""
    return criterion_set.source == CRITERIA_FROM_LABELS


class NewCriteria:
    """Criteria an import's rows name and its rubric lacks, planned row by row and saved at once
    (only those a good row uses), in one category `criteria`, after the rubric's own."""

    def __init__(self, criterion_set: CriterionSet) -> None:
        self.criterion_set = criterion_set
        self._next_id = 0

    def criterion(self, key: str) -> Criterion:
        """A planned criterion (check the key with `common.names.name_problem` first)."""
        self._next_id -= 1
        return Criterion(pk=self._next_id, criterion_set=self.criterion_set, key=key, text=key)

    def save(self, criteria: Iterable[Criterion]) -> int:
        """Saves the planned `criteria` (they get their real ids); returns how many. The caller holds the transaction."""
        planned = list({c.pk: c for c in criteria if c.pk is not None and c.pk < 0}.values())
        if not planned:
            return 0
        category, _ = Category.objects.get_or_create(
            criterion_set=self.criterion_set, key=CATEGORY_KEY, defaults={"name": "Criteria", "order": 0}
        )
        order = (Criterion.objects.filter(criterion_set=self.criterion_set).aggregate(top=Max("order"))["top"] or -1) + 1
        for i, criterion in enumerate(sorted(planned, key=lambda c: -c.pk)):
            criterion.pk, criterion.category, criterion.order = None, category, order + i
        Criterion.objects.bulk_create(planned)
        keys = sorted(Criterion.objects.filter(criterion_set=self.criterion_set).values_list("key", flat=True))
        CriterionSet.objects.filter(pk=self.criterion_set.pk).update(content_hash=hashlib.sha256("\n".join(keys).encode()).hexdigest())
        return len(planned)
