"""Reads for judges: the units a run would judge, what they would cost, and the pages' data.

A unit is one pair, in one order, on one criterion category (or one criterion
in per-criterion mode), for the rubric's pairwise criteria; or one reading (an
article alone, `annotate.Reading`) on one category (or criterion) for its
one-article criteria (checklist, rating, count: `protocols` with ARTICLES == 1),
asked by their protocol. A category mixing one-article protocols is asked one
criterion per unit (a reading has one category-wide unit per category).
Swap does not apply to readings (one article, one order: `a_first` is True).
Offline baselines compare two articles: they judge pairs only.

A run with `guess` (LLM judges only) adds one unit per pair and order its units show, for the
pairs holding the campaign's reference: the guess question (`protocols.pairwise.guess`), asked in
a request of its own, planned, cached, billed and budgeted as any other unit. A run with `steps`
(LLM judges, campaigns that show the agents' steps) adds one unit per step of every article of
its pairs: the vote on that step (`protocols.step_vote`), the unit kept on the first of the pairs
holding the step's article, so a step is voted on once whichever pairs show it.

The plan of a run is a pure function of the campaign, the judge's mode, `swap`,
`limit` and `seed`, so running the same command twice plans the same units and
the second run only does what the first left undone.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Count, DecimalField, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

import protocols
from annotate.answers import on_pair
from annotate.kinds import criterion_kind
from annotate.models import Article, ArticleStep, Campaign, Category, Criterion, Item, Pair
from judges.models import CachedResponse, Judge, JudgeBatch, JudgeCall, JudgeRun, JudgeUnit, JudgeVerdict
from judges.pricing import batch_prices, token_cost
from judges.wire import cache_endpoint, estimate_completion_tokens, estimate_prompt_tokens, request_hashes
from protocols import order as orders
from protocols import step_vote
from protocols.base import CriterionSpec, JudgeRequest
from protocols.pairwise import guess as guess_question

GUESS = guess_question.NAME  # a guess question's unit is asked with this (`UnitPlan.protocol`)
STEP = step_vote.NAME  # a step question's unit is asked with this

ACTIVE = (JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING, JudgeRun.Status.STOPPING)


@dataclass(frozen=True)
class UnitPlan:
    pair: Pair | None
    category: Category | None  # None: a guess question's unit
    criteria: tuple[Criterion, ...]
    criterion: Criterion | None
    a_first: bool
    reading: Item | None = None  # set instead of `pair` for a unit of a reading (one article) or a group
    protocol: str = protocols.DEFAULT  # what the unit is asked with: the campaign's, or its criteria's
    step: ArticleStep | None = None  # a step question's step
    shown: str = ""  # a group's unit: its slots in the order drawn for the call (`group_order_drawn`)

    @property
    def key(self) -> tuple[int | None, int | None, int | None, int | None, bool, int | None]:
        return (
            self.pair.pk if self.pair else None,
            self.reading.pk if self.reading else None,
            self.category.pk if self.category else None,
            self.criterion.pk if self.criterion else None,
            self.a_first,
            self.step.pk if self.step else None,
        )

    @property
    def order(self) -> str:
        """The item's slots in the order the unit shows them (protocols.order): "a" for a reading, the
        drawn order for a group."""
        if self.shown:
            return self.shown
        return "a" if self.reading else orders.of_a_first(self.a_first)

    @property
    def asks_guess(self) -> bool:
        return self.protocol == GUESS

    @property
    def asks_step(self) -> bool:
        return self.protocol == STEP

    @property
    def question(self) -> str:
        """The stored unit's `question`."""
        if self.asks_guess:
            return JudgeUnit.Question.GUESS
        return JudgeUnit.Question.STEP if self.asks_step else JudgeUnit.Question.VERDICTS


def stored_key(unit: JudgeUnit) -> tuple[int | None, int | None, int | None, int | None, bool, int | None]:
    """A stored unit's `UnitPlan.key` (a plan names a reading in `reading`, its unit in `pair`)."""
    reading = unit.reading_id
    return (None if reading else unit.pair_id, reading, unit.category_id, unit.criterion_id, unit.a_first, unit.step_id)


def criterion_protocol(criterion: Criterion) -> str:
    """The protocol a criterion's answers follow: its response type, pairwise when it has none."""
    return protocols.for_criterion(criterion.response).NAME


