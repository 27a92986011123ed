"""Does the pointwise difference predict the pairwise verdict?

A campaign may ask both protocols on the same topics: a pointwise answer (checklist, rating,
count) for each article and criterion, and a pairwise verdict for the pair of articles. For each
pairwise verdict on articles a and b and a criterion, the *pointwise difference* is the score of
a minus the score of b on that criterion, from the same source as the verdict:

* a human verdict: the mean of the annotators' answers on each article (any annotators: the
  humans as a panel, not necessarily the one who gave the verdict; N/A answers left out);
* a judge's verdict: that judge's own answers on the two articles.

The rule, ties included: a difference above 0 predicts "a preferred", below 0 "b preferred",
exactly 0 (|difference| <= 1e-9) predicts a tie. ``hit_rate`` is the share of verdicts whose
prediction is right, ties counting as categories on both sides; ``hit_rate_decisive`` is the share
right among the verdicts that are not ties AND whose difference is not 0 (the direction alone).
Counts: ``verdicts`` (used), ``zero_difference``, ``tie_verdicts``, ``no_pointwise`` (verdicts
left out because an article lacks the source's pointwise answer on the criterion, or the criterion
is not in the pointwise table). Every verdict row counts once (a judge's two orders are two rows
unless merged first).

The bootstrap unit is the topic: the verdicts and answers of one topic rest on the same articles.
Figures pooled over criteria and per criterion, each an :class:`Estimate` (n = verdicts,
``n_pairs`` = topics, 95% percentile CI).

Pure numpy/scipy, no Django.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Iterable, NamedTuple

import numpy as np

from calibration.metrics import pointwise_math as pm
from calibration.metrics.bootstrap import Estimate
from calibration.metrics.pointwise import PointwiseAnswers
from calibration.metrics.pointwise_sums import by_group, cluster_bootstrap, compute

A_PREFERRED, TIE_PREFERRED, B_PREFERRED = 1, 0, -1
ZERO = 1e-9


class PairVerdict(NamedTuple):
    """One pairwise verdict: ``preferred`` is 1 (article_a), -1 (article_b) or 0 (a tie). Article,
    criterion and rater names as in the pointwise table."""

    topic: str
    criterion: str
    rater: str
    article_a: str
    article_b: str
    preferred: int
    is_judge: bool = False


@dataclass(frozen=True)
class CrossProtocol:
    """How often one source's pointwise difference predicts its pairwise verdicts."""

    source: str  # "humans" or a judge's name
    figures: dict[str, Estimate]
    by_criterion: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CrossProtocolResult:
    humans: CrossProtocol
    judges: dict[str, CrossProtocol]

    def as_dict(self) -> dict:
        return asdict(self)


def _scores(table: PointwiseAnswers) -> dict[str | None, np.ndarray]:
    """Per source (None: the humans' mean; a judge's name: its answer), an (articles x criteria)
    array of pointwise scores, NaN where there is none."""
    grid = table.grid
    shape = (len(table.articles), len(table.criteria))
    hv = grid.value[:, table.human_codes]
    n = (~np.isnan(hv)).sum(axis=1)
    out = {}
    humans = np.full(shape, np.nan)
    humans[grid.article, grid.criterion] = np.where(n > 0, np.nansum(hv, axis=1) / np.maximum(n, 1), np.nan)
    out[None] = humans
    for name in table.judges:
        own = np.full(shape, np.nan)
        own[grid.article, grid.criterion] = grid.value[:, table.rater_code(name)]
        out[name] = own
    return out


def cross_protocol(table: PointwiseAnswers, verdicts: Iterable[PairVerdict], *, rounds: int = 1000, seed: int = 0) -> CrossProtocolResult:
    """Per source (the humans, each judge with pairwise verdicts), the share of pairwise verdicts
    that the pointwise difference predicts (see the module docstring for the rule), pooled over
    criteria and per criterion of the pointwise table. Raises ValueError for a ``preferred`` other
    than 1, 0, -1. A judge whose verdicts have no pointwise counterpart gets figures with n = 0."""
    rows = list(verdicts)
    bad = [v.preferred for v in rows if v.preferred not in (A_PREFERRED, TIE_PREFERRED, B_PREFERRED)]
    if bad:
        raise ValueError(f"a pairwise verdict prefers article a (1), article b (-1) or neither (0), not {bad[0]!r}")
    scores = _scores(table)
    article_code = {name: i for i, name in enumerate(table.articles)}
    criterion_code = {name: i for i, name in enumerate(table.criteria)}
    topics = np.unique(np.asarray([v.topic for v in rows], dtype=object)) if rows else np.zeros(0, dtype=object)
    topic_code = {name: i for i, name in enumerate(topics.tolist())}
    boot = cluster_bootstrap(np.arange(len(topics)), rounds, seed)
    by_source: dict[str | None, list[PairVerdict]] = {}
    for v in rows:
        by_source.setdefault(v.rater if v.is_judge else None, []).append(v)
    g = len(table.criteria)

    def one(source: str | None, group: list[PairVerdict]) -> CrossProtocol:
        grid = scores.get(source)
        a = np.asarray([article_code.get(v.article_a, -1) for v in group], dtype=np.int64)
        b = np.asarray([article_code.get(v.article_b, -1) for v in group], dtype=np.int64)
        c = np.asarray([criterion_code.get(v.criterion, -1) for v in group], dtype=np.int64)
        found = (a >= 0) & (b >= 0) & (c >= 0)
        diff = np.full(len(group), np.nan)
        if grid is not None:  # a judge with pairwise verdicts and no pointwise answers: nothing to compare
            diff[found] = grid[a[found], c[found]] - grid[b[found], c[found]]
        used = ~np.isnan(diff)
        predicted = np.where(np.abs(diff) <= ZERO, 0, np.sign(diff))[used]
        preferred = np.asarray([v.preferred for v in group], dtype=np.int64)[used]
        units = np.asarray([topic_code[v.topic] for v in group], dtype=np.int64)[used]
        hit = (predicted == preferred).astype(np.float64)
        decisive = ((predicted != 0) & (preferred != 0)).astype(np.float64)
        terms = np.column_stack([np.ones(len(hit)), hit, decisive, hit * decisive])
        computed = compute(
            boot, units, c[used], g, terms[:, :2], np.ones(len(hit)), {"hit_rate": lambda t: pm.safe_div(t[..., 1], t[..., 0])}
        )
        computed.update(
            compute(
                boot,
                units,
                c[used],
                g,
                terms[:, 2:],
                decisive,
                {"hit_rate_decisive": lambda t: pm.safe_div(t[..., 1], t[..., 0])},
            )  # fmt: skip
        )
        present = np.bincount(c[used], minlength=g) > 0
        pooled, per = by_group(computed, table.criteria, present)
        counts = {
            "verdicts": int(used.sum()),
            "zero_difference": int((predicted == 0).sum()),
            "tie_verdicts": int((preferred == 0).sum()),
            "no_pointwise": int((~used).sum()),
        }
        return CrossProtocol("humans" if source is None else source, pooled, per, counts)

    humans = one(None, by_source.get(None, []))
    judges = {name: one(name, group) for name, group in sorted(by_source.items(), key=lambda kv: str(kv[0])) if name is not None}
    return CrossProtocolResult(humans, judges)
