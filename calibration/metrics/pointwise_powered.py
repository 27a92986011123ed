"""Pointwise answers beyond agreement: prediction-powered mean scores per system, and the inputs
of the alternative annotator test (alt-test) with the scoring function that fits each response type.

**Prediction-powered mean score** (:func:`powered_means`). The estimand is what the humans would
give a system on average: the mean over its items (article x criterion) of the humans' mean answer
(a checklist: the share of "yes", N/A left out). The judge's answer on every item is the prediction
(PPI++: :func:`.ppi.ppi_mean`, the judge's weight tuned from the data). As in
:mod:`.powered` for win rates: a cluster (article, or topic) with any human answer is labelled and
its items with both a human and a judge answer form the labelled set (its other items are left
out, so a cluster is never split); the items of the other clusters with a judge answer form the
unlabelled set; the weight is 0 (humans only) unless the judge's values track the humans' on the
labelled clusters (:func:`.ppi.informative`). Checklist rates get Wilson intervals with effective
votes (:func:`.powered.rate_intervals`); ratings and counts the normal interval, value +- 1.96 se.
Assumption to state with the figure: the clusters the humans answered are a random sample of the
clusters the judge answered.

**Alt-test inputs** (:func:`alt_test_long_form`, the long form ``calibration.metrics.alttest``
takes; :func:`alt_test_inputs`, the per-comparison scores themselves). For each item i, each annotator j who answered it
and the judge: the judge's score against the other annotators of i, S(judge, i, -j), and the
annotator's own, S(j, i, -j), where S is :func:`accuracy_score` for checklists and
:func:`neg_rmse_score` for ratings and counts (:data:`SCORING`). The alt-test itself (per
annotator, is the judge's advantage over j's score above -epsilon) is computed elsewhere.

Pure numpy/scipy, no Django.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from calibration.metrics.pointwise import ARTICLE, BINARY, NOMINAL, PointwiseAnswers
from calibration.metrics.powered import Interval, rate_intervals
from calibration.metrics.ppi import Z95, PPIFit, informative, ppi_mean

ACCURACY, NEG_RMSE = "accuracy", "neg_rmse"


# --------------------------------------------------------------------------
# scoring functions of the alt-test
# --------------------------------------------------------------------------


def accuracy_score(candidate, others) -> np.ndarray:
    """Per row, the share of the ``others`` (rows x m, NaN = no answer) equal to ``candidate``
    (rows,): the alt-test's accuracy for categorical answers. NaN for a row with no other answer
    or no candidate."""
    candidate, others = np.asarray(candidate, dtype=np.float64), np.atleast_2d(np.asarray(others, dtype=np.float64))
    present = ~np.isnan(others)
    m = present.sum(axis=1)
    hits = (present & (others == candidate[:, None])).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((m > 0) & ~np.isnan(candidate), hits / np.maximum(m, 1), np.nan)


def neg_rmse_score(candidate, others) -> np.ndarray:
    """Per row, minus the root mean squared difference between ``candidate`` (rows,) and the
    ``others`` (rows x m, NaN = no answer): the alt-test's score for numeric answers (higher is
    better, 0 = every other annotator gave the same value). NaN as :func:`accuracy_score`."""
    candidate, others = np.asarray(candidate, dtype=np.float64), np.atleast_2d(np.asarray(others, dtype=np.float64))
    present = ~np.isnan(others)
    m = present.sum(axis=1)
    sq = np.where(present, (others - candidate[:, None]) ** 2, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((m > 0) & ~np.isnan(candidate), -np.sqrt(sq / np.maximum(m, 1)), np.nan)


SCORING = {
    "binary": (ACCURACY, accuracy_score),
    "nominal": (ACCURACY, accuracy_score),
    "rating": (NEG_RMSE, neg_rmse_score),
    "count": (NEG_RMSE, neg_rmse_score),
}
# The same choice in the words of calibration.metrics.alttest (its ``scoring`` argument).
ALT_TEST_SCORING = {"binary": "categorical", "nominal": "categorical", "rating": "numeric", "count": "numeric"}


def alt_test_long_form(table: PointwiseAnswers, judge: str) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], str]:
    """(humans, judge, scoring): the answers in the long form the alt-test module takes
    (``Ratings(**humans)``, ``Ratings(**judge)``, ``scoring=...`` of ``calibration.metrics.alttest``).

    Each is a dict of equal-length arrays ``pair`` (the article's name: the alt-test's item is
    (pair, criterion) and its bootstrap unit the pair, so here the article), ``criterion`` (name),
    ``rater`` (name) and ``value`` (float). N/A answers are left out (they are no answer), so are
    other judges' answers. ``scoring`` is ``"categorical"`` for checklists, ``"numeric"`` for
    ratings and counts (:data:`ALT_TEST_SCORING`). Raises ValueError when ``judge`` is not a judge."""
    j = table.judge_code(judge)
    articles, criteria, raters = (np.asarray(names, dtype=object) for names in (table.articles, table.criteria, table.raters))
    answered = ~np.isnan(table.value)

    def rows(mask):
        return {
            "pair": articles[table.article[mask]],
            "criterion": criteria[table.criterion[mask]],
            "rater": raters[table.rater[mask]],
            "value": table.value[mask],
        }

    humans = answered & ~table.is_judge[table.rater]
    return rows(humans), rows(answered & (table.rater == j)), ALT_TEST_SCORING[table.response]


@dataclass(frozen=True, eq=False)
class AltTestInputs:
    """One row per (item, annotator j) where j answered, the judge answered and at least one
    other annotator answered (N/A answers count as no answer). ``annotator``, ``article``,
    ``criterion`` are codes into ``annotators`` and the table's ``articles``/``criteria``;
    ``cluster`` the bootstrap unit of the row's article; ``n_others`` how many other annotators
    the scores rest on (filter on it to require more). ``judge_score`` is S(judge, i, -j),
    ``human_score`` S(j, i, -j), by ``scoring`` (``"accuracy"`` or ``"neg_rmse"``)."""

    judge: str
    scoring: str
    annotators: tuple[str, ...]
    annotator: np.ndarray
    article: np.ndarray
    criterion: np.ndarray
    cluster: np.ndarray
    n_others: np.ndarray
    judge_score: np.ndarray
    human_score: np.ndarray

    def __len__(self) -> int:
        return len(self.annotator)

    def of(self, annotator: str) -> np.ndarray:
        """Row mask of one annotator's items."""
        return self.annotator == self.annotators.index(annotator)


