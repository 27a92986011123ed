"""Agreement of a panel of raters on pointwise answers: the annotators alone, and the annotators
with one judge as one more rater.

A panel figure is symmetric in its raters, so it has no leave-one-out form: the human panel's
figure is the ceiling, and a judge's panel figure shows what the judge does to it. A judge that
answers like one more annotator leaves it where it was; ``<figure>_change`` (with the judge minus
without, paired over the same bootstrap draws) says by how much it moves.

A judge's panel is computed on the items that judge answered only, and its change against the
annotators alone on the same items; its counts say how many (``judge_items``) of the items two
annotators or more answered (``human_items``), and the ``coverage`` (their ratio). A report states
a coverage under ``LOW_COVERAGE`` beside the figure.

Figures (``PanelFigures.figures`` keys):

* binary: ``fleiss_kappa``, over the items with the most common number of answers that are not
  N/A (at least 2; the larger on a tie): Fleiss' kappa needs the same number of raters on every
  item. N/A answers are left out; ``items_left_out`` counts the items with another number.
* rating: ``alpha_ordinal`` and ``alpha_interval`` (Krippendorff; every item with two or more
  answers), ``icc2_1`` and ``icc2_k`` (two-way random effects, absolute agreement, one rater and
  the mean of the panel's k raters). The ICC needs a fully crossed design: it uses the items that
  every rater of the panel answered (``icc_items``) and cannot run (None) when there are fewer
  than two; ``icc_items_left_out`` counts the items some rater of the panel did not answer.
* count: ``alpha_interval``.
* nominal: ``fleiss_kappa`` as for a checklist, over the C classes, and ``alpha_nominal``
  (Krippendorff, every item with two or more answers that are not a skipped N/A).

n of an Estimate is items; its CI is the percentile interval of the bootstrap over clusters
(articles or topics, :mod:`.pointwise_sums`).

Pure numpy/scipy, no Django.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from calibration.metrics import pointwise_math as pm
from calibration.metrics.bootstrap import Estimate
from calibration.metrics.pointwise import ARTICLE, BINARY, CATEGORICAL, COUNT, NOMINAL, RATING, PointwiseAnswers
from calibration.metrics.pointwise_sums import Computed, by_group, cluster_bootstrap, compute

CHANGE = "_change"
LOW_COVERAGE = 0.5  # below it a judge's panel figure rests on a minority of the annotators' items, and says so
# The figures of each response type in the order a report shows them; a judge's panel has them,
# then each with CHANGE appended.
PANEL_FIGURES = {
    BINARY: ("fleiss_kappa",),
    RATING: ("alpha_ordinal", "alpha_interval", "icc2_1", "icc2_k"),
    COUNT: ("alpha_interval",),
    NOMINAL: ("fleiss_kappa", "alpha_nominal"),
}


@dataclass(frozen=True)
class PanelFigures:
    """Panel figures pooled over the criteria and per criterion, with counts (``items``: items with
    two answers or more; for Fleiss' kappa ``raters_per_item`` and ``items_left_out``; for the ICC
    ``icc_items`` and ``icc_items_left_out``). ``judge`` is None for the annotators alone."""

    judge: str | None
    raters: tuple[str, ...]
    figures: dict[str, Estimate]
    by_criterion: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _categories(table: PointwiseAnswers, values: np.ndarray) -> np.ndarray:
    low = table.scale[0] if table.response == RATING else 0
    c = 2 if table.response == BINARY else len(table.scale) if table.response == NOMINAL else table.scale[1] - low + 1
    codes = np.nan_to_num(values - low).astype(np.int64)
    ok = ~np.isnan(values)
    return np.stack([((codes == j) & ok).sum(axis=1) for j in range(c)], axis=1).astype(np.float64)


def _modal(m: np.ndarray) -> int:
    """The most common number of answers among items with at least two (the larger on a tie); 0 if none."""
    counts = np.bincount(m[m >= 2]) if (m >= 2).any() else np.zeros(0)
    if not counts.any():
        return 0
    return int(np.flatnonzero(counts == counts.max())[-1])


def _panel(table: PointwiseAnswers, columns: np.ndarray, boot, units, crit, g, rows: np.ndarray | None = None):
    """(computed figures, counts) of the panel of raters ``columns``, on the items ``rows`` (a mask; None: all)."""
    values = table.grid.value[:, columns]
    if rows is not None:
        values = np.where(rows[:, None], values, np.nan)
    m = (~np.isnan(values)).sum(axis=1)
    pairable = m >= 2
    out: dict[str, Computed] = {}
    counts = {"items": int(pairable.sum())}
    if table.response in CATEGORICAL:
        k = _modal(m)
        keep = m == k
        cats = _categories(table, values[keep])
        out.update(
            compute(
                boot,
                units[keep],
                crit[keep],
                g,
                pm.fleiss_terms(cats),
                np.ones(int(keep.sum())),
                {"fleiss_kappa": lambda t: pm.fleiss_kappa(t, k)},
            )  # fmt: skip
        )
        counts.update(raters_per_item=k, items_left_out=int((pairable & ~keep).sum()))
        if table.response == NOMINAL:
            c = len(table.scale)
            co = pm.coincidences(_categories(table, values)).reshape(len(values), c * c)
            shape = (c, c)
            alpha = {"alpha_nominal": lambda t: pm.alpha_nominal(t.reshape(t.shape[:-1] + shape))}
            out.update(compute(boot, units, crit, g, co, pairable.astype(float), alpha))
        return out, counts
    terms = pm.alpha_interval_terms(values)
    out.update(compute(boot, units, crit, g, terms, pairable.astype(float), {"alpha_interval": pm.alpha_interval}))
    if table.response != RATING:
        return out, counts
    c = table.scale[1] - table.scale[0] + 1
    co = pm.coincidences(_categories(table, values)).reshape(len(values), c * c)
    out.update(
        compute(
            boot,
            units,
            crit,
            g,
            co,
            pairable.astype(float),
            {"alpha_ordinal": lambda t: pm.alpha_ordinal(t.reshape(t.shape[:-1] + (c, c)))},
        )  # fmt: skip
    )
    complete = m == len(columns)
    icc = pm.icc_terms(values[complete])
    out.update(
        compute(
            boot,
            units[complete],
            crit[complete],
            g,
            icc,
            np.ones(int(complete.sum())),
            {"icc2_1": lambda t: pm.icc2(t)[0], "icc2_k": lambda t: pm.icc2(t)[1]},
        )  # fmt: skip
    )
    counts.update(icc_items=int(complete.sum()), icc_items_left_out=int(((m > 0) & ~complete).sum()))
    return out, counts


def _figures(table, judge, columns, computed, counts, g) -> PanelFigures:
    names = PANEL_FIGURES[table.response]
    names = names + tuple(n + CHANGE for n in names if n + CHANGE in computed)
    computed = {name: computed[name] for name in names}
    present = np.zeros(g, dtype=bool)
    for c in computed.values():  # a criterion with any figure shows all of them
        present |= c.n[:g] > 0
    pooled, per = by_group(computed, table.criteria, present)
    return PanelFigures(judge, tuple(table.raters[c] for c in columns), pooled, per, counts)


def panels(
    table: PointwiseAnswers, judges=None, *, cluster: str = ARTICLE, rounds: int = 1000, seed: int = 0, _boot=None
) -> tuple[PanelFigures, dict[str, PanelFigures]]:
    """(the annotators' panel, {judge: the annotators plus that judge}) for ``judges`` (names; None:
    every judge of the table), each judge's panel with ``<figure>_change`` figures (its figure
    minus the annotators', same draws). Raises ValueError for a name that is not a judge."""
    grid = table.grid
    units = table.clusters_of_articles(cluster)[grid.article]
    boot = _boot or cluster_bootstrap(units, rounds, seed)
    g = len(table.criteria)
    humans = table.human_codes
    base, base_counts = _panel(table, humans, boot, units, grid.criterion, g)
    human_panel = _figures(table, None, humans, base, base_counts, g)
    judge_panels = {}
    rated = (~np.isnan(grid.value[:, humans])).sum(axis=1) >= 2
    for name in table.judges if judges is None else judges:
        code = table.judge_code(name)
        columns = np.append(humans, code)
        # The panel with the judge is computed on the items the judge answered, and its change against the
        # annotators alone on those same items: on every item, the most common number of raters could be
        # the annotators' alone, and the "annotators + judge" figure would leave the judge out.
        answered = ~np.isnan(grid.value[:, code])
        computed, counts = _panel(table, columns, boot, units, grid.criterion, g, rows=answered)
        same, _ = _panel(table, humans, boot, units, grid.criterion, g, rows=answered)
        computed.update({key + CHANGE: computed[key].minus(same[key]) for key in list(computed)})
        covered = int((answered & rated).sum())
        counts.update(judge_items=covered, human_items=int(rated.sum()))
        counts["coverage"] = covered / counts["human_items"] if counts["human_items"] else 0.0
        judge_panels[name] = _figures(table, name, columns, computed, counts, g)
    return human_panel, judge_panels


def panel_figures(
    table: PointwiseAnswers, judge: str | None = None, *, cluster: str = ARTICLE, rounds: int = 1000, seed: int = 0, _boot=None
) -> PanelFigures:
    """The annotators' panel (``judge=None``) or the annotators plus ``judge`` (with its
    ``<figure>_change`` figures). Raises ValueError when ``judge`` is not a judge of the table."""
    human_panel, judge_panels = panels(table, () if judge is None else (judge,), cluster=cluster, rounds=rounds, seed=seed, _boot=_boot)
    return human_panel if judge is None else judge_panels[judge]
