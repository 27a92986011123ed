"""Agreement with the humans: a judge's PAR (all labels, majority, no ties), Cohen's kappa,
paired differences between judges, and the human ceiling (leave-one-out PAR, Krippendorff's alpha)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Iterable, Sequence

import numpy as np

from calibration.metrics._common import HI_WINS, LO_WINS, OUTCOME_CATEGORIES, TIED, WRONG, as_float, sorted_lookup
from calibration.metrics.active import inverse_probability_weights
from calibration.metrics.bootstrap import Estimate, PairBootstrap, draw_count_blocks, percentile_ci
from calibration.metrics.labels import LabelRow, LabelTable, align_tables, as_table

# --------------------------------------------------------------------------
# judge vs humans
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Agreement:
    """One judge against the humans on the items both labelled.

    * ``par``: every matched human label counts once (judge winner == human
      winner, tie == tie); n = matched human labels.
    * ``par_majority``: judge vs the strict human majority of each item (tie is
      a category); items without a majority are excluded (``n_no_majority``).
    * ``par_no_ties``: ``par`` without the (judge, human label) comparisons in
      which either side says tie; ``share_kept`` = kept / matched.
    * ``kappa``: Cohen's kappa of the judge vs the human majority on the items
      with a majority; categories: the first of the pair's systems in name
      order wins, the second wins, a tie (``_common.OUTCOME_CATEGORIES``).
    * breakdowns: ``par`` per category and per criterion (same pair bootstrap).
    """

    judge: str
    n_items: int
    n_pairs: int
    par: Estimate
    par_majority: Estimate
    n_no_majority: int
    par_no_ties: Estimate
    share_kept: float | None
    kappa: Estimate
    by_category: dict[str, Estimate]
    by_criterion: dict[str, Estimate]

    def as_dict(self) -> dict:
        return asdict(self)


def _single_rater_name(table: LabelTable, what: str) -> str:
    names = table.rater_names()
    if len(names) > 1:
        raise ValueError(f"{what} holds {len(names)} raters ({', '.join(names[:5])}); pass one")
    return names[0] if names else ""


def _judge_order(judge: LabelTable) -> tuple[np.ndarray, np.ndarray]:
    """Sorted item keys of a judge and the row of each (one verdict per item)."""
    items = judge.item
    order = np.argsort(items, kind="stable")
    keys = items[order]
    if keys.size > 1:
        dup = keys[1:] == keys[:-1]
        if dup.any():
            raise ValueError(
                f"the judge has several verdicts on {int(np.unique(keys[1:][dup]).size)} items; merge swapped runs first (merge_swapped)"
            )
    return keys, order


def judge_index(judge: LabelTable) -> tuple[np.ndarray, np.ndarray]:
    """Sorted item keys of a judge and its outcome per item (one verdict per item)."""
    keys, order = _judge_order(judge)
    return keys, judge.outcome[order]


def _matched(judge: LabelTable, humans: LabelTable, share: np.ndarray | None = None):
    """Human labels on items the judge labelled, with the judge's outcome (and its share row, when given)."""
    keys, order = _judge_order(judge)
    found, pos = sorted_lookup(keys, humans.item)
    h = humans.select(found)
    rows = order[pos[found]]
    return h, judge.outcome[rows], (None if share is None else share[rows])


def _share_on(original: LabelTable, aligned: LabelTable, share: np.ndarray | None) -> np.ndarray | None:
    """`share` (one row per row of `original`) for `aligned`, the same rows on another vocabulary: a
    row whose two systems changed places in the canonical order has its first two columns (lo wins, hi wins) swapped too."""
    if share is None or original.vocab == aligned.vocab:
        return share
    old = np.asarray(original.vocab.systems, dtype=object)[original.sys_lo]
    new = np.asarray(aligned.vocab.systems, dtype=object)[aligned.sys_lo]
    share = share.copy()
    swapped = old != new
    share[swapped, LO_WINS], share[swapped, HI_WINS] = share[swapped, HI_WINS], share[swapped, LO_WINS].copy()
    return share


