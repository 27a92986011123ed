"""Calibration metrics for pairwise article comparisons.

Human annotators and LLM judges compare two systems' articles on one topic
(a *pair*) for each of the writing criteria; one verdict of one rater on one
item ``(pair, criterion)`` is a *label*.  This package measures how well a judge
agrees with the humans, how biased it is (position, length), how well humans
agree among themselves (the ceiling), and ranks the systems (Bradley-Terry).

Pure Python + numpy/scipy/choix, no Django: the ORM layer converts its rows into
a :class:`LabelTable` (columnar, integer-coded) and calls the functions below.

Conventions
-----------
* Every estimate is an :class:`Estimate` (value, n, 95% CI, ``small_n`` when
  n < 30).  Undefined figures (nothing to compare) are ``None``, never NaN.
* Confidence intervals are percentile intervals of a bootstrap over whole
  pairs: the pairs are resampled with replacement and every label of a drawn
  pair comes along (criteria of one pair share the same two articles, so they
  are not independent).  Draws are seeded (``seed=0``) and identical for every
  figure computed on the same set of pairs, which makes paired comparisons
  (``paired_difference``) use the same resampled pairs for both judges.
* Speed: per-pair sufficient statistics are aggregated once; a bootstrap is a
  (rounds x pairs) matrix of draw counts times a (pairs x k) statistics matrix.

Layout
------
One job per module; each imports only modules listed above it.

* ``_common``: outcome/position codes, constants, tiny shared helpers.
* ``labels``: :class:`LabelRow`, :class:`Vocab`, :class:`LabelTable`, vocabulary alignment.
* ``bootstrap``: :class:`Estimate` and the pair bootstrap (seeded draw counts).
* ``agreement``: judge vs humans (PAR, majority, kappa), paired differences, human ceiling.
* ``bias``: position bias, merging swapped runs, preference for the longer article.
* ``ranking``: Bradley-Terry and its bootstrap, Kendall's tau.
* ``winrates``: win rates vs the reference or the field.
* ``raters``: agreement among raters: Cohen's kappa of every two, Fleiss' kappa, each vs the others.
* ``conventions``: how a judge's two orders and its failed verdicts count against the humans.
* ``ensemble``: virtual ensemble judges (majority vote of several judges).
* ``frontier``: cost vs PAR (Pareto frontier) and the recommendation.

Import from ``calibration.metrics``; the submodules are an implementation detail.
"""

from __future__ import annotations

from calibration.metrics._common import (
    HI_WINS,
    KINDS,
    LO_WINS,
    MIN_PAIRS_FOR_CI,
    SMALL_N,
    SYS_HI,
    SYS_LO,
    TIE,
    TIE_TOLERANCE,
    TIED,
    TOO_FEW_PAIRS,
    UNKNOWN,
    WRONG,
)
from calibration.metrics.active import inverse_probability_weights, unequal_inclusion
from calibration.metrics.agreement import (
    DEFAULT_MAJORITY_TIES,
    MAJORITY_TIE_RULES,
    MAJORITY_TIES,
    Agreement,
    HumanCeiling,
    PairedDifference,
    agreement,
    check_majority_ties,
    human_ceiling,
    majority_credit,
    majority_winner,
    majority_winners,
    paired_difference,
    paired_differences,
)
from calibration.metrics.bias import (
    first_position_rate,
    merge_swapped,
    position_consistency,
    prefers_longer,
)
from calibration.metrics.bootstrap import (
    CACHE_CELLS,
    CHUNK_CELLS,
    Estimate,
    draw_count_blocks,
    draw_counts,
)
from calibration.metrics.conventions import (
    DEFAULT_SWAP_POLICY,
    DEFAULT_UNPARSABLE,
    SWAP_POLICIES,
    UNPARSABLE_POLICIES,
    Votes,
    check_convention,
    convention_text,
    judge_votes,
)
from calibration.metrics.ensemble import TIE_RULE, ensemble_verdicts
from calibration.metrics.frontier import (
    CEILING_RULE,
    JudgePoint,
    JudgeStanding,
    Recommendation,
    Verdict,
    money,
    pareto_frontier,
    recommend,
    verdict_against_ceiling,
)
from calibration.metrics.humanlike import HUMAN_LIKENESS_MAX_ANNOTATORS, HumanLikeness, JudgeLikeness, human_likeness
from calibration.metrics.labels import LabelRow, LabelTable, Vocab, as_table
from calibration.metrics.ranking import (
    MEAN_ANCHOR,
    BTResult,
    SystemScore,
    TauResult,
    bradley_terry,
    bradley_terry_by_category,
    fit_choix,
    fit_newton,
    fit_point,
    fit_rounds,
    kendall_tau,
    tie_levels,
)
from calibration.metrics.raters import (
    FleissKappa,
    RaterPair,
    RaterVsOthers,
    fleiss_kappa,
    rater_pairs,
    raters_vs_others,
)
from calibration.metrics.winrates import WinRates, win_rate_vs_field, win_rate_vs_reference

__all__ = [
    "inverse_probability_weights",
    "unequal_inclusion",
    "TIE",
    "SMALL_N",
    "MIN_PAIRS_FOR_CI",
    "TOO_FEW_PAIRS",
    "TIE_TOLERANCE",
    "WRONG",
    "SWAP_POLICIES",
    "UNPARSABLE_POLICIES",
    "DEFAULT_SWAP_POLICY",
    "DEFAULT_UNPARSABLE",
    "Votes",
    "judge_votes",
    "check_convention",
    "convention_text",
    "LabelRow",
    "Vocab",
    "LabelTable",
    "as_table",
    "Estimate",
    "Agreement",
    "PairedDifference",
    "HumanCeiling",
    "SystemScore",
    "BTResult",
    "TauResult",
    "WinRates",
    "JudgePoint",
    "Recommendation",
    "agreement",
    "MAJORITY_TIES",
    "DEFAULT_MAJORITY_TIES",
    "MAJORITY_TIE_RULES",
    "check_majority_ties",
    "majority_credit",
    "majority_winner",
    "majority_winners",
    "paired_difference",
    "paired_differences",
    "position_consistency",
    "first_position_rate",
    "merge_swapped",
    "prefers_longer",
    "human_ceiling",
    "bradley_terry",
    "bradley_terry_by_category",
    "kendall_tau",
    "tie_levels",
    "win_rate_vs_reference",
    "win_rate_vs_field",
    "MEAN_ANCHOR",
    "pareto_frontier",
    "RaterPair",
    "FleissKappa",
    "RaterVsOthers",
    "rater_pairs",
    "ensemble_verdicts",
    "TIE_RULE",
    "fleiss_kappa",
    "raters_vs_others",
    "recommend",
    "HUMAN_LIKENESS_MAX_ANNOTATORS",
    "HumanLikeness",
    "JudgeLikeness",
    "human_likeness",
    "CEILING_RULE",
    "JudgeStanding",
    "Verdict",
    "money",
    "verdict_against_ceiling",
]

# Also importable from here, as before the split (not part of the API): the codes, the BT prior,
# and the internals the tests and bench/calibration.py reach for.
_INTERNALS = (
    KINDS, LO_WINS, HI_WINS, TIED, SYS_LO, SYS_HI, UNKNOWN,
    CACHE_CELLS, CHUNK_CELLS, draw_counts, draw_count_blocks,
    fit_choix, fit_newton, fit_point, fit_rounds,
)  # fmt: skip
