"""Agreement by human consensus: a judge's and each annotator's agreement on the items the annotators
agree on, the items they split on, and the items only one annotator labelled.

An item is (pair, criterion); its annotators' verdicts are their first ones there
(:func:`raters.one_per_rater_item`). Strata (:data:`STRATA`):

* ``unanimous``: two or more annotators, all giving the same verdict;
* ``split``: two or more annotators, not all giving the same verdict;
* ``single``: one annotator.

Per stratum, for each judge (one verdict per item) and each annotator:

* PAR: the share of comparisons that agree. A judge is compared with every annotator's verdict on the
  item (as the judge's PAR everywhere in the report); an annotator with every *other* annotator's
  verdict there (so an annotator has no figure on single items, and the pooled ``humans`` figure is
  the share of agreeing pairs of annotators).
* kappa: Cohen's kappa against the strict majority (more than half) of the annotators on the item
  (a judge) or of the *other* annotators (an annotator), on the items that have one; categories as
  everywhere (:data:`_common.OUTCOME_CATEGORIES`: the first system in name order wins, the second, a tie).

The CIs are the pair bootstrap's percentile intervals (PAR and kappa of one rater resampled together).
``split_share`` per criterion: the split items over the items with two or more annotators.

A judge whose PAR or kappa on split items exceeds the humans' own there gets :data:`SPLIT_NOTE`: it
matches the majority where the humans disagree, which is no sign of judging better.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Mapping

import numpy as np

from calibration.metrics._common import OUTCOME_CATEGORIES, as_float
from calibration.metrics.agreement import item_counts, judge_index, kappa_value, strict_majority
from calibration.metrics.bootstrap import Estimate, PairBootstrap, percentile_ci
from calibration.metrics.labels import LabelTable, align_tables
from calibration.metrics.raters import one_per_rater_item

UNANIMOUS, SPLIT, SINGLE = "unanimous", "split", "single"
STRATA = (UNANIMOUS, SPLIT, SINGLE)
SPLIT_NOTE = "matches the majority where humans disagree: read with care"
RULE = (
    "items (pair, criterion) by their annotators: unanimous (2+ annotators, one verdict), split (2+, not one verdict), "
    "single (1 annotator); PAR: a judge against every annotator's verdict on the item, an annotator against every other "
    "annotator's; kappa against the strict majority of the annotators (a judge) or of the other annotators (an annotator)"
)
_K = OUTCOME_CATEGORIES
_KW = 2 + 2 * _K  # kappa sums per stratum: agree, n, x's categories, y's categories


@dataclass(frozen=True)
class StratumFigures:
    par: Estimate
    kappa: Estimate

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RaterConsensus:
    rater: str
    kind: str  # "judge" | "human" | "humans" (all annotators pooled)
    strata: dict[str, StratumFigures]
    note: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Consensus:
    n_items: dict[str, int]  # items per stratum
    split_share: dict[str, Estimate]  # per criterion: split items / items with 2+ annotators
    humans: RaterConsensus
    annotators: tuple[RaterConsensus, ...]
    judges: tuple[RaterConsensus, ...]
    rule: str = RULE

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class _Items:
    """The annotators' items: sorted keys, per item its pair, criterion, counts (items x 3) and stratum code."""

    keys: np.ndarray
    pair: np.ndarray
    criterion: np.ndarray
    counts: np.ndarray
    stratum: np.ndarray  # index into STRATA


def _items(h: LabelTable) -> tuple[_Items, np.ndarray]:
    keys, inv, first_row, counts = item_counts(h.item, h.outcome)
    m = counts.sum(axis=1)
    stratum = np.where(m == 1, 2, np.where(counts.max(axis=1) == m, 0, 1))
    return _Items(keys, h.pair[first_row], h.criterion[first_row], counts, stratum), inv


