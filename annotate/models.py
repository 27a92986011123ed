from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import GreaterThan

import protocols
from common.names import NAME_MAX_LENGTH, name_problem
from protocols import order as orders

# The catalogue of a labels-only campaign (`annotate.services.placeholders`): its topics' benchmark
# starts with this prefix, its articles have no text and this `source`. Pages, exports and campaign
# creation that need texts leave them out by these two values.
LABELS_ONLY_PREFIX = "labels-only:"
PLACEHOLDER_SOURCE = "no text: imported with labels"


def validate_name(value: str) -> None:
    """The model-field form of `common.names.name_problem`: system keys and judge names."""
    problem = name_problem(value)
    if problem:
        raise ValidationError(problem, code="invalid_name")


def validate_protocol(value: str) -> None:
    """A campaign's protocol is one of `protocols.NAMES`."""
    problem = protocols.problem(value)
    if problem:
        raise ValidationError(problem, code="invalid_protocol")


class Topic(models.Model):
    """One subject that every system writes an article about."""

    benchmark = models.CharField(max_length=100, default="default")
    title = models.CharField(max_length=300)
    slug = models.SlugField(max_length=300, allow_unicode=True)
    category = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark", "title"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "slug"], name="topic_unique_slug"),
        ]

    def __str__(self) -> str:
        return self.title


class System(models.Model):
    """Who wrote an article: `wikipedia` for the human reference, or an agent id."""

    key = models.CharField(max_length=NAME_MAX_LENGTH, unique=True, validators=[validate_name])
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    is_reference = models.BooleanField(default=False)
    is_gold = models.BooleanField(
        default=False, help_text="Holds the known-answer copies make_gold degrades from reference articles: never offered as a system."
    )

    class Meta:
        ordering = ["-is_reference", "key"]

    def __str__(self) -> str:
        return self.key


# The columns that hold an article's texts, which a read that needs only its system or topic leaves out.
ARTICLE_TEXTS = ("raw_markdown", "display_markdown", "html", "toc")


def article_texts(*paths: str) -> list[str]:
    """The `defer` names of the texts of the articles at the lookups `paths` ("pair__article_a", ...)."""
    return [f"{path}__{field}" for path in paths for field in ARTICLE_TEXTS]


class Article(models.Model):
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="articles")
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="articles")
    raw_markdown = models.TextField()
    display_markdown = models.TextField()
    html = models.TextField()
    toc = models.JSONField(default=list, help_text="[level, text, anchor] per heading, computed at import.")
    word_count = models.PositiveIntegerField()
    raw_word_count = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=64)
    source = models.CharField(max_length=500, blank=True, help_text="Where it was imported from; never shown to annotators.")
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topic", "system"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "system"], name="article_unique_topic_system"),
        ]

    def __str__(self) -> str:
        return f"{self.topic} / {self.system}"


class ArticleStep(models.Model):
    """One intermediate step of the agent that wrote an article (a plan, a search, a page read, a
    note ...), in the agent's order. Cleaned like an article (citations and URLs out; an agent's
    words about its task stay: they are what a step is) and rendered at import."""

    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="steps")
    order = models.PositiveIntegerField()
    kind = models.CharField(max_length=32)
    raw_content = models.TextField()
    content = models.TextField(help_text="The step's Markdown as shown: cleaned of citations and URLs.")
    html = models.TextField()
    query = models.CharField(max_length=1000, blank=True)
    url = models.CharField(max_length=2000, blank=True, help_text="The page a read step read; exported, never shown to annotators.")
    title = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["article", "order"]
        constraints = [models.UniqueConstraint(fields=["article", "order"], name="articlestep_unique_order")]

    def __str__(self) -> str:
        return f"{self.article} step {self.order + 1} ({self.kind})"


