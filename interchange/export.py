"""Reads for the export: a campaign's labels, overall answers and spans as rows of the long format.

Rows are dicts keyed by the columns of `formats`; `formats.rows_format` turns them into text.
"""

from __future__ import annotations

from annotate.answers import CANNOT_JUDGE, on_pair
from annotate.models import Article, ArticleStep, Assignment, Campaign, Criterion, Item, Label, Span, StepVote, article_texts
from annotate.services.guesses import guess_position
from interchange.formats import (
    ACCEPTABLE_COLUMN,
    EMPHASIS_COLUMN,
    GUESS_COLUMN,
    HUMAN,
    JUDGE,
    ORDER_COLUMN,
    POLARITY_NAMES,
    REMOVED_COLUMN,
    SET_SEPARATOR,
    SPAN_STEP_COLUMN,
    iso,
)
from interchange.value_export import call_columns, judge_value_rows, unit_results, usd, value_label_rows
from judges.models import JudgeCall, JudgeUnit
from protocols.pairwise import SIDES, TIE, acceptable_set, position_of, system_of

_ASSIGNMENT_JOINS = (
    "pair__campaign", "pair__topic", "pair__article_a__system", "pair__article_b__system", "annotator",
)  # fmt: skip


def _no_texts(prefix: str = "") -> list[str]:
    """The texts of the pair's articles under `prefix`, for `defer`: a row names the systems and never
    a text, and reading every article's texts again for each of 100,000 labels takes gigabytes."""
    return article_texts(f"{prefix}pair__article_a", f"{prefix}pair__article_b")


def _sides(assignment: Assignment) -> tuple[Article, Article]:
    pair = assignment.pair
    return (pair.article_a, pair.article_b) if assignment.a_first else (pair.article_b, pair.article_a)


def _systems(assignment: Assignment) -> tuple[str, str]:
    """The system keys of the pair's articles A and B."""
    pair = assignment.pair
    return pair.article_a.system.key, pair.article_b.system.key


def _order(assignment: Assignment) -> tuple:
    # By topic, then the pair's systems in name order, then rater: independent of the
    # campaign's shuffled pair order, so two campaigns with the same work export alike.
    pair = assignment.pair
    systems = sorted(_systems(assignment))
    return (pair.topic.title, pair.topic_id, *systems, assignment.annotator.username)


def _head(assignment: Assignment) -> dict:
    left, right = _sides(assignment)
    return {
        "campaign": assignment.pair.campaign.name,
        "topic": assignment.pair.topic.title,
        "rater": assignment.annotator.username,
        "left_system": left.system.key,
        "right_system": right.system.key,
        # What the annotators saw: bold and italic as plain text, or as written.
        EMPHASIS_COLUMN: assignment.pair.campaign.neutral_emphasis,
    }


