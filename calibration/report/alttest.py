"""The report's `alt_test` section: can each judge (and ensemble) stand in for the annotators?

The Alternative Annotator Test of `calibration.metrics.alttest` (Calderon, Reichart and Dror, ACL
2025), run on the campaign's human labels and each judge's one verdict per item (its two orders
merged: the verdict both agree on, else a tie), answers compared as A wins / B wins / tie. Two
forms per judge: pooled over the criteria with `unit` (the pair by default, or the paper's item)
and per criterion, Benjamini-Yekutieli across every criterion x annotator test. epsilon is never
defaulted: without it the section says so and gives no verdict. Field by field in
docs/calibration-report.md.
"""

from __future__ import annotations

import math

import numpy as np

from annotate.models import Campaign
from annotate.services.alt_epsilon import SUGGESTED, epsilon_problem
from calibration import metrics as M
from calibration.metrics import alttest
from calibration.metrics.alttest import AltTestResult, Ratings
from calibration.metrics.labels import align_tables
from calibration.report.sections import display

UNITS = alttest.UNITS
DEFAULT_UNIT = "pair"
SCORING = "categorical"
NOT_SET = (
    "ε not set: the alt-test needs an ε chosen and justified (the authors suggest 0.2 experts, 0.15 skilled, 0.1 crowd); "
    "give calibration_report --epsilon E --epsilon-reason '...', or record it on the campaign"
)
METHOD = (
    "Alternative Annotator Test (Calderon, Reichart and Dror, ACL 2025): each annotator is left out in turn; on each of its "
    "items the judge and the annotator are scored by the share of the item's other annotators whose answer (A, B or tie) "
    "each matches; W_f = 1 when the judge scores at least as well, W_h = 1 when the annotator does (a tie counts for both). "
    "Per annotator, a one-sided t-test of H0: mean(W_h - W_f) >= ε; p-values corrected with Benjamini-Yekutieli at q = 0.05. "
    "ω (winning rate): the share of tested annotators whose H0 is rejected; the judge passes when ω >= 0.5. "
    "ρ (advantage probability): the mean over tested annotators of mean(W_f), with a 95% pair-bootstrap CI; it ranks judges. "
    "A judge's verdict per item is its two orders merged (the verdict both agree on, else a tie)."
)
WEIGHTED = (
    " Active sampling: every pair counts 1 / pi, its stored inclusion probability (a pair labelled without a draw counts 1): "
    "the means of W_f, W_h and W_h - W_f are weighted (Hajek) means, the t-test uses the weighted mean's linearised variance "
    "n / (n - 1) * sum w^2 (d - mean)^2 / (sum w)^2 with n - 1 degrees of freedom, and rho's pair bootstrap resamples the "
    "weighted sums."
)
UNIT_RULES = {
    "pair": "pooled over criteria with the pair as the unit: W_h - W_f and W_f are averaged over an annotator's criteria within "
    "each pair, and the t-test runs over its pairs (the criteria of one pair are not independent)",
    "item": "pooled over criteria in the paper's item-level form: every (pair, criterion) is an item and the t-test runs over "
    "an annotator's items (criteria of one pair counted as independent: for reproducing published figures)",
}


def _r(x, digits: int = 6):
    if x is None:
        return None
    x = float(x)
    return round(x, digits) if math.isfinite(x) else None


def resolve_epsilon(campaign: Campaign, epsilon: float | None, reason: str | None) -> tuple[float | None, str | None, str | None]:
    """(epsilon, its reason, where it comes from): the one given (a command line's or a query's),
    else the campaign's, else (None, None, None). ValueError, one line, for a bad pair."""
    if epsilon is not None or (reason or "").strip():
        if problem := epsilon_problem(epsilon, reason):
            raise ValueError(problem)
        return float(epsilon), reason.strip(), "given"
    if campaign.alt_epsilon is not None:
        return float(campaign.alt_epsilon), campaign.alt_epsilon_reason, "campaign"
    return None, None, None


def check_unit(unit: str) -> str:
    if unit not in UNITS:
        raise ValueError(f"unknown alt-test unit '{unit}' (choose {', '.join(UNITS)})")
    return unit


def human_ratings(humans: M.LabelTable) -> Ratings:
    """The annotators' answers, one per (pair, criterion, annotator): the last when one gave two.
    Annotators by the name the report shows (their reasons name them)."""
    key = humans.item * max(len(humans.vocab.raters), 1) + humans.rater
    keep = np.sort(len(key) - 1 - np.unique(key[::-1], return_index=True)[1]) if len(key) else np.zeros(0, np.int64)
    names = np.array([display(r) for r in humans.vocab.raters] or [""])
    return Ratings(humans.pair[keep], humans.criterion[keep], names[humans.rater[keep]], humans.outcome[keep])


def judge_ratings(merged: M.LabelTable) -> Ratings:
    return Ratings(merged.pair, merged.criterion, np.zeros(len(merged), np.int64), merged.outcome)