class CriterionSet(models.Model):
    """A rubric. Rows are never edited: a changed rubric becomes a new version."""

    key = models.SlugField(max_length=100)
    version = models.PositiveIntegerField()
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    content_hash = models.CharField(max_length=64)
    source = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["key", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["key", "version"], name="criterionset_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.key} v{self.version}"


class Category(models.Model):
    criterion_set = models.ForeignKey(CriterionSet, on_delete=models.CASCADE, related_name="categories")
    key = models.SlugField(max_length=100)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    order = models.PositiveIntegerField()

    class Meta:
        ordering = ["criterion_set", "order"]
        verbose_name_plural = "categories"
        constraints = [
            models.UniqueConstraint(fields=["criterion_set", "key"], name="category_unique_key"),
        ]

    def __str__(self) -> str:
        return self.name


class Criterion(models.Model):
    criterion_set = models.ForeignKey(CriterionSet, on_delete=models.CASCADE, related_name="criteria")
    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="criteria")
    key = models.CharField(max_length=100, help_text="Stable id such as ww_cc_1, shared with other tools.")
    subcategory_key = models.CharField(max_length=100, blank=True)
    subcategory_name = models.CharField(max_length=200, blank=True)
    watch_class = models.CharField(max_length=100, blank=True)
    text = models.TextField()
    title = models.CharField(max_length=120, blank=True, help_text="A short name to scan by; blank: the page shortens the text.")
    order = models.PositiveIntegerField()
    response = models.JSONField(
        default=dict,
        blank=True,
        help_text="What an answer to this criterion is (protocols.criterion_response): {} for the campaign's pairwise verdict.",
    )

    class Meta:
        ordering = ["criterion_set", "order"]
        verbose_name_plural = "criteria"
        constraints = [
            models.UniqueConstraint(fields=["criterion_set", "key"], name="criterion_unique_key"),
        ]

    def __str__(self) -> str:
        return self.key


# --- annotation campaigns ---------------------------------------------------


