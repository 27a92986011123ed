"""Human-likeness of a judge: does it agree with each annotator about as much as the annotators agree
with each other?

For a judge J and annotators h_1..h_m: Cohen's kappa of J with each annotator on the items both
labelled (``kappas``), and Cohen's kappa of every two annotators (the human-human spread). The
judge's z-score is

    z = (mean_i kappa(J, h_i) - mean_{i<j} kappa(h_i, h_j)) / sd_{i<j} kappa(h_i, h_j)

with the sample standard deviation (ddof 1) over the annotator pairs. Classes (:data:`CLASS_RULE`):
|z| < 1 "human-like", z >= 1 "super-consistent" (agrees with the annotators more than they agree
with each other), z <= -1 "below humans". No class is given under 3 annotators (fewer than 3
annotator pairs make no spread), nor when the spread is 0.

The interval of z is the percentile interval of the pair bootstrap (pairs resampled, every kappa and
the spread recomputed in each round), as everywhere in this package. Kappa categories are those of
:mod:`raters`: the first of the pair's systems in name order wins, the second wins, a tie; a rater's
verdict on an item is its first one there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Iterable, Sequence

import numpy as np

from calibration.metrics._common import OUTCOME_CATEGORIES, as_float
from calibration.metrics.agreement import kappa_value
from calibration.metrics.bootstrap import Estimate, PairBootstrap, percentile_ci
from calibration.metrics.labels import LabelRow, LabelTable, as_table
from calibration.metrics.raters import one_per_rater_item

MIN_ANNOTATORS = 3
# The report computes it for a panel of annotators, not for a crowd (calibration/report/build.py).
HUMAN_LIKENESS_MAX_ANNOTATORS = 50
MAX_BOOTSTRAP_CELLS = 20_000_000  # 160 MB of float64 sums
INTERVALS_WITHHELD = "no interval: too many rater pairs for the pair bootstrap (a large crowd); the point figures stand"
CLASS_RULE = (
    "z = (mean kappa of the judge with each annotator - mean annotator-annotator kappa) / SD of the annotator-annotator "
    "kappas (ddof 1); |z| < 1 human-like, z >= 1 super-consistent, z <= -1 below humans; no class under "
    f"{MIN_ANNOTATORS} annotators or with no spread"
)


@dataclass(frozen=True)
class JudgeLikeness:
    judge: str
    kappas: dict[str, Estimate]  # annotator -> the judge's kappa with them
    mean_kappa: float | None
    z: Estimate  # n: the annotators the judge shares items with
    klass: str | None
    note: str | None

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class HumanLikeness:
    n_annotators: int
    n_annotator_pairs: int  # pairs of annotators with an item in common: what the spread rests on
    human_kappa_mean: float | None
    human_kappa_sd: float | None
    judges: tuple[JudgeLikeness, ...]
    rule: str = CLASS_RULE

    def as_dict(self) -> dict:
        return asdict(self)


def _classify(z: float | None) -> str | None:
    if z is None:
        return None
    return "super-consistent" if z >= 1 else "below humans" if z <= -1 else "human-like"


def _z(judge_kappas: np.ndarray, human_kappas: np.ndarray) -> np.ndarray:
    """z along the last axis: `judge_kappas` (..., m) and `human_kappas` (..., pairs); NaN where undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        # Means over the defined values written out: numpy's nanmean warns on an all-NaN row, and a
        # warning filter is process-wide (the report computes on several threads).
        judged = (~np.isnan(judge_kappas)).sum(axis=-1)
        jm = np.where(judged > 0, np.nansum(judge_kappas, axis=-1) / np.where(judged > 0, judged, 1), np.nan)
        defined = (~np.isnan(human_kappas)).sum(axis=-1)
        hm = np.nansum(human_kappas, axis=-1) / np.where(defined > 0, defined, 1)
        sq = np.nansum((human_kappas - hm[..., None]) ** 2, axis=-1)
        sd = np.sqrt(sq / np.where(defined > 1, defined - 1, 1))
        z = (jm - hm) / sd
    return np.where((defined >= 2) & (sd > 1e-12) & np.isfinite(z), z, np.nan)


