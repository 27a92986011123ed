"""Selective judging with a guarantee, and cascades of judges (after "Trust or Escalate", Jung,
Brahman and Choi, ICLR 2025). Pure numpy/scipy.

A judge gives its verdict only when its confidence reaches a threshold lambda and abstains
otherwise. lambda is calibrated on items that humans labelled, by fixed-sequence testing:

1. the candidate thresholds are taken from the highest down. By default they are the confidences
   at which 1%, 2%, ..., 100% of the calibration items are accepted (at most ``GRID`` candidates;
   every distinct confidence when there are fewer). The sequence starts at the first candidate
   that accepts at least ``min_accepted`` calibration items (default ``MIN_ACCEPTED`` = 30); the
   candidates above it are never tested. Starting on a handful of items would let one
   disagreement among the few most confident stop every judge: at alpha 0.15, delta 0.1, 15 items
   (the fewest that could pass at all, n >= ln(delta) / ln(1 - alpha)) pass only with no
   disagreement, 30 items with one. A candidate that could not pass even with no disagreement is
   skipped too. The grid, the minimum and the skipping depend on the confidences only, never on
   the labels, so the guarantee stands (``tests/test_selective_sequence.py`` checks it by
   simulation);
2. at each candidate, the disagreement rate with the humans on the items it accepts (confidence
   >= lambda) is bounded above by the exact one-sided Clopper-Pearson bound at level delta
   (the 1 - delta quantile of Beta(k + 1, n - k) for k disagreements in n accepted items; 1 when k = n);
3. the sequence stops before the first candidate whose bound exceeds alpha; lambda-hat is the
   last candidate that passed, or there is none and the judge abstains on every item.

The guarantee: with probability at least 1 - delta over the draw of the calibration items, the
judge agrees with the humans on at least 1 - alpha of the items it accepts (items drawn like the
calibration items). The bound is the same test as rejecting "disagreement > alpha" when
P(Binomial(n, alpha) <= k) <= delta.

Assumptions to state beside the figures: the calibration items and the items judged later are
exchangeable; each calibration item carries one human reference (pass the agreement with one
annotator, or with the majority of several: the guarantee is then about that reference); the
binomial treats items as independent, which the criteria of one pair are not, so calibrate on one
criterion per pair where that matters. Confidences that are NaN (no confidence) are never accepted.

Coverage and agreement on the calibration (and held-out) items are estimates: they carry their n
and a 95% pair-bootstrap CI (``pair`` codes cluster the items; without them each item is its own
unit), as ``bootstrap.Estimate``.

Cascades: judges calibrated cheapest first, each on the items every earlier judge abstained on;
items no judge accepts go to humans. Each stage carries its own guarantee at delta; all stages
hold together with probability at least 1 - (stages x delta) (a union bound), or at 1 - delta with
``split_delta=True`` (each stage at delta / stages). When every stage holds, the agreement on all
judge-accepted items is at least 1 - alpha, since it is a weighted mean of the stages'. (A stage's
calibration items are the ones earlier stages abstained on, and an earlier threshold was chosen
with the labels of some of them, those its failing step accepted: a dependence the per-stage bound,
like the paper's, leaves aside.)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from calibration.metrics import distributions as dist
from calibration.metrics.bootstrap import Estimate, bootstrap_ratio

ROUNDS = 1000
GRID = 100
MIN_ACCEPTED = 30  # the fixed sequence's first candidate accepts at least this many calibration items


# --------------------------------------------------------------------------
# the bound and the fixed sequence
# --------------------------------------------------------------------------


def clopper_pearson_upper(k, n, delta: float) -> np.ndarray:
    """Exact one-sided upper confidence bound (level 1 - delta) of a binomial rate: k of n."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = dist.beta_quantile(1.0 - delta, k + 1.0, n - k)
    return np.where(k >= n, 1.0, bound)


@dataclass(frozen=True)
class Step:
    """One candidate threshold of the sequence: its items accepted, disagreements, bound."""

    threshold: float
    n_accepted: int
    n_disagree: int
    bound: float
    passed: bool


