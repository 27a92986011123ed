"""Speed and attention flags for staff: answers given much faster than the campaign's usual time, and
rationales pasted verbatim across criteria or pairs. Flags to look at, never a rejection.

Speed, at two levels, each answer against the campaign and against the rater's own habit:

* ``criterion``: the seconds spent on one criterion of one pair, compared with the campaign's median
  for *that criterion* (some criteria take longer to judge than others);
* ``pair``: the seconds spent on a whole pair, compared with the campaign's median pair time.

An answer's *relative time* is its seconds divided by that campaign median. The rule
(:data:`SPEED_RULE`, defaults in brackets): an answer is **fast** when its relative time is below
``fast_fraction`` (0.25), i.e. under a quarter of the campaign's median; it is **fast for the rater**
when its relative time is below ``fast_fraction`` times the rater's own median relative time (a burst
of haste by an otherwise careful reader). A rater is flagged at a level when their median relative
time is below ``slow_fraction`` (0.5: they take under half the usual time throughout), or when at
least ``max_fast_share`` (0.25) of their answers there are fast. The campaign medians include every
rater's times. Answers without a usable time (missing, zero, negative, not finite: imported work)
are counted as untimed and left out.

Relative times cannot see a campaign whose raters all rush (two annotators who both answer 39
criteria in 28 s set the medians themselves), so an answer is also **fast** below an absolute floor
(:data:`FLOORS`): a criterion answered in under ``floor_seconds`` (4 s: reading a criterion of 20-40
words and choosing takes longer), or a pair whose articles were read at more than
``max_words_per_minute`` (1,000: well above skimming speed) over the pair's whole time. The pair floor
needs the words shown (``Timing.words``); without them only the relative rule applies.

Rationales: texts are compared after normalisation (Unicode NFKC, case folded, every run of
characters that are not letters or digits made one space, trimmed); an empty result is no rationale.
An answer's rationale is *repeated* when the same normalised text is the rationale of another answer
of the same rater on a different criterion or a different pair (the same criterion of the same pair
met again, a swapped repeat, is the same question and does not count). A rater is flagged when at
least ``min_repeated`` (3) of their answers carry a repeated rationale.

Shares carry the clustered Wilson interval of :mod:`quality` (answers of one pair are not independent).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import asdict, dataclass
from typing import Iterable

import numpy as np

from calibration.metrics.bootstrap import Estimate
from calibration.metrics.quality import clustered_share

LEVELS = ("criterion", "pair")
SPEED_RULE = (
    "an answer is fast when it took under {fast:.0%} of the campaign's median time for the same criterion "
    "(or, for a whole pair, the campaign's median pair time); a rater is flagged when their median relative "
    "time is under {slow:.0%} of the campaign's, or when {share:.0%} or more of their answers are fast"
)
FLOORS = (
    "answers under an absolute floor are fast too, whatever the campaign's pace: a criterion in under {floor:g} s, "
    "a pair read at more than {wpm:,.0f} words a minute"
)
_NOT_WORD = re.compile(r"[^\w]+|_+")


@dataclass(frozen=True)
class Timing:
    """Seconds a rater spent on one criterion of a pair (``criterion`` set) or on the whole pair (None)."""

    rater: str
    pair: str
    seconds: float | None
    criterion: str | None = None
    words: int | None = None  # words of the articles shown, for a whole pair's reading speed


@dataclass(frozen=True)
class RaterSpeed:
    """One rater at one level. ``relative_median``: the median of their answers' relative times (1.0
    is the campaign's pace); ``fast``: share of their timed answers that are fast (n = timed answers);
    ``fast_for_self``: how many are under ``fast_fraction`` of their own median; ``fast_answers``:
    (pair, criterion or None) of the fast ones; ``reasons``: why flagged (empty: not flagged)."""

    rater: str
    level: str
    n_untimed: int
    median_seconds: float | None
    relative_median: float | None
    fast: Estimate
    fast_for_self: int
    fast_answers: tuple[tuple[str, str | None], ...]
    reasons: tuple[str, ...]

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)

    def as_dict(self) -> dict:
        return {**asdict(self), "flagged": self.flagged}


@dataclass(frozen=True)
class SpeedReport:
    """The rule in words, the campaign's medians (``campaign_median[level]``: per criterion name at the
    criterion level, under the key ``""`` at the pair level) and one :class:`RaterSpeed` per rater and level."""

    rule: str
    campaign_median: dict[str, dict[str, float]]
    raters: tuple[RaterSpeed, ...]

    def flagged(self) -> dict[str, tuple[str, ...]]:
        """rater -> reasons, for :func:`quality.flagged_raters`."""
        out: dict[str, list[str]] = {}
        for r in self.raters:
            if r.reasons:
                out.setdefault(r.rater, []).extend(r.reasons)
        return {k: tuple(v) for k, v in out.items()}

    def as_dict(self) -> dict:
        return {"rule": self.rule, "campaign_median": self.campaign_median, "raters": [r.as_dict() for r in self.raters]}


def _usable(seconds) -> bool:
    return seconds is not None and isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0


def _under_floor(t: Timing, floor_seconds: float, max_words_per_minute: float) -> bool:
    """Below the absolute floor: a criterion under `floor_seconds`, a pair read faster than `max_words_per_minute`."""
    if t.criterion is not None:
        return t.seconds < floor_seconds
    return bool(t.words) and max_words_per_minute > 0 and t.words / (t.seconds / 60.0) > max_words_per_minute


def speed_flags(
    timings: Iterable[Timing],
    *,
    fast_fraction: float = 0.25,
    slow_fraction: float = 0.5,
    max_fast_share: float = 0.25,
    floor_seconds: float = 4.0,
    max_words_per_minute: float = 1000.0,
) -> SpeedReport:
    """Speed flags per rater and level (see the module doc for the rule). Raters appear in name order,
    each at the levels they have timings for; a rater whose answers are all untimed shows n 0."""
    for name, x in (("fast_fraction", fast_fraction), ("slow_fraction", slow_fraction), ("max_fast_share", max_fast_share)):
        if not 0.0 < x <= 1.0:
            raise ValueError(f"{name} must be in (0, 1], got {x}")
    for name, x in (("floor_seconds", floor_seconds), ("max_words_per_minute", max_words_per_minute)):
        if not (math.isfinite(x) and x >= 0):
            raise ValueError(f"{name} must be a number >= 0, got {x}")
    rows = list(timings)
    medians: dict[str, dict[str, float]] = {}
    out = []
    for level in LEVELS:
        at = [t for t in rows if (t.criterion is not None) == (level == "criterion")]
        if not at:
            continue
        by_key: dict[str, list[float]] = {}
        for t in at:
            if _usable(t.seconds):
                by_key.setdefault(t.criterion or "", []).append(float(t.seconds))
        medians[level] = {k: float(np.median(v)) for k, v in sorted(by_key.items())}
        for rater in sorted({t.rater for t in at}):
            mine = [t for t in at if t.rater == rater]
            timed = [t for t in mine if _usable(t.seconds)]
            relative = np.array([t.seconds / medians[level][t.criterion or ""] for t in timed], dtype=float)
            fast = (relative < fast_fraction) | np.array([_under_floor(t, floor_seconds, max_words_per_minute) for t in timed], dtype=bool)
            share = clustered_share(fast, np.array([t.pair for t in timed], dtype=object).astype(str))
            own = float(np.median(relative)) if len(relative) else None
            reasons = []
            if own is not None and own < slow_fraction:
                reasons.append(f"{level} times: median {own:.2f} of the campaign's (under {slow_fraction:.2f}), n={len(timed)}")
            if share.value is not None and share.value >= max_fast_share:
                reasons.append(
                    f"{level} times: {share.value:.0%} of {share.n} answers under {fast_fraction:.0%} of the campaign's median "
                    f"or under the absolute floor (95% CI {share.ci_low:.0%}–{share.ci_high:.0%})"
                )
            out.append(
                RaterSpeed(
                    rater, level, len(mine) - len(timed), float(np.median([t.seconds for t in timed])) if timed else None, own, share,
                    int((relative < fast_fraction * own).sum()) if own is not None else 0,
                    tuple((t.pair, t.criterion) for t, f in zip(timed, fast) if f), tuple(reasons),
                )
            )  # fmt: skip
    rule = SPEED_RULE.format(fast=fast_fraction, slow=slow_fraction, share=max_fast_share)
    rule += "; " + FLOORS.format(floor=floor_seconds, wpm=max_words_per_minute)
    return SpeedReport(rule, medians, tuple(sorted(out, key=lambda r: (r.rater, LEVELS.index(r.level)))))


# --------------------------------------------------------------------------
# rationales repeated verbatim
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Rationale:
    """A rater's rationale for one criterion of one pair."""

    rater: str
    pair: str
    criterion: str
    text: str