def alt_test_inputs(table: PointwiseAnswers, judge: str, *, cluster: str = ARTICLE) -> AltTestInputs:
    """The alt-test's per-(item, annotator) scores of ``judge`` and of each annotator, with the
    scoring function of the table's response type. Raises ValueError when ``judge`` is not a judge
    of the table. Empty arrays when no item has a judge answer and two annotators' answers."""
    j = table.judge_code(judge)
    grid = table.grid
    humans = table.human_codes
    hv = grid.value[:, humans]
    x = grid.value[:, j]
    ok = ~np.isnan(hv)
    m = ok.sum(axis=1)
    item, who = np.nonzero(ok & (m[:, None] >= 2) & ~np.isnan(x)[:, None])
    others = hv[item].copy()
    others[np.arange(len(item)), who] = np.nan
    name, score = SCORING[table.response]
    units = table.clusters_of_articles(cluster)[grid.article[item]]
    return AltTestInputs(
        judge, name, table.humans, who, grid.article[item], grid.criterion[item], units, m[item] - 1,
        score(x[item], others), score(hv[item, who], others),
    )  # fmt: skip


# --------------------------------------------------------------------------
# prediction-powered mean score per system
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PoweredMean:
    """A system's mean score three ways: prediction-powered (``ppi``), from the human-labelled
    items alone (``human``) and from the judge's answers on every item it answered (``judge``;
    honest about noise, not about the judge's bias). ``lam``: the judge's weight;
    ``n_effective``: how many labelled items the human-only estimate would need for the
    prediction-powered CI's width. Interval.n counts items, Interval.n_pairs clusters."""

    system: str
    ppi: Interval
    human: Interval
    judge: Interval
    lam: float
    n_effective: float | None