def _check(alpha: float, delta: float) -> None:
    if not (0.0 < alpha < 1.0) or not (0.0 < delta < 1.0):
        raise ValueError(f"alpha and delta must be in (0, 1), got alpha = {alpha}, delta = {delta}")


def _inputs(confidence, agree) -> tuple[np.ndarray, np.ndarray]:
    confidence = np.asarray(confidence, dtype=float)
    agree = np.asarray(agree)
    if confidence.ndim != 1 or agree.shape != confidence.shape:
        raise ValueError("confidence and agree must be one-dimensional and of the same length")
    if agree.dtype != bool:
        if not np.isin(agree, (0, 1)).all():
            raise ValueError("agree must be booleans (or 0/1): the judge's verdict matches the human reference")
        agree = agree.astype(bool)
    return confidence, agree


def default_candidates(confidence) -> np.ndarray:
    """The default thresholds, highest first: the confidences at which ceil(k n / GRID) items are
    accepted, k = 1..GRID (n finite confidences)."""
    conf = np.sort(np.asarray(confidence, dtype=float)[np.isfinite(confidence)])[::-1]
    if len(conf) == 0:
        return conf
    counts = np.ceil(np.arange(1, GRID + 1) * len(conf) / GRID).astype(np.int64)
    return np.unique(conf[counts - 1])[::-1]


def fixed_sequence(
    confidence, agree, *, alpha: float, delta: float, candidates=None, min_accepted: int = MIN_ACCEPTED
) -> tuple[float | None, list[Step]]:
    """(lambda-hat or None, the steps tested: every passing one and the first failing one).

    ``confidence``: per calibration item, the judge's confidence (higher = surer; NaN = none);
    ``agree``: whether its verdict matches the human reference. ``candidates``: the thresholds to
    try (any order; tried from the highest), default :func:`default_candidates`. Candidates
    accepting fewer than ``min_accepted`` items (at least 1) are not tested.
    """
    _check(alpha, delta)
    if int(min_accepted) != min_accepted or min_accepted < 1:
        raise ValueError(f"the minimum of accepted items must be a whole number, 1 or more, got {min_accepted}")
    confidence, agree = _inputs(confidence, agree)
    finite = np.isfinite(confidence)
    conf, wrong = confidence[finite], ~agree[finite]
    order = np.argsort(-conf, kind="stable")
    conf, wrong = conf[order], wrong[order]
    if candidates is None:
        lam = default_candidates(conf)
    else:
        lam = np.unique(np.asarray(candidates, dtype=float))[::-1]
        if not np.isfinite(lam).all():
            raise ValueError("candidate thresholds must be finite numbers")
    # accepted at lambda: confidence >= lambda, i.e. the first n of the descending order
    n_acc = np.searchsorted(-conf, -lam, side="right")
    # A candidate that could not pass even with no disagreement (too few items accepted) is skipped:
    # that depends on the confidences alone, never on the labels, so the guarantee stands.
    can_pass = (n_acc >= min_accepted) & (clopper_pearson_upper(0, np.maximum(n_acc, 1), delta) <= alpha)
    lam, n_acc = lam[can_pass], n_acc[can_pass]
    k = np.concatenate([[0], np.cumsum(wrong)])[n_acc]
    bound = clopper_pearson_upper(k, n_acc, delta)
    fails = np.flatnonzero(bound > alpha)
    stop = int(fails[0]) if len(fails) else len(lam)
    steps = [Step(float(lam[i]), int(n_acc[i]), int(k[i]), float(bound[i]), i < stop) for i in range(min(stop + 1, len(lam)))]
    return (float(lam[stop - 1]) if stop > 0 else None), steps


# --------------------------------------------------------------------------
# one judge
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SelectiveResult:
    """A judge's calibrated threshold and what it does on the calibration items.

    ``threshold``: lambda-hat (accept confidence >= it), None = no threshold (abstain always).
    ``n``: calibration items; ``n_accepted``; ``coverage`` (accepted / n) and ``agreement`` (on the
    accepted items; None when none) as Estimates with 95% CIs; ``bound``: the Clopper-Pearson bound
    on disagreement at lambda-hat; ``n_steps``: thresholds that passed; ``stopped_at``: the first
    that failed (None when none did). ``guarantee``: the claim in words.
    """

    judge: str
    alpha: float
    delta: float
    threshold: float | None
    n: int
    n_accepted: int
    coverage: Estimate
    agreement: Estimate | None
    bound: float | None
    n_steps: int
    stopped_at: Step | None
    guarantee: str

    def as_dict(self) -> dict:
        return asdict(self)


