"""Speed and attention, read for staff: each annotator's times and rationales from the database, given to
the pure rules of `calibration.metrics.attention`. Flags to look at, never a rejection: nothing here
changes a label, a claim or the report.

Only submitted work counts (gold pairs included: they are answered like any other pair). Times:

* a pair's time is from first opening it to submitting it;
* a pair's words are those of its two articles as shown (their cleaned word counts), for the reading
  speed of the absolute floor (`metrics.attention.FLOORS`);
* a criterion's time is from the previous answer on the same pair (or from first opening the pair,
  for the first answer) to this criterion's first answer. The annotation page shows one criterion
  after another, so this is the time spent reading for and deciding it; an answer changed later does
  not move it.

A pair opened before a time was recorded (imported work) gives no time and counts as untimed.

Position figures (`quality.human_position`, the judges' own code run per annotator) read the labels the
report reads, with each annotator's swapped repeats (`Campaign.repeat_rate`): the first-position rate
(0.5: no lean) and the position consistency, the share of repeated answers given to the same article
in both orders, which stays at n 0 until the annotator has submitted a repeat. Times and rationales read
the repeats' rationales too (a text given again on the same criterion of the same pair is not a repeated
text), but not their times: a pair read before is quicker, and would look hasty against first readings.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotate.models import Assignment, Campaign, Label
from calibration import selectors
from calibration.metrics.attention import RaterRationales, Rationale, SpeedReport, Timing, repeated_rationales, speed_flags
from calibration.metrics.quality import HumanPosition, human_position


@dataclass(frozen=True)
class AttentionInputs:
    timings: list[Timing]
    rationales: list[Rationale]


def _seconds(start, end) -> float | None:
    return (end - start).total_seconds() if start is not None and end is not None else None


def attention_inputs(*, campaign: Campaign) -> AttentionInputs:
    """The campaign's submitted work as the timings and rationales `metrics.attention` reads (raters by username)."""
    work = Assignment.objects.filter(pair__campaign=campaign, status=Assignment.Status.SUBMITTED)
    opened = {pk: (name, pair_id, first, submitted, repeat, words_a + words_b) for pk, name, pair_id, first, submitted, repeat, words_a, words_b in work.values_list(
        "pk", "annotator__username", "pair_id", "first_opened_at", "submitted_at", "repeat_of_id",
        "pair__article_a__word_count", "pair__article_b__word_count",
    )}  # fmt: skip
    # A swapped repeat is a pair read before: its times would look fast against first readings, so they are left out.
    timings = [
        Timing(name, str(pair_id), _seconds(first, done), words=words)
        for name, pair_id, first, done, repeat, words in opened.values()
        if repeat is None
    ]
    rationales = []
    previous: dict[int, object] = {}
    labels = (
        Label.objects.filter(assignment__in=work)
        .exclude(winner="")
        .order_by("assignment_id", "created_at", "pk")
        .values_list("assignment_id", "criterion__key", "created_at", "rationale")
    )
    for assignment_id, key, created, text in labels:
        name, pair_id, first, _, repeat, _ = opened[assignment_id]
        start = previous.get(assignment_id, first)
        if repeat is None:
            timings.append(Timing(name, str(pair_id), _seconds(start, created), key))
        previous[assignment_id] = created
        rationales.append(Rationale(name, str(pair_id), key, text))
    return AttentionInputs(timings, rationales)


@dataclass(frozen=True)
class AttentionFlags:
    speed: SpeedReport
    rationales: list[RaterRationales]
    n_answers: int  # submitted answers read
    n_pairs: int  # submitted pairs timed (swapped repeats left out)
    position: list[HumanPosition]  # raters named `human:<username>`, as in the report


def attention_flags(*, campaign: Campaign) -> AttentionFlags:
    inputs = attention_inputs(campaign=campaign)
    return AttentionFlags(
        speed_flags(inputs.timings),
        repeated_rationales(inputs.rationales),
        n_answers=len(inputs.rationales),
        n_pairs=sum(1 for t in inputs.timings if t.criterion is None),
        position=human_position(selectors.calibration_table(campaign=campaign, repeats=True, judges=False)),
    )
