"""The Alternative Annotator Test (alt-test): can a judge stand in for the human annotators?

After Calderon, Reichart and Dror (ACL 2025). Pure numpy/scipy; the planner that simulates the
test's power lives in ``alttest_plan``.

The procedure, for one judge
----------------------------
Leave out one annotator *j* at a time. On each item *j* labelled, score both the judge and *j*
against the *remaining* annotators of that item:

* ``scoring="categorical"``: the share of the remaining annotators whose label each one matches;
* ``scoring="numeric"``: minus the root mean squared difference to the remaining annotators' values.

``W_f = 1`` when the judge scores at least as well as *j*, ``W_h = 1`` when *j* scores at least as
well as the judge (a tie sets both). Per annotator, a one-sided one-sample t-test of
``H0: mean(W_h - W_f) >= epsilon`` against ``H1: mean(W_h - W_f) < epsilon``; the annotators'
p-values are corrected together with Benjamini-Yekutieli at ``q`` (0.05). The winning rate
``omega`` is the share of tested annotators whose H0 is rejected, and the judge passes when
``omega >= 0.5``. The advantage probability ``rho`` is the mean over tested annotators of
``mean(W_f)``; it ranks judges. Its 95% CI is the percentile interval of the report's seeded pair
bootstrap (``bootstrap.PairBootstrap``: pairs drawn with replacement, each bringing all its labels;
in the per-criterion form one resampling of the pairs serves every criterion).

Input: :class:`Ratings` (``alttest_wins``, imported here), the humans' labels and the judge's
verdicts in long form; ``Ratings.from_annotations`` / ``from_verdicts`` take the paper's dicts.

Forms
-----
* ``unit="item"`` (the paper's): every (pair, criterion) is an item and the t-test runs over
  *j*'s items. The criteria of one pair are not independent, so this form is for reproducing
  published figures.
* ``unit="pair"`` (pooled): ``W_h - W_f`` and ``W_f`` are first averaged over *j*'s criteria
  within each pair; the t-test and ``mean(W_f)`` are then over *j*'s pairs.
* :func:`alt_test_by_criterion`: the item form on each criterion alone (one item per pair), with
  Benjamini-Yekutieli across every (criterion, annotator) test at once; "passes on X of K criteria".
* :func:`alt_test_pooled`, :func:`alt_test_by_criterion_pooled`: the same over several groups of
  criteria, each scored its own way (ratings of different scales, counts, checklists): a comparison
  is within one item, so pooling needs no common scale.

What counts, and when the test cannot run
-----------------------------------------
An item is *usable* when at least ``min_humans_per_item`` annotators (default 2: the one left out
and at least one other, as in the authors' code; the ``meta-evaluator`` package's port asks for 3)
labelled it and the judge gave a verdict on it.
An annotator's count is the number of *units* (items, or pairs in the pooled form) holding at
least one of its labels on a usable item. Annotators with fewer than ``min_items`` (30) units are
not tested (they are listed with their counts); the test runs only when at least
``min_annotators`` (3) annotators are tested. Otherwise the result has ``ran=False``, no verdict,
and ``reason`` says why with the numbers.

Degenerate t-tests
------------------
When all of an annotator's ``W_h - W_f`` values are equal (zero variance: e.g. a judge that copies
that very annotator, whose differences are all 0), the t statistic is undefined. The limit is used,
deterministically: the p-value is 0 when the common value is below ``epsilon`` (t = -inf) and 1 when
it is at or above it (no evidence for H1). ``t`` is then None and ``degenerate`` True. Equality is
tested as min == max of the values, never on a computed variance.

Weighted form (active sampling)
-------------------------------
With ``inclusion`` (each pair's probability pi of having been drawn for human labels), every unit
counts ``w = 1 / pi`` of its pair: ``mean(W_f)``, ``mean(W_h)`` and ``mean(W_h - W_f)`` are Hajek
means ``sum w x / sum w``, so that they estimate the annotator's figures over all the pairs and not
over the ones the draw favoured. The t-test keeps its form with the mean's linearised (sandwich)
variance ``n / (n - 1) * sum w^2 (d - mean)^2 / (sum w)^2`` and n - 1 degrees of freedom (the
survey convention for one stage of draws; statsmodels' WLS with HC1 errors gives the same), and
rho's pair bootstrap resamples the weighted sums. With every w equal it is the unweighted test.

Numeric ties: two mean squared differences within 1e-9 (relative) of each other are a tie, so that
rounding in sums never decides a comparison; integer-valued scales compare exactly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

import numpy as np

from calibration.metrics import distributions as dist
from calibration.metrics.active import inverse_probability_weights
from calibration.metrics.alttest_wins import Ratings, Wins, pooled_wins, wins_of
from calibration.metrics.bootstrap import Estimate, PairBootstrap, as_float

UNITS = ("item", "pair")
MIN_ANNOTATORS = 3
MIN_ITEMS = 30
MIN_HUMANS_PER_ITEM = 2
FDR_Q = 0.05
PASS_OMEGA = 0.5


# --------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorTest:
    """One left-out annotator's test.

    ``n``: units tested (items or pairs). ``mean_wf`` (this annotator's advantage probability),
    ``mean_wh`` and ``mean_diff`` = mean(W_h - W_f), with ``diff_ci`` its two-sided 95% t-interval
    (None when degenerate). ``p`` is the one-sided p-value, ``p_adjusted`` the Benjamini-Yekutieli
    adjusted one; ``rejected`` when ``p_adjusted <= q`` (the judge "wins" against this annotator).
    """

    annotator: object
    n: int
    mean_wf: float
    mean_wh: float
    mean_diff: float
    diff_ci: tuple[float, float] | None
    t: float | None
    p: float
    p_adjusted: float
    rejected: bool
    degenerate: bool


@dataclass(frozen=True)
class AltTestResult:
    """The alt-test of one judge (one criterion, or pooled).

    ``ran`` False: the design cannot support the test; ``omega``/``rho``/``passes`` are None and
    ``reason`` says why. Always present: ``epsilon``, ``q``, ``unit``, ``scoring``,
    ``n_annotators`` (tested), ``items_per_annotator`` (usable units of every annotator who has
    any, tested or not), ``untested`` (annotators below ``min_items``, with their counts),
    ``humans_per_item_max`` (the most annotators on one item) and the thresholds used.
    """

    ran: bool
    epsilon: float
    q: float
    unit: str
    scoring: str
    omega: float | None
    rho: Estimate | None
    passes: bool | None
    n_annotators: int
    items_per_annotator: dict
    untested: dict
    annotators: tuple[AnnotatorTest, ...]
    humans_per_item_max: int
    min_annotators: int
    min_items: int
    min_humans_per_item: int
    reason: str | None = None
    criterion: object = None
    n_rejected: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_rejected", sum(a.rejected for a in self.annotators))

    def summary(self) -> str:
        """The verdict in one sentence, with its n."""
        unit = "items" if self.unit == "item" else "pairs"
        if not self.ran:
            return f"alt-test cannot run (epsilon = {self.epsilon:g}): {self.reason}"
        counts = sorted(self.items_per_annotator[a.annotator] for a in self.annotators)
        span = f"{counts[0]}" if counts[0] == counts[-1] else f"{counts[0]}-{counts[-1]}"
        rho = self.rho
        ci = f" [{rho.ci_low:.2f}, {rho.ci_high:.2f}]" if rho is not None and rho.ci is not None else ""
        return (
            f"{'passes' if self.passes else 'fails'}: omega = {self.omega:.2f} ({self.n_rejected} of {self.n_annotators} "
            f"annotators beaten at epsilon = {self.epsilon:g}, BY q = {self.q:g}), rho = {rho.value:.2f}{ci}; "
            f"{span} {unit} per annotator"
        )

    def as_dict(self) -> dict:
        out = asdict(self)
        out["rho"] = None if self.rho is None else self.rho.as_dict()
        out["summary"] = self.summary()
        return out


@dataclass(frozen=True)
class CriterionAltTest:
    """The alt-test on each criterion alone, BY-corrected across all (criterion, annotator) tests.

    ``results``: one :class:`AltTestResult` per criterion (``criterion`` set; ``ran`` False where
    that criterion cannot support the test). ``n_passed`` of ``n_criteria`` pass; ``n_ran`` could
    be tested; ``n_tests`` p-values entered the correction.
    """

    epsilon: float
    q: float
    results: tuple[AltTestResult, ...]
    n_criteria: int
    n_ran: int
    n_passed: int
    n_tests: int

    def summary(self) -> str:
        untested = self.n_criteria - self.n_ran
        tail = f"; {untested} could not be tested (too few annotators or items)" if untested else ""
        return (
            f"passes on {self.n_passed} of {self.n_criteria} criteria (epsilon = {self.epsilon:g}, BY q = {self.q:g} "
            f"across {self.n_tests} criterion x annotator tests){tail}"
        )

    def as_dict(self) -> dict:
        return {
            "epsilon": self.epsilon,
            "q": self.q,
            "n_criteria": self.n_criteria,
            "n_ran": self.n_ran,
            "n_passed": self.n_passed,
            "n_tests": self.n_tests,
            "summary": self.summary(),
            "results": [r.as_dict() for r in self.results],
        }


# --------------------------------------------------------------------------
# the t-test and the correction (shared with the planner)
# --------------------------------------------------------------------------


def one_sided_p(mean: np.ndarray, var: np.ndarray, n: np.ndarray, constant: np.ndarray, epsilon: float):
    """(t, p) of H0: mean >= epsilon against H1: mean < epsilon, elementwise.

    ``var`` is the sample variance (ddof 1), ``n`` the sample sizes (>= 2), ``constant`` marks
    samples whose values are all equal: their t is NaN and their p is 0 below epsilon, 1 otherwise.
    """
    mean, var, n = np.asarray(mean, float), np.asarray(var, float), np.asarray(n, float)
    constant = np.asarray(constant, bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean - epsilon) / np.sqrt(var / n)
    p = dist.t_cdf(t, n - 1)
    t = np.where(constant, np.nan, t)
    p = np.where(constant, np.where(mean < epsilon, 0.0, 1.0), p)
    return t, p


def by_adjusted(p: np.ndarray, axis: int = -1) -> np.ndarray:
    """Benjamini-Yekutieli adjusted p-values (reject where <= q); ``axis`` holds one family."""
    return dist.by_adjusted(p, axis=axis)


# --------------------------------------------------------------------------
# the test
# --------------------------------------------------------------------------


def _check_arguments(epsilon: float, q: float, unit: str) -> float:
    if epsilon is None:
        raise ValueError("epsilon is required: choose it and record why (0.2 experts, 0.15 skilled, 0.1 crowd)")
    epsilon = float(epsilon)
    if not (0.0 <= epsilon < 1.0):
        raise ValueError(f"epsilon must be in [0, 1), got {epsilon}")
    if not (0.0 < q < 1.0):
        raise ValueError(f"q must be in (0, 1), got {q}")
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r} (choose {', '.join(UNITS)})")
    return epsilon


def _check_limits(min_annotators: int, min_items: int, min_humans_per_item: int) -> tuple[int, int, int]:
    if min_annotators < 1 or min_items < 2 or min_humans_per_item < 2:
        raise ValueError("min_annotators must be >= 1, min_items >= 2 (a t-test needs two values) and min_humans_per_item >= 2")
    return int(min_annotators), int(min_items), int(min_humans_per_item)


@dataclass(frozen=True)
class _Prepared:
    """One family's per-annotator statistics before the correction."""

    names: list
    counts: dict
    untested: dict
    tested: np.ndarray  # codes of the tested annotators, ascending
    n: np.ndarray
    mean_wf: np.ndarray
    mean_wh: np.ndarray
    mean_d: np.ndarray
    var_d: np.ndarray
    constant: np.ndarray
    # bootstrap inputs for rho: per (pair cluster) sums of unit W_f and unit counts, per tested annotator
    unit_pair: np.ndarray
    unit_rater: np.ndarray
    unit_wf: np.ndarray
    unit_weight: np.ndarray  # 1 / the pair's inclusion probability (1 without weights)


def _prepare(w: Wins, mask: np.ndarray, unit: str, min_items: int, pair_weight: np.ndarray | None = None) -> _Prepared:
    rater, pair, crit = w.rater[mask], w.pair[mask], w.criterion[mask]
    wf, d = w.wf[mask], w.wh[mask] - w.wf[mask]
    n_crit = int(crit.max(initial=-1)) + 1
    unit_of = pair if unit == "pair" else pair * max(n_crit, 1) + crit
    key = rater.astype(np.int64) * (int(unit_of.max(initial=0)) + 1) + unit_of
    _, first, inverse, size = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    u_rater, u_pair = rater[first], pair[first]
    u_wf = np.bincount(inverse, weights=wf) / size
    u_d = np.bincount(inverse, weights=d) / size
    n_r = np.bincount(u_rater, minlength=len(w.rater_names))
    present = np.flatnonzero(n_r > 0)
    counts = {_name(w.rater_names[r]): int(n_r[r]) for r in present}
    tested = present[n_r[present] >= min_items]
    untested = {_name(w.rater_names[r]): int(n_r[r]) for r in present if n_r[r] < min_items}
    sel = np.isin(u_rater, tested)
    u_rater, u_pair, u_wf, u_d = u_rater[sel], u_pair[sel], u_wf[sel], u_d[sel]
    slot = np.searchsorted(tested, u_rater)
    k = len(tested)
    n = np.bincount(slot, minlength=k).astype(float)
    u_w = np.ones(len(u_pair)) if pair_weight is None else pair_weight[u_pair]
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.bincount(slot, weights=u_w, minlength=k)
        mean_wf = np.bincount(slot, weights=u_w * u_wf, minlength=k) / total
        mean_d = np.bincount(slot, weights=u_w * u_d, minlength=k) / total
        mean_wh = mean_wf + mean_d
        # (w / mean w)^2 is 1 without weights: the sample variance; with them, var_d / n is the Hajek
        # mean's linearised variance n / (n - 1) * sum w^2 (d - mean)^2 / (sum w)^2
        scaled = (u_w * (n / total)[slot]) ** 2
        var_d = np.bincount(slot, weights=scaled * (u_d - mean_d[slot]) ** 2, minlength=k) / (n - 1)
    lo = np.full(k, np.inf)
    hi = np.full(k, -np.inf)
    np.minimum.at(lo, slot, u_d)
    np.maximum.at(hi, slot, u_d)
    return _Prepared(
        [_name(w.rater_names[r]) for r in tested], counts, untested, tested, n, mean_wf, mean_wh, mean_d, var_d, lo == hi,
        u_pair, slot, u_wf, u_w,
    )  # fmt: skip


def _pair_weights(w: Wins, inclusion: Mapping | None) -> np.ndarray | None:
    """1 / pi per pair code (None without inclusion probabilities: every unit counts once)."""
    return None if inclusion is None else inverse_probability_weights(w.pair_names, inclusion)


def _name(value):
    return value.item() if isinstance(value, np.generic) else value


def _rhos(preps: list[_Prepared], rounds: int, seed: int) -> list[Estimate]:
    """rho of each family with its 95% CI, from one pair bootstrap over the pairs of all of them
    (one resampling for every criterion: a pair drawn brings its labels on every criterion)."""
    values = [float(np.mean(p.mean_wf)) for p in preps]
    n_units = [int(p.n.sum()) for p in preps]
    n_pairs = [len(np.unique(p.unit_pair)) for p in preps]
    boot = PairBootstrap(np.concatenate([p.unit_pair for p in preps]) if preps else np.zeros(0, np.int64), rounds, seed)
    if boot.rounds <= 0:
        return [Estimate(v, n, n_pairs=m) for v, n, m in zip(values, n_units, n_pairs)]
    columns = []
    for p in preps:
        k = len(p.tested)
        columns.append(boot.per_unit(p.unit_pair, p.unit_weight * p.unit_wf, p.unit_rater, k))
        columns.append(boot.per_unit(p.unit_pair, p.unit_weight, p.unit_rater, k))
    drawn_all = boot.resample(np.hstack(columns))
    out, start = [], 0
    for p, value, n, m in zip(preps, values, n_units, n_pairs):
        k = len(p.tested)
        bn, bd = drawn_all[:, start : start + k], drawn_all[:, start + k : start + 2 * k]
        start += 2 * k
        with np.errstate(invalid="ignore", divide="ignore"):
            per_annotator = np.where(bd > 0, bn / np.where(bd > 0, bd, 1), np.nan)
        drawn = (bd > 0).any(axis=1)  # an annotator none of whose pairs was drawn sits that round out
        draws = np.nanmean(per_annotator[drawn], axis=1)
        lo, hi = np.percentile(draws, [2.5, 97.5]) if len(draws) else (np.nan, np.nan)
        out.append(Estimate(value, n, as_float(lo), as_float(hi), m))
    return out


def _cannot_run(prep: _Prepared, min_annotators: int, min_items: int, unit: str, humans_per_item_max: int, min_humans: int) -> str:
    units = "items" if unit == "item" else "pairs"
    if not prep.counts:
        if humans_per_item_max < min_humans:
            return (
                f"no item has labels from {min_humans} annotators (at most {humans_per_item_max} per item), so no annotator can be "
                f"left out against the others; at least {min_annotators} annotators with {min_items} such {units} each are needed"
            )
        return "no usable item: the judge has no verdict on the items that several annotators labelled"
    shown = ", ".join(f"{name} {count}" for name, count in sorted(prep.counts.items(), key=lambda x: (-x[1], str(x[0]))))
    return (
        f"{len(prep.tested)} of {len(prep.counts)} annotators have at least {min_items} usable {units} "
        f"(usable {units} per annotator: {shown}); at least {min_annotators} are needed"
    )


def _annotator_tests(prep: _Prepared, epsilon: float, p_adj: np.ndarray, q: float) -> tuple[AnnotatorTest, ...]:
    t, p = one_sided_p(prep.mean_d, prep.var_d, prep.n, prep.constant, epsilon)
    half = dist.t_quantile(0.975, np.maximum(prep.n - 1, 1)) * np.sqrt(prep.var_d / prep.n)
    out = []
    for s, name in enumerate(prep.names):
        ci = None if prep.constant[s] else (float(prep.mean_d[s] - half[s]), float(prep.mean_d[s] + half[s]))
        out.append(
            AnnotatorTest(
                name, int(prep.n[s]), float(prep.mean_wf[s]), float(prep.mean_wh[s]), float(prep.mean_d[s]), ci,
                as_float(t[s]), float(p[s]), float(p_adj[s]), bool(p_adj[s] <= q), bool(prep.constant[s]),
            )
        )  # fmt: skip
    return tuple(out)


def _result(prep, w, *, epsilon, q, unit, scoring, p_adj, ran, reason, limits, rho=None, criterion=None) -> AltTestResult:
    min_annotators, min_items, min_humans = limits
    tests = _annotator_tests(prep, epsilon, p_adj, q) if ran else ()
    omega = float(np.mean([a.rejected for a in tests])) if ran else None
    return AltTestResult(
        ran=ran, epsilon=epsilon, q=q, unit=unit, scoring=scoring, omega=omega,
        rho=rho if ran else None, passes=(omega >= PASS_OMEGA) if ran else None,
        n_annotators=len(tests), items_per_annotator=prep.counts, untested=prep.untested, annotators=tests,
        humans_per_item_max=w.humans_per_item_max, min_annotators=min_annotators, min_items=min_items,
        min_humans_per_item=min_humans, reason=reason, criterion=criterion,
    )  # fmt: skip


def _p_values(prep: _Prepared, epsilon: float) -> np.ndarray:
    return one_sided_p(prep.mean_d, prep.var_d, prep.n, prep.constant, epsilon)[1]


def alt_test(
    humans: Ratings,
    judge: Ratings,
    *,
    epsilon: float,
    unit: str = "pair",
    scoring: str = "categorical",
    q: float = FDR_Q,
    min_annotators: int = MIN_ANNOTATORS,
    min_items: int = MIN_ITEMS,
    min_humans_per_item: int = MIN_HUMANS_PER_ITEM,
    rounds: int = 1000,
    seed: int = 0,
    inclusion: Mapping | None = None,
) -> AltTestResult:
    """The alt-test of one judge over all criteria: pooled by pair (``unit="pair"``, the default)
    or the paper's item-level form (``unit="item"``).

    ``humans``: the annotators' labels (one per pair, criterion, annotator); ``judge``: the judge's
    verdicts (one per pair and criterion; merge a judge's two orders first). ``epsilon`` is
    required (no default): the result carries it. ``rounds``/``seed``: the pair bootstrap of rho's
    95% CI (0 rounds: no CI). ``inclusion``: each pair's inclusion probability (keyed as
    ``humans.pair``; a pair not in it counts with 1) for the weighted form (module docstring).
    Raises ValueError on bad arguments or duplicate labels; a design that cannot support the test is
    not an error (``ran`` False, see the module docstring).
    """
    epsilon = _check_arguments(epsilon, q, unit)
    limits = _check_limits(min_annotators, min_items, min_humans_per_item)
    w = wins_of(humans, judge, scoring, min_humans_per_item)
    return _alt_test_of(w, epsilon=epsilon, unit=unit, scoring=scoring, q=q, limits=limits, rounds=rounds, seed=seed, inclusion=inclusion)


def _alt_test_of(w: Wins, *, epsilon, unit, scoring, q, limits, rounds, seed, inclusion) -> AltTestResult:
    min_annotators, min_items, min_humans_per_item = limits
    prep = _prepare(w, np.ones(len(w.rater), bool), unit, min_items, _pair_weights(w, inclusion))
    common = dict(epsilon=epsilon, q=q, unit=unit, scoring=scoring, limits=limits)
    if len(prep.tested) < min_annotators:
        reason = _cannot_run(prep, min_annotators, min_items, unit, w.humans_per_item_max, min_humans_per_item)
        return _result(prep, w, p_adj=np.zeros(0), ran=False, reason=reason, **common)
    p_adj = by_adjusted(_p_values(prep, epsilon))
    return _result(prep, w, p_adj=p_adj, ran=True, reason=None, rho=_rhos([prep], rounds, seed)[0], **common)


def alt_test_by_criterion(
    humans: Ratings,
    judge: Ratings,
    *,
    epsilon: float,
    scoring: str = "categorical",
    q: float = FDR_Q,
    min_annotators: int = MIN_ANNOTATORS,
    min_items: int = MIN_ITEMS,
    min_humans_per_item: int = MIN_HUMANS_PER_ITEM,
    rounds: int = 1000,
    seed: int = 0,
    inclusion: Mapping | None = None,
) -> CriterionAltTest:
    """The alt-test on each criterion alone (its items are its pairs), with one Benjamini-Yekutieli
    correction across every (criterion, annotator) test of the criteria that can run.

    A criterion runs when at least ``min_annotators`` annotators have ``min_items`` usable pairs
    on it; the others get ``ran`` False with the numbers, enter no correction and do not pass.
    Criteria are listed in name order. ``inclusion``: as :func:`alt_test`.
    """
    epsilon = _check_arguments(epsilon, q, "item")
    limits = _check_limits(min_annotators, min_items, min_humans_per_item)
    w = wins_of(humans, judge, scoring, min_humans_per_item)
    return _by_criterion_of(w, epsilon=epsilon, scoring=scoring, q=q, limits=limits, rounds=rounds, seed=seed, inclusion=inclusion)


def _by_criterion_of(w: Wins, *, epsilon, scoring, q, limits, rounds, seed, inclusion) -> CriterionAltTest:
    min_annotators, min_items, min_humans_per_item = limits
    weight = _pair_weights(w, inclusion)
    preps = [_prepare(w, w.criterion == c, "item", min_items, weight) for c in range(len(w.criterion_names))]
    runs = [len(p.tested) >= min_annotators for p in preps]
    p_all = [_p_values(p, epsilon) if run else np.zeros(0) for p, run in zip(preps, runs)]
    adjusted = by_adjusted(np.concatenate(p_all)) if p_all else np.zeros(0)
    adj_parts = np.split(adjusted, np.cumsum([len(p) for p in p_all])[:-1]) if p_all else []
    rhos = dict(zip([c for c, run in enumerate(runs) if run], _rhos([p for p, run in zip(preps, runs) if run], rounds, seed)))
    results = []
    for c, (prep, run, adj) in enumerate(zip(preps, runs, adj_parts)):
        reason = None if run else _cannot_run(prep, min_annotators, min_items, "pair", w.humans_per_item_max, min_humans_per_item)
        results.append(
            _result(
                prep, w, epsilon=epsilon, q=q, unit="item", scoring=scoring, p_adj=adj, ran=run, reason=reason, limits=limits,
                rho=rhos.get(c), criterion=_name(w.criterion_names[c]),
            )
        )  # fmt: skip
    return CriterionAltTest(
        epsilon=epsilon,
        q=q,
        results=tuple(results),
        n_criteria=len(results),
        n_ran=sum(runs),
        n_passed=sum(bool(r.passes) for r in results),
        n_tests=int(len(adjusted)),
    )


def _scoring_of(groups: Sequence[tuple[Ratings, Ratings, str]]) -> str:
    kinds = list(dict.fromkeys(scoring for _, _, scoring in groups))
    return kinds[0] if len(kinds) == 1 else "+".join(kinds)


def alt_test_pooled(
    groups: Sequence[tuple[Ratings, Ratings, str]],
    *,
    epsilon: float,
    unit: str = "pair",
    q: float = FDR_Q,
    min_annotators: int = MIN_ANNOTATORS,
    min_items: int = MIN_ITEMS,
    min_humans_per_item: int = MIN_HUMANS_PER_ITEM,
    rounds: int = 1000,
    seed: int = 0,
    inclusion: Mapping | None = None,
) -> AltTestResult:
    """:func:`alt_test` over several groups of criteria at once, each ``(humans, judge, scoring)``
    scored its own way (e.g. ratings of scale 0-2 and 1-6, or checklists beside ratings).

    Valid whatever the scales: W_f and W_h compare the judge and one annotator on the same item
    against that item's other annotators, so no common scale is needed; the per-annotator t-tests,
    the correction and rho then run over every group's comparisons together. One group is
    :func:`alt_test` itself. ``scoring`` of the result names the groups' scorings (``"numeric"``,
    or ``"categorical+numeric"`` for a mix)."""
    epsilon = _check_arguments(epsilon, q, unit)
    limits = _check_limits(min_annotators, min_items, min_humans_per_item)
    w = pooled_wins(groups, min_humans_per_item)
    common = dict(q=q, limits=limits, rounds=rounds, seed=seed, inclusion=inclusion)
    return _alt_test_of(w, epsilon=epsilon, unit=unit, scoring=_scoring_of(groups), **common)


def alt_test_by_criterion_pooled(
    groups: Sequence[tuple[Ratings, Ratings, str]],
    *,
    epsilon: float,
    q: float = FDR_Q,
    min_annotators: int = MIN_ANNOTATORS,
    min_items: int = MIN_ITEMS,
    min_humans_per_item: int = MIN_HUMANS_PER_ITEM,
    rounds: int = 1000,
    seed: int = 0,
    inclusion: Mapping | None = None,
) -> CriterionAltTest:
    """:func:`alt_test_by_criterion` over several groups of criteria (as :func:`alt_test_pooled`):
    one Benjamini-Yekutieli correction across every (criterion, annotator) test of all of them."""
    epsilon = _check_arguments(epsilon, q, "item")
    limits = _check_limits(min_annotators, min_items, min_humans_per_item)
    w = pooled_wins(groups, min_humans_per_item)
    common = dict(q=q, limits=limits, rounds=rounds, seed=seed, inclusion=inclusion)
    return _by_criterion_of(w, epsilon=epsilon, scoring=_scoring_of(groups), **common)