def label_rows(campaign: Campaign) -> list[dict]:
    """Every human label that names a winner (or is "cannot judge"), the human answers about one article, then the judges'
    rows (`judge_label_rows`, `value_export.judge_value_rows`). Swapped repeats are left out of
    every export (labels, overall answers, spans): each row is one annotator's answer, as the import
    reads it back; the repeats serve only the report's position figures."""
    labels = (
        Label.objects.filter(assignment__pair__campaign=campaign, assignment__repeat_of__isnull=True)
        .exclude(winner="", cannot_judge=False)
        .select_related("criterion", *(f"assignment__{join}" for join in _ASSIGNMENT_JOINS))
        .defer(*_no_texts("assignment__"))
    )
    removed = set(campaign.removed_annotators.values_list("pk", flat=True))
    asks = campaign.guess_question
    sets = campaign.accept_sets
    rows = []
    for label in sorted(labels, key=lambda label: (_order(label.assignment), label.criterion.order, label.criterion.key)):
        assignment = label.assignment
        head = _head(assignment)
        rows.append({
            "campaign": head["campaign"],
            "topic": head["topic"],
            "criterion": label.criterion.key,
            "rater_kind": HUMAN,
            "rater": head["rater"],
            "left_system": head["left_system"],
            "right_system": head["right_system"],
            # "Cannot judge" has no winner: its own word, never a tie.
            "winner_system": CANNOT_JUDGE if label.cannot_judge else system_of(label.winner, *_systems(assignment)),
            "rationale": label.rationale,
            # Empty for imported work whose file gave no start: never made up from another time.
            "started_at": iso(assignment.first_opened_at or assignment.claimed_at),
            "saved_at": iso(label.saved_at),
            REMOVED_COLUMN: assignment.annotator_id in removed,
            EMPHASIS_COLUMN: head[EMPHASIS_COLUMN],
            **({} if assignment.order_known else {ORDER_COLUMN: False}),
            # The guess question's answer: on every human row of a campaign that asks it (null: not answered), else
            # only where imported.
            **({GUESS_COLUMN: guess_position(assignment.guess, assignment.a_first) or None} if asks or assignment.guess else {}),
            # Every verdict the rater accepts, the winner among them (campaigns that ask for sets).
            **({ACCEPTABLE_COLUMN: SET_SEPARATOR.join(system_of(side, *_systems(assignment)) for side in acceptable_set(label.winner, label.acceptable))}
               if sets and label.winner else {}),
        })  # fmt: skip
    # Answers given as values (on readings and groups) follow each kind's pairwise rows; a campaign without
    # them exports as before.
    if not campaign.items.exclude(kind=Item.Kind.PAIR).exists():
        return rows + judge_label_rows(campaign)
    return rows + value_label_rows(campaign) + judge_label_rows(campaign) + judge_value_rows(campaign)


def judge_label_rows(campaign: Campaign) -> list[dict]:
    """A verdict or an error row for every (pair, criterion, order) of every finished judge unit."""
    units = list(
        JudgeUnit.objects.filter(pair__campaign=campaign, pair__kind=Item.Kind.PAIR)
        .exclude(status=JudgeUnit.Status.PENDING)
        .select_related("judge", "pair__topic", "pair__article_a__system", "pair__article_b__system")
        .defer(*_no_texts())
    )
    verdicts, last_calls = unit_results(units)
    criteria = list(campaign.criterion_set.criteria.order_by("order", "id"))
    by_category: dict[int, list[Criterion]] = {}
    for criterion in criteria:
        if on_pair(criterion.response):  # a pair's units answer its pairwise criteria only
            by_category.setdefault(criterion.category_id, []).append(criterion)
    by_id = {c.id: c for c in criteria}

    def order(unit: JudgeUnit) -> tuple:
        pair = unit.pair
        systems = sorted((pair.article_a.system.key, pair.article_b.system.key))
        return (
            pair.topic.title,
            pair.topic_id,
            *systems,
            unit.judge.name,
            not unit.a_first,
        )

    rows = []
    for unit in sorted(units, key=order):
        pair = unit.pair
        systems = (pair.article_a.system.key, pair.article_b.system.key)
        left, right = (pair.article_a, pair.article_b) if unit.a_first else (pair.article_b, pair.article_a)
        head = {
            "campaign": campaign.name,
            "topic": pair.topic.title,
            "rater_kind": JUDGE,
            "rater": unit.judge.name,
            "left_system": left.system.key,
            "right_system": right.system.key,
            "started_at": "",
            "saved_at": iso(unit.updated_at),
            "model": unit.judge.model,
        }
        found = verdicts.get(unit.id, {})
        for criterion in [by_id[unit.criterion_id]] if unit.criterion_id else by_category.get(unit.category_id, []):
            verdict = found.get(criterion.id)
            if verdict is not None:
                # The position the winner was shown at; a tie has none.
                position = "" if verdict.winner == TIE else position_of(verdict.winner, unit.a_first)
                rows.append({
                    **head, "criterion": criterion.key, "winner_system": system_of(verdict.winner, *systems),
                    "rationale": verdict.rationale, **call_columns(verdict.call), "position": position, "error": "",
                    "confidence": verdict.confidence,
                })  # fmt: skip
            elif unit.status == JudgeUnit.Status.ERROR:
                rows.append({
                    **head, "criterion": criterion.key, "winner_system": "", "rationale": "",
                    **call_columns(last_calls.get(unit.id)), "position": "", "error": unit.error or "error",
                })  # fmt: skip
    return rows


