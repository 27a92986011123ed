"""How well a kind of known-answer (gold) pair can be told apart from the campaign's other pairs by
its text alone: the measure an annotator could use to answer gold pairs carefully and the rest at random.

The feature is the overlap of the two articles' word 5-grams: the share of the smaller article's
5-grams (lower-cased words) that the other article also has. A degraded copy of the reference shares
most of them with its original; two articles written apart share almost none. The classifier is one
threshold on that overlap. Reported per kind, each with n (gold pairs, other pairs):
- AUC: the chance that a random gold pair overlaps more than a random other pair (ties count one
  half), the Mann-Whitney statistic; it equals sklearn's roc_auc_score (tests/test_gold_separability.py);
- leave-one-out accuracy: each pair classified by the threshold chosen, on all the others, to
  maximise balanced accuracy; balanced over the two classes, so chance is 50%.

A kind is *separable* when its AUC is at least SEPARABLE_AUC (or at most 1 - SEPARABLE_AUC): such a
kind cannot drive the pause rule unless the campaign accepts it explicitly. Pure: no Django.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

N = 5
SEPARABLE_AUC = 0.75
_WORD = re.compile(r"\w+")


def word_ngrams(text: str, n: int = N) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def overlap(a: set, b: set) -> float:
    """The share of the smaller set that the other holds (0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """P(positive > negative) + P(tie) / 2; None without both classes."""
    if not positives or not negatives:
        return None
    above = sum((p > q) + 0.5 * (p == q) for p in positives for q in negatives)
    return above / (len(positives) * len(negatives))


def _best_threshold(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """The threshold (positive when score >= it) with the highest balanced accuracy on these scores."""
    pos, neg = sorted(positives), sorted(negatives)
    values = sorted(set(pos) | set(neg))
    candidates = [values[0] - 1.0] + [(x + y) / 2 for x, y in zip(values, values[1:])] + [values[-1] + 1.0]

    def balanced(threshold: float) -> float:
        hit = (len(pos) - bisect_left(pos, threshold)) / len(pos) if pos else 0.0
        reject = bisect_left(neg, threshold) / len(neg) if neg else 0.0
        return (hit + reject) / 2

    return max(candidates, key=balanced)


def loo_balanced_accuracy(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """Leave-one-out balanced accuracy of the one-threshold classifier; None with fewer than 2 of either class."""
    if len(positives) < 2 or len(negatives) < 2:
        return None
    hits = 0
    for i, score in enumerate(positives):
        hits += score >= _best_threshold(positives[:i] + positives[i + 1 :], negatives)
    rejects = 0
    for i, score in enumerate(negatives):
        rejects += score < _best_threshold(positives, negatives[:i] + negatives[i + 1 :])
    return (hits / len(positives) + rejects / len(negatives)) / 2


@dataclass(frozen=True)
class Separability:
    kind: str
    n_gold: int
    n_other: int
    auc: float | None
    loo_accuracy: float | None
    gold_median_overlap: float | None
    other_median_overlap: float | None

    @property
    def separable(self) -> bool:
        return self.auc is not None and max(self.auc, 1 - self.auc) >= SEPARABLE_AUC

    @property
    def text(self) -> str:
        if self.auc is None:
            return f"no figure: {self.n_gold} {self.kind} and {self.n_other} other pairs (both are needed)"
        loo = "—" if self.loo_accuracy is None else f"{self.loo_accuracy:.0%}"
        verdict = "separable" if self.separable else "not separable"
        return f"AUC {self.auc:.2f}, leave-one-out balanced accuracy {loo}: {verdict} (n = {self.n_gold} gold, {self.n_other} other pairs)"


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def separability(kind: str, gold: Sequence[float], other: Sequence[float]) -> Separability:
    """The kind's separability from its pairs' overlaps (`gold`) and the other pairs' (`other`)."""
    gold, other = list(gold), list(other)
    return Separability(kind, len(gold), len(other), auc(gold, other), loo_balanced_accuracy(gold, other), _median(gold), _median(other))