def guarantee_text(judge: str, threshold: float | None, alpha: float, delta: float) -> str:
    """The guarantee in words."""
    if threshold is None:
        return (
            f"No threshold meets the bound: {judge} abstains on every item (at every confidence tested, its disagreement "
            f"with the humans could exceed {alpha:.0%} at level {delta:g}), so its items go on to the next judge or to humans."
        )
    return (
        f"With probability at least {1 - delta:.0%}, {judge} agrees with the humans on at least {1 - alpha:.0%} of the items "
        f"it accepts (confidence >= {threshold:.4g})."
    )


def _estimates(accepted, agree, pair, rounds: int, seed: int) -> tuple[Estimate, Estimate | None]:
    units = np.arange(len(accepted)) if pair is None else _pair_codes(pair, len(accepted))
    coverage = bootstrap_ratio(units, accepted.astype(float), np.ones(len(accepted)), rounds, seed)
    if not accepted.any():
        return coverage, None
    agreement = bootstrap_ratio(units[accepted], agree[accepted].astype(float), np.ones(int(accepted.sum())), rounds, seed)
    return coverage, agreement


def _pair_codes(pair, n: int) -> np.ndarray:
    pair = np.asarray(pair)
    if pair.shape != (n,):
        raise ValueError("pair must give one pair per item")
    return np.unique(pair.astype(str) if pair.dtype.kind not in "iu" else pair, return_inverse=True)[1]


def selective_calibrate(
    confidence,
    agree,
    *,
    alpha: float,
    delta: float,
    judge: str = "the judge",
    candidates=None,
    pair=None,
    rounds: int = ROUNDS,
    seed: int = 0,
    min_accepted: int = MIN_ACCEPTED,
) -> SelectiveResult:
    """Calibrate one judge's threshold by fixed-sequence testing (module docstring).

    ``pair`` (optional, one per item) clusters the CIs of coverage and agreement; ``rounds``
    bootstrap rounds (0: no CI). An empty calibration set gives no threshold.
    """
    confidence, agree = _inputs(confidence, agree)
    threshold, steps = fixed_sequence(confidence, agree, alpha=alpha, delta=delta, candidates=candidates, min_accepted=min_accepted)
    accepted = confidence >= threshold if threshold is not None else np.zeros(len(confidence), bool)
    coverage, agreement = _estimates(accepted, agree, pair, rounds, seed)
    passed = [s for s in steps if s.passed]
    return SelectiveResult(
        judge=judge, alpha=alpha, delta=delta, threshold=threshold, n=len(confidence), n_accepted=int(accepted.sum()),
        coverage=coverage, agreement=agreement, bound=passed[-1].bound if passed else None, n_steps=len(passed),
        stopped_at=next((s for s in steps if not s.passed), None), guarantee=guarantee_text(judge, threshold, alpha, delta),
    )  # fmt: skip


@dataclass(frozen=True)
class HoldoutCheck:
    """The calibrated threshold on held-out human items: ``agreement`` on the accepted ones beside
    ``target`` = 1 - alpha (``meets``: the point estimate reaches it), and ``coverage``."""

    judge: str
    threshold: float | None
    target: float
    n: int
    n_accepted: int
    coverage: Estimate
    agreement: Estimate | None
    meets: bool | None

    def as_dict(self) -> dict:
        return asdict(self)


def selective_holdout(
    confidence, agree, *, threshold: float | None, alpha: float, judge: str = "the judge", pair=None, rounds: int = ROUNDS, seed: int = 0
) -> HoldoutCheck:
    """Check a threshold on held-out items (not used to calibrate it). ``meets`` is None when
    nothing is accepted."""
    confidence, agree = _inputs(confidence, agree)
    accepted = confidence >= threshold if threshold is not None else np.zeros(len(confidence), bool)
    coverage, agreement = _estimates(accepted, agree, pair, rounds, seed)
    meets = None if agreement is None else bool(agreement.value >= 1 - alpha)
    return HoldoutCheck(judge, threshold, 1 - alpha, len(confidence), int(accepted.sum()), coverage, agreement, meets)