def _rho(estimate) -> dict | None:
    if estimate is None:
        return None
    few = estimate.too_few_pairs
    return {
        "value": _r(estimate.value),
        "ci": None if few or estimate.ci is None else [_r(estimate.ci_low), _r(estimate.ci_high)],
        "n": estimate.n,
        "n_pairs": estimate.n_pairs,
        "ci_note": M.TOO_FEW_PAIRS if few else None,
    }


def _names(counts: dict) -> dict:
    return {str(name): n for name, n in counts.items()}


def result_dict(result: AltTestResult, *, annotators: bool = True) -> dict:
    """One alt-test result in the report's words (annotators by name)."""
    out = {
        "ran": result.ran,
        "passes": result.passes,
        "omega": _r(result.omega),
        "n_rejected": result.n_rejected,
        "n_annotators": result.n_annotators,
        "rho": _rho(result.rho),
        "items_per_annotator": _names(result.items_per_annotator),
        "untested": _names(result.untested),
        "humans_per_item_max": result.humans_per_item_max,
        "reason": result.reason,
        "summary": result.summary(),
    }
    if annotators:
        out["annotators"] = [
            {
                "annotator": str(a.annotator),
                "n": a.n,
                "mean_wf": _r(a.mean_wf),
                "mean_wh": _r(a.mean_wh),
                "mean_diff": _r(a.mean_diff),
                "diff_ci": None if a.diff_ci is None else [_r(a.diff_ci[0]), _r(a.diff_ci[1])],
                "p": _r(a.p),
                "p_adjusted": _r(a.p_adjusted),
                "rejected": a.rejected,
                "degenerate": a.degenerate,
            }
            for a in result.annotators
        ]
    return out


def pair_inclusion(vocab: M.Vocab, inclusion: dict[str, float] | None) -> dict[int, float] | None:
    """The stored inclusion probabilities by the pair codes the ratings carry (None: unweighted)."""
    if inclusion is None:
        return None
    return {code: inclusion[key] for code, key in enumerate(vocab.pairs) if key in inclusion}


def judge_figures(
    humans: Ratings,
    merged: M.LabelTable,
    vocab: M.Vocab,
    *,
    epsilon: float,
    unit: str,
    rounds: int,
    seed: int,
    inclusion: dict[str, float] | None = None,
) -> dict:
    """One judge's pooled and per-criterion alt-tests (weighted by 1 / pi with `inclusion`)."""
    judge = judge_ratings(merged)
    common = dict(epsilon=epsilon, scoring=SCORING, rounds=rounds, seed=seed, inclusion=pair_inclusion(vocab, inclusion))
    pooled = alttest.alt_test(humans, judge, unit=unit, **common)
    per = alttest.alt_test_by_criterion(humans, judge, **common)
    criteria = []
    for r in per.results:
        entry = result_dict(r, annotators=False)
        criteria.append({"criterion": vocab.criteria[int(r.criterion)], **entry})
    return {
        "pooled": result_dict(pooled),
        "by_criterion": {
            "n_criteria": per.n_criteria,
            "n_ran": per.n_ran,
            "n_passed": per.n_passed,
            "n_tests": per.n_tests,
            "summary": per.summary(),
            "criteria": criteria,
        },
    }


def section(
    humans: M.LabelTable,
    merged_by_judge: dict[str, M.LabelTable],
    *,
    epsilon: float | None,
    reason: str | None,
    source: str | None,
    unit: str = DEFAULT_UNIT,
    rounds: int = 1000,
    seed: int = 0,
    inclusion: dict[str, float] | None = None,
) -> dict:
    """The `alt_test` section for every judge (ensembles included); no verdict without epsilon.
    `inclusion` (active sampling, unequal probabilities): every unit weighted by 1 / its pair's pi."""
    check_unit(unit)
    out = {
        "epsilon": epsilon,
        "epsilon_reason": reason,
        "epsilon_source": source,
        "unit": unit,
        "unit_rule": UNIT_RULES[unit],
        "scoring": SCORING,
        "q": alttest.FDR_Q,
        "pass_omega": alttest.PASS_OMEGA,
        "min_annotators": alttest.MIN_ANNOTATORS,
        "min_items": alttest.MIN_ITEMS,
        "min_humans_per_item": alttest.MIN_HUMANS_PER_ITEM,
        "method": METHOD + (WEIGHTED if inclusion is not None else ""),
        "weighted": inclusion is not None,
        "suggested": SUGGESTED,
        "note": None,
        "judges": {},
    }
    if epsilon is None:
        out["note"] = NOT_SET
        return out
    ratings = human_ratings(humans)
    for name, merged in merged_by_judge.items():
        h, m = humans, merged
        if len(merged) and merged.vocab != humans.vocab:
            h, m = align_tables(humans, merged)
        r = ratings if h is humans else human_ratings(h)
        out["judges"][name] = judge_figures(r, m, h.vocab, epsilon=epsilon, unit=unit, rounds=rounds, seed=seed, inclusion=inclusion)
    return out