def judged(criterion: Criterion) -> bool:
    """Whether judges are asked the criterion at all (not a free-text one: `protocols.text`)."""
    return protocols.for_criterion(criterion.response).JUDGED


def campaign_units_q(campaign: Campaign, prefix: str = "") -> Q:
    """The filter for a campaign's units (pairs' and readings'); `prefix` is the path to the unit, e.g. "unit__"."""
    return Q(**{f"{prefix}pair__campaign": campaign})


@dataclass
class RunPlan:
    campaign: Campaign
    judge: Judge
    units: list[UnitPlan]
    texts: dict[int, str]
    stored: dict[tuple, JudgeUnit] = field(default_factory=dict)
    # A run with steps: every article's steps in order, as the judge is shown them, by article id.
    steps: dict[int, list[step_vote.Step]] = field(default_factory=dict)

    def pending(self) -> list[UnitPlan]:
        return [u for u in self.units if (s := self.stored.get(u.key)) is None or s.status != JudgeUnit.Status.DONE]

    def request(self, unit: UnitPlan) -> JudgeRequest:
        if unit.asks_step:
            shown = self.steps[unit.step.article_id]
            return step_vote.build_request(
                topic=unit.pair.topic.title,
                before=shown[: unit.step.order],
                step=shown[unit.step.order],
                structured=self.judge.structured_output,
            )
        if unit.asks_guess:
            first, second = (
                (unit.pair.article_a_id, unit.pair.article_b_id) if unit.a_first else (unit.pair.article_b_id, unit.pair.article_a_id)
            )
            return guess_question.build_request(
                topic=unit.pair.topic.title,
                article_1=self.texts[first],
                article_2=self.texts[second],
                reference_name=self.campaign.reference_name,
                structured=self.judge.structured_output,
            )
        specs = [CriterionSpec(key=c.key, text=c.text, response=c.response) for c in unit.criteria]
        if unit.reading is not None and unit.reading.kind == Item.Kind.GROUP:
            # The articles as the page shows them, numbered in the order drawn for this call.
            held = unit.reading.held
            return protocols.get(unit.protocol).build_request(
                topic=unit.reading.topic.title,
                articles=[self.texts[held[orders.SLOTS.index(slot)]] for slot in unit.order],
                category=unit.category.name,
                category_description=unit.category.description,
                criteria=specs,
                structured=self.judge.structured_output,
            )
        if unit.reading is not None:
            # The article as the pair page shows it (its cleaned display text), alone.
            return protocols.get(unit.protocol).build_request(
                topic=unit.reading.topic.title,
                article=self.texts[unit.reading.article_a_id],
                category=unit.category.name,
                category_description=unit.category.description,
                criteria=specs,
                structured=self.judge.structured_output,
            )
        pair = unit.pair
        first, second = (pair.article_a_id, pair.article_b_id) if unit.a_first else (pair.article_b_id, pair.article_a_id)
        # Units are pairs: the campaign's protocol is one of two articles (`protocols.NAMES`).
        return protocols.get(self.campaign.protocol).build_request(
            topic=pair.topic.title,
            article_1=self.texts[first],
            article_2=self.texts[second],
            category=unit.category.name,
            category_description=unit.category.description,
            criteria=specs,
            allow_tie=self.campaign.allow_tie,
            structured=self.judge.structured_output,
        )

    def request_hashes(self, request: JudgeRequest) -> tuple[str, str]:
        """The request's hash, and its hash without its JSON schema (see `judges.transport.PlainJson`)."""
        judge = self.judge
        return request_hashes(model=judge.model, request=request, temperature=judge.temperature, max_tokens=judge.max_tokens)


def a_first_drawn(*, seed: int, pair_id: int, category_key: str) -> bool:
    """The order shown to the judge, drawn from (seed, pair, category) so reruns draw the same."""
    return random.Random(f"{seed}:{pair_id}:{category_key}").random() < 0.5


def _guess_units(campaign: Campaign, pairs: list[Pair], units: list[UnitPlan]) -> list[UnitPlan]:
    """The guess question's units: one per pair holding the reference and per order its units show it in."""
    reference = campaign.reference_system_id
    shown: dict[int, set[bool]] = {}
    for unit in units:
        shown.setdefault(unit.pair.pk, set()).add(unit.a_first)
    return [
        UnitPlan(pair, None, (), None, a_first, protocol=GUESS)
        for pair in pairs
        if reference in (pair.article_a.system_id, pair.article_b.system_id)
        for a_first in sorted(shown.get(pair.pk, ()), reverse=True)
    ]