class Campaign(models.Model):
    class PairMode(models.TextChoices):
        REFERENCE = "reference", "Reference against each other system"
        ALL = "all", "Every pair of systems"

    name = models.CharField(max_length=200, unique=True)
    display_name = models.CharField(
        max_length=200, blank=True, help_text="What annotators see as the campaign's name (blank: the name); never names a system."
    )
    protocol = models.CharField(
        max_length=40,
        default=protocols.DEFAULT,
        validators=[validate_protocol],
        help_text="What an item and an answer are (protocols/): one of protocols.NAMES.",
    )
    criterion_set = models.ForeignKey(CriterionSet, on_delete=models.PROTECT, related_name="campaigns")
    reference_system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    pair_mode = models.CharField(max_length=20, choices=PairMode.choices, default=PairMode.REFERENCE)
    overlap = models.PositiveSmallIntegerField(default=1, help_text="Distinct annotators each pair needs.")
    allow_tie = models.BooleanField(default=False)

    class Evidence(models.TextChoices):
        # Evidence: passages marked while a criterion is active (Span.criterion); see annotate.answers.
        NONE = "none", "Not required"
        EVERY = "every", "On every criterion"
        WINNERS = "winners", "On every criterion whose winner is not a tie"

    allow_cannot_judge = models.BooleanField(
        default=False,
        help_text="Let annotators answer a criterion with “Cannot judge”: kept apart from ties, left out of every statistic.",
    )
    accept_sets = models.BooleanField(
        default=False,
        help_text="Let annotators also mark every other verdict they find acceptable on a pairwise criterion (issue 40).",
    )
    evidence_required = models.CharField(
        max_length=10,
        choices=Evidence.choices,
        default=Evidence.NONE,
        help_text="Which answers need at least one passage marked as their evidence.",
    )
    rationale_required = models.BooleanField(default=True)
    rationale_min_length = models.PositiveSmallIntegerField(default=10)
    ask_overall = models.BooleanField(default=False, help_text="Also ask which article is better overall.")
    instructions = models.TextField(blank=True, help_text="Markdown shown to annotators.")
    instructions_html = models.TextField(blank=True)
    claim_timeout_minutes = models.PositiveIntegerField(default=120)
    is_open = models.BooleanField(default=True)
    annotators = models.ManyToManyField(
        "auth.User", blank=True, related_name="campaigns", help_text="Empty: every non-staff user may annotate."
    )
    removed_annotators = models.ManyToManyField(
        "auth.User",
        blank=True,
        related_name="removed_from_campaigns",
        help_text="Taken off this campaign: no access to its work; their labels stay, flagged.",
    )
    forbid_repeats = models.BooleanField(default=False, help_text="Never give an annotator two pairs of one topic.")
    topic_back_to_back = models.BooleanField(
        default=False,
        help_text="Give a topic's one-article view and its pairwise view one after the other (default: never back to back).",
    )
    labels_only = models.BooleanField(
        default=False, help_text="Imported verdicts without article texts (labels only): never offered to annotators."
    )
    neutral_emphasis = models.BooleanField(
        default=False, help_text="Show bold and italic as plain text on both sides, so emphasis cannot tell the systems apart."
    )
    neutral_headings = models.BooleanField(default=False, help_text="Show headings in sentence case, unnumbered, on both sides.")
    show_steps = models.BooleanField(
        default=False, help_text="Show each side's agent steps beside its article (every article of every pair has steps)."
    )

    class StepVotes(models.TextChoices):
        OPTIONAL = "optional", "Steps may be voted on"
        EVERY = "every", "Every step needs a vote before the pair is submitted"

    step_votes = models.CharField(max_length=10, choices=StepVotes.choices, default=StepVotes.OPTIONAL)
    guess_question = models.BooleanField(default=False, help_text="Ask after each pair which article is the reference.")
    reference_name = models.CharField(max_length=60, default="Wikipedia", help_text="The reference's name in the guess question.")
    calibration_pairs = models.PositiveSmallIntegerField(
        default=0, help_text="The first N pairs, labelled by every member before any other pair (0: none)."
    )
    alt_epsilon = models.FloatField(
        null=True,
        blank=True,
        help_text="The alt-test's epsilon, in (0, 1): how much the annotators may beat the judge by (empty: not chosen yet).",
    )
    alt_epsilon_reason = models.TextField(blank=True, help_text="Why this epsilon (the annotators' expertise); required with it.")
    gold_rate = models.FloatField(
        default=0.0, help_text="Share of claims that silently give a known-answer (gold) pair, when one is left (0: none)."
    )
    gold_pause_below = models.FloatField(
        null=True, blank=True, help_text="Pause an annotator's new claims when their gold accuracy is clearly below this (empty: never)."
    )
    gold_accept_separable = models.BooleanField(
        default=False,
        help_text="Let a kind of gold pair that its text sets apart from the other pairs drive the pause rule (default: it does not).",
    )
    gold_pause_after = models.PositiveSmallIntegerField(
        default=5, help_text="Gold pairs an annotator must have submitted before the pause rule applies."
    )
    repeat_rate = models.FloatField(
        default=0.0,
        help_text="Share of an annotator's submitted pairs they meet again later in the other order, a swapped repeat (0: none).",
    )
    repeat_gap = models.PositiveSmallIntegerField(
        default=5,
        help_text="A swapped repeat comes only after the annotator has submitted at least this many other pairs since the original.",
    )
    adjudicators = models.ManyToManyField(
        "auth.User",
        blank=True,
        related_name="adjudicated_campaigns",
        help_text="Who records final answers where annotators disagree; never annotators of the campaign.",
    )
    adjudication_by_topic = models.BooleanField(
        default=False,
        help_text="Split adjudication by topic: a topic's pairs go to different adjudicators, so each meets a topic once.",
    )
    sampling = models.CharField(
        max_length=10,
        choices=[("uniform", "Uniform"), ("active", "Active")],
        default="uniform",
        help_text="Which pairs humans label: every pair (uniform), or those drawn by `sample_pairs` (active).",
    )
    sampling_burn_in = models.PositiveIntegerField(default=0, help_text="Active sampling: the first N pairs get the uniform rate.")
    sampling_uniform_share = models.FloatField(default=0.2, help_text="Active sampling: the share of the budget spread evenly (0 to 1).")
    human_cost_per_pair = models.DecimalField(
        max_digits=10, decimal_places=4, null=True, blank=True, help_text="What a human label of one pair costs (empty: not known)."
    )
    sampling_budget = models.PositiveIntegerField(
        null=True, blank=True, help_text="Active sampling: the expected number of pairs to label."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(sampling_uniform_share__gte=0, sampling_uniform_share__lte=1), name="campaign_sampling_share"
            ),
            models.CheckConstraint(condition=models.Q(overlap__gte=1), name="campaign_overlap_positive"),
            models.CheckConstraint(
                condition=models.Q(alt_epsilon__isnull=True) | models.Q(alt_epsilon__gt=0, alt_epsilon__lt=1),
                name="campaign_alt_epsilon_open_unit",
            ),
            models.CheckConstraint(condition=models.Q(gold_rate__gte=0, gold_rate__lte=1), name="campaign_gold_rate_share"),
            models.CheckConstraint(condition=models.Q(repeat_rate__gte=0, repeat_rate__lte=1), name="campaign_repeat_rate_share"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def pairs(self) -> models.QuerySet:
        """The campaign's items of kind pair (`Pair`); `items` holds every kind."""
        return Pair.objects.filter(campaign=self)

    @property
    def readings(self) -> models.QuerySet:
        """The campaign's items of kind reading (`Reading`)."""
        return Reading.objects.filter(campaign=self)

    @property
    def shown_name(self) -> str:
        """The campaign's name as annotators see it."""
        return self.display_name or self.name


class Item(models.Model):
    """The articles of one topic that a viewer is shown together: the unit work is handed out and
    judged by (issue 38). Its `kind` says how many and what is asked of them: a pair (two articles,
    compared), a reading (one article alone, for the one-article criteria) or a group (three to six
    articles seen together, for the criteria of a protocol of that many: a ranking). Its articles are its
    `ItemArticle` rows, slot 0 (a) and on, written with it by `annotate.services.items`;
    `article_a` (slot a) and `article_b` (slot b, a pair's only) stay while the readers move to the
    slots: a group's articles are read from its slots only. `Pair` and `Reading` are proxies of two kinds, each with a manager of its kind only (a group has none: it is read as an `Item`)."""

    class Kind(models.TextChoices):
        PAIR = "pair", "Two articles, compared"
        READING = "reading", "One article, read alone"
        GROUP = "group", "Three to six articles, seen together"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.PAIR, db_default=Kind.PAIR)
    article_a = models.ForeignKey(Article, on_delete=models.PROTECT, related_name="+")
    article_b = models.ForeignKey(Article, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    order = models.PositiveIntegerField(default=0)
    # Voided by staff (a broken article, the wrong topic...): handed out no more, every assignment of it
    # VOIDED (audited), its labels kept but out of every statistic, which reads submitted work only.
    voided_at = models.DateTimeField(null=True, blank=True)
    voided_by = models.ForeignKey("auth.User", on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    void_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["campaign", "order", "id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "article_a", "article_b"], name="pair_unique_articles"),
            models.CheckConstraint(condition=~models.Q(article_a=models.F("article_b")), name="pair_two_articles"),
            models.UniqueConstraint(
                fields=["campaign", "article_a"], condition=models.Q(kind="reading"), name="item_reading_unique_article"
            ),
            models.CheckConstraint(
                condition=models.Q(kind="pair", article_b__isnull=False) | models.Q(kind__in=("reading", "group"), article_b__isnull=True),
                name="item_kind_articles",
            ),
        ]

    def __str__(self) -> str:
        if self.kind == self.Kind.READING:
            return f"reading {self.pk} of article {self.article_a_id}"
        if self.kind == self.Kind.GROUP:
            return f"group {self.pk} of topic {self.topic_id}"
        return f"{self.topic}: {self.article_a.system_id} vs {self.article_b.system_id}"


class KindManager(models.Manager):
    """The rows of one kind of item, for the default managers of the kinds' proxies: `lookup` is the
    path from a row to its item's kind. `Pair.objects` (and so `campaign.pairs`) never hands out a
    reading, nor the reverse; `Assignment.objects` and `Label.objects` (and so `item.assignments` and
    `assignment.labels`) give the work and answers on pairs, the `ReadingAssignment` and `Answer`
    proxies' those on readings, and their `every` manager both. A foreign key to a row reaches it
    whatever its kind (the base manager). A subclass per kind, not an argument: a reverse relation
    makes its model's manager anew, with no arguments."""

    lookup = "kind"
    kind = Item.Kind.PAIR

    def get_queryset(self):
        return super().get_queryset().filter(**{self.lookup: self.kind})


class PairItems(KindManager):
    kind = Item.Kind.PAIR


class ReadingItems(KindManager):
    kind = Item.Kind.READING


class PairAssignments(KindManager):
    lookup = "pair__kind"


class ReadingAssignments(PairAssignments):
    kind = Item.Kind.READING


class PairLabels(KindManager):
    lookup = "assignment__pair__kind"


class ReadingAnswers(PairLabels):
    kind = Item.Kind.READING


class Pair(Item):
    """Two articles on one topic. `article_a` is the reference (or the lower system key)."""

    objects = PairItems()

    class Meta:
        proxy = True
        ordering = ["campaign", "order", "id"]


class Reading(Item):
    """One article of a campaign as the item of its one-article criteria (checklist, rating, count;
    `protocols` with ARTICLES == 1): the article (`article_a`, slot a) is shown alone, and each such
    criterion is answered on it. A campaign whose rubric has one-article criteria has a reading per
    article of its pairs."""

    objects = ReadingItems()

    class Meta:
        proxy = True
        ordering = ["order", "id"]


class ItemArticle(models.Model):
    """One article of an item, in its slot (0, 1, ...; named a, b, ... by `protocols.order`). Answers
    and orders name slots, never positions on a page."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="slots")
    slot = models.PositiveSmallIntegerField()
    article = models.ForeignKey(Article, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["item", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["item", "slot"], name="itemarticle_unique_slot"),
            models.UniqueConstraint(fields=["item", "article"], name="itemarticle_unique_article"),
            models.CheckConstraint(condition=models.Q(slot__lt=orders.MAX_ARTICLES), name="itemarticle_slot_in_range"),
        ]

    def __str__(self) -> str:
        return f"item {self.item_id} slot {orders.SLOTS[self.slot]}: article {self.article_id}"


# While pairs keep `a_first` beside `order` (issue 38), the database holds the two to one meaning.
# An assignment's item may be a reading too, shown in the order "a" (its one article) with a_first set,
# or a group, in an order of three slots or more (`a_first` then says whether slot a comes first).
def _order_agrees_with_a_first(name: str, *, alone: bool = False) -> models.CheckConstraint:
    first = models.Q(a_first=True, order__in=("ab", "a")) if alone else models.Q(a_first=True, order="ab")
    condition = first | models.Q(a_first=False, order="ba")
    if alone:
        condition |= models.Q(GreaterThan(Length("order"), 2))
    return models.CheckConstraint(condition=condition, name=name)


class SectionAlignment(models.Model):
    """Which section of one article covers what a section of the other covers (`annotate.alignment`),
    computed once for two articles and kept: the same for every campaign, annotator and order they
    are shown in. `first` is the article with the lower id. Sections are `[anchor, title]`; the
    mappings hold, per section, the index of its counterpart in the other article or null. The
    similarity scores are not stored: nothing shown may carry them."""

    first = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="+")
    first_sections = models.JSONField(default=list)
    second_sections = models.JSONField(default=list)
    first_to_second = models.JSONField(default=list)
    second_to_first = models.JSONField(default=list)
    method = models.CharField(max_length=200, help_text="How it was computed (annotate.alignment's method and threshold).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["first", "second"], name="section_alignment_unique_articles"),
            models.CheckConstraint(condition=models.Q(first__lt=models.F("second")), name="section_alignment_ordered"),
        ]

    def __str__(self) -> str:
        return f"sections of article {self.first_id} and {self.second_id}"


class PairFlag(models.Model):
    """An annotator's "flag this pair" (issue 37): what is wrong with it, in their words. One per
    assignment (flagging again replaces it); staff see flags on the campaign page and may void the pair."""

    class Reason(models.TextChoices):
        BROKEN = "broken", "An article is broken (empty, truncated, garbled)"
        WRONG_TOPIC = "wrong_topic", "An article is about another topic"
        OFFENSIVE = "offensive", "Offensive content"
        OTHER = "other", "Something else"

    assignment = models.OneToOneField("Assignment", on_delete=models.CASCADE, related_name="flag")
    pair = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="flags")
    reason = models.CharField(max_length=20, choices=Reason.choices)
    note = models.TextField(blank=True, max_length=2000)
    flagged_at = models.DateTimeField()

    class Meta:
        ordering = ["-flagged_at"]

    def __str__(self) -> str:
        return f"{self.pair}: {self.reason}"


class GoldPair(models.Model):
    """A known-answer pair (`make_gold`): the pair's article A is a reference article, B a copy of it
    degraded on purpose (`annotate.gold`). `expected` maps each targeted criterion key to the side that
    must win ("a", the original); the campaign's other criteria are not scored on this pair. Nothing
    of it reaches annotators: the pair is shown and handed out like any other."""

    pair = models.OneToOneField(Item, on_delete=models.CASCADE, primary_key=True, related_name="gold")
    degradation = models.CharField(max_length=40)
    expected = models.JSONField(help_text="{criterion key: side that must win}")
    change = models.CharField(max_length=300, blank=True, help_text="What the degradation did, in words.")
    seed = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pair"]

    def __str__(self) -> str:
        return f"gold {self.degradation} on pair {self.pair_id}"


class PairAdmission(models.Model):
    """Whether active sampling put a pair in the human queue: its inclusion probability `probability`, the
    uniform draw `draw` and `admitted` (draw < probability), written once when the pair became eligible
    (calibration's `sample_pairs`) and never redrawn. The claim path reads it; annotators never see it."""

    class Phase(models.TextChoices):
        BURN_IN = "burn-in", "Burn-in"
        ACTIVE = "active", "Active"

    pair = models.OneToOneField(Item, on_delete=models.CASCADE, primary_key=True, related_name="admission")
    probability = models.FloatField()
    draw = models.FloatField()
    admitted = models.BooleanField()
    phase = models.CharField(max_length=10, choices=Phase.choices)
    model_version = models.CharField(max_length=200, help_text="The error model that gave the probability.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pair"]
        constraints = [
            models.CheckConstraint(condition=models.Q(probability__gt=0, probability__lte=1), name="admission_probability"),
            models.CheckConstraint(condition=models.Q(draw__gte=0, draw__lt=1), name="admission_draw"),
            models.CheckConstraint(
                condition=models.Q(admitted=True, draw__lt=models.F("probability"))
                | models.Q(admitted=False, draw__gte=models.F("probability")),
                name="admission_admitted_is_draw_below_probability",
            ),
        ]

    def save(self, *args, **kwargs):
        # Written once: an admission is never redrawn or changed.
        if not self._state.adding:
            raise ValueError(f"Pair {self.pair_id} already has its admission; it is never redrawn.")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)


class GoldPauseLift(models.Model):
    """A staff member lifted an annotator's gold pause: the pause rule then counts only the gold pairs
    they submit after `lifted_at`."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="+")
    lifted_by = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+")
    lifted_at = models.DateTimeField()

    class Meta:
        ordering = ["lifted_at", "id"]


class Assignment(models.Model):
    """One annotator's work on one item, with the order of its slots drawn for them: on a pair (the
    default manager's kind) or on a reading (`ReadingAssignment`, order "a", its one article).

    A swapped repeat (`repeat_of` set) is the same annotator's second look at a pair they submitted,
    in the other order: a position check, never a second vote. Every count of annotators, overlap,
    agreement or reference reads originals only (`ORIGINAL`); the position figures read both."""

    class Status(models.TextChoices):
        ACTIVE = "active", "In progress"
        SUBMITTED = "submitted", "Submitted"
        EXPIRED = "expired", "Returned to the pool"
        REVOKED = "revoked", "Annotator removed from the campaign"
        VOIDED = "voided", "Pair voided by staff"

    class Guess(models.TextChoices):  # by side; shown by position (annotate.services.guesses)
        A = "a", "Article A"
        B = "b", "Article B"
        UNKNOWN = "unknown", "Don't know"

    class Overall(models.TextChoices):
        # By side, as labels are (protocols.pairwise): the page shows it by position.
        A = "a", "Article A"
        B = "b", "Article B"
        TIE = "tie", "Tie"
        BOTH_BAD = "both_bad", "Both bad"

    pair = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="assignments")
    a_first = models.BooleanField(help_text="Drawn at random when claimed; never shown to the annotator.")
    order = models.CharField(
        max_length=orders.MAX_ARTICLES, help_text="The slots in the order shown (protocols.order): 'ab' when a_first, else 'ba'."
    )
    order_known = models.BooleanField(
        default=True,
        help_text="False for imported work whose display order its file did not give: a_first then only "
        "records the order the file listed the systems in, and position figures leave the work out.",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    overall = models.CharField(max_length=20, choices=Overall.choices, blank=True)
    # Empty only for imported work whose file gave no start time.
    claimed_at = models.DateTimeField(null=True, blank=True)
    first_opened_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    # The guess question's answer: empty is missing, never "don't know" (annotate.services.guesses).
    guess = models.CharField(max_length=10, choices=Guess.choices, blank=True)
    guessed_at = models.DateTimeField(null=True, blank=True)
    repeat_of = models.OneToOneField(
        "self",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="repeat",
        help_text="The submitted assignment this one repeats in the other order (empty: an original); never shown to the annotator.",
    )

    objects = PairAssignments()
    # The work on items of every kind: what holds for any claim (expiry, removal, settings), and a row
    # the caller already holds, read or written by its id (no join to its item's kind on a save).
    every = models.Manager()

    class Meta:
        ordering = ["claimed_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["pair", "annotator"], condition=models.Q(repeat_of__isnull=True), name="assignment_one_per_annotator"
            ),
            _order_agrees_with_a_first("assignment_order_agrees", alone=True),
        ]
        indexes = [models.Index(fields=["annotator", "status"]), models.Index(fields=["pair", "status"])]

    def __str__(self) -> str:
        return f"{self.annotator} on pair {self.pair_id}"


# Originals only: the filter every read that counts annotators, slots or votes applies (see `Assignment`).
ORIGINAL = models.Q(repeat_of__isnull=True)


class Label(models.Model):
    """An answer to one criterion of an item, one table for every protocol: on a pair, `winner` names a
    side (a/b), never a position, and `value` is empty; on a reading (`Answer`), `value` holds it and
    `winner` is empty."""

    class Winner(models.TextChoices):
        A = "a", "Article A"
        B = "b", "Article B"
        TIE = "tie", "Tie"

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="labels")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")
    winner = models.CharField(max_length=3, choices=Winner.choices, blank=True)
    # "Cannot judge" (where the campaign allows it): an answer without a winner. Every statistic reads
    # labels with a winner only, so it is never a tie, never a vote; it is counted on its own.
    cannot_judge = models.BooleanField(default=False, db_default=False)  # db_default: bulk inserts may leave it out
    # Where the campaign asks for sets (`accept_sets`): every verdict, by side, the annotator finds
    # acceptable besides `winner` (which always belongs to the set); empty: the winner alone.
    acceptable = models.JSONField(default=list, blank=True)
    # A one-article answer in its protocol's stored form ("yes"/"no"/"na" for a checklist, the point of a
    # rating scale, the count, a class's name, free text), empty until answered; empty on a pair.
    # Text, not a short string: a free-text answer (`protocols.text`) is up to 5,000 characters.
    value = models.TextField(blank=True, default="", db_default="")  # db_default: bulk inserts may leave it out
    rationale = models.TextField(blank=True)
    created_at = models.DateTimeField()
    # Empty only for an imported label whose file gave no time.
    saved_at = models.DateTimeField(null=True, blank=True)

    objects = PairLabels()
    every = models.Manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "criterion"], name="label_one_per_criterion"),
            models.CheckConstraint(condition=models.Q(cannot_judge=False) | models.Q(winner=""), name="label_cannot_judge_has_no_winner"),
        ]


class ReadingAssignment(Assignment):
    """One annotator's work on one reading (one article alone): an `Assignment` of a reading item, made
    with `a_first` and the order "a" (`annotate.services.claims`, the imports); `pair` is its reading."""

    objects = ReadingAssignments()

    class Meta:
        proxy = True
        ordering = ["claimed_at", "id"]

    def __str__(self) -> str:
        return f"{self.annotator} on reading {self.pair_id}"


class Answer(Label):
    """An answer to one one-article criterion (a reading's): a `Label` whose `value` holds it."""

    objects = ReadingAnswers()

    class Meta:
        proxy = True


class Adjudication(models.Model):
    """One item (a pair and a criterion) whose annotators disagree, put before the campaign's adjudicators,
    and its final answer once one of them records it (`winner` by side, like labels; "" while open).

    `a_first` is drawn when the item is opened: the order its articles are shown in to every adjudicator."""

    class Kind(models.TextChoices):
        SPLIT = "split", "Some chose A, others B"
        TIE_VS_WIN = "tie-vs-win", "Some chose a tie, others a winner"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="adjudications")
    pair = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="adjudications")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    a_first = models.BooleanField()
    order = models.CharField(max_length=orders.MAX_ARTICLES, help_text="The slots in the order shown (protocols.order).")
    opened_by = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+")
    opened_at = models.DateTimeField()
    winner = models.CharField(max_length=3, choices=Label.Winner.choices, blank=True)
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pair", "criterion__order"]
        constraints = [
            models.UniqueConstraint(fields=["pair", "criterion"], name="adjudication_one_per_item"),
            models.CheckConstraint(
                condition=models.Q(winner="", decided_by__isnull=True) | (~models.Q(winner="") & models.Q(decided_by__isnull=False)),
                name="adjudication_decided_with_adjudicator",
            ),
            _order_agrees_with_a_first("adjudication_order_agrees"),
        ]

    def __str__(self) -> str:
        return f"adjudication of pair {self.pair_id} on {self.criterion_id}"


class LabelChange(models.Model):
    """Audit trail: every change to a label, overall answer or submission, to a one-article answer
    (`assignment` set: of a pair or of a reading), and every adjudicated answer (`adjudication` set),
    with where it came from (`source`). Exactly one of the two is set."""

    class Source(models.TextChoices):
        PAGE = "page", "The annotation page"
        API = "api", "The JSON API"
        IMPORT = "import", "A labels file (import_labels)"
        ADJUDICATED = "adjudicated", "An adjudicator's final answer"

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="changes", null=True, blank=True)
    adjudication = models.ForeignKey(Adjudication, on_delete=models.CASCADE, related_name="changes", null=True, blank=True)
    source = models.CharField(max_length=12, choices=Source.choices, default=Source.PAGE)
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    # A vote on one of the agent's steps (`StepVote`): the step voted on.
    step = models.ForeignKey(ArticleStep, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    field = models.CharField(max_length=20)
    old_value = models.TextField(blank=True)
    new_value = models.TextField(blank=True)
    changed_by = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+")
    changed_at = models.DateTimeField()

    class Meta:
        ordering = ["changed_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(assignment__isnull=False, adjudication__isnull=True)
                | models.Q(assignment__isnull=True, adjudication__isnull=False),
                name="labelchange_of_one_work",
            ),
        ]