# --------------------------------------------------------------------------
# cascades
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CascadeJudge:
    """A judge of a cascade: its confidence and agreement with the human reference on the same
    calibration items as the others (aligned arrays), and its cost per item it is asked about."""

    name: str
    confidence: np.ndarray
    agree: np.ndarray
    cost_per_item: float


@dataclass(frozen=True)
class CascadeStage:
    """One judge in cascade order: asked about ``n_reaching`` items (those every earlier judge
    abstained on), accepted ``n_accepted``; ``cost`` = n_reaching x its cost per item;
    ``cost_per_accepted`` (None when it accepts nothing); ``share`` of all items it decides."""

    selective: SelectiveResult
    n_reaching: int
    n_accepted: int
    share: float
    cost: float
    cost_per_accepted: float | None


@dataclass(frozen=True)
class CascadeResult:
    """A calibrated cascade: stages in order, then humans.

    ``n``: calibration items; ``n_to_humans`` and ``human_share``; ``agreement`` on all
    judge-accepted items (Estimate, None when none); ``cost`` (judges' calls + humans on the rest)
    against ``all_human_cost`` (``saving`` = 1 - cost / all-human); ``guarantee`` in words for the
    whole cascade; ``stage_delta``: the delta each stage was calibrated at.
    """

    alpha: float
    delta: float
    stage_delta: float
    stages: tuple[CascadeStage, ...]
    n: int
    n_to_humans: int
    human_share: float
    human_cost_per_item: float
    agreement: Estimate | None
    cost: float
    all_human_cost: float
    saving: float | None
    guarantee: str

    @property
    def thresholds(self) -> dict[str, float | None]:
        return {s.selective.judge: s.selective.threshold for s in self.stages}

    def as_dict(self) -> dict:
        return asdict(self)


def cascade_route(confidences: Sequence, thresholds: Sequence[float | None]) -> np.ndarray:
    """Which stage decides each item: the index of the first judge (cascade order) whose confidence
    reaches its threshold, or -1 (humans). ``confidences``: one array per judge, aligned."""
    if len(confidences) != len(thresholds):
        raise ValueError("one confidence array per threshold")
    n = len(confidences[0]) if len(confidences) else 0
    route = np.full(n, -1, dtype=np.int64)
    for s, (conf, lam) in enumerate(zip(confidences, thresholds)):
        conf = np.asarray(conf, dtype=float)
        if conf.shape != (n,):
            raise ValueError("every judge's confidence must cover the same items")
        if lam is not None:
            route[(route < 0) & (conf >= lam)] = s
    return route