def _step_units(pairs: list[Pair]) -> list[UnitPlan]:
    """The step questions' units: one per step of each article of `pairs`, on the first pair holding it."""
    first_pair: dict[int, Pair] = {}
    for pair in pairs:
        for article_id in (pair.article_a_id, pair.article_b_id):
            first_pair.setdefault(article_id, pair)
    steps = ArticleStep.objects.filter(article_id__in=list(first_pair)).only("pk", "article_id", "order").order_by("article_id", "order")
    return [UnitPlan(first_pair[step.article_id], None, (), None, True, protocol=STEP, step=step) for step in steps]


def _shown_steps(article_ids: Iterable[int]) -> dict[int, list[step_vote.Step]]:
    """The articles' steps as the judge is shown them (the page's cleaned text; never the URL), in order."""
    shown: dict[int, list[step_vote.Step]] = {}
    rows = ArticleStep.objects.filter(article_id__in=list(article_ids)).order_by("article_id", "order")
    for article_id, kind, content, query, title in rows.values_list("article_id", "kind", "content", "query", "title"):
        shown.setdefault(article_id, []).append(step_vote.Step(kind=kind, content=content, query=query, title=title))
    return shown


def campaign_categories(*, campaign: Campaign) -> list[tuple[Category, tuple[Criterion, ...]]]:
    criteria = Criterion.objects.filter(criterion_set_id=campaign.criterion_set_id).select_related("category").order_by("order", "id")
    grouped: dict[int, list[Criterion]] = {}
    categories: dict[int, Category] = {}
    for criterion in criteria:
        grouped.setdefault(criterion.category_id, []).append(criterion)
        categories[criterion.category_id] = criterion.category
    ordered = sorted(categories.values(), key=lambda c: (c.order, c.pk))
    return [(category, tuple(grouped[category.pk])) for category in ordered]


def campaign_pairs(*, campaign: Campaign, limit: int | None = None) -> list[Pair]:
    pairs = (
        Pair.objects.filter(campaign=campaign)
        .select_related("topic", "article_a__system", "article_b__system")
        .defer(
            "article_a__raw_markdown",
            "article_a__display_markdown",
            "article_a__html",
            "article_a__toc",
            "article_b__raw_markdown",
            "article_b__display_markdown",
            "article_b__html",
            "article_b__toc",
        )
        .order_by("order", "id")
    )
    return list(pairs[:limit] if limit is not None else pairs)


def campaign_readings(*, campaign: Campaign, pairs: list[Pair]) -> list[Item]:
    """The campaign's readings and groups whose articles are all among those of `pairs` (all its pairs,
    or the first `limit`), each with `held`: its articles' ids in slot order."""
    article_ids = {a for p in pairs for a in (p.article_a_id, p.article_b_id)}
    items = (
        Item.objects.filter(campaign=campaign, kind__in=(Item.Kind.READING, Item.Kind.GROUP))
        .select_related("topic")
        .prefetch_related("slots")
        .order_by("order", "id")
    )
    kept = []
    for item in items:
        item.held = [slot.article_id for slot in sorted(item.slots.all(), key=lambda slot: slot.slot)]
        if set(item.held) <= article_ids:
            kept.append(item)
    return kept


def group_order_drawn(*, seed: int, item_id: int, category_key: str, k: int) -> str:
    """The order a group's k articles are shown in on one call, drawn from (seed, item, category) so
    that reruns draw the same, and stored on the unit."""
    letters = list(orders.natural(k))
    random.Random(f"{seed}:group:{item_id}:{category_key}").shuffle(letters)
    return "".join(letters)


def reading_groups(
    criteria: tuple[Criterion, ...], mode: str, *, kind: str = Item.Kind.READING
) -> list[tuple[tuple[Criterion, ...], Criterion | None, str]]:
    """How a category's criteria asked on an item of `kind` (a reading's one-article criteria, a group's
    rankings) are asked about it: (criteria, the unit's criterion or None, protocol) per unit. Category
    mode asks them in one call when they share a protocol, else one criterion per call (the unit key
    allows one category-wide unit per item)."""
    mine = [c for c in criteria if criterion_kind(c.response) == kind and judged(c)]
    names = {criterion_protocol(c) for c in mine}
    if mode == Judge.Mode.CATEGORY and len(names) == 1:
        return [(tuple(mine), None, names.pop())]
    return [((c,), c, criterion_protocol(c)) for c in mine]


