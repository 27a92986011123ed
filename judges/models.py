from decimal import Decimal

from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import GreaterThan

from annotate.models import ArticleStep, Campaign, Category, Criterion, Item, validate_name
from common.names import NAME_MAX_LENGTH
from protocols import order as orders


class Judge(models.Model):
    """A configured judge: an OpenAI-compatible model, or an offline baseline.

    The API key is never stored: `api_key_env` names the environment variable
    that holds it, read when a run starts. Only names ending in `_API_KEY` or
    listed in the JUDGE_API_KEY_ENVS setting are read (see `endpoints.api_key_env_refusal`),
    so that no judge can send this server's own secrets to its base URL.
    """

    class Kind(models.TextChoices):
        LLM = "llm", "LLM (OpenAI-compatible endpoint)"
        LENGTH = "length", "Baseline: the longer article wins"
        WORDS_TO_WATCH = "words-to-watch", "Baseline: fewer words to watch wins"
        RANDOM = "random", "Baseline: seeded coin"
        IMPORTED = "imported", "Verdicts imported from elsewhere"

    class Mode(models.TextChoices):
        CATEGORY = "category", "One call per criterion category"
        CRITERION = "criterion", "One call per criterion"

    name = models.CharField(max_length=NAME_MAX_LENGTH, validators=[validate_name])
    # An imported judge belongs to the campaign it was imported into (`judges.imports`), so that two
    # studies' "gpt-4o" are two judges; empty: a global judge, one of its name (configured judges, and
    # imports that name one on purpose with --judge-scope global).
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, null=True, blank=True, related_name="scoped_judges")
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.LLM)
    model = models.CharField(max_length=200, blank=True)
    base_url = models.URLField(max_length=500, blank=True)
    api_key_env = models.CharField(max_length=100, blank=True, help_text="Name of the environment variable holding the key.")
    # Prices left empty are unknown, and so is every cost of the judge (never shown as $0).
    input_price = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True, default=None, help_text="USD per million prompt tokens; empty: unknown."
    )
    cached_input_price = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True, help_text="USD per million cached prompt tokens; empty: the input price."
    )
    output_price = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True, default=None, help_text="USD per million completion tokens; empty: unknown."
    )
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(default=4096)
    mode = models.CharField(max_length=20, choices=Mode.choices, default=Mode.CATEGORY)
    structured_output = models.BooleanField(default=True, help_text="Send response_format with a JSON schema.")
    timeout_seconds = models.FloatField(default=120.0)
    max_attempts = models.PositiveSmallIntegerField(default=3, help_text="Attempts per request for invalid output.")
    rpm = models.PositiveIntegerField(
        null=True, blank=True, help_text="Requests per minute the provider allows; runs pace themselves under it. Empty: no limit."
    )
    tpm = models.PositiveIntegerField(
        null=True, blank=True, help_text="Tokens per minute (prompt + completion) the provider allows; empty: no limit."
    )
    batch_input_price = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        help_text="USD per million prompt tokens through the Batch API; empty: half the input price.",
    )
    batch_output_price = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        help_text="USD per million completion tokens through the Batch API; empty: half the output price.",
    )
    confidence = models.CharField(
        max_length=20,
        default="none",
        help_text="How each verdict's confidence is got: none, logprobs, or samples:N (judges/confidence.py).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["name"], condition=models.Q(campaign__isnull=True), name="judge_global_name_unique"),
            models.UniqueConstraint(fields=["campaign", "name"], name="judge_campaign_name_unique"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def costs_known(self) -> bool:
        """Whether this judge's calls have a price: an LLM judge needs both prices, offline baselines
        cost nothing, and what imported verdicts cost is unknown."""
        if self.kind == self.Kind.LLM:
            return self.input_price is not None and self.output_price is not None
        return self.kind != self.Kind.IMPORTED


class JudgeRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        STOPPING = "stopping", "Stopping"
        STOPPED = "stopped", "Stopped"
        BUDGET = "budget", "Stopped at the budget"
        FINISHED = "finished", "Finished"
        FAILED = "failed", "Failed"
        # Its worker process died (killed, out of memory, the machine went down): see judges/recovery.py.
        INTERRUPTED = "interrupted", "Interrupted"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="judge_runs")
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="runs")
    swap = models.BooleanField(default=False, help_text="Judge both orders of every pair.")
    concurrency = models.PositiveSmallIntegerField(default=4)
    budget_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    limit = models.PositiveIntegerField(null=True, blank=True, help_text="At most this many pairs.")
    seed = models.BigIntegerField(default=0)
    batch = models.BooleanField(default=False, help_text="Send the units through the provider's Batch API (billed at the batch prices).")
    guess = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Also ask the judge, in a call of its own per pair and order shown, which article is the reference (the guess question).",
    )
    steps = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Also ask the judge to vote up or down on each of the agents' steps, one call per step (campaigns that show steps).",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    message = models.TextField(blank=True)
    task_id = models.CharField(max_length=100, blank=True)
    units_total = models.PositiveIntegerField(default=0)
    units_done = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.BigIntegerField(default=0)
    cached_tokens = models.BigIntegerField(default=0)
    completion_tokens = models.BigIntegerField(default=0)
    cost_usd = models.DecimalField(
        max_digits=14, decimal_places=8, null=True, blank=True, default=Decimal(0), help_text="Empty: unknown (a billed call had no price)."
    )
    rate_limited = models.PositiveIntegerField(default=0, help_text="Answers 429 (too many requests) the endpoint gave this run.")
    retries = models.PositiveIntegerField(default=0, help_text="Requests sent again after an unreadable answer (each one billed).")
    retries_repeated = models.PositiveIntegerField(
        default=0, help_text="Of those retries, the ones whose answer was the previous attempt's again."
    )
    paced_ms = models.BigIntegerField(
        default=0, help_text="Time the workers waited to stay under the judge's rpm/tpm, summed over workers."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=255, blank=True, help_text="The process executing the run (judges/workers.py).")
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life of that process while the run went on.")
    resumed_by = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The run that took over after an interruption.",
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.judge} on {self.campaign} ({self.status})"


