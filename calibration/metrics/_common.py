"""Codes, constants and small helpers shared by the metrics modules (no statistics here)."""

from __future__ import annotations

import math

import numpy as np

from protocols.pairwise import TIE  # noqa: F401  (re-exported)

SMALL_N = 30
KINDS = ("human", "judge")
# An interval resting on fewer pairs than this is not shown (the report says "too few pairs for an
# interval"): with a handful of pairs the pair bootstrap draws the same few pairs again and again, and its
# percentiles collapse towards the point (one pair: a zero-width interval).
MIN_PAIRS_FOR_CI = 10
TOO_FEW_PAIRS = "too few pairs for an interval"
# Bradley-Terry scores closer than this (points of the Elo-like scale) are tied for ranks and Kendall's tau:
# two systems with identical records get scores that differ only by floating-point noise.
TIE_TOLERANCE = 1e-6

# Outcome codes, relative to the canonical order of the pair's two systems: `lo` is the one whose
# name sorts first, `hi` the other. "A" and "B" mean one thing in every app: the pair's stored sides
# (`Pair.article_a`, `LabelRow.system_a`), which the metrics take in and put in this order at once.
LO_WINS, HI_WINS, TIED = 0, 1, 2
# The categories of chance-corrected agreement (Cohen's and Fleiss' kappa, Krippendorff's alpha):
# the first of the pair's two systems in name order wins, the second wins, a tie. Not
# the winning system's name: every item offers only two of the systems, so expected agreement
# computed from system marginals would be far too low and the coefficients inflated.
OUTCOME_CATEGORIES = 3
# A fourth category, for a judge's verdicts only, under some conventions (`conventions.judge_votes`): a
# verdict that agrees with no human label, e.g. an unparsable answer counted as wrong.
WRONG = 3
# position / length codes: which of the two canonical systems (lo, hi); -1 = unknown
SYS_LO, SYS_HI, UNKNOWN = 0, 1, -1


def as_float(x) -> float | None:
    """float, or None for NaN/inf/None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def winner_codes(outcome, sys_lo, sys_hi, tie_code) -> np.ndarray:
    return np.where(outcome == LO_WINS, sys_lo, np.where(outcome == HI_WINS, sys_hi, tie_code)).astype(np.int64)


def sorted_lookup(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(found mask, position) of ``keys`` in ``sorted_keys``."""
    if sorted_keys.size == 0:
        return np.zeros(keys.shape, dtype=bool), np.zeros(keys.shape, dtype=np.int64)
    pos = np.searchsorted(sorted_keys, keys)
    pos = np.minimum(pos, sorted_keys.size - 1)
    return sorted_keys[pos] == keys, pos
