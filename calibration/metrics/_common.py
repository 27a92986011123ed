"""Codes, constants and small helpers shared by the metrics modules (no statistics here)."""

from __future__ import annotations

import math

import numpy as np

from annotate.vocabulary import TIE  # noqa: F401  (re-exported)
SMALL_N = 30
KINDS = ("human", "judge")

# relative outcome codes (relative to the canonical order of the pair's systems)
A_WINS, B_WINS, TIED = 0, 1, 2
# The categories of chance-corrected agreement (Cohen's and Fleiss' kappa, Krippendorff's alpha):
# the first of the pair's two systems in name order wins, the second wins, a tie. Not
# the winning system's name: every item offers only two of the systems, so expected agreement
# computed from system marginals would be far too low and the coefficients inflated.
OUTCOME_CATEGORIES = 3
# position / length codes: which of the two canonical systems; -1 = unknown
SYS_A, SYS_B, UNKNOWN = 0, 1, -1


def _f(x) -> float | None:
    """float, or None for NaN/inf/None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _winner_codes(outcome, sys_a, sys_b, tie_code) -> np.ndarray:
    return np.where(outcome == A_WINS, sys_a, np.where(outcome == B_WINS, sys_b, tie_code)).astype(np.int64)


def _lookup(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(found mask, position) of ``keys`` in ``sorted_keys``."""
    if sorted_keys.size == 0:
        return np.zeros(keys.shape, dtype=bool), np.zeros(keys.shape, dtype=np.int64)
    pos = np.searchsorted(sorted_keys, keys)
    pos = np.minimum(pos, sorted_keys.size - 1)
    return sorted_keys[pos] == keys, pos