class JudgeUnit(models.Model):
    """One piece of judging work on an item (`pair`, in the order `order`): a pair, in one order, on one
    category (or criterion); or, for the one-article criteria (checklist, rating, count), a reading (an
    article alone; order "a", `a_first` True; `reading` names it);
    or, on a run with `guess`, the guess question about a pair in one order (`question` GUESS, no
    category, its answer in `guess`, no verdicts: `protocols.pairwise.guess`); or, on a run with
    `steps`, the vote on one of an agent's steps (`question` STEP, `step` set, `pair` the campaign's
    first pair holding the step's article, no category, the answer in `vote` with its `reason`:
    `protocols.step_vote`).

    The unique key makes runs resumable: a unit that is done is never redone.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DONE = "done", "Done"
        ERROR = "error", "Error"

    class Question(models.TextChoices):
        VERDICTS = "verdicts", "The rubric's criteria"
        GUESS = "guess", "Which article is the reference (the guess question)"
        STEP = "step", "A vote on one of an agent's steps"

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="units")
    pair = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judge_units", help_text="The item: a pair or a reading.")
    category = models.ForeignKey(
        Category, on_delete=models.PROTECT, related_name="+", null=True, blank=True, help_text="Empty on a guess question's unit."
    )
    question = models.CharField(max_length=10, choices=Question.choices, default=Question.VERDICTS, db_default=Question.VERDICTS)
    # The guess question's answer by side, as `annotate.Assignment.guess` stores a human's ("a", "b",
    # "unknown"); empty: not asked, or not answered yet.
    guess = models.CharField(max_length=10, blank=True, default="", db_default="")
    criterion = models.ForeignKey(
        Criterion, on_delete=models.PROTECT, related_name="+", null=True, blank=True, help_text="Set in per-criterion mode."
    )
    # A step question's step, its vote (1 up, -1 down; empty until answered) and the judge's reason.
    step = models.ForeignKey(ArticleStep, on_delete=models.CASCADE, related_name="judge_units", null=True, blank=True)
    vote = models.SmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True, default="", db_default="")
    a_first = models.BooleanField(help_text="Article A was shown as Article 1.")
    order = models.CharField(
        max_length=orders.MAX_ARTICLES,
        help_text="The item's slots in the order shown (protocols.order): 'a' for a reading, else 'ab' when a_first, 'ba' when not.",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    run = models.ForeignKey(JudgeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="units")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # Partial indexes instead of one with a nullable column, which SQLite would not enforce.
            models.UniqueConstraint(
                fields=["judge", "pair", "category", "a_first"],
                condition=models.Q(criterion__isnull=True),
                name="judgeunit_unique_category",
            ),
            models.UniqueConstraint(
                fields=["judge", "pair", "criterion", "a_first"],
                condition=models.Q(criterion__isnull=False),
                name="judgeunit_unique_criterion",
            ),
            models.UniqueConstraint(
                fields=["judge", "pair", "a_first"], condition=models.Q(question="guess"), name="judgeunit_unique_guess"
            ),
            models.UniqueConstraint(fields=["judge", "pair", "step"], condition=models.Q(question="step"), name="judgeunit_unique_step"),
            # A guess or step unit is a pair's, with no category or criterion (a step unit has its step);
            # every other unit has a category.
            models.CheckConstraint(
                condition=models.Q(question="guess", pair__isnull=False, category__isnull=True, criterion__isnull=True, step__isnull=True)
                | models.Q(question="step", pair__isnull=False, category__isnull=True, criterion__isnull=True, step__isnull=False, guess="")
                | models.Q(question="verdicts", category__isnull=False, guess="", step__isnull=True),
                name="judgeunit_question_shape",
            ),
            # While `a_first` stays beside `order` (issue 38), the two say one thing (a group's order
            # is of three slots or more).
            models.CheckConstraint(
                condition=models.Q(a_first=True, order__in=("ab", "a"))
                | models.Q(a_first=False, order="ba")
                | models.Q(GreaterThan(Length("order"), 2)),
                name="judgeunit_order_agrees",
            ),
        ]

    # A unit of a reading shows its one article: order "a" (the database holds order and a_first to one meaning).
    @property
    def reading(self) -> Item | None:
        """The unit's item when it is not a pair (a reading, one article alone; a group, three or more),
        else None: the units whose verdicts are answers (`JudgeVerdict.answer`), not winners."""
        return self.pair if len(self.order) != 2 else None

    @property
    def reading_id(self) -> int | None:
        return self.pair_id if len(self.order) != 2 else None


class JudgeBatch(models.Model):
    """One batch file submitted to the provider's Batch API (`/v1/files` + `/v1/batches`) for a run.

    Stored as soon as the provider accepts it, so that a run killed while polling
    resumes by polling the same batch instead of submitting (and paying for) its
    requests again."""

    class Status(models.TextChoices):
        SUBMITTED = "submitted", "Submitted"  # the provider has it; not finished yet
        ENDED = "ended", "Ended at the provider"  # completed, failed, expired or cancelled there; results not read yet
        READ = "read", "Results read"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="batches")
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="batches")
    provider_batch_id = models.CharField(max_length=200)
    input_file_id = models.CharField(max_length=200)
    output_file_id = models.CharField(max_length=200, blank=True)
    error_file_id = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.SUBMITTED)
    provider_status = models.CharField(
        max_length=40, blank=True, help_text="The provider's last word: validating, in_progress, completed, expired..."
    )
    requests = models.PositiveIntegerField(default=0)
    completed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["judge", "provider_batch_id"], name="judgebatch_unique_provider_id")]


class JudgeCall(models.Model):
    """One request to the endpoint (or the cache), billed whether or not its output was usable.

    Written ahead: the row exists with status SENT (and the attempt's worst-case cost in
    `reserved_usd`) before the request leaves, and the answer completes it. A SENT row
    whose run is over is an attempt that may have been billed with no answer recorded
    (the process died while it was in flight): "possibly billed", at most `reserved_usd`.
    """

    class Status(models.TextChoices):
        SENT = "sent", "Sent, no answer recorded"
        COMPLETED = "completed", "Completed"

    unit = models.ForeignKey(JudgeUnit, on_delete=models.CASCADE, related_name="calls")
    run = models.ForeignKey(JudgeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="judge_calls")
    batch = models.ForeignKey(JudgeBatch, on_delete=models.SET_NULL, null=True, blank=True, related_name="calls")
    attempt = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.COMPLETED)
    reserved_usd = models.DecimalField(
        max_digits=14, decimal_places=8, null=True, blank=True, default=Decimal(0),
        help_text="Worst-case cost reserved before sending; empty: unknown (the judge has no prices).",
    )  # fmt: skip
    client_request_id = models.CharField(
        max_length=64, blank=True, help_text="Sent as X-Client-Request-Id (or the batch line's custom_id)."
    )
    provider_request_id = models.CharField(max_length=200, blank=True, help_text="The provider's x-request-id header.")
    response_id = models.CharField(max_length=200, blank=True, help_text="The completion's id in the response body.")
    request_hash = models.CharField(max_length=64, db_index=True)
    from_cache = models.BooleanField(default=False)
    valid = models.BooleanField(default=False)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    raw_response = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    cached_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(
        max_digits=14, decimal_places=8, null=True, blank=True, default=Decimal(0), help_text="Empty: billed, but the judge had no prices."
    )
    latency_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["run", "status"], name="judgecall_run_status")]


class JudgeVerdict(models.Model):
    """A judge's winner on one criterion; `winner` names a side of the pair (a/b), like human labels.
    On a reading's unit (one article) `winner` is empty and `answer` holds the criterion's protocol's
    stored answer, as `annotate.Answer.value` does."""

    unit = models.ForeignKey(JudgeUnit, on_delete=models.CASCADE, related_name="verdicts")
    call = models.ForeignKey(JudgeCall, on_delete=models.SET_NULL, null=True, blank=True, related_name="verdicts")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")
    winner = models.CharField(max_length=3, choices=[("a", "A"), ("b", "B"), ("tie", "Tie")], blank=True)
    answer = models.CharField(max_length=20, blank=True, default="", db_default="")
    rationale = models.TextField(blank=True)
    # In [0, 1]: the chosen answer's probability (logprobs) or the share of samples giving it; empty: unknown.
    confidence = models.FloatField(null=True, blank=True)
    # samples:N judges: the answers of the N calls in this unit's order, positions "1"/"2"/"tie" joined by commas.
    samples = models.CharField(max_length=400, blank=True, default="", db_default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["unit", "criterion"], name="judgeverdict_unique")]


class CachedResponse(models.Model):
    """Identical requests to the same endpoint are answered from here at no cost.

    Keyed by the endpoint (`judges.wire.cache_endpoint`: the base URL) and the request's hash (which
    holds the model name): a local server answers under any model name, so the same name at another
    base URL may be another model, and its answers are never served to a judge elsewhere."""

    endpoint = models.CharField(max_length=500, default="", help_text="The base URL the answer came from (judges.wire.cache_endpoint).")
    request_hash = models.CharField(max_length=64)
    model = models.CharField(max_length=200)
    content = models.TextField()
    prompt_tokens = models.PositiveIntegerField(default=0)
    cached_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "request_hash"], name="cachedresponse_unique_endpoint_hash")]