def overall_rows(campaign: Campaign) -> list[dict]:
    """Every overall answer, naming the winning system (or tie / both_bad)."""
    assignments = (
        Assignment.objects.filter(pair__campaign=campaign, repeat_of__isnull=True)
        .exclude(overall="")
        .select_related(*_ASSIGNMENT_JOINS)
        .defer(*_no_texts())
    )
    rows = []
    for assignment in sorted(assignments, key=_order):
        # Stored by side; tie and both_bad are kept as they are.
        overall = assignment.overall
        if overall in SIDES:
            overall = system_of(overall, *_systems(assignment))
        rows.append({**_head(assignment), "rater_kind": HUMAN, "overall": overall})
    return rows


def span_rows(campaign: Campaign) -> list[dict]:
    spans = (
        Span.objects.filter(assignment__pair__campaign=campaign, assignment__repeat_of__isnull=True)
        .select_related("article__system", "criterion", *(f"assignment__{join}" for join in _ASSIGNMENT_JOINS))
        .defer(*_no_texts("assignment__"), *article_texts("article"))
    )
    spans = list(spans)
    steps = _step_numbers({span.step_id for span in spans if span.step_id})
    rows = []
    for span in sorted(spans, key=lambda s: (_order(s.assignment), s.created_at, s.id)):
        rows.append({
            **_head(span.assignment),
            "system": span.article.system.key,
            "start": span.start,
            "end": span.end,
            "quote": span.quote,
            "polarity": POLARITY_NAMES[span.polarity],
            "comment": span.comment,
            "created_at": iso(span.created_at),
            "criterion": span.criterion.key if span.criterion_id else "",
            SPAN_STEP_COLUMN: steps.get(span.step_id, ""),
        })  # fmt: skip
    return rows


def _step_numbers(ids: set[int]) -> dict[int, int]:
    """Step id -> its number in its article's steps (1 for the first), without the steps' texts."""
    if not ids:
        return {}
    return {pk: order + 1 for pk, order in ArticleStep.objects.filter(pk__in=ids).values_list("pk", "order")}


def step_vote_rows(campaign: Campaign) -> list[dict]:
    """Every vote on an agent's step (campaigns that show steps), by pair and rater, then the article
    shown first and the step's order; then the judges' votes (`run_judges --steps`), by judge, each on
    the pair it is kept on (article A as left_system), its reason as the comment."""
    votes = (
        StepVote.objects.filter(assignment__pair__campaign=campaign, assignment__repeat_of__isnull=True)
        .select_related(*(f"assignment__{join}" for join in _ASSIGNMENT_JOINS))
        .defer(*_no_texts("assignment__"))
    )
    votes = list(votes)
    steps = {
        row["pk"]: row for row in ArticleStep.objects.filter(pk__in={v.step_id for v in votes}).values("pk", "article_id", "order", "kind")
    }
    rows = []
    for vote in votes:
        step = steps[vote.step_id]
        left, right = _sides(vote.assignment)
        article = left if step["article_id"] == left.pk else right
        rows.append((
            (_order(vote.assignment), article is right, step["order"]),
            {
                **_head(vote.assignment), "system": article.system.key, "step": step["order"] + 1, "kind": step["kind"],
                "vote": POLARITY_NAMES[vote.vote], "comment": vote.comment, "saved_at": iso(vote.saved_at),
            },
        ))  # fmt: skip
    human = [{**row, "rater_kind": HUMAN} for _, row in sorted(rows, key=lambda pair: pair[0])]
    return human + _judge_step_rows(campaign)


