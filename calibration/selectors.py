"""Reads for calibration: the campaign's human labels and judge verdicts as `calibration.metrics` inputs.

Human labels: every `annotate.Label` with a winner, of submitted assignments only
unless `include_unsubmitted` (work in progress may still change, and expired
claims were abandoned). Judge verdicts: every `JudgeVerdict` of a unit that is
DONE; units in ERROR count as the judge's `errors`.

Both kinds of label store the winner as a side of the pair (`a` / `b` / `tie`);
here it becomes a system key. `first_system` is the system shown first (article
A's when the annotator had A on the left / the judge was shown A first), and
`longer_system` the pair's article with more words (None when equally long).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Avg, Count, Max, Q, QuerySet, Sum

from annotate.models import Adjudication, Answer, Assignment, Campaign, Criterion, Item, Label, LabelChange, Pair, PairAdmission
from calibration.metrics import HI_WINS, LO_WINS, SYS_HI, SYS_LO, TIED, UNKNOWN, LabelTable, Vocab, majority_winners, merge_swapped
from judges.models import Judge, JudgeCall, JudgeUnit, JudgeVerdict
from protocols.pairwise import SIDE_A, TIE, acceptable_set, system_of

# Judge names never hold a colon (`common.names.NAME_RULE`), so this prefix keeps annotators and judges apart in one table.
HUMAN_PREFIX = "human:"


@dataclass(frozen=True)
class PairInfo:
    pair_id: int
    topic: str
    system_a: str
    system_b: str
    longer_system: str | None


@dataclass(frozen=True)
class JudgeSummary:
    """One judge's work on the campaign: what it cost and how often it failed."""

    name: str
    model: str
    kind: str
    n_units: int
    errors: int
    n_calls: int
    n_invalid_calls: int
    cost_usd: float | None  # None: unknown (imported verdicts, or billed calls of a judge without prices), never 0
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    mean_latency_ms: float | None
    # Calls written ahead with no answer recorded (the process died while they were in flight):
    # perhaps billed by the provider, at most their reserved worst case (None: unknown, no prices).
    possibly_billed_usd: float | None = 0.0
    n_possibly_billed: int = 0


@dataclass(frozen=True)
class AnnotatorTime:
    """How long one annotator took: wall time from first opening a pair to submitting it.

    `seconds_per_pair` / `seconds_per_criterion` hold one value per timed pair (the latter is the
    pair's time over the criteria labelled in it). A pair is timed only when it was opened and
    submitted (or, with unsubmitted work included, last touched) after a positive time: pairs
    imported without `started_at` were never opened here and are not timed.
    """

    annotator: str  # the username, as in the report
    n_pairs: int  # pairs with at least one label the report counts
    seconds_per_pair: list[float]
    seconds_per_criterion: list[float]


@dataclass(frozen=True)
class CalibrationInputs:
    """Everything `calibration.report.build` needs from the database."""

    table: LabelTable  # human labels and raw judge verdicts (both orders), one vocabulary
    judges: list[JudgeSummary]
    systems: list[str]  # the systems compared in the campaign's pairs
    n_pairs: int  # pairs in the campaign
    include_unsubmitted: bool
    annotator_times: list[AnnotatorTime] = field(default_factory=list)
    # One row per (judge, item, order) of the judges' units left in ERROR: verdicts they failed to give
    # (the row's winner is a placeholder). None: not read.
    failed: LabelTable | None = None
    # The adjudicators' final answers, one row per adjudicated item (rater `human:<adjudicator>`). None: not read.
    adjudicated: LabelTable | None = None
    # The human labels with each annotator's swapped repeats (the position figures only). None: not read.
    position: LabelTable | None = None
    # Active sampling: each admitted-or-not pair's stored inclusion probability, keyed as the table's
    # pairs (str(pair id)). None: the campaign samples uniformly (every pair is in the human queue).
    inclusion: dict[str, float] | None = None
    # The judges with confidences: one row per judge and item (orders merged) and each row's confidence
    # (`calibration.cascade.confidence_table`). None: not read (the tie-aware accuracy and soft-label scores then have no judge).
    confidences: tuple[LabelTable, np.ndarray] | None = None


