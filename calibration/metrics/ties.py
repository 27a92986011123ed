"""Ties: a judge's answer distribution from its confidence, and the tie-aware accuracy of a judge with
confidences, its tie threshold chosen on a calibration split.

The procedure is the "pairwise accuracy with tie calibration" of Deutsch, Foster & Freitag (2023),
"Ties Matter: Meta-Evaluating Modern Metrics with Pairwise Accuracy and Tie Calibration" (EMNLP 2023):
a metric predicts a tie between two outputs when their scores differ by at most a threshold epsilon,
and epsilon is the one that maximises the pairwise accuracy with ties (a tie counts as right only
against a human tie) on the data it is calibrated on. Here the "score difference" is the judge's
preference for the first system in name order over the second:

    d = p(first wins) - p(second wins)

from the judge's answer distribution (:func:`answer_distribution`). The judge predicts a tie when
|d| <= epsilon and the side of d's sign otherwise (epsilon = 0: the judge's own verdicts, since its
own ties have d = 0). Every human label counts once (as PAR): accuracy = the share of matched human
labels whose verdict (first wins, second wins, tie) equals the prediction.

Candidates: 0 and every distinct |d| of the calibration items; the one with the highest calibration
accuracy is chosen, the smallest of equal ones. The accuracy is then reported on the other split
(held out), with its pair-bootstrap CI, beside the judge's own verdicts' accuracy there (epsilon = 0).

Split rule (:data:`SPLIT_RULE`): a pair calibrates when the first byte of SHA-256("ties:<pair>") is
even and is held out when it is odd; every criterion of a pair is on one side, and the split depends
on the pair's key alone.

The answer distribution of a verdict with confidence c (the probability of the answer given, as the
judges report it: `protocols.pairwise.confidence`) is c on that answer and (1 - c) / 2 on each of the
two others (:data:`DISTRIBUTION_RULE`).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass

import numpy as np

from calibration.metrics._common import HI_WINS, LO_WINS, TIED, as_float
from calibration.metrics.bootstrap import Estimate, PairBootstrap

CITATION = "Deutsch, Foster & Freitag (2023), Ties Matter: Meta-Evaluating Modern Metrics with Pairwise Accuracy and Tie Calibration, EMNLP"
SPLIT_RULE = 'pairs split by the first byte of SHA-256("ties:<pair>"): even calibrates the tie threshold, odd is held out'
DISTRIBUTION_RULE = "a verdict with confidence c: c on its answer, (1 - c) / 2 on each of the two others"
THRESHOLD_RULE = (
    "d = p(first system in name order wins) - p(second wins); a tie is predicted when |d| <= epsilon; epsilon: among 0 and every "
    "|d| of the calibration split, the one with the highest accuracy with ties there (the smallest of equal ones)"
)


def answer_distribution(outcome: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """(n x 3) probabilities over (first wins, second wins, tie) by :data:`DISTRIBUTION_RULE`;
    confidences are clipped to [0, 1]."""
    outcome = np.asarray(outcome, dtype=np.int64)
    c = np.clip(np.asarray(confidence, dtype=np.float64), 0.0, 1.0)
    dist = np.repeat(((1.0 - c) / 2.0)[:, None], 3, axis=1)
    dist[np.arange(len(c)), outcome] = c
    return dist


def preference(dist: np.ndarray) -> np.ndarray:
    return dist[:, LO_WINS] - dist[:, HI_WINS]


def held_out(pair_keys) -> np.ndarray:
    """Per pair key, whether it is held out (:data:`SPLIT_RULE`)."""
    return np.array([hashlib.sha256(f"ties:{key}".encode()).digest()[0] % 2 == 1 for key in pair_keys], dtype=bool)


def predicted(pref: np.ndarray, epsilon: float) -> np.ndarray:
    return np.where(np.abs(pref) <= epsilon, TIED, np.where(pref > 0, LO_WINS, HI_WINS))


def best_threshold(pref: np.ndarray, human: np.ndarray) -> tuple[float, float, int]:
    """(epsilon, accuracy at it, candidates tried) on these comparisons (one row per human label,
    `pref` its item's d). Accuracy at epsilon: the human ties among |d| <= epsilon plus the side
    agreements among |d| > epsilon, over all rows; every candidate at once by cumulative sums."""
    pref, human = np.asarray(pref, dtype=np.float64), np.asarray(human, dtype=np.int64)
    if not len(pref):
        return 0.0, float("nan"), 0
    size = np.abs(pref)
    order = np.argsort(size, kind="stable")
    size, pref_s, human_s = size[order], pref[order], human[order]
    tie_right = (human_s == TIED).astype(np.float64)
    side_right = ((pref_s > 0) & (human_s == LO_WINS)) | ((pref_s < 0) & (human_s == HI_WINS))
    candidates = np.unique(np.concatenate([[0.0], size]))
    # rows with |d| <= candidate: the first `upto` rows of the sorted order
    upto = np.searchsorted(size, candidates, side="right")
    tie_cum = np.concatenate([[0.0], np.cumsum(tie_right)])
    side_cum = np.concatenate([[0.0], np.cumsum(side_right.astype(np.float64))])
    right = tie_cum[upto] + (side_cum[-1] - side_cum[upto])
    best = int(np.argmax(right))  # the first maximum: the smallest epsilon
    return float(candidates[best]), float(right[best] / len(pref)), int(len(candidates))


@dataclass(frozen=True)
class TieAccuracy:
    judge: str
    epsilon: float | None
    n_candidates: int
    calibration: Estimate  # accuracy with ties on the calibration split at epsilon (n: human labels)
    held_out: Estimate  # ... on the held-out split, at epsilon
    held_out_own: Estimate  # ... on the held-out split, the judge's own verdicts (epsilon = 0)
    predicted_tie_share: float | None  # held out: the share of human labels met by a predicted tie
    human_tie_share: float | None  # held out: the share of human labels that are ties
    note: str | None = None
    rule: str = THRESHOLD_RULE
    split_rule: str = SPLIT_RULE
    citation: str = CITATION

    def as_dict(self) -> dict:
        return asdict(self)


def tie_accuracy(
    judge: str, pair: np.ndarray, pref: np.ndarray, human: np.ndarray, held: np.ndarray, rounds: int = 1000, seed: int = 0
) -> TieAccuracy:
    """The module's figure. One row per matched human label: its `pair` code, its item's judge
    preference `pref`, the human's outcome `human`, and whether the pair is `held` out."""
    pair, pref = np.asarray(pair), np.asarray(pref, dtype=np.float64)
    human, held = np.asarray(human, dtype=np.int64), np.asarray(held, dtype=bool)
    known = np.isfinite(pref)
    calib, test = known & ~held, known & held
    empty = Estimate(None, 0, n_pairs=0)
    if not calib.any() or not test.any():
        note = "no tie threshold: " + (
            "no calibration items with a confidence" if not calib.any() else "no held-out items with a confidence"
        )
        return TieAccuracy(judge, None, 0, empty, empty, empty, None, None, note)
    epsilon, _, n_candidates = best_threshold(pref[calib], human[calib])
    cal_boot = PairBootstrap(pair[calib], rounds, seed)
    [calibration] = cal_boot.ratios(pair[calib], (predicted(pref[calib], epsilon) == human[calib]).astype(float), np.ones(int(calib.sum())))
    boot = PairBootstrap(pair[test], rounds, seed)
    ones = np.ones(int(test.sum()))
    pred = predicted(pref[test], epsilon)
    (tuned,), (own,) = boot.ratios_many(
        [
            (pair[test], (pred == human[test]).astype(float), ones, None, 1),
            (pair[test], (predicted(pref[test], 0.0) == human[test]).astype(float), ones, None, 1),
        ]
    )
    return TieAccuracy(
        judge, epsilon, n_candidates, calibration, tuned, own, as_float((pred == TIED).mean()), as_float((human[test] == TIED).mean())
    )