class Span(models.Model):
    """A passage an annotator marked up or down, by character offsets into the displayed text.

    Marked while a criterion was active, it is that criterion's evidence (`criterion` set); else a
    free mark about the passage alone."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="spans")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    article = models.ForeignKey(Article, on_delete=models.PROTECT, related_name="+")
    # A passage of one of the article's agent steps (campaign.show_steps): the offsets count the step's displayed text.
    step = models.ForeignKey("ArticleStep", on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    quote = models.TextField()
    polarity = models.SmallIntegerField(choices=[(1, "up"), (-1, "down")])
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(end__gt=models.F("start")), name="span_not_empty"),
        ]


class StepVote(models.Model):
    """An annotator's up or down vote on one of the agent's steps shown beside an article of the
    pair (campaign.show_steps), with an optional comment; one per assignment and step."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="step_votes")
    step = models.ForeignKey(ArticleStep, on_delete=models.PROTECT, related_name="votes")
    vote = models.SmallIntegerField(choices=[(1, "up"), (-1, "down")])
    comment = models.TextField(blank=True)
    # Empty only for an imported vote whose file gave no time (never made up).
    saved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["assignment", "step"]
        constraints = [models.UniqueConstraint(fields=["assignment", "step"], name="stepvote_one_per_step")]


class CampaignSettingChange(models.Model):
    """Audit trail of a campaign's settings changed after its creation (the settings page, and the
    emphasis and ε forms): one row per field changed, with the values before and after as JSON."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="setting_changes")
    field = models.CharField(max_length=40)
    old_value = models.JSONField(null=True)
    new_value = models.JSONField(null=True)
    changed_by = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    changed_at = models.DateTimeField()

    class Meta:
        ordering = ["changed_at", "id"]