def _pair_infos(campaign: Campaign, *, gold: bool = False) -> dict[int, PairInfo]:
    """The campaign's pairs; `gold`: its known-answer pairs instead (never in the judge-vs-human figures)."""
    rows = Pair.objects.filter(campaign=campaign, gold__isnull=not gold).values_list(
        "id", "topic__title", "article_a__system__key", "article_b__system__key", "article_a__word_count", "article_b__word_count"
    )
    infos = {}
    for pair_id, topic, key_a, key_b, words_a, words_b in rows:
        longer = key_a if words_a > words_b else key_b if words_b > words_a else None
        infos[pair_id] = PairInfo(pair_id, topic, key_a, key_b, longer)
    return infos


def _winner_system(info: PairInfo, side: str) -> str:
    return system_of(side, info.system_a, info.system_b)


def human_label_rows(*, campaign: Campaign, include_unsubmitted: bool = False, gold: bool = False, repeats: bool = False) -> QuerySet:
    """The human labels the figures read: originals only unless `repeats` (the swapped repeats too,
    for the position figures only: a repeat is never a second vote)."""
    labels = Label.objects.filter(assignment__pair__campaign=campaign, assignment__pair__gold__isnull=not gold).exclude(winner="")
    if not repeats:
        labels = labels.filter(assignment__repeat_of__isnull=True)
    if not include_unsubmitted:
        labels = labels.filter(assignment__status=Assignment.Status.SUBMITTED)
    return labels


def human_cannot_judge_count(*, campaign: Campaign, include_unsubmitted: bool = False) -> int:
    """How many answers were "cannot judge", read as `human_label_rows` reads labels (originals, not
    gold, submitted unless asked): they have no winner, so every figure leaves them out; this says how many."""
    labels = Label.objects.filter(
        assignment__pair__campaign=campaign, assignment__pair__gold__isnull=True, assignment__repeat_of__isnull=True, cannot_judge=True
    )
    if not include_unsubmitted:
        labels = labels.filter(assignment__status=Assignment.Status.SUBMITTED)
    return labels.count()


def acceptable_set_comparisons(*, campaign: Campaign, include_unsubmitted: bool = False) -> list:
    """Every judge verdict (each order it was asked in) against every human label of its item, with the
    human's set of acceptable verdicts (`metrics.acceptable.SetComparison`), in two queries."""
    from calibration.metrics.acceptable import SetComparison

    humans: dict[tuple[int, int], list[tuple[str, tuple[str, ...]]]] = {}
    for pair_id, criterion_id, winner, also in human_label_rows(campaign=campaign, include_unsubmitted=include_unsubmitted).values_list(
        "assignment__pair_id", "criterion_id", "winner", "acceptable"
    ):
        humans.setdefault((pair_id, criterion_id), []).append((winner, acceptable_set(winner, also or ())))
    verdicts = (
        judge_verdict_rows(campaign=campaign).exclude(winner="").values_list("unit__pair_id", "criterion_id", "unit__judge__name", "winner")
    )
    return [
        SetComparison(pair_id, judge, verdict, winner, accepted)
        for pair_id, criterion_id, judge, verdict in verdicts
        for winner, accepted in humans.get((pair_id, criterion_id), ())
    ]


def judge_verdict_rows(*, campaign: Campaign, gold: bool = False) -> QuerySet:
    return JudgeVerdict.objects.filter(
        unit__pair__campaign=campaign,
        unit__pair__kind=Item.Kind.PAIR,
        unit__pair__gold__isnull=not gold,
        unit__status=JudgeUnit.Status.DONE,
    )


def _plain_rows(rows: QuerySet) -> list[tuple]:
    """The rows of a `values_list` query as the database returns them, without Django's converter call
    per row (100,000 labels and verdicts: 0.1 s less): booleans come as 0 / 1 on SQLite and True / False on
    PostgreSQL, so a caller may read them only as true or false (or None)."""
    try:
        sql, params = rows.query.get_compiler(using=rows.db).as_sql()
    except EmptyResultSet:
        return []
    with connections[rows.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _coded(values) -> tuple[list, np.ndarray]:
    """(the distinct values in the order first seen, each value's code)."""
    values = values if isinstance(values, (list, tuple)) else list(values)
    distinct = list(dict.fromkeys(values))
    index = {v: i for i, v in enumerate(distinct)}
    return distinct, np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))


