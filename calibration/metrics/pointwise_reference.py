"""An aggregated human reference for one-article answers: Dawid-Skene or MACE on categorical answers.

The pairwise report's `--human-reference dawid-skene|mace` replaces the humans by one aggregated
label per item. For answers about one article the same models fit the categorical kinds only (a
checklist's yes/no, a nominal criterion's classes: ``CATEGORICAL``); each judge is then compared with that one label per item, with
the figures a judge gets against a single reference (agreement, Cohen's kappa, and a checklist's
figures against the majority, which is that label). Ratings and counts are numeric: these models do
not fit them, and their reference stays every annotator's answers (their mean): "majority/mean only".

The fit is :func:`calibration.metrics.competence.categorical_fit` (equal to crowd-kit's on the same
answers, tests/test_pointwise_reference.py). An item whose two best classes tie is unresolved and
left out, as an item without a strict majority is. N/A answers are no answer here, as in every
other checklist figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from calibration.metrics.competence import METHODS, categorical_fit, categorical_labels
from calibration.metrics.pointwise import CATEGORICAL, PointwiseAnswers
from calibration.metrics.pointwise_agreement import Figures, judge_figures

MEAN_ONLY = (
    "majority/mean only: Dawid-Skene and MACE model categorical answers, so for a rating scale or a count the "
    "reference stays every annotator's answers (their mean), whatever --human-reference says"
)


@dataclass(frozen=True)
class AggregatedReference:
    """One label per item of a categorical table (``labels``: per grid item, the value or NaN), each
    annotator's competence, and each judge's figures against the labels."""

    method: str
    labels: np.ndarray
    n_items: int
    unresolved: int
    competence: dict[str, float]
    judges: dict[str, Figures] = field(default_factory=dict)


def aggregated_labels(table: PointwiseAnswers, method: str) -> tuple[np.ndarray, dict[str, float], int]:
    """(per grid item its aggregated value or NaN, {annotator: competence}, unresolved items)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (choose {', '.join(METHODS)})")
    if table.response not in CATEGORICAL:
        raise ValueError(f"{method} fits categorical answers only, not {table.response}: {MEAN_ONLY}")
    grid = table.grid
    humans = table.human_codes
    values = grid.value[:, humans]
    item, worker = np.nonzero(~np.isnan(values))
    out = np.full(len(grid.article), np.nan)
    if len(item) == 0:
        return out, {}, 0
    classes, answer = np.unique(values[item, worker], return_inverse=True)
    tasks, task = np.unique(item, return_inverse=True)
    workers, worker_code = np.unique(worker, return_inverse=True)
    posterior, competence = categorical_fit(task, worker_code, answer, method=method)
    labels = categorical_labels(posterior)
    resolved = labels >= 0
    out[tasks[resolved]] = classes[labels[resolved]]
    names = {table.raters[humans[w]]: float(competence[i]) for i, w in enumerate(workers)}
    return out, names, int((~resolved).sum())


def _with_reference(table: PointwiseAnswers, labels: np.ndarray, method: str) -> PointwiseAnswers:
    """The table with the annotators' answers replaced by one rater, ``method``, answering the labels."""
    grid = table.grid
    keep = table.is_judge[table.rater]
    has = ~np.isnan(labels)
    code = len(table.raters)
    return PointwiseAnswers(
        table.response, table.scale,
        np.concatenate([table.article[keep], grid.article[has]]),
        np.concatenate([table.criterion[keep], grid.criterion[has]]),
        np.concatenate([table.rater[keep], np.full(int(has.sum()), code)]),
        np.concatenate([table.value[keep], labels[has]]),
        table.articles, table.article_system, table.article_topic, table.systems, table.topics, table.criteria,
        (*table.raters, method), np.append(table.is_judge, False),
    )  # fmt: skip


def aggregated_reference(table: PointwiseAnswers, method: str, *, rounds: int = 1000, seed: int = 0) -> AggregatedReference:
    """Fit ``method`` on the annotators' answers and compare each judge with its labels."""
    labels, competence, unresolved = aggregated_labels(table, method)
    reference = _with_reference(table, labels, method)
    judges = {name: judge_figures(reference, name, rounds=rounds, seed=seed) for name in table.judges}
    return AggregatedReference(method, labels, int((~np.isnan(labels)).sum()), unresolved, competence, judges)