def _figures(boot: PairBootstrap, par_rows: tuple, kappa_rows: tuple, rounds: int) -> dict[str, StratumFigures]:
    """PAR and kappa per stratum from comparison rows (pair, stratum, agreeing, compared) and kappa
    items (pair, stratum, x's code, y's code), resampled in one product."""
    p_pair, p_stratum, p_num, p_den = par_rows
    k_pair, k_stratum, cx, cy = kappa_rows
    width = 6 + 3 * _KW
    # (units x width) sums, built from each row's few non-zero cells (a bincount each, not one per column)
    pu, ku = boot.unit_index(p_pair) * width, boot.unit_index(k_pair) * width
    kb = ku + k_stratum * _KW + 6
    cells = [
        (pu + p_stratum, p_num),
        (pu + 3 + p_stratum, p_den),
        (kb, (cx == cy).astype(np.float64)),
        (kb + 1, np.ones(len(k_pair))),
        (kb + 2 + cx, np.ones(len(k_pair))),
        (kb + 2 + _K + cy, np.ones(len(k_pair))),
    ]
    size = boot.n_units * width
    per_unit = sum(np.bincount(index, weights=np.asarray(w, dtype=np.float64), minlength=size) for index, w in cells)
    per_unit = np.asarray(per_unit, dtype=np.float64).reshape(boot.n_units, width)
    total = per_unit.sum(axis=0)
    sampled = boot.resample(per_unit) if rounds > 0 and boot.rounds > 0 else None

    def par_of(s: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(s[..., 3:6] > 0, s[..., 0:3] / np.where(s[..., 3:6] > 0, s[..., 3:6], 1), np.nan)

    def kappa_of(s: np.ndarray) -> np.ndarray:
        k = s[..., 6:].reshape(*s.shape[:-1], 3, _KW)
        return kappa_value(k[..., 0], k[..., 1], k[..., 2 : 2 + _K], k[..., 2 + _K :])

    par_point, kappa_point = par_of(total), kappa_of(total)
    ends = None
    if sampled is not None:
        ends = percentile_ci(np.concatenate([par_of(sampled), kappa_of(sampled)], axis=1))
    par_pairs = (per_unit[:, 3:6] > 0).sum(axis=0)
    k_sums = per_unit[:, 6:].reshape(boot.n_units, 3, _KW)
    kappa_pairs = (k_sums[:, :, 1] > 0).sum(axis=0)
    out = {}
    for s, name in enumerate(STRATA):
        lo = hi = (None, None)
        if ends is not None:
            lo = (as_float(ends[0][s]), as_float(ends[1][s]))
            hi = (as_float(ends[0][3 + s]), as_float(ends[1][3 + s]))
        par_n = int(round(total[3 + s]))
        kappa_n = int(round(total[6 + s * _KW + 1]))
        par = Estimate(as_float(par_point[s]) if par_n else None, par_n, *(lo if par_n else (None, None)), int(par_pairs[s]))
        kappa_v = as_float(kappa_point[s])
        kappa = Estimate(kappa_v, kappa_n, *(hi if kappa_v is not None else (None, None)), int(kappa_pairs[s]))
        out[name] = StratumFigures(par, kappa)
    return out


def _exceeds(judge: dict[str, StratumFigures], humans: dict[str, StratumFigures]) -> bool:
    j, h = judge[SPLIT], humans[SPLIT]
    return any(a.value is not None and b.value is not None and a.value > b.value + 1e-12 for a, b in ((j.par, h.par), (j.kappa, h.kappa)))


def consensus(
    humans: LabelTable,
    judges: Mapping[str, LabelTable],
    rounds: int = 1000,
    seed: int = 0,
    judge_rounds: int | None = None,
    annotator_rounds: int | None = None,
) -> Consensus:
    """The figures of the module doc. `humans`: the annotators' labels; `judges`: name -> one verdict
    per item (merged orders). `judge_rounds` / `annotator_rounds` (default `rounds`): the rounds of
    the judges' and the annotators' intervals (0: no interval; the report withholds them at scale)."""
    judge_rounds = rounds if judge_rounds is None else judge_rounds
    annotator_rounds = rounds if annotator_rounds is None else annotator_rounds
    names = list(judges)
    aligned = align_tables(humans, *[judges[n] for n in names]) if names else (humans,)
    h = one_per_rater_item(aligned[0])
    v = h.vocab
    items, inv = _items(h)
    m = items.counts.sum(axis=1)
    n_items = {name: int((items.stratum == s).sum()) for s, name in enumerate(STRATA)}

    # the share of split items per criterion, over the items with two or more annotators
    multi = m >= 2
    share_boot = PairBootstrap(items.pair[multi], rounds, seed)
    shares = share_boot.ratios(
        items.pair[multi], (items.stratum[multi] == 1).astype(float), np.ones(int(multi.sum())), items.criterion[multi], len(v.criteria)
    )
    present = np.unique(items.criterion[multi]).tolist()
    split_share = {v.criteria[c]: shares[c] for c in present}

    # annotators: each verdict against the others' on its item
    row_stratum = items.stratum[inv]
    row_counts = items.counts[inv]
    same_others = row_counts[np.arange(len(h)), h.outcome] - 1
    n_others = m[inv] - 1
    others = row_counts.copy()
    others[np.arange(len(h)), h.outcome] -= 1
    has, maj = strict_majority(others)
    has &= n_others > 0
    boot_all = PairBootstrap(h.pair, rounds, seed)
    pooled = _figures(
        boot_all,
        (h.pair, row_stratum, same_others.astype(float), n_others.astype(float)),
        (h.pair[has], row_stratum[has], h.outcome[has].astype(np.int64), maj[has].astype(np.int64)),
        rounds,
    )
    humans_row = RaterConsensus("humans", "humans", pooled)
    annotators = []
    for r in sorted(np.unique(h.rater).tolist(), key=lambda r: v.raters[r]):
        mine = h.rater == r
        k_mine = mine & has
        boot = PairBootstrap(h.pair[mine], annotator_rounds, seed)
        figures = _figures(
            boot,
            (h.pair[mine], row_stratum[mine], same_others[mine].astype(float), n_others[mine].astype(float)),
            (h.pair[k_mine], row_stratum[k_mine], h.outcome[k_mine].astype(np.int64), maj[k_mine].astype(np.int64)),
            annotator_rounds,
        )
        annotators.append(RaterConsensus(v.raters[r], "human", figures))

    # judges: against every annotator's verdict, and kappa against the annotators' strict majority
    item_has, item_maj = strict_majority(items.counts)
    out = []
    for name, table in zip(names, aligned[1:]):
        keys, j_out = judge_index(table)
        found = np.isin(h.item, keys)
        pos = np.searchsorted(keys, h.item[found])
        rows_j = j_out[pos]
        hf = h.select(found)
        it_found = np.isin(items.keys, keys)
        it_sel = it_found & item_has
        it_j = j_out[np.searchsorted(keys, items.keys[it_sel])]
        boot = PairBootstrap(hf.pair, judge_rounds, seed)
        figures = _figures(
            boot,
            (hf.pair, row_stratum[found], (hf.outcome == rows_j).astype(float), np.ones(len(hf))),
            (items.pair[it_sel], items.stratum[it_sel], it_j.astype(np.int64), item_maj[it_sel].astype(np.int64)),
            judge_rounds,
        )
        out.append(RaterConsensus(name, "judge", figures, SPLIT_NOTE if _exceeds(figures, pooled) else None))
    return Consensus(n_items, split_share, humans_row, tuple(annotators), tuple(out))