def _name_order(names: list[str], codes: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    """The names sorted (as `LabelTable.from_columns` orders a vocabulary) and the codes into them."""
    order = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    return tuple(names[i] for i in order), rank[codes]


class _Columns:
    """Accumulates labels row by row; `table` is the `LabelTable.from_columns` of their string columns
    (the same vocabularies, codes and checks), coded per distinct pair, criterion and rater rather
    than string by string (100,000 rows: 1.0 -> 0.3 s)."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []

    def add(self, info: PairInfo, criterion: str, category: str, rater: str, kind: str, side: str, a_first: bool | None) -> None:
        """`a_first` None: the order shown is unknown (imported without it)."""
        self.rows.append((info, criterion, category, rater, kind, side, a_first))

    def table(self) -> LabelTable:
        if not self.rows:
            return LabelTable.empty()
        infos, criteria, categories, raters, kinds, sides, a_first = zip(*self.rows)
        distinct, pair_code = _coded(list(map(attrgetter("pair_id"), infos)))
        by_id = {info.pair_id: info for info in infos}
        pair_infos = [by_id[i] for i in distinct]
        pair_names, pair = _name_order([str(i) for i in distinct], pair_code)
        criterion_names, criterion = _name_order(*_coded(criteria if None not in criteria else ["" if c is None else c for c in criteria]))
        category_names, category = _name_order(
            *_coded(categories if None not in categories else ["" if c is None else c for c in categories])
        )
        rater_names, rater = _name_order(*_coded(raters))
        kind_names, kind = _coded(kinds)
        kind_of = kind[np.unique(rater, return_index=True)[1]]  # each rater's kind is that of its first row
        if (kind_of[rater] != kind).any():
            raise ValueError("a rater must always have the same rater_kind")
        # Per pair: its systems in name order (a_lo: A's is the first) and which is longer.
        a_names, b_names = [i.system_a for i in pair_infos], [i.system_b for i in pair_infos]
        if any(not a or not b for a, b in zip(a_names, b_names)):
            raise ValueError("system names must be non-empty")
        system_names = tuple(sorted(set(a_names) | set(b_names)))
        code = {name: i for i, name in enumerate(system_names)}
        a, b = np.array([code[x] for x in a_names], dtype=np.int64), np.array([code[x] for x in b_names], dtype=np.int64)
        a_lo = a <= b
        longer = np.array([UNKNOWN if i.longer_system is None else 0 if i.longer_system == i.system_a else 1 for i in pair_infos])
        side_names, side = _coded(sides)
        won_a = np.array([x == SIDE_A for x in side_names], dtype=bool)[side]
        tie = np.array([x == TIE for x in side_names], dtype=bool)[side]
        row_a_lo = a_lo[pair_code]
        outcome = np.where(tie, TIED, np.where(won_a == row_a_lo, LO_WINS, HI_WINS))
        first = np.array([UNKNOWN if x is None else 0 if x else 1 for x in a_first], dtype=np.int64)  # 0: A first
        longer_row = longer[pair_code]

        def position(which: np.ndarray) -> np.ndarray:  # 0 = A, 1 = B, -1 unknown -> SYS_LO / SYS_HI / UNKNOWN
            return np.where(which == UNKNOWN, UNKNOWN, np.where((which == 0) == row_a_lo, SYS_LO, SYS_HI))

        vocab = Vocab(pair_names, criterion_names, category_names, rater_names, tuple(kind_names[k] for k in kind_of), system_names)
        lo, hi = np.where(a_lo, a, b)[pair_code], np.where(a_lo, b, a)[pair_code]
        table = LabelTable(vocab, pair, criterion, category, rater, lo, hi, outcome, position(first), position(longer_row))
        table.check_pairs()
        return table


def calibration_table(
    *,
    campaign: Campaign,
    include_unsubmitted: bool = False,
    pairs: dict[int, PairInfo] | None = None,
    gold: bool = False,
    repeats: bool = False,
    judges: bool = True,
) -> LabelTable:
    """Human labels (raters `human:<username>`) and judge verdicts (raters = judge names) of a campaign;
    `gold`: those on its known-answer pairs instead, which the report leaves out. `repeats`: the
    humans' swapped repeats too (a rater then has the same item twice, once in each order: only the
    position figures may read that); `judges` False leaves the verdicts out."""
    pairs = pairs if pairs is not None else _pair_infos(campaign, gold=gold)
    columns = _Columns()
    humans = _plain_rows(
        human_label_rows(campaign=campaign, include_unsubmitted=include_unsubmitted, gold=gold, repeats=repeats).values_list(
            "assignment__pair_id",
            "criterion__key",
            "criterion__category__key",
            "assignment__annotator__username",
            "winner",
            "assignment__a_first",
            "assignment__order_known",
        )
    )
    add = columns.rows.append  # as `columns.add`, without a call per row (100,000 rows)
    for pair_id, criterion, category, username, side, a_first, order_known in humans:
        add((pairs[pair_id], criterion, category, HUMAN_PREFIX + username, "human", side, a_first if order_known else None))
    if not judges:
        return columns.table()
    verdicts = _plain_rows(
        judge_verdict_rows(campaign=campaign, gold=gold).values_list(
            "unit__pair_id", "criterion__key", "criterion__category__key", "unit__judge__name", "winner", "unit__a_first"
        )
    )
    for pair_id, criterion, category, judge, side, a_first in verdicts:
        add((pairs[pair_id], criterion, category, judge, "judge", side, a_first))
    return columns.table()


def failed_table(*, campaign: Campaign, pairs: dict[int, PairInfo] | None = None) -> LabelTable:
    """The verdicts the judges failed to give: one row per criterion and order of each unit left in
    ERROR (a unit in category mode stands for its category's criteria). The winner is a tie, as a
    placeholder; `metrics.judge_votes` reads only which items and orders they are."""
    pairs = pairs if pairs is not None else _pair_infos(campaign)
    units = list(
        JudgeUnit.objects.filter(
            pair__campaign=campaign, pair__kind=Item.Kind.PAIR, pair__gold__isnull=True, status=JudgeUnit.Status.ERROR
        ).values_list("pair_id", "judge__name", "a_first", "criterion__key", "category_id")
    )
    columns = _Columns()
    if not units:
        return columns.table()
    criteria: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for key, category_id, category in Criterion.objects.filter(criterion_set_id=campaign.criterion_set_id).values_list(
        "key", "category_id", "category__key"
    ):
        criteria[category_id].append((key, category))
    for pair_id, judge, a_first, criterion, category_id in units:
        keys = criteria[category_id] if criterion is None else [c for c in criteria[category_id] if c[0] == criterion]
        for key, category in keys:
            columns.add(pairs[pair_id], key, category, judge, "judge", "tie", a_first)
    return columns.table()


def adjudicated_table(*, campaign: Campaign, pairs: dict[int, PairInfo] | None = None) -> LabelTable:
    """The final answers of the campaign's adjudicated items (known-answer pairs left out), one row
    each, as the adjudicator gave it (rater `human:<adjudicator>`, in the order the item was shown)."""
    pairs = pairs if pairs is not None else _pair_infos(campaign)
    rows = (
        Adjudication.objects.filter(campaign=campaign, pair__gold__isnull=True)
        .exclude(winner="")
        .order_by("pk")
        .values_list("pair_id", "criterion__key", "criterion__category__key", "decided_by__username", "winner", "a_first")
    )
    columns = _Columns()
    for pair_id, criterion, category, username, side, a_first in rows:
        columns.add(pairs[pair_id], criterion, category, HUMAN_PREFIX + username, "human", side, a_first)
    return columns.table()


def judge_summaries(*, campaign: Campaign) -> list[JudgeSummary]:
    """Every judge with work on the campaign, by name; costs count every completed call, valid or
    not, and calls with no answer recorded are counted apart (possibly billed). A cost is None,
    unknown, for imported verdicts and for a judge whose billed calls had no price: never 0."""
    completed = Q(status=JudgeCall.Status.COMPLETED)
    units = {
        row["judge_id"]: row
        for row in JudgeUnit.objects.filter(pair__campaign=campaign, pair__kind=Item.Kind.PAIR, pair__gold__isnull=True)
        .values("judge_id")
        .annotate(n=Count("id"), errors=Count("id", filter=Q(status=JudgeUnit.Status.ERROR)))
    }
    calls = {
        row["unit__judge_id"]: row
        for row in JudgeCall.objects.filter(unit__pair__campaign=campaign, unit__pair__kind=Item.Kind.PAIR, unit__pair__gold__isnull=True)
        .values("unit__judge_id")
        .annotate(
            n=Count("id", filter=completed),
            invalid=Count("id", filter=completed & Q(valid=False)),
            cost=Sum("cost_usd"),
            prompt=Sum("prompt_tokens"),
            cached=Sum("cached_tokens"),
            completion=Sum("completion_tokens"),
            # Answers from the cache take no time and would flatter the judge.
            latency=Avg("latency_ms", filter=completed & Q(from_cache=False)),
            sent=Count("id", filter=~completed),
            reserved=Sum("reserved_usd", filter=~completed),
            # Billed at no known price, or reserved at no known worst case: the judge had no prices.
            unpriced=Count("id", filter=completed & Q(cost_usd__isnull=True)),
            unreserved=Count("id", filter=~completed & Q(reserved_usd__isnull=True)),
        )
    }
    out = []
    for judge in Judge.objects.filter(pk__in=units.keys()).order_by("name"):
        u, c = units[judge.pk], calls.get(judge.pk, {})
        out.append(
            JudgeSummary(
                name=judge.name,
                model=judge.model,
                kind=judge.kind,
                n_units=u["n"],
                errors=u["errors"],
                n_calls=c.get("n", 0),
                n_invalid_calls=c.get("invalid", 0),
                # Imported verdicts come with no call, so with no cost recorded here: unknown, not free.
                cost_usd=None if c.get("unpriced") or (judge.kind == Judge.Kind.IMPORTED and not c.get("n")) else float(c.get("cost") or 0),
                prompt_tokens=c.get("prompt") or 0,
                cached_tokens=c.get("cached") or 0,
                completion_tokens=c.get("completion") or 0,
                mean_latency_ms=None if c.get("latency") is None else float(c["latency"]),
                possibly_billed_usd=None if c.get("unreserved") else float(c.get("reserved") or 0),
                n_possibly_billed=c.get("sent", 0),
            )
        )
    return out


def annotator_times(*, campaign: Campaign, include_unsubmitted: bool = False) -> list[AnnotatorTime]:
    """Per annotator (by username), the time of each pair whose labels the report counts."""
    assignments = Assignment.objects.filter(pair__campaign=campaign, pair__gold__isnull=True, repeat_of__isnull=True)
    if not include_unsubmitted:
        assignments = assignments.filter(status=Assignment.Status.SUBMITTED)
    rows = assignments.annotate(n_labels=Count("labels", filter=~Q(labels__winner=""))).values_list(
        "annotator__username", "first_opened_at", "claimed_at", "submitted_at", "last_activity_at", "n_labels"
    )
    per: dict[str, tuple[list, list, list]] = defaultdict(lambda: ([], [], []))
    for username, opened, _claimed, submitted, last, n_labels in rows:
        if n_labels == 0:
            continue
        pairs, per_pair, per_criterion = per[username]
        pairs.append(1)
        start, end = opened, submitted or (last if include_unsubmitted else None)
        if start is None or end is None:
            continue
        seconds = (end - start).total_seconds()
        if seconds > 0:
            per_pair.append(seconds)
            per_criterion.append(seconds / n_labels)
    return [AnnotatorTime(name, len(p), pp, pc) for name, (p, pp, pc) in sorted(per.items())]


def calibration_inputs(*, campaign: Campaign, include_unsubmitted: bool = False) -> CalibrationInputs:
    pairs = _pair_infos(campaign)
    systems = sorted({s for info in pairs.values() for s in (info.system_a, info.system_b)})
    return CalibrationInputs(
        table=calibration_table(campaign=campaign, include_unsubmitted=include_unsubmitted, pairs=pairs),
        judges=judge_summaries(campaign=campaign),
        systems=systems,
        n_pairs=len(pairs),
        include_unsubmitted=include_unsubmitted,
        annotator_times=annotator_times(campaign=campaign, include_unsubmitted=include_unsubmitted),
        failed=failed_table(campaign=campaign, pairs=pairs),
        adjudicated=adjudicated_table(campaign=campaign, pairs=pairs),
        position=calibration_table(campaign=campaign, include_unsubmitted=include_unsubmitted, pairs=pairs, repeats=True, judges=False),
        inclusion=inclusion_probabilities(campaign=campaign),
    )


def inclusion_probabilities(*, campaign: Campaign) -> dict[str, float] | None:
    """The inclusion probability `sample_pairs` stored with each drawn pair of an actively sampled
    campaign (`PairAdmission.probability`), keyed str(pair id); None for a uniform campaign."""
    if getattr(campaign, "sampling", "uniform") != "active":
        return None
    rows = PairAdmission.objects.filter(pair__campaign=campaign).values_list("pair_id", "probability")
    return {str(pair_id): float(probability) for pair_id, probability in rows}


def rows_to_rank(*, campaign: Campaign) -> int:
    """The campaign's labels and verdicts (two counts): how big its report's rankings will be, before reading them."""
    labels = Label.objects.filter(assignment__pair__campaign=campaign).count()
    return labels + JudgeVerdict.objects.filter(unit__pair__campaign=campaign, unit__pair__kind=Item.Kind.PAIR).count()


def calibration_stamp(*, campaign: Campaign) -> tuple:
    """Changes whenever a label, a submission, a verdict, a call or an adjudicated answer of the campaign changes (cache key)."""
    labels = Label.objects.filter(assignment__pair__campaign=campaign).aggregate(n=Count("id"), last=Max("saved_at"))
    assignments = Assignment.objects.filter(pair__campaign=campaign).aggregate(
        submitted=Count("id", filter=Q(status=Assignment.Status.SUBMITTED)), last=Max("last_activity_at")
    )
    # A judge's units of pairs and of readings (one article alone; none in a pairwise campaign).
    units = JudgeUnit.objects.filter(pair__campaign=campaign).aggregate(
        n=Count("id"), last=Max("updated_at"), verdicts=Count("verdicts"), done=Count("id", filter=Q(status=JudgeUnit.Status.DONE))
    )
    calls = JudgeCall.objects.filter(unit__pair__campaign=campaign).aggregate(n=Count("id"), last=Max("id"))
    # Every change of a winner, an answer or a rationale writes one (an import may change labels and no time).
    changes = LabelChange.objects.filter(assignment__pair__campaign=campaign).aggregate(last=Max("id"))  # pairs' and readings' work
    # A decided item is never decided again (`answers.adjudication_save`), so the count and the last time see every decision.
    adjudications = Adjudication.objects.filter(campaign=campaign).aggregate(
        decided=Count("id", filter=~Q(winner="")), last=Max("decided_at")
    )
    # Answers about one article alone: in the stamp only when there are any, so a pairwise campaign's is as before.
    answers = Answer.objects.filter(assignment__pair__campaign=campaign).aggregate(n=Count("id"), last=Max("saved_at"))
    parts = (
        labels["n"], labels["last"], assignments["submitted"], assignments["last"], units["n"], units["done"], units["last"],
        units["verdicts"], calls["n"], calls["last"], changes["last"], adjudications["decided"], adjudications["last"],
    ) + ((answers["n"], answers["last"]) if answers["n"] else ())  # fmt: skip
    if getattr(campaign, "sampling", "uniform") == "active":  # the report weights by the stored inclusion probabilities
        admissions = PairAdmission.objects.filter(pair__campaign=campaign).aggregate(n=Count("pair"), last=Max("created_at"))
        parts += ("active", admissions["n"], admissions["last"])
    return tuple(p.isoformat() if hasattr(p, "isoformat") else p for p in parts)


# --- the disagreement browser -----------------------------------------------------------


@dataclass
class HumanVerdict:
    annotator: str
    winner: str  # system key or 'tie'
    first_system: str  # "" when the order shown is unknown
    rationale: str


@dataclass
class JudgeOrderVerdict:
    first_system: str
    winner: str
    rationale: str


@dataclass
class JudgeDisagreement:
    judge: str
    winner: str  # after merging the two orders like metrics.merge_swapped
    verdicts: list[JudgeOrderVerdict]


@dataclass
class DisagreementItem:
    pair: PairInfo
    human_winner: str
    humans: list[HumanVerdict]
    judges: list[JudgeDisagreement]


@dataclass
class Disagreements:
    criterion: Criterion | None
    items: list[DisagreementItem]
    n_items: int  # pairs with both a human majority and a verdict of the judge(s) shown
    n_split: int  # pairs whose humans have no strict majority (left out)
    n_disagree: int  # items listed before `limit`
    judges: list[str]  # judges with verdicts on the criterion


def _merged_winners(rows: list[tuple[int, str, str, bool]], pairs: dict[int, PairInfo]) -> dict[tuple[int, str], str]:
    """(pair, judge) -> the verdict both orders agree on, else tie; computed by metrics.merge_swapped."""
    if not rows:
        return {}
    columns = _Columns()
    for pair_id, judge, side, a_first in rows:
        columns.add(pairs[pair_id], "c", "c", judge, "judge", side, a_first)
    merged = merge_swapped(columns.table())
    v = merged.vocab
    names = (*v.systems, TIE)  # winner codes: the systems', then the tie's (`Vocab.tie_code`)
    pair_ids = [int(p) for p in v.pairs]  # the table's pairs are the ids as text
    return {(pair_ids[p], v.raters[r]): names[w] for p, r, w in zip(merged.pair.tolist(), merged.rater.tolist(), merged.winner.tolist())}


def disagreements(
    *,
    campaign: Campaign,
    criterion_key: str,
    judge_name: str | None = None,
    include_unsubmitted: bool = False,
    limit: int = 100,
) -> Disagreements:
    """Pairs where a judge's (merged) verdict on one criterion differs from the strict human majority.

    Pairs whose humans are split have no human verdict to disagree with: they are counted, not listed.
    Four queries, whatever the size of the campaign.
    """
    criterion = Criterion.objects.filter(criterion_set_id=campaign.criterion_set_id, key=criterion_key).first()
    if criterion is None:
        return Disagreements(None, [], 0, 0, 0, [])
    pairs = _pair_infos(campaign)
    humans: dict[int, list[HumanVerdict]] = defaultdict(list)
    labels = (
        human_label_rows(campaign=campaign, include_unsubmitted=include_unsubmitted)
        .filter(criterion=criterion)
        .order_by("assignment__annotator__username")
        .values_list(
            "assignment__pair_id",
            "assignment__annotator__username",
            "assignment__a_first",
            "assignment__order_known",
            "winner",
            "rationale",
        )
    )
    for pair_id, username, a_first, order_known, side, rationale in labels:
        info = pairs[pair_id]
        first = "" if not order_known else info.system_a if a_first else info.system_b
        humans[pair_id].append(HumanVerdict(username, _winner_system(info, side), first, rationale))
    verdicts = (
        judge_verdict_rows(campaign=campaign)
        .filter(criterion=criterion)
        .order_by("unit__judge__name", "-unit__a_first")
        .values_list("unit__pair_id", "unit__judge__name", "unit__a_first", "winner", "rationale")
    )
    by_judge: dict[tuple[int, str], list[JudgeOrderVerdict]] = defaultdict(list)
    raw = []
    for pair_id, judge, a_first, side, rationale in verdicts:
        info = pairs[pair_id]
        first = info.system_a if a_first else info.system_b
        by_judge[pair_id, judge].append(JudgeOrderVerdict(first, _winner_system(info, side), rationale))
        raw.append((pair_id, judge, side, a_first))
    merged = _merged_winners(raw, pairs)
    judge_names = sorted({name for _, name in by_judge})
    shown = [judge_name] if judge_name else judge_names
    items, n_items, n_split = [], 0, 0
    order = sorted(humans, key=lambda pk: (pairs[pk].topic, pairs[pk].system_a, pairs[pk].system_b, pk))
    majorities = majority_winners([[h.winner for h in humans[pk]] for pk in order])
    for pair_id, majority in zip(order, majorities):
        judged = [name for name in shown if (pair_id, name) in merged]
        if not judged:
            continue
        if majority is None:
            n_split += 1
            continue
        n_items += 1
        against = [
            JudgeDisagreement(name, merged[pair_id, name], by_judge[pair_id, name]) for name in judged if merged[pair_id, name] != majority
        ]
        if against:
            items.append(DisagreementItem(pairs[pair_id], majority, humans[pair_id], against))
    return Disagreements(criterion, items[:limit], n_items, n_split, len(items), judge_names)