def stored_units(*, judge: Judge, pairs: list[Pair], readings: list[Item]) -> dict[tuple, JudgeUnit]:
    """The judge's stored units of these pairs and readings, by `stored_key`."""
    units = list(JudgeUnit.objects.filter(judge=judge, pair__in=[*pairs, *readings]))
    return {stored_key(u): u for u in units}


def guess_problem(*, campaign: Campaign, judge: Judge) -> str | None:
    """Why a run of `judge` on `campaign` cannot ask the guess question, or None."""
    if judge.kind != Judge.Kind.LLM:
        return f"'{judge.name}' is an offline baseline ({judge.get_kind_display()}): only an LLM judge can be asked the guess question."
    if campaign.reference_system_id is None:
        return f"'{campaign.name}' has no reference system: there is no reference for a judge to guess."
    return None


def steps_problem(*, campaign: Campaign, judge: Judge) -> str | None:
    """Why a run of `judge` on `campaign` cannot vote on the agents' steps, or None."""
    if judge.kind != Judge.Kind.LLM:
        return f"'{judge.name}' is an offline baseline ({judge.get_kind_display()}): only an LLM judge can vote on steps."
    if not campaign.show_steps:
        return f"'{campaign.name}' does not show the agents' steps: there are no steps to vote on."
    return None


def run_plan(
    *,
    campaign: Campaign,
    judge: Judge,
    swap: bool = False,
    limit: int | None = None,
    seed: int = 0,
    guess: bool = False,
    steps: bool = False,
) -> RunPlan:
    """Every unit of a run (module docstring), with the units already stored for this judge."""
    pairs = campaign_pairs(campaign=campaign, limit=limit)
    categories = campaign_categories(campaign=campaign)
    units: list[UnitPlan] = []
    paired = [(category, tuple(c for c in criteria if on_pair(c.response))) for category, criteria in categories]
    paired = [(category, criteria) for category, criteria in paired if criteria]
    for pair in pairs:
        for category, criteria in paired:
            firsts = (True, False) if swap else (a_first_drawn(seed=seed, pair_id=pair.pk, category_key=category.key),)
            for a_first in firsts:
                if judge.mode == Judge.Mode.CRITERION:
                    units += [UnitPlan(pair, category, (c,), c, a_first, protocol=campaign.protocol) for c in criteria]
                else:
                    units.append(UnitPlan(pair, category, criteria, None, a_first, protocol=campaign.protocol))
    if guess and guess_problem(campaign=campaign, judge=judge) is None:
        units += _guess_units(campaign, pairs, units)
    shown_steps = {}
    if steps and steps_problem(campaign=campaign, judge=judge) is None:
        units += _step_units(pairs)
        shown_steps = _shown_steps({a for p in pairs for a in (p.article_a_id, p.article_b_id)})
    readings = []
    if judge.kind == Judge.Kind.LLM and any(not on_pair(c.response) and judged(c) for _, criteria in categories for c in criteria):
        readings = campaign_readings(campaign=campaign, pairs=pairs)
    for reading in readings:
        for category, everything in categories:
            for criteria, criterion, protocol in reading_groups(everything, judge.mode, kind=reading.kind):
                shown = "a"
                if reading.kind == Item.Kind.GROUP:
                    shown = group_order_drawn(seed=seed, item_id=reading.pk, category_key=category.key, k=len(reading.held))
                units.append(
                    UnitPlan(None, category, criteria, criterion, orders.a_first(shown), reading=reading, protocol=protocol, shown=shown)
                )
    article_ids = {a for p in pairs for a in (p.article_a_id, p.article_b_id)}
    texts = dict(Article.objects.filter(pk__in=article_ids).values_list("pk", "display_markdown"))
    stored = stored_units(judge=judge, pairs=pairs, readings=readings)
    return RunPlan(campaign=campaign, judge=judge, units=units, texts=texts, stored=stored, steps=shown_steps)


@dataclass
class CostEstimate:
    judge: Judge
    units_total: int = 0
    units_pending: int = 0
    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Decimal | None = Decimal(0)  # None: unknown (the judge has no prices)
    batch_cost_usd: Decimal | None = Decimal(0)  # the same requests through the Batch API (`run_judges --batch`)


