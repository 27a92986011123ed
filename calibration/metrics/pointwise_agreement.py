"""A rater against the humans on pointwise answers, and the human leave-one-out ceiling.

A *comparison* puts one rater's answer to an item beside a *reference* made of the humans'
answers to that item. For a judge the reference is every annotator who answered the item; for the
ceiling, each annotator in turn takes the judge's place and the reference is the OTHER annotators
of the item. The ceiling is the same statistic computed on those (item, annotator) comparisons,
pooled over the annotators (``ceiling``) and for each annotator (``annotators``), so a judge's
figure and the ceiling read on one scale. A comparison needs the rater's answer and at least one
reference answer; N/A answers (checklists) are neither: they are left out and counted.

Three forms of reference, each used where it is the natural one:

* every reference answer (each (rater answer, human answer) pair counts once): agreement and
  Cohen's kappa (binary); exact and within-one agreement and weighted kappa (rating). A mean of
  answers is not a point of the scale; rounding it would invent answers, so these use the pairs.
* the reference's mean: the rater's mean, the humans' mean on the same items, bias (their
  difference: for a checklist, the rater's yes rate minus the humans'), MAE, RMSE, and Spearman's
  rho and Kendall's tau-b of the rater against the human mean (ratings).
* the reference's strict majority (binary only): ``agreement_majority`` and ``kappa_majority``,
  and the figures checklist studies publish against the expert majority, "yes" the positive class:
  ``balanced_accuracy``, ``precision``, ``recall``, ``f1``, ``phi`` (Matthews' correlation), and
  ``majority_yes_rate`` (the majority's yes rate on those items, beside ``human_mean``, the yes rate
  of every human answer pooled); items where the reference answers split evenly are left out and
  counted (``no_majority``).

Figure names by response type (``Figures.figures`` keys):

* binary: agreement, kappa, agreement_majority, kappa_majority, mean (yes rate), human_mean, bias,
  not_applicable (share of the rater's answers that are N/A), human_not_applicable (share of the
  reference answers that are N/A, per item, averaged), both on items where both sides answered;
* rating: exact, within_one, kappa_linear, kappa_quadratic, spearman, kendall, mean, human_mean,
  bias, mae, rmse;
* count: mean, human_mean, bias, mae, rmse;
* nominal (one class of a list): agreement and Cohen's kappa against every reference answer,
  agreement_majority and kappa_majority against the reference's strict plurality (an item whose
  two most chosen classes tie is left out and counted, ``no_majority``), not_applicable and
  human_not_applicable as for a checklist. No mean: the classes have no order. ``Figures.confusion``
  is the pooled (rater's class x majority's class) count table, in the order of the table's classes.

Every figure is an :class:`Estimate` with n (comparisons: answer pairs for the pair forms, items
for the others) and a 95% percentile CI of the bootstrap over clusters (``cluster``: articles by
default, or topics); ``n_pairs`` of the Estimate counts clusters. None where the figure cannot run
(no comparison, or no spread: kappa when chance agreement is total, a correlation against a
constant). Panel statistics (kappa of Fleiss, Krippendorff's alpha, ICC) are in
:mod:`.pointwise_panel`; :func:`pointwise_statistics` computes everything.

Pure numpy/scipy, no Django.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from calibration.metrics import pointwise_math as pm
from calibration.metrics.bootstrap import Estimate
from calibration.metrics.pointwise import ARTICLE, BINARY, CATEGORICAL, COUNT, NOMINAL, RATING, PointwiseAnswers
from calibration.metrics.pointwise_panel import PanelFigures, panels
from calibration.metrics.pointwise_sums import by_group, cluster_bootstrap, compute, sparse_cells

CEILING = "annotators, each against the others"
# The figures of each response type, in the order a report shows them (and the order of the dicts).
RATER_FIGURES = {
    BINARY: (
        "agreement",
        "kappa",
        "agreement_majority",
        "kappa_majority",
        *pm.MAJORITY_SCORES,
        "mean",
        "human_mean",
        "bias",
        "not_applicable",
        "human_not_applicable",
    ),
    RATING: ("exact", "within_one", "kappa_linear", "kappa_quadratic", "spearman", "kendall", "mean", "human_mean", "bias", "mae", "rmse"),
    COUNT: ("mae", "rmse", "mean", "human_mean", "bias"),
    NOMINAL: ("agreement", "kappa", "agreement_majority", "kappa_majority", "not_applicable", "human_not_applicable"),
}


@dataclass(frozen=True)
class Figures:
    """One rater (a judge, or the annotators for the ceiling) against the humans: figures pooled
    over the criteria, per criterion (empty for one annotator's figures), and counts:
    ``items`` (items compared), ``not_applicable`` / ``reference_not_applicable`` (N/A answers of
    the rater / of the reference left out), ``no_majority`` (binary, nominal: comparisons without a
    strict reference majority). ``confusion`` (nominal only): rows the rater's class, columns the
    majority's, counts of comparisons with a majority."""

    rater: str
    figures: dict[str, Estimate]
    by_criterion: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    confusion: list[list[int]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class PointwiseStatistics:
    """Everything :func:`pointwise_statistics` computes for one table."""

    response: str
    scale: tuple[int, int] | None
    cluster: str
    n_answers: int
    n_items: int
    n_clusters: int
    humans: tuple[str, ...]
    judges: tuple[str, ...]
    judge_figures: dict[str, Figures]
    ceiling: Figures
    annotators: dict[str, Figures]
    human_panel: PanelFigures
    judge_panels: dict[str, PanelFigures]

    def as_dict(self) -> dict:
        return asdict(self)


def n_categories(table: PointwiseAnswers) -> int:
    if table.response == BINARY:
        return 2
    if table.response == NOMINAL:
        return len(table.scale)
    if table.response == RATING:
        return table.scale[1] - table.scale[0] + 1
    return 0


def category_codes(table: PointwiseAnswers, values: np.ndarray) -> np.ndarray:
    """Category index of each (finite) value: 0/1 for a checklist, point - lowest for a rating, the
    class's code for a nominal answer."""
    low = table.scale[0] if table.response == RATING else 0
    return np.nan_to_num(values - low).astype(np.int64)


def category_counts(table: PointwiseAnswers, values: np.ndarray) -> np.ndarray:
    """(items x C) how many of each row's values fall in each category (NaN: none)."""
    c = n_categories(table)
    codes = category_codes(table, values)
    ok = ~np.isnan(values)
    out = np.zeros((values.shape[0], c))
    for j in range(c):
        out[:, j] = ((codes == j) & ok).sum(axis=1)
    return out


def _rank_table(table: PointwiseAnswers, x: np.ndarray, reference: np.ndarray):
    """Terms of the joint table (rater's category x distinct reference mean) and its shape."""
    c = n_categories(table)
    levels, y = np.unique(np.round(reference, 9), return_inverse=True)
    return sparse_cells(category_codes(table, x) * len(levels) + y, np.ones(len(x)), c * len(levels)), (c, len(levels))


def _majority_score(name: str):
    return _table_figure(lambda tb: pm.majority_scores(tb)[name], (2, 2))


def _error_figures(names: tuple[str, ...]):
    def make(name):
        return lambda t: pm.error_figures(t)[name]

    return {name: make(name) for name in names}


def _table_figure(fn, shape):
    return lambda t: fn(t.reshape(t.shape[:-1] + shape))


class _Comparisons:
    """One rater role's comparisons: per row its item, cluster, group, the rater's answer ``x``,
    the reference's category counts (binary, rating) and its mean."""

    def __init__(self, table, item, unit, x, ref_counts, ref_sum, ref_n):
        self.table, self.item, self.unit, self.x = table, item, unit, x
        self.ref_counts = ref_counts
        self.ref_mean = ref_sum / ref_n

    def majority(self) -> tuple[np.ndarray, np.ndarray]:
        """(per comparison the reference's strict majority class, whether it has one)."""
        counts = self.ref_counts
        top = counts.max(axis=1)
        has = (counts == top[:, None]).sum(axis=1) == 1
        return counts.argmax(axis=1), has

    def confusion(self) -> list[list[int]]:
        """(rater's class x majority's class) counts over the comparisons with a majority."""
        c = n_categories(self.table)
        majority, has = self.majority()
        cells = category_codes(self.table, self.x)[has] * c + majority[has]
        return np.bincount(cells, minlength=c * c).reshape(c, c).tolist()

    def figures(self, boot, group, n_groups) -> dict:
        t, x, n = self.table, self.x, len(self.x)
        out = {}
        if t.response == NOMINAL:
            return self._nominal(boot, group, n_groups)
        errors = pm.error_terms(x, self.ref_mean)
        names = ("mean", "human_mean", "bias") if t.response == BINARY else ("mean", "human_mean", "bias", "mae", "rmse")
        out.update(compute(boot, self.unit, group, n_groups, errors, np.ones(n), _error_figures(names)))
        if t.response == COUNT:
            return out
        c = n_categories(t)
        cells = category_codes(t, x)[:, None] * c + np.arange(c)[None, :]
        pairs = sparse_cells(cells, self.ref_counts, c * c)
        shape = (c, c)
        if t.response == BINARY:
            tables = {
                "agreement": _table_figure(lambda tb: pm.share_within(tb, 0), shape),
                "kappa": _table_figure(lambda tb: pm.kappa(tb, pm.disagreement_weights(2, pm.NOMINAL)), shape),
            }
        else:
            tables = {
                "exact": _table_figure(lambda tb: pm.share_within(tb, 0), shape),
                "within_one": _table_figure(lambda tb: pm.share_within(tb, 1), shape),
                "kappa_linear": _table_figure(lambda tb: pm.kappa(tb, pm.disagreement_weights(c, pm.LINEAR)), shape),
                "kappa_quadratic": _table_figure(lambda tb: pm.kappa(tb, pm.disagreement_weights(c, pm.QUADRATIC)), shape),
            }
        out.update(compute(boot, self.unit, group, n_groups, pairs, self.ref_counts.sum(axis=1), tables))
        if t.response == BINARY:
            yes, no = self.ref_counts[:, 1], self.ref_counts[:, 0]
            has = yes != no
            majority = sparse_cells(category_codes(t, x) * 2 + (yes > no), has.astype(np.float64), 4)
            out.update(
                compute(
                    boot,
                    self.unit,
                    group,
                    n_groups,
                    majority,
                    has.astype(np.float64),
                    {
                        "agreement_majority": _table_figure(lambda tb: pm.share_within(tb, 0), shape),
                        "kappa_majority": _table_figure(lambda tb: pm.kappa(tb, pm.disagreement_weights(2, pm.NOMINAL)), shape),
                        **{name: _majority_score(name) for name in pm.MAJORITY_SCORES},
                    },
                )  # fmt: skip
            )
        else:
            ranks, rshape = _rank_table(t, x, self.ref_mean)
            out.update(
                compute(
                    boot,
                    self.unit,
                    group,
                    n_groups,
                    ranks,
                    np.ones(n),
                    {"spearman": _table_figure(pm.spearman, rshape), "kendall": _table_figure(pm.kendall_tau_b, rshape)},
                )  # fmt: skip
            )
        return out

    def _nominal(self, boot, group, n_groups) -> dict:
        """Agreement and Cohen's kappa against every reference answer and against the strict majority."""
        c = n_categories(self.table)
        codes = category_codes(self.table, self.x)
        shape = (c, c)
        weights = pm.disagreement_weights(c, pm.NOMINAL)
        figures = {
            "agreement": _table_figure(lambda tb: pm.share_within(tb, 0), shape),
            "kappa": _table_figure(lambda tb: pm.kappa(tb, weights), shape),
        }
        pairs = sparse_cells(codes[:, None] * c + np.arange(c)[None, :], self.ref_counts, c * c)
        out = compute(boot, self.unit, group, n_groups, pairs, self.ref_counts.sum(axis=1), figures)
        majority, has = self.majority()
        cells = sparse_cells(codes * c + majority, has.astype(np.float64), c * c)
        at_majority = compute(boot, self.unit, group, n_groups, cells, has.astype(np.float64), figures)
        out.update({f"{name}_majority": value for name, value in at_majority.items()})
        return out

    def no_majority(self) -> int:
        if self.table.response == NOMINAL:
            return int((~self.majority()[1]).sum())
        if self.table.response != BINARY:
            return 0
        return int((self.ref_counts[:, 1] == self.ref_counts[:, 0]).sum())


def _na_figures(boot, unit, group, n_groups, rater_na, reference_na_share) -> dict:
    terms = np.column_stack([np.ones(len(rater_na)), rater_na, reference_na_share])
    return compute(
        boot, unit, group, n_groups, terms, np.ones(len(rater_na)),
        {"not_applicable": lambda s: pm.safe_div(s[..., 1], s[..., 0]), "human_not_applicable": lambda s: pm.safe_div(s[..., 2], s[..., 0])},
    )  # fmt: skip


def _in_order(computed: dict, table: PointwiseAnswers) -> dict:
    return {name: computed[name] for name in RATER_FIGURES[table.response]}


def _setup(table: PointwiseAnswers, cluster: str, rounds: int, seed: int):
    grid = table.grid
    units = table.clusters_of_articles(cluster)[grid.article]
    return grid, units, cluster_bootstrap(units, rounds, seed)


def judge_figures(table: PointwiseAnswers, judge: str, *, cluster: str = ARTICLE, rounds: int = 1000, seed: int = 0, _boot=None) -> Figures:
    """One judge against all annotators of each item (see the module docstring for the figures).

    Comparisons: the items where the judge gave an answer (not N/A) and at least one annotator did.
    Raises ValueError when ``judge`` is not a judge of the table."""
    j = table.judge_code(judge)
    grid, units, boot = _setup(table, cluster, rounds, seed)
    boot = _boot or boot
    humans = table.human_codes
    hv = grid.value[:, humans]
    x = grid.value[:, j]
    ref_n = (~np.isnan(hv)).sum(axis=1)
    rows = ~np.isnan(x) & (ref_n > 0)
    counts = category_counts(table, hv[rows]) if table.response != COUNT else None
    comp = _Comparisons(table, np.flatnonzero(rows), units[rows], x[rows], counts, np.nansum(hv[rows], axis=1), ref_n[rows])
    g = len(table.criteria)
    computed = comp.figures(boot, grid.criterion[rows], g)
    result_counts = {"items": int(rows.sum())}
    if table.response in CATEGORICAL:
        answered_h = grid.answered[:, humans]
        na_rows = grid.answered[:, j] & answered_h.any(axis=1)
        na_h = (answered_h & np.isnan(hv)).sum(axis=1)
        share = na_h[na_rows] / answered_h[na_rows].sum(axis=1)
        computed.update(_na_figures(boot, units[na_rows], grid.criterion[na_rows], g, np.isnan(x[na_rows]).astype(float), share))
        result_counts.update(
            not_applicable=int((na_rows & np.isnan(x)).sum()),
            reference_not_applicable=int(na_h[na_rows].sum()),
            no_majority=comp.no_majority(),
        )
    present = np.bincount(grid.criterion[rows], minlength=g) > 0
    pooled, per = by_group(_in_order(computed, table), table.criteria, present)
    return Figures(judge, pooled, per, result_counts, comp.confusion() if table.response == NOMINAL else [])


def _loo(table: PointwiseAnswers, grid, units):
    """The ceiling's comparisons: each (item, annotator) with an answer and at least one other
    annotator's answer, against those others. Returns (comparisons, annotator index per row)."""
    humans = table.human_codes
    hv = grid.value[:, humans]
    ok = ~np.isnan(hv)
    m = ok.sum(axis=1)
    item, who = np.nonzero(ok & (m[:, None] >= 2))
    x = hv[item, who]
    total = np.nansum(hv, axis=1)
    counts = None
    if table.response != COUNT:
        counts = category_counts(table, hv)[item]
        counts[np.arange(len(item)), category_codes(table, x)] -= 1.0
    comp = _Comparisons(table, item, units[item], x, counts, total[item] - x, m[item] - 1.0)
    return comp, who


def _loo_na(table: PointwiseAnswers, grid):
    """Binary: each (item, annotator) with an answer (N/A included) and another annotator's answer:
    (item, annotator, own answer N/A, share of the others' answers N/A)."""
    humans = table.human_codes
    answered = grid.answered[:, humans]
    na = answered & np.isnan(grid.value[:, humans])
    a, n_na = answered.sum(axis=1), na.sum(axis=1)
    item, who = np.nonzero(answered & (a[:, None] >= 2))
    own = na[item, who].astype(float)
    return item, who, own, (n_na[item] - own) / (a[item] - 1.0)


def human_ceiling(
    table: PointwiseAnswers, *, cluster: str = ARTICLE, rounds: int = 1000, seed: int = 0, _boot=None
) -> tuple[Figures, dict[str, Figures]]:
    """The leave-one-out ceiling: each annotator against the other annotators of each item, the
    same figures a judge gets. Returns (all annotators pooled, with per-criterion figures;
    {annotator: their figures pooled over the criteria}). Annotators without a comparison (never
    on an item with another annotator) are left out of the second."""
    grid, units, boot = _setup(table, cluster, rounds, seed)
    boot = _boot or boot
    comp, who = _loo(table, grid, units)
    g = len(table.criteria)
    crit = grid.criterion[comp.item]
    by_crit = comp.figures(boot, crit, g)
    names = table.humans
    n_h = len(names)
    by_rater = comp.figures(boot, who, n_h)
    pooled_counts = {"items": int(np.unique(comp.item).size)}
    rater_counts = [{"items": int(c)} for c in np.bincount(who, minlength=n_h)]
    if table.response in CATEGORICAL:
        item, na_who, own, share = _loo_na(table, grid)
        by_crit.update(_na_figures(boot, units[item], grid.criterion[item], g, own, share))
        by_rater.update(_na_figures(boot, units[item], na_who, n_h, own, share))
        split = ~comp.majority()[1] if table.response == NOMINAL else comp.ref_counts[:, 1] == comp.ref_counts[:, 0]
        pooled_counts.update(not_applicable=int(own.sum()), no_majority=int(split.sum()))
        split_by_rater = np.bincount(who, weights=split, minlength=n_h)
        own_by_rater = np.bincount(na_who, weights=own, minlength=n_h)
        for r in range(n_h):
            rater_counts[r].update(not_applicable=int(own_by_rater[r]), no_majority=int(split_by_rater[r]))
    pooled, per_crit = by_group(_in_order(by_crit, table), table.criteria, np.bincount(crit, minlength=g) > 0)
    _, per_rater = by_group(_in_order(by_rater, table), names, np.bincount(who, minlength=n_h) > 0)
    annotators = {name: Figures(name, figs, {}, rater_counts[names.index(name)]) for name, figs in per_rater.items()}
    confusion = comp.confusion() if table.response == NOMINAL else []
    return Figures(CEILING, pooled, per_crit, pooled_counts, confusion), annotators


def pointwise_statistics(table: PointwiseAnswers, *, cluster: str = ARTICLE, rounds: int = 1000, seed: int = 0) -> PointwiseStatistics:
    """Every agreement figure of one table: each judge against the humans, the human ceiling (pooled
    and per annotator), the human panel and each judge's panel (humans plus that judge). All
    figures share one seeded set of cluster draws. ``cluster``: ``"article"`` (default: the
    criteria of one article are answered together) or ``"topic"`` (when the articles of one topic
    should count as one unit)."""
    grid, units, boot = _setup(table, cluster, rounds, seed)
    judges = {name: judge_figures(table, name, cluster=cluster, _boot=boot) for name in table.judges}
    ceiling, annotators = human_ceiling(table, cluster=cluster, _boot=boot)
    human_panel, judge_panels = panels(table, cluster=cluster, _boot=boot)
    return PointwiseStatistics(
        table.response, table.scale, cluster, len(table), len(grid.article), int(np.unique(units).size),
        table.humans, table.judges, judges, ceiling, annotators, human_panel, judge_panels,
    )  # fmt: skip