def human_likeness(labels: LabelTable | Iterable[LabelRow], judges: Sequence[str], rounds: int = 1000, seed: int = 0) -> HumanLikeness:
    """Each judge's kappa with each annotator and its z-score against the annotators' kappas with each
    other (module doc). `labels` holds the annotators (kind "human") and the judges named."""
    t = one_per_rater_item(as_table(labels))
    v = t.vocab
    human_codes = sorted({int(r) for r in np.unique(t.rater) if v.rater_kinds[r] == "human"}, key=lambda r: v.raters[r])
    judge_codes = [v.raters.index(name) for name in judges if name in v.raters]
    k = OUTCOME_CATEGORIES
    by_rater = {r: t.select(t.rater == r) for r in human_codes + judge_codes}

    def shared(x: int, y: int) -> tuple[np.ndarray, np.ndarray]:
        """(pair codes, stats rows) of the items both raters labelled: agree, 1, x's category, y's category."""
        a, b = by_rater[x], by_rater[y]
        common, ia, ib = np.intersect1d(a.item, b.item, return_indices=True)
        cx, cy = a.outcome[ia].astype(np.int64), b.outcome[ib].astype(np.int64)
        rows = np.zeros((len(common), 2 + 2 * k))
        rows[:, 0] = cx == cy
        rows[:, 1] = 1.0
        rows[np.arange(len(common)), 2 + cx] = 1.0
        rows[np.arange(len(common)), 2 + k + cy] = 1.0
        return a.pair[ia], rows

    # Only raters who share an item are compared: a crowd of hundreds shares items with few of the others.
    raters_of_item: dict[int, set[int]] = {}
    for rater, item in zip(t.rater.tolist(), t.item.tolist()):
        raters_of_item.setdefault(item, set()).add(rater)
    meet = {(min(a, b), max(a, b)) for raters in raters_of_item.values() for a in raters for b in raters if a != b}
    empty = (np.zeros(0, np.int64), np.zeros((0, 2 + 2 * k)))

    human_pairs = list(combinations(human_codes, 2))
    judge_pairs = [(j, h) for j in judge_codes for h in human_codes]
    combos = human_pairs + judge_pairs
    parts = [shared(x, y) if (min(x, y), max(x, y)) in meet else empty for x, y in combos]
    width = 2 + 2 * k
    totals = np.zeros((len(combos), width))
    present = [c for c, (_, rows) in enumerate(parts) if len(rows)]
    for c in present:
        totals[c] = parts[c][1].sum(axis=0)
    all_pairs = np.unique(np.concatenate([parts[c][0] for c in present])) if present else np.zeros(0, np.int64)
    boot = PairBootstrap(all_pairs, rounds if len(all_pairs) else 0, seed)
    # The pair bootstrap resamples a (pairs x rater pairs x columns) array: past this many cells (a crowd
    # of hundreds beside dozens of judges: tens of GB) the intervals are not computed, and the note says so.
    withheld = boot.rounds > 0 and boot.n_units * len(present) * width > MAX_BOOTSTRAP_CELLS

    def kappas(sums: np.ndarray) -> np.ndarray:
        """(..., n) kappas from (..., n, width) sums."""
        return kappa_value(sums[..., 0], sums[..., 1], sums[..., 2 : 2 + k], sums[..., 2 + k :])

    point = kappas(totals) if combos else np.zeros(0)
    sampled = None
    if present and boot.rounds > 0 and not withheld:
        per_unit = np.zeros((boot.n_units, width * len(present)))
        for i, c in enumerate(present):
            per_unit[:, i * width : (i + 1) * width] = boot.per_unit(parts[c][0], parts[c][1])
        drawn = boot.resample(per_unit)
        sampled = np.full((len(drawn), len(combos)), np.nan)
        sampled[:, present] = kappas(drawn.reshape(len(drawn), len(present), width))
    counts = [int(rows[:, 1].sum()) for _, rows in parts]
    n_pairs_of = [int(np.unique(p).size) for p, _ in parts]
    hp = len(human_pairs)
    human_point = point[:hp]
    defined_h = human_point[~np.isnan(human_point)]
    h_mean = as_float(defined_h.mean()) if len(defined_h) else None
    h_sd = as_float(defined_h.std(ddof=1)) if len(defined_h) >= 2 else None
    out = []
    m = len(human_codes)
    for j_index, j in enumerate(judge_codes):
        cols = hp + j_index * m + np.arange(m)
        per_human = {}
        for col, h in zip(cols.tolist(), human_codes):
            if counts[col] == 0:
                continue
            ci = (None, None)
            if sampled is not None and not np.isnan(point[col]):
                lo, hi = percentile_ci(sampled[:, col])
                ci = (as_float(lo), as_float(hi))
            per_human[v.raters[h]] = Estimate(as_float(point[col]), counts[col], *ci, n_pairs_of[col])
        judge_point = point[cols]
        z_point = as_float(_z(judge_point[None, :], human_point[None, :])[0]) if m else None
        z_ci = (None, None)
        if sampled is not None and z_point is not None:
            lo, hi = percentile_ci(_z(sampled[:, cols], sampled[:, :hp]))
            z_ci = (as_float(lo), as_float(hi))
        n_shared = sum(1 for col in cols.tolist() if counts[col] > 0)
        note = None
        if m < MIN_ANNOTATORS:
            note = f"no class: {m} annotator{'s' if m != 1 else ''}, at least {MIN_ANNOTATORS} are needed for a spread"
        elif z_point is None:
            note = "no class: the annotators' kappas have no spread, or the judge shares no items with them"
        classed = note is None
        klass = _classify(z_point) if classed else None
        if withheld and classed:
            note = INTERVALS_WITHHELD
        mean_k = judge_point[~np.isnan(judge_point)]
        out.append(
            JudgeLikeness(
                v.raters[j],
                per_human,
                as_float(mean_k.mean()) if len(mean_k) else None,
                Estimate(z_point if classed else None, n_shared, *(z_ci if classed else (None, None)), int(boot.n_units)),
                klass,
                note,
            )
        )
    n_hpairs = sum(1 for c in range(hp) if counts[c] > 0)
    return HumanLikeness(m, n_hpairs, h_mean, h_sd, tuple(out))