def run_estimate(
    *,
    campaign: Campaign,
    judge: Judge,
    swap: bool = False,
    limit: int | None = None,
    seed: int = 0,
    guess: bool = False,
    steps: bool = False,
) -> CostEstimate:
    """What a run would ask and spend: every pending request built, nothing sent or written.

    Requests the cache would answer cost nothing and are counted apart. The cost is
    given twice: at the synchronous prices and at the batch prices (`batch_prices`);
    None, unknown, for a judge without prices.
    """
    plan = run_plan(campaign=campaign, judge=judge, swap=swap, limit=limit, seed=seed, guess=guess, steps=steps)
    pending = plan.pending()
    estimate = CostEstimate(judge=judge, units_total=len(plan.units), units_pending=len(pending))
    if judge.kind != Judge.Kind.LLM:
        return estimate
    batch = batch_prices(judge)
    planned = []
    for unit in pending:
        request = plan.request(unit)
        digests = plan.request_hashes(request)
        planned.append((digests, estimate_prompt_tokens(request), estimate_completion_tokens(request)))
    hashes = [digest for digests, *_ in planned for digest in digests if digest]
    known = set()
    for start in range(0, len(hashes), 500):
        served = CachedResponse.objects.filter(endpoint=cache_endpoint(judge.base_url), request_hash__in=hashes[start : start + 500])
        known.update(served.values_list("request_hash", flat=True))
    for digests, prompt, completion in planned:
        if known.intersection(digests):
            estimate.cached += 1
            continue
        estimate.requests += 1
        estimate.prompt_tokens += prompt
        estimate.completion_tokens += completion
        estimate.cost_usd += token_cost(judge=judge, prompt_tokens=prompt, cached_tokens=0, completion_tokens=completion) or 0
        estimate.batch_cost_usd += token_cost(judge=batch, prompt_tokens=prompt, cached_tokens=0, completion_tokens=completion) or 0
    if not judge.costs_known:
        estimate.cost_usd = estimate.batch_cost_usd = None
    return estimate


# --- pages ------------------------------------------------------------------------


def judge_list() -> QuerySet[Judge]:
    """Every judge with its number of runs; an imported judge with the campaign it belongs to (None: global)."""
    return Judge.objects.select_related("campaign").annotate(run_count=Count("runs"))


def with_run_count(campaigns: QuerySet[Campaign]) -> QuerySet[Campaign]:
    """`campaigns` (annotate's `campaign_list`), each with its number of judge runs as `run_count`.

    A subquery, not a join: joined to the list's pairs and assignments, runs would multiply its rows."""
    runs = JudgeRun.objects.filter(campaign=OuterRef("pk")).order_by().values("campaign").annotate(n=Count("id")).values("n")
    return campaigns.annotate(run_count=Coalesce(Subquery(runs), 0))


def campaign_runs(*, campaign: Campaign) -> list[JudgeRun]:
    """The campaign's runs, newest first, each with `sent_calls` / `sent_usd`: its calls written ahead
    and not completed (in flight while it runs; possibly billed once it is over) and their reserved
    worst case, None when unknown (a judge without prices). Subqueries on the (run, status) index:
    the page polls this while runs go on, and a join would read every call of every run."""
    sent = JudgeCall.objects.filter(run=OuterRef("pk"), status=JudgeCall.Status.SENT).order_by().values("run")
    runs = list(
        JudgeRun.objects.filter(campaign=campaign)
        .select_related("judge")
        .prefetch_related("batches")
        .annotate(
            sent_calls=Coalesce(Subquery(sent.annotate(n=Count("id")).values("n")), 0),
            sent_priced=Coalesce(Subquery(sent.annotate(n=Count("reserved_usd")).values("n")), 0),
            sent_usd=Coalesce(Subquery(sent.annotate(usd=Sum("reserved_usd")).values("usd")), Decimal(0), output_field=DecimalField()),
        )
        .order_by("-created_at", "-id")
    )
    for run in runs:
        if run.sent_priced < run.sent_calls:
            run.sent_usd = None  # some worst case is unknown: so is their sum
    return runs