def _normal(fit: PPIFit) -> Interval:
    value, se = float(fit.estimate[0]), float(fit.se[0])
    return Interval(value, se, fit.n, fit.n_clusters, (value - Z95 * se, value + Z95 * se))


def _item_values(table: PointwiseAnswers, judge: str, cluster: str):
    j = table.judge_code(judge)
    grid = table.grid
    hv = grid.value[:, table.human_codes]
    n = (~np.isnan(hv)).sum(axis=1)
    y = np.where(n > 0, np.nansum(hv, axis=1) / np.maximum(n, 1), np.nan)
    units = table.clusters_of_articles(cluster)[grid.article]
    return grid, y, grid.value[:, j], units


def powered_means(
    table: PointwiseAnswers, judge: str, *, cluster: str = ARTICLE, lam: float | None = None
) -> tuple[dict[str, PoweredMean], dict[str, str]]:
    """Each system's prediction-powered mean score from ``judge``'s answers and the humans'.

    Returns ({system: PoweredMean}, {system: why it is left out}): a system needs human answers
    on at least two items in two clusters (a CI needs the spread between clusters). ``lam``: None
    tunes the judge's weight (PPI++, behind the :func:`.ppi.informative` gate), 0 is humans only,
    1 plain PPI. Raises ValueError when ``judge`` is not a judge of the table."""
    grid, y, yhat, units = _item_values(table, judge, cluster)
    system = table.article_system[grid.article]
    judged = ~np.isnan(yhat)
    out: dict[str, PoweredMean] = {}
    left_out: dict[str, str] = {}
    for code, name in enumerate(table.systems):
        rows = (system == code) & judged
        human_clusters = np.unique(units[(system == code) & ~np.isnan(y)])
        in_labelled = np.isin(units, human_clusters)
        lab, unl = rows & in_labelled & ~np.isnan(y), rows & ~in_labelled
        n_clusters = int(np.unique(units[lab]).size)
        if lab.sum() < 2 or n_clusters < 2:
            left_out[name] = f"not estimable: human and judge answers in {n_clusters} of its {cluster}s (2 needed)"
            continue
        weight = lam
        if weight is None and not informative(y[lab], yhat[lab], units[lab]):
            weight = 0.0
        fit = ppi_mean(y[lab], yhat[lab], yhat[unl], lam=weight, clusters=units[lab], clusters_unlabeled=units[unl])
        human = ppi_mean(y[lab], yhat[lab], [], lam=0.0, clusters=units[lab])
        own = ppi_mean(yhat[rows], yhat[rows], [], lam=0.0, clusters=units[rows])
        if table.response == BINARY:
            p, h, j = rate_intervals(fit, human, own)
        else:
            p, h, j = _normal(fit), _normal(human), _normal(own)
        effective = h.n * (h.se / p.se) ** 2 if p.se > 0 and math.isfinite(h.se) else None
        out[name] = PoweredMean(name, p, h, j, fit.lam, effective)
    return out, left_out


def class_table(table: PointwiseAnswers, code: int) -> PointwiseAnswers:
    """A nominal table as the checklist of one class: 1 where the answer is class ``code``, 0 where it
    is another class, NaN where it is a skipped N/A; the same raters, articles and criteria."""
    if table.response != NOMINAL:
        raise ValueError(f"class shares are of nominal answers, not {table.response}")
    value = np.where(np.isnan(table.value), np.nan, (table.value == code).astype(np.float64))
    return replace(table, response=BINARY, scale=None, value=value)


def powered_shares(
    table: PointwiseAnswers, judge: str, *, cluster: str = ARTICLE, lam: float | None = None
) -> dict[str, tuple[dict[str, PoweredMean], dict[str, str]]]:
    """Per class of a nominal table, each system's prediction-powered share of answers in that class
    (:func:`powered_means` on the class's yes/no table, Wilson intervals):
    {class: ({system: PoweredMean}, {system: why it is left out})}."""
    return {name: powered_means(class_table(table, code), judge, cluster=cluster, lam=lam) for code, name in enumerate(table.scale)}