@dataclass(frozen=True)
class RepeatGroup:
    """One normalised text and the (pair, criterion) answers of one rater that carry it."""

    text: str
    answers: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RaterRationales:
    """``repeated``: share of the rater's answers with a rationale whose text repeats on another
    criterion or pair (n = answers with a rationale); ``groups``: the repeated texts, most used first."""

    rater: str
    repeated: Estimate
    groups: tuple[RepeatGroup, ...]
    flagged: bool

    def as_dict(self) -> dict:
        return asdict(self)


def normalise_rationale(text: str) -> str:
    """The form in which two rationales count as the same text (see the module doc)."""
    folded = unicodedata.normalize("NFKC", text or "").casefold()
    return _NOT_WORD.sub(" ", folded).strip()


def repeated_rationales(rationales: Iterable[Rationale], *, min_repeated: int = 3) -> list[RaterRationales]:
    """Rationales each rater repeated verbatim across criteria or pairs (module doc), raters in name
    order; raters without any rationale are left out."""
    if min_repeated < 2:
        raise ValueError("min_repeated must be at least 2 (one answer cannot repeat)")
    by_rater: dict[str, list[tuple[str, str, str]]] = {}
    for r in rationales:
        text = normalise_rationale(r.text)
        if text:
            by_rater.setdefault(r.rater, []).append((r.pair, r.criterion, text))
    out = []
    for rater in sorted(by_rater):
        answers = by_rater[rater]
        keys_of: dict[str, set[tuple[str, str]]] = {}
        for pair, criterion, text in answers:
            keys_of.setdefault(text, set()).add((pair, criterion))
        repeated = np.array([len(keys_of[text]) > 1 for _, _, text in answers])
        share = clustered_share(repeated, np.array([pair for pair, _, _ in answers], dtype=object).astype(str))
        groups = sorted(
            (RepeatGroup(text, tuple(sorted(keys))) for text, keys in keys_of.items() if len(keys) > 1),
            key=lambda g: (-len(g.answers), g.text),
        )
        out.append(RaterRationales(rater, share, tuple(groups), int(repeated.sum()) >= min_repeated))
    return out