def unanswered_calls(*, judge: Judge, campaign: Campaign) -> tuple[int, Decimal | None]:
    """(calls written ahead and never completed, their reserved worst case or None when unknown) of a
    judge on a campaign, over all its runs: requests in flight when a process was killed, which the
    provider may have billed. Lines of batches still at the provider are not counted: their answers
    are awaited, not lost."""
    sent = JudgeCall.objects.filter(campaign_units_q(campaign, "unit__"), unit__judge=judge, status=JudgeCall.Status.SENT).exclude(
        batch__status__in=[JudgeBatch.Status.SUBMITTED, JudgeBatch.Status.ENDED]
    )
    totals = sent.aggregate(n=Count("id"), priced=Count("reserved_usd"), usd=Sum("reserved_usd"))
    usd = (totals["usd"] or Decimal(0)) if totals["priced"] == totals["n"] else None
    return totals["n"] or 0, usd


def runs_active(runs: list[JudgeRun]) -> bool:
    return any(run.status in ACTIVE for run in runs)


def campaign_judge_summary(*, campaign: Campaign, runs: list[JudgeRun]) -> list[dict]:
    """Per judge: units done and in error on this campaign, over all its runs, and what its calls cost,
    summed from `runs` (`campaign_runs`): `recorded_usd` (each run's cost is the sum of its completed
    calls) and `possibly_billed_usd` over `possibly_billed` calls (written ahead, never completed:
    their runs were killed, or are still running, with them in flight); a sum is None, unknown,
    when any of its terms is (a judge without prices)."""
    rows = list(
        JudgeUnit.objects.filter(campaign_units_q(campaign))
        .values("judge__name")
        .annotate(
            done=Count("id", filter=Q(status=JudgeUnit.Status.DONE)),
            errors=Count("id", filter=Q(status=JudgeUnit.Status.ERROR)),
            pending=Count("id", filter=Q(status=JudgeUnit.Status.PENDING)),
        )
        .order_by("judge__name")
    )
    for row in rows:
        mine = [run for run in runs if run.judge.name == row["judge__name"]]
        row["recorded_usd"] = _known_sum(run.cost_usd for run in mine)
        row["possibly_billed_usd"] = _known_sum(run.sent_usd for run in mine if run.sent_calls)
        row["possibly_billed"] = sum(run.sent_calls for run in mine)
    return rows


def _known_sum(values) -> Decimal | None:
    """The sum, or None (unknown) when any term is."""
    total = Decimal(0)
    for value in values:
        if value is None:
            return None
        total += Decimal(value)
    return total


LATEST_VERDICTS_SHOWN = 40


def latest_run_verdicts(*, campaign: Campaign) -> tuple[JudgeRun | None, list[JudgeVerdict]]:
    """The newest run of an LLM judge on the campaign's pairs that stored verdicts, and its first
    LATEST_VERDICTS_SHOWN verdicts (with their pair, criterion and confidence), for the judges page
    (staff only): what a model just said, e.g. a local model on one demo pair (docs/how-to/local-judge.md)."""
    run = (
        JudgeRun.objects.filter(
            campaign=campaign, judge__kind=Judge.Kind.LLM, units__verdicts__isnull=False, units__pair__kind=Item.Kind.PAIR
        )
        .select_related("judge")
        .order_by("-created_at", "-id")
        .first()
    )
    if run is None:
        return None, []
    verdicts = list(
        JudgeVerdict.objects.filter(unit__run=run, unit__pair__kind=Item.Kind.PAIR)
        .select_related("criterion", "unit__pair__topic", "unit__pair__article_a__system", "unit__pair__article_b__system")
        .order_by("unit_id", "criterion__order", "criterion_id")[:LATEST_VERDICTS_SHOWN]
    )
    for verdict in verdicts:
        pair = verdict.unit.pair
        shown = (pair.article_a, pair.article_b) if verdict.unit.a_first else (pair.article_b, pair.article_a)
        verdict.shown_first = shown[0].system.key
        verdict.winner_system = {"a": pair.article_a.system.key, "b": pair.article_b.system.key}.get(verdict.winner, "tie")
    return run, verdicts


def campaign_judges_named(*, campaign: Campaign, names: Iterable[str]) -> dict[str, Judge]:
    """{name: judge} of the names a user gives for a campaign: its own judge of that name, else the global one."""
    names = set(names)
    out = {j.name: j for j in Judge.objects.filter(name__in=names, campaign__isnull=True)}
    out.update({j.name: j for j in Judge.objects.filter(name__in=names, campaign=campaign)})
    return out