def _judge_step_rows(campaign: Campaign) -> list[dict]:
    units = (
        JudgeUnit.objects.filter(
            pair__campaign=campaign, question=JudgeUnit.Question.STEP, status=JudgeUnit.Status.DONE, vote__isnull=False
        )
        .select_related("judge", "pair__topic", "pair__article_a__system", "pair__article_b__system", "step__article__system")
        .defer(*_no_texts())
        .defer("step__raw_content", "step__content", "step__html", "step__article__raw_markdown", "step__article__display_markdown")
        .defer("step__article__html", "step__article__toc")
    )
    rows = []
    for unit in units:
        pair, step = unit.pair, unit.step
        rows.append((
            (unit.judge.name, pair.topic.title, step.article.system.key, step.order),
            {
                "campaign": campaign.name, "topic": pair.topic.title, "rater": unit.judge.name,
                "left_system": pair.article_a.system.key, "right_system": pair.article_b.system.key,
                "system": step.article.system.key, "step": step.order + 1, "kind": step.kind,
                "vote": POLARITY_NAMES[unit.vote], "comment": unit.reason, "saved_at": iso(unit.updated_at), "rater_kind": JUDGE,
            },
        ))  # fmt: skip
    return [row for _, row in sorted(rows, key=lambda pair: pair[0])]


def _call_status(call: JudgeCall) -> str:
    if call.status == JudgeCall.Status.SENT:
        return "possibly_billed"  # written ahead, never answered here: the process died with it in flight
    if call.valid:
        return "valid"
    if call.http_status is not None and call.http_status < 400 and call.raw_response:
        return "invalid"  # answered, but not with usable verdicts: billed all the same
    return "failed"


def call_rows(campaign: Campaign) -> list[dict]:
    """Every call the campaign's judges made, billed or from the cache, in the order they were made.

    Unlike the label rows, which name the one call behind each verdict, these include the
    attempts that were retried and the requests that failed, so `cost_usd` sums to the spend.
    """
    calls = list(
        JudgeCall.objects.filter(unit__pair__campaign=campaign, unit__pair__kind=Item.Kind.PAIR)
        .select_related(
            "unit__judge",
            "unit__category",
            "unit__criterion",
            "unit__pair__topic",
            "unit__pair__article_a__system",
            "unit__pair__article_b__system",
            "batch",
        )
        .defer(*_no_texts("unit__"))
        .order_by("unit__judge__name", "id")
    )
    # A reading's calls (one article): its system as system_a, system_b empty.
    read = (
        JudgeCall.objects.filter(unit__pair__campaign=campaign, unit__pair__kind=Item.Kind.READING)
        .select_related("unit__judge", "unit__category", "unit__criterion", "unit__pair__topic", "unit__pair__article_a__system", "batch")
        .defer(*article_texts("unit__pair__article_a"))
    )
    if read:
        calls = sorted([*calls, *read], key=lambda call: (call.unit.judge.name, call.id))
    rows = []
    for call in calls:
        unit = call.unit
        if unit.reading_id is not None:
            topic, system_a, system_b = unit.reading.topic.title, unit.reading.article_a.system.key, ""
        else:
            topic, system_a, system_b = unit.pair.topic.title, unit.pair.article_a.system.key, unit.pair.article_b.system.key
        rows.append(
            {
                "campaign": campaign.name,
                "judge": unit.judge.name,
                "model": unit.judge.model,
                "call_id": call.id,
                "run_id": call.run_id,
                "unit_id": unit.id,
                "topic": topic,
                "system_a": system_a,
                "system_b": system_b,
                "a_first": unit.a_first,
                "category": unit.category.key if unit.category_id else "",
                "criterion": unit.criterion.key if unit.criterion else "",
                "attempt": call.attempt,
                "status": _call_status(call),
                "from_cache": call.from_cache,
                "http_status": call.http_status,
                "prompt_tokens": call.prompt_tokens,
                "cached_tokens": call.cached_tokens,
                "completion_tokens": call.completion_tokens,
                "cost_usd": usd(call.cost_usd),
                "reserved_usd": usd(call.reserved_usd),
                "latency_ms": call.latency_ms,
                "created_at": iso(call.created_at),
                "error": call.error,
                "client_request_id": call.client_request_id,
                "provider_request_id": call.provider_request_id,
                "response_id": call.response_id,
                "provider_batch_id": call.batch.provider_batch_id if call.batch else "",
                "question": unit.question,
            }
        )
    return rows