def item_counts(items: np.ndarray, outcome: np.ndarray):
    """Per distinct item: (keys, inverse per row, first row, counts n_items x 3)."""
    keys, first_row, inv = np.unique(items, return_index=True, return_inverse=True)
    counts = np.bincount(inv * 3 + outcome, minlength=3 * len(keys)).reshape(len(keys), 3)
    return keys, inv, first_row, counts


def strict_majority(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(has strict majority, majority outcome) per row of a (n x 3) count matrix."""
    total = counts.sum(axis=1)
    best = counts.argmax(axis=1)
    has = counts.max(axis=1) * 2 > total
    return has, best


# How an item whose humans give no single most frequent label counts in the majority-vote accuracy.
MAJORITY_TIES = ("drop", "half", "draw")
DEFAULT_MAJORITY_TIES = "drop"
MAJORITY_TIE_RULES = {
    "drop": "the majority vote is each item's strict majority (more than half of its human labels); items without one are left out",
    "half": "the majority vote is each item's most frequent human label; where k labels tie for most frequent, a judge giving one "
    "of them scores 1/k (a two-way tie: half), as the expected accuracy of a uniform tie-break",
    "draw": "the majority vote is each item's most frequent human label; where several tie for most frequent, one of them is drawn "
    "(a seeded uniform draw per item, the report's seed: the floor(u k)-th of its k tied labels in the categories' order)",
}


def check_majority_ties(convention: str) -> str:
    if convention not in MAJORITY_TIES:
        raise ValueError(f"unknown majority-tie convention '{convention}' (choose {', '.join(MAJORITY_TIES)})")
    return convention


def majority_credit(counts: np.ndarray, judge_share: np.ndarray, convention: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(credit, weight) per item of a judge against the human majority vote under ``convention``.

    ``counts`` (items x categories): the human labels of each item per category; ``judge_share``
    (items x at least as many categories): the judge's verdict per item spread over them (one-hot
    for a whole verdict; a wrong verdict's column beyond them counts for none). The majority-vote
    accuracy is ``sum(credit) / sum(weight)``: ``drop`` weighs only items with a strict majority,
    ``half`` and ``draw`` every item with a label (:data:`MAJORITY_TIE_RULES`)."""
    check_majority_ties(convention)
    counts = np.asarray(counts)
    n_cat = counts.shape[1]
    share = np.asarray(judge_share, dtype=float)[:, :n_cat]
    total = counts.sum(axis=1)
    if convention == "drop":
        has, best = strict_majority(counts)
        return share[np.arange(len(counts)), best] * has, has.astype(float)
    top = (counts == counts.max(axis=1, keepdims=True)) & (total[:, None] > 0)
    k = top.sum(axis=1)
    weight = (total > 0).astype(float)
    if convention == "half":
        with np.errstate(invalid="ignore", divide="ignore"):
            credit = np.where(k > 0, (share * top).sum(axis=1) / np.maximum(k, 1), 0.0)
        return credit, weight
    # draw: the j-th of an item's k tied labels, j drawn uniformly (one draw per item, in item order)
    pick = np.floor(np.random.default_rng(seed).random(len(counts)) * np.maximum(k, 1)).astype(np.int64)
    rank = np.cumsum(top, axis=1) - 1  # the position of each tied label among its item's tied labels
    chosen = top & (rank == pick[:, None])
    return (share * chosen).sum(axis=1) * weight, weight


def majority_winners(groups: Sequence[Sequence[str]]) -> list[str | None]:
    """For each group of verdicts (system names or 'tie'), the one given by more than half, else None.

    The strict majority of :func:`agreement` and :func:`human_ceiling`, for verdicts held as names
    (the disagreement browser); None for an empty group. All groups in one count matrix.
    """
    names = sorted({w for group in groups for w in group})
    if not names:
        return [None] * len(groups)
    code = {name: i for i, name in enumerate(names)}
    counts = np.zeros((len(groups), len(names)), dtype=np.int64)
    rows = [i for i, group in enumerate(groups) for _ in group]
    cols = [code[w] for group in groups for w in group]
    np.add.at(counts, (rows, cols), 1)
    has, best = strict_majority(counts)
    return [names[b] if h else None for h, b in zip(has.tolist(), best.tolist())]


def majority_winner(winners: Sequence[str]) -> str | None:
    """:func:`majority_winners` of one group."""
    return majority_winners([winners])[0]


def kappa_value(agree, n, marg_j, marg_h) -> np.ndarray:
    """Cohen's kappa from agreement count, n and the two marginal count vectors."""
    agree, n = np.asarray(agree, float), np.asarray(n, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = agree / n
        pe = (np.asarray(marg_j, float) * np.asarray(marg_h, float)).sum(axis=-1) / (n * n)
        k = (po - pe) / (1.0 - pe)
    return np.where((n > 0) & (pe < 1.0 - 1e-15), k, np.nan)


def kappa_estimate(
    pair_codes: np.ndarray,
    codes_x: np.ndarray,
    codes_y: np.ndarray,
    n_categories: int,
    boot: PairBootstrap,
    share_x: np.ndarray | None = None,
) -> Estimate:
    """Cohen's kappa of two aligned code vectors (one entry per item), CI from ``boot``.

    ``share_x`` (items x n_categories), when given, replaces ``codes_x``: rater x's verdict on an
    item spread over the categories (half a verdict each way for a judge whose two orders count
    separately; a category of its own for a wrong verdict).
    """
    if share_x is None:
        onehot_x = np.zeros((len(codes_x), n_categories))
        onehot_x[np.arange(len(codes_x)), codes_x] = 1.0
        same = (codes_x == codes_y).astype(float)
    else:
        onehot_x = share_x[:, :n_categories]
        same = share_x[np.arange(len(codes_y)), codes_y]
    onehot_y = np.zeros((len(codes_y), n_categories))
    onehot_y[np.arange(len(codes_y)), codes_y] = 1.0
    stat = np.column_stack([same, np.ones(len(codes_y)), onehot_x, onehot_y])
    per_unit = boot.per_unit(pair_codes, stat)
    tot = per_unit.sum(axis=0)
    n = int(tot[1])
    n_pairs = int((per_unit[:, 1] > 0).sum())
    split = 2 + n_categories
    point = as_float(kappa_value(tot[0], tot[1], tot[2:split], tot[split:]))
    ci = (None, None)
    if boot.rounds > 0 and n > 0 and point is not None:
        b = boot.resample(per_unit)
        lo, hi = percentile_ci(kappa_value(b[:, 0], b[:, 1], b[:, 2:split], b[:, split:]))
        ci = (as_float(lo), as_float(hi))
    return Estimate(point, n, *ci, n_pairs)


def agreement(
    judge_labels: LabelTable | Iterable[LabelRow],
    human_labels: LabelTable | Iterable[LabelRow],
    rounds: int = 1000,
    seed: int = 0,
    share: np.ndarray | None = None,
    inclusion: dict[str, float] | None = None,
    majority_ties: str = DEFAULT_MAJORITY_TIES,
) -> Agreement:
    """Agreement of one judge (one verdict per item) with the humans.

    ``judge_labels``: one rater, at most one verdict per item (merge swapped
    runs first with :func:`merge_swapped`).  ``human_labels`` are used as given
    (pass ``table.humans()``).  Only items present in both are used.  CIs: bootstrap over the pairs that
    have at least one matched item (all figures share the same draws).

    ``share`` (one row per row of ``judge_labels``, columns lo wins, hi wins, tie, wrong; rows sum to
    1) replaces the judge's outcomes when given: a human label then agrees with the judge by the
    share of the judge's verdict on its answer (see :func:`conventions.judge_votes`). Without it,
    each verdict is its outcome, whole.

    ``inclusion`` (active sampling): the pairs' inclusion probabilities, keyed as the tables' pairs.
    PAR, its no-ties and majority forms and the breakdowns are then weighted means, each human
    label counting 1 / its pair's pi (a Hajek ratio; the pair bootstrap carries the weights), so
    that they estimate the agreement over all pairs, not over the ones the draw favoured. Kappa
    stays unweighted.

    ``majority_ties``: how ``par_majority`` (the majority-vote accuracy) counts an item without a
    strict majority (:data:`MAJORITY_TIE_RULES`: left out, the default; 1/k for a judge giving one
    of the k tied labels; one of them drawn with ``seed``). Kappa stays on the items with a strict
    majority whatever it is.
    """
    check_majority_ties(majority_ties)
    original = as_table(judge_labels)
    judge, humans = align_tables(original, human_labels)
    share = _share_on(original, judge, share)
    name = _single_rater_name(judge, "judge_labels")
    v = judge.vocab
    h, j_out, sh = _matched(judge, humans, share)
    boot = PairBootstrap(h.pair, rounds, seed)
    ones = np.ones(len(h)) if inclusion is None else inverse_probability_weights(np.asarray(h.vocab.pairs)[h.pair], inclusion)
    keys, inv, first_row, counts = item_counts(h.item, h.outcome)
    has, maj = strict_majority(counts)
    it_pair = h.pair[first_row]

    if sh is None:
        # PAR: every human label once
        agree = (h.outcome == j_out).astype(float)
        # PAR without ties on either side
        keep = (h.outcome != TIED) & (j_out != TIED)
        par_nt = (h.pair, ones * agree * keep, ones * keep, None, 1)
        # the strict majority of the humans per item
        it_judge = j_out[first_row]
        onehot = np.zeros((len(first_row), WRONG + 1))
        onehot[np.arange(len(first_row)), it_judge] = 1.0
        agree_maj, maj_weight = majority_credit(counts, onehot, majority_ties, seed)
        # Cohen's kappa on items with a majority, side categories (see OUTCOME_CATEGORIES)
        kappa = kappa_estimate(it_pair[has], it_judge[has], maj[has], OUTCOME_CATEGORIES, boot)
    else:
        agree = sh[np.arange(len(h)), h.outcome]
        decided = (h.outcome != TIED).astype(float)
        keep = (1.0 - sh[:, TIED]) * decided  # the part of the comparison in which the judge said no tie
        par_nt = (h.pair, ones * agree * decided, ones * keep, None, 1)
        it_share = sh[first_row]
        agree_maj, maj_weight = majority_credit(counts, it_share, majority_ties, seed)
        categories = OUTCOME_CATEGORIES + 1 if sh[:, WRONG].any() else OUTCOME_CATEGORIES
        kappa = kappa_estimate(it_pair[has], maj[has], maj[has], categories, boot, share_x=it_share[has])
    share_kept = float(keep.mean()) if len(h) else None
    it_weight = ones[first_row]
    n_cat, n_crit = len(v.categories), len(v.criteria)
    # PAR, its no-ties and majority forms, and the breakdowns, resampled together (`PairBootstrap.ratios_many`).
    (par_nt,), (par,), (par_maj,), cat_est, crit_est = boot.ratios_many(
        [
            par_nt,
            (h.pair, ones * agree, ones, None, 1),
            (it_pair, it_weight * agree_maj, it_weight * maj_weight, None, 1),
            (h.pair, ones * agree, ones, h.category, n_cat),
            (h.pair, ones * agree, ones, h.criterion, n_crit),
        ]
    )
    present_cat = set(np.unique(h.category).tolist())
    present_crit = set(np.unique(h.criterion).tolist())
    return Agreement(
        judge=name,
        n_items=int(len(keys)),
        n_pairs=boot.n_units,
        par=par,
        par_majority=par_maj,
        n_no_majority=int((~has).sum()),
        par_no_ties=par_nt,
        share_kept=share_kept,
        kappa=kappa,
        by_category={v.categories[c]: cat_est[c] for c in sorted(present_cat)},
        by_criterion={v.criteria[c]: crit_est[c] for c in sorted(present_crit)},
    )


@dataclass(frozen=True)
class PairedDifference:
    """PAR(A) - PAR(B) on the items both judges labelled (and humans too).

    CI: bootstrap over pairs, the same resampled pairs for both judges;
    ``significant`` when the CI excludes 0.
    """

    judge_a: str
    judge_b: str
    difference: Estimate
    par_a: float | None
    par_b: float | None
    n_pairs: int
    significant: bool

    def as_dict(self) -> dict:
        return asdict(self)


def paired_difference(
    judge_a: LabelTable | Iterable[LabelRow],
    judge_b: LabelTable | Iterable[LabelRow],
    humans: LabelTable | Iterable[LabelRow],
    rounds: int = 1000,
    seed: int = 0,
    share_a: np.ndarray | None = None,
    share_b: np.ndarray | None = None,
) -> PairedDifference:
    """``share_a`` / ``share_b``: as ``share`` in :func:`agreement`, for either judge."""
    original_a, original_b = as_table(judge_a), as_table(judge_b)
    ja, jb, hu = align_tables(original_a, original_b, humans)
    share_a, share_b = _share_on(original_a, ja, share_a), _share_on(original_b, jb, share_b)
    name_a, name_b = _single_rater_name(ja, "judge_a"), _single_rater_name(jb, "judge_b")
    keys_a, order_a = _judge_order(ja)
    keys_b, order_b = _judge_order(jb)
    items = hu.item
    fa, pa = sorted_lookup(keys_a, items)
    fb, pb = sorted_lookup(keys_b, items)
    both = fa & fb
    labels = hu.outcome[both]

    def agrees(judge: LabelTable, order: np.ndarray, pos: np.ndarray, share: np.ndarray | None) -> np.ndarray:
        rows = order[pos[both]]
        if share is None:
            return (labels == judge.outcome[rows]).astype(float)
        return share[rows, labels]

    ag_a = agrees(ja, order_a, pa, share_a)
    ag_b = agrees(jb, order_b, pb, share_b)
    pairs = hu.pair[both]
    boot = PairBootstrap(pairs, rounds, seed)
    diff = boot.ratios(pairs, ag_a - ag_b, np.ones(len(pairs)))[0]
    n = len(pairs)
    significant = diff.ci is not None and (diff.ci[0] > 0 or diff.ci[1] < 0)
    return PairedDifference(
        judge_a=name_a,
        judge_b=name_b,
        difference=diff,
        par_a=float(ag_a.mean()) if n else None,
        par_b=float(ag_b.mean()) if n else None,
        n_pairs=boot.n_units,
        significant=bool(significant),
    )


def paired_differences(
    judges: Sequence[tuple[LabelTable, np.ndarray | None]], humans: LabelTable, rounds: int = 1000, seed: int = 0
) -> list[PairedDifference]:
    """:func:`paired_difference` of every two of ``judges`` (each ``(items, share)``), in the order of
    ``itertools.combinations``, with the same figures, computed together: each judge is matched
    to the humans once, not once per other judge, and the judge pairs sharing as many pairs
    resample their per-pair sums with one product of the same draw counts."""
    humans = as_table(humans)
    tables = [as_table(t) for t, _ in judges]
    if any(t.vocab != humans.vocab for t in tables):  # the tables of one report share theirs; others take the long way
        return [paired_difference(a, b, humans, rounds, seed, share_a=sa, share_b=sb) for (a, sa), (b, sb) in combinations(judges, 2)]
    labels = humans.outcome
    agree = []  # per judge and human label: 1 when they agree (a share of 1 under a convention), NaN when the judge did not judge the item
    for table, (_, share) in zip(tables, judges):
        keys, order = _judge_order(table)
        found, pos = sorted_lookup(keys, humans.item)
        rows = order[pos[found]]
        a = np.full(len(humans), np.nan)
        a[found] = (labels[found] == table.outcome[rows]) if share is None else share[rows, labels[found]]
        agree.append(a)
    names = [_single_rater_name(t, "judge") for t in tables]
    n_judges = len(tables)
    pair_list = list(combinations(range(n_judges), 2))
    agree_m = np.vstack(agree) if agree else np.zeros((0, len(humans)))
    # Per human label and every two judges of its item: (first judge, second judge, label row), the
    # judges in order; all judge pairs' per-pair sums are then one bincount. Agreements are 0, 1/2
    # or 1: their sums are exact, in any order (other values take one judge pair at a time).
    scaled = agree_m * 64.0
    if not np.array_equal(scaled[~np.isnan(scaled)], np.rint(scaled[~np.isnan(scaled)])):
        return [paired_difference(a, b, humans, rounds, seed, share_a=sa, share_b=sb) for (a, sa), (b, sb) in combinations(judges, 2)]
    row, judge = np.nonzero(~np.isnan(agree_m.T))
    first, second = _same_row_pairs(row)
    ia, ib, r = judge[first], judge[second], row[first]
    group = ia * n_judges + ib
    n_codes = len(humans.vocab.pairs) + 1
    units, unit = np.unique(group * n_codes + humans.pair[r], return_inverse=True)
    unit_sums = np.bincount(unit, weights=agree_m[ia, r] - agree_m[ib, r], minlength=len(units))
    unit_counts = np.bincount(unit, minlength=len(units)).astype(np.float64)
    slot = np.full(n_judges * n_judges, -1, dtype=np.int64)  # judge pair -> its number in pair_list
    slot[[i * n_judges + j for i, j in pair_list]] = np.arange(len(pair_list))
    n_units = np.bincount(slot[units // n_codes], minlength=len(pair_list))
    first_unit = np.concatenate([[0], np.cumsum(n_units)[:-1]]).astype(np.int64)
    k_of_row = slot[group]
    totals = np.bincount(k_of_row, weights=agree_m[ia, r] - agree_m[ib, r], minlength=len(pair_list))
    n_rows = np.bincount(k_of_row, minlength=len(pair_list))
    sum_a = np.bincount(k_of_row, weights=agree_m[ia, r], minlength=len(pair_list))
    sum_b = np.bincount(k_of_row, weights=agree_m[ib, r], minlength=len(pair_list))
    ends = {}
    for size in np.unique(n_units).tolist():
        if size == 0 or rounds <= 0:
            continue
        members = np.flatnonzero(n_units == size)
        at = first_unit[members][None, :] + np.arange(size)[:, None]  # units x members
        per_unit = np.concatenate([unit_sums[at], unit_counts[at]], axis=1)
        resampled = np.concatenate([c @ per_unit for c in draw_count_blocks(size, rounds, seed)], axis=0)
        bn, bd = resampled[:, : len(members)], resampled[:, len(members) :]
        with np.errstate(invalid="ignore", divide="ignore"):
            lo, hi = percentile_ci(np.where(bd > 0, bn / np.where(bd > 0, bd, 1), np.nan))
        ends.update({int(k): (as_float(lo[m]), as_float(hi[m])) for m, k in enumerate(members)})
    out = []
    for k, (i, j) in enumerate(pair_list):
        n = int(n_rows[k])
        if not n:
            diff = Estimate(None, 0, n_pairs=0)
        else:
            diff = Estimate(float(totals[k] / float(n)), n, *ends.get(k, (None, None)), int(n_units[k]))
        significant = diff.ci is not None and (diff.ci[0] > 0 or diff.ci[1] < 0)
        par_a, par_b = (float(sum_a[k] / n), float(sum_b[k] / n)) if n else (None, None)
        out.append(PairedDifference(names[i], names[j], diff, par_a, par_b, int(n_units[k]), bool(significant)))
    return out


def _same_row_pairs(row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (p, q), p < q, of every two entries of the sorted ``row`` with the same value."""
    firsts, seconds = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for step in range(1, len(row)):
        at = np.flatnonzero(row[step:] == row[:-step])
        if not len(at):
            break
        firsts.append(at)
        seconds.append(at + step)
    return np.concatenate(firsts), np.concatenate(seconds)


# --------------------------------------------------------------------------
# human ceiling
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class HumanCeiling:
    """How well humans agree with each other.

    * ``loo_par``: each human label vs the strict majority of the OTHER humans
      on its item; labels whose others have no majority (including items with
      a single human) are excluded and counted in ``n_loo_excluded``.
    * ``all_pairs_par``: share of agreeing pairs among all pairs of human labels
      on the same item (n = number of label pairs).
    * ``alpha``: Krippendorff's alpha, nominal (categories as for kappa: first
      system by name wins, second wins, tie); n = items with at least two labels.
    """

    loo_par: Estimate
    n_loo_excluded: int
    all_pairs_par: Estimate
    alpha: Estimate
    n_items: int
    n_items_multi: int

    def as_dict(self) -> dict:
        return asdict(self)


def _alpha_value(occ, n, nc) -> np.ndarray:
    """Krippendorff's nominal alpha from sum_c o_cc, n (pairable values) and n_c."""
    occ, n, nc = np.asarray(occ, float), np.asarray(n, float), np.asarray(nc, float)
    de = n * n - (nc * nc).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = 1.0 - (n - 1.0) * (n - occ) / de
    return np.where((n > 1) & (de > 1e-9), a, np.nan)


def human_ceiling(human_labels: LabelTable | Iterable[LabelRow], rounds: int = 1000, seed: int = 0) -> HumanCeiling:
    h = as_table(human_labels)
    keys, inv, first_row, counts = item_counts(h.item, h.outcome)
    m = counts.sum(axis=1)
    boot = PairBootstrap(h.pair, rounds, seed)

    # leave-one-out: others = item counts minus the label itself
    others = counts[inv].copy()
    others[np.arange(len(h)), h.outcome] -= 1
    has, maj = strict_majority(others)
    has &= others.sum(axis=1) > 0
    loo = boot.ratios(h.pair, ((maj == h.outcome) & has).astype(float), has.astype(float))[0]

    # all pairs of labels on one item
    it_pair = h.pair[first_row]
    agree_pairs = (counts * (counts - 1) / 2).sum(axis=1)
    all_pairs = m * (m - 1) / 2
    ap = boot.ratios(it_pair, agree_pairs, all_pairs)[0]

    # Krippendorff's alpha (nominal) on items with >= 2 values
    multi = m >= 2
    k_cat = OUTCOME_CATEGORIES
    occ = np.where(multi, (counts * (counts - 1)).sum(axis=1) / np.maximum(m - 1, 1), 0.0)
    row_multi = multi[inv]
    nc = np.zeros((len(h), k_cat))
    nc[np.arange(len(h)), h.outcome] = row_multi
    occ_pu = boot.per_unit(it_pair, occ)
    n_pu = boot.per_unit(it_pair, np.where(multi, m, 0).astype(float))
    nc_pu = boot.per_unit(h.pair, nc)
    a_point = as_float(_alpha_value(occ_pu.sum(), n_pu.sum(), nc_pu.sum(axis=0)))
    if boot.rounds > 0 and a_point is not None:
        b = boot.resample(np.column_stack([occ_pu, n_pu, nc_pu]))
        lo, hi = percentile_ci(_alpha_value(b[:, 0], b[:, 1], b[:, 2:]))
        a_ci = (as_float(lo), as_float(hi))
    else:
        a_ci = (None, None)
    alpha = Estimate(a_point, int(multi.sum()), *a_ci, int((n_pu[:, 0] > 0).sum()))
    return HumanCeiling(
        loo_par=loo,
        n_loo_excluded=int((~has).sum()),
        all_pairs_par=ap,
        alpha=alpha,
        n_items=int(len(keys)),
        n_items_multi=int(multi.sum()),
    )