def cascade_calibrate(
    judges: Sequence[CascadeJudge],
    *,
    alpha: float,
    delta: float,
    human_cost_per_item: float,
    split_delta: bool = False,
    pair=None,
    rounds: int = ROUNDS,
    seed: int = 0,
    min_accepted: int = MIN_ACCEPTED,
) -> CascadeResult:
    """Calibrate a cascade: judges sorted by cost per item (cheapest first; ties keep the given
    order), each calibrated by :func:`selective_calibrate` on the items all earlier judges
    abstained on. Costs are inputs in any one currency (per item asked, and per human item)."""
    _check(alpha, delta)
    if not judges:
        raise ValueError("a cascade needs at least one judge")
    if human_cost_per_item < 0 or any(j.cost_per_item < 0 for j in judges):
        raise ValueError("costs must be non-negative")
    ordered = sorted(judges, key=lambda j: j.cost_per_item)
    n = len(np.asarray(ordered[0].confidence))
    for j in ordered:
        if np.asarray(j.confidence).shape != (n,) or np.asarray(j.agree).shape != (n,):
            raise ValueError(f"judge {j.name!r}: confidence and agree must cover the same {n} calibration items as the others")
    pair_codes = None if pair is None else _pair_codes(pair, n)
    stage_delta = delta / len(ordered) if split_delta else delta
    reaching = np.ones(n, bool)
    stages, accepted_all, agree_all = [], np.zeros(n, bool), np.zeros(n, bool)
    for j in ordered:
        conf, agree = _inputs(j.confidence, j.agree)
        idx = np.flatnonzero(reaching)
        sel = selective_calibrate(
            conf[idx], agree[idx], alpha=alpha, delta=stage_delta, judge=j.name,
            pair=None if pair_codes is None else pair_codes[idx], rounds=rounds, seed=seed, min_accepted=min_accepted,
        )  # fmt: skip
        accepted = reaching & (conf >= sel.threshold) if sel.threshold is not None else np.zeros(n, bool)
        cost = len(idx) * j.cost_per_item
        n_acc = int(accepted.sum())
        stages.append(CascadeStage(sel, len(idx), n_acc, n_acc / n if n else 0.0, cost, cost / n_acc if n_acc else None))
        accepted_all |= accepted
        agree_all |= accepted & agree
        reaching &= ~accepted
    n_humans = int(reaching.sum())
    agreement = None
    if accepted_all.any():
        units = np.arange(n) if pair_codes is None else pair_codes
        agreement = bootstrap_ratio(
            units[accepted_all], agree_all[accepted_all].astype(float), np.ones(int(accepted_all.sum())), rounds, seed
        )
    cost = sum(s.cost for s in stages) + n_humans * human_cost_per_item
    all_human = n * human_cost_per_item
    return CascadeResult(
        alpha=alpha, delta=delta, stage_delta=stage_delta, stages=tuple(stages), n=n, n_to_humans=n_humans,
        human_share=n_humans / n if n else 0.0, human_cost_per_item=human_cost_per_item, agreement=agreement, cost=cost,
        all_human_cost=all_human, saving=(1 - cost / all_human) if all_human > 0 else None,
        guarantee=_cascade_text(len(stages), alpha, delta, stage_delta),
    )  # fmt: skip


def _cascade_text(stages: int, alpha: float, delta: float, stage_delta: float) -> str:
    overall = min(1.0, stages * stage_delta)
    return (
        f"Each judge is calibrated at level {stage_delta:g}; with probability at least {1 - overall:.0%} every stage holds "
        f"together, and then the judges agree with the humans on at least {1 - alpha:.0%} of all the items they accept; "
        "the items no judge accepts go to humans."
    )


def cascade_holdout(
    result: CascadeResult, confidences: Sequence, agrees: Sequence, *, pair=None, rounds: int = ROUNDS, seed: int = 0
) -> dict:
    """The calibrated cascade on held-out items: per stage (in cascade order) and overall, the
    agreement on accepted items beside 1 - alpha. ``confidences``/``agrees``: one aligned array per
    stage, in the cascade's order (``result.stages``). Returns {"stages": [HoldoutCheck, ...],
    "overall": HoldoutCheck for all judge-accepted items (threshold None), "n_to_humans": int}."""
    route = cascade_route(confidences, [s.selective.threshold for s in result.stages])
    n = len(route)
    pair_codes = None if pair is None else _pair_codes(pair, n)
    checks = []
    for s, stage in enumerate(result.stages):
        idx = np.flatnonzero((route >= s) | (route == -1))  # the items no earlier judge accepted
        conf, agree = _inputs(confidences[s], agrees[s])
        checks.append(
            selective_holdout(
                conf[idx], agree[idx], threshold=stage.selective.threshold, alpha=result.alpha, judge=stage.selective.judge,
                pair=None if pair_codes is None else pair_codes[idx], rounds=rounds, seed=seed,
            )
        )  # fmt: skip
    decided = route >= 0
    agree_decided = np.zeros(n, bool)
    for s in range(len(result.stages)):
        agree_decided |= (route == s) & _inputs(confidences[s], agrees[s])[1]
    coverage, agreement = _estimates(decided, agree_decided, pair_codes, rounds, seed)
    meets = None if agreement is None else bool(agreement.value >= 1 - result.alpha)
    overall = HoldoutCheck("the cascade", None, 1 - result.alpha, n, int(decided.sum()), coverage, agreement, meets)
    return {"stages": checks, "overall": overall, "n_to_humans": int((route < 0).sum())}
