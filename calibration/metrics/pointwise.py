"""Pointwise answers -- checklists, rating scales, error counts -- as one integer-coded long table.

A pointwise protocol asks a rater one question about one article: the article's *item* for a
criterion is the pair (article, criterion). One row of the table is one rater's answer to one item.
The statistics (:mod:`.pointwise_agreement`, :mod:`.pointwise_powered`, :mod:`.crossprotocol`)
take a :class:`PointwiseAnswers`, which holds answers of ONE response type (and, for ratings, one
scale), because their figures are not comparable across types:

* ``binary`` (a checklist): 1 = yes, 0 = no, NaN = N/A (the rubric allowed "not applicable").
  An N/A answer is kept in the table (it is counted) and left out of every agreement figure.
* ``rating`` (a Likert scale): an integer point of ``scale = (lowest, highest)``, e.g. (1, 5).
* ``count`` (an error count): the count itself, or the score a rubric formula maps it to;
  any finite number (the statistics treat it as a number on an interval scale).
* ``nominal`` (one class of a list): the class's code, 0 to C - 1, in the order of ``scale``, which
  for this type is the tuple of the C class names (a nominal scale is its classes); NaN for an
  N/A the rubric leaves out (kept and counted like a checklist's). A "not applicable" that the
  rubric makes a class is one of the classes.

Build a table with :func:`pointwise_table` (columns of names and values) or, from rows of a rubric
that mixes types, with :func:`pointwise_tables` (one table per response type and scale).
Bad input raises ValueError with a message naming what is wrong.

Pure numpy, no Django.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, NamedTuple, Sequence

import numpy as np

BINARY, RATING, COUNT, NOMINAL = "binary", "rating", "count", "nominal"
RESPONSES = (BINARY, RATING, COUNT, NOMINAL)
# The types whose answers are categories (with N/A, NaN, as no answer), not numbers.
CATEGORICAL = (BINARY, NOMINAL)
ARTICLE, TOPIC = "article", "topic"  # the bootstrap's cluster units
CLUSTERS = (ARTICLE, TOPIC)


class Answer(NamedTuple):
    """One rater's answer to one criterion of one article (row form, for :func:`pointwise_tables`)."""

    article: str
    system: str
    topic: str
    criterion: str
    rater: str
    value: float  # binary: 1 yes, 0 no, NaN N/A; rating: a point of the scale; count: a count or its score
    response: str = RATING
    is_judge: bool = False
    scale: tuple | None = None  # rating: (lowest, highest) point; nominal: the class names


@dataclass(frozen=True, eq=False)
class ItemGrid:
    """The answers as a dense (items x raters) grid; an item is an (article, criterion) pair.

    ``answered[i, r]``: rater r answered item i (N/A included); ``value[i, r]``: the answer, NaN
    where there is none or it is N/A. Items are those with at least one answer, ordered by
    (article code, criterion code)."""

    article: np.ndarray  # (items,) article code
    criterion: np.ndarray  # (items,) criterion code
    answered: np.ndarray  # (items, raters) bool
    value: np.ndarray  # (items, raters) float64


@dataclass(frozen=True, eq=False)
class PointwiseAnswers:
    """Pointwise answers of one response type, integer-coded.

    Per row: ``article``, ``criterion``, ``rater`` (codes into the name tuples) and ``value``.
    Per article code: ``article_system`` and ``article_topic`` (codes into ``systems`` and
    ``topics``). Per rater code: ``is_judge``. ``scale`` is (lowest, highest) for ratings, else
    None. At most one answer per (article, criterion, rater)."""

    response: str
    scale: tuple[int, int] | None
    article: np.ndarray
    criterion: np.ndarray
    rater: np.ndarray
    value: np.ndarray
    articles: tuple[str, ...]
    article_system: np.ndarray
    article_topic: np.ndarray
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    criteria: tuple[str, ...]
    raters: tuple[str, ...]
    is_judge: np.ndarray

    def __len__(self) -> int:
        return len(self.value)

    @property
    def humans(self) -> tuple[str, ...]:
        return tuple(name for name, judge in zip(self.raters, self.is_judge.tolist()) if not judge)

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(name for name, judge in zip(self.raters, self.is_judge.tolist()) if judge)

    @property
    def human_codes(self) -> np.ndarray:
        return np.flatnonzero(~self.is_judge)

    def rater_code(self, name: str) -> int:
        try:
            return self.raters.index(name)
        except ValueError:
            raise ValueError(f"no rater named {name!r} in these answers") from None

    def judge_code(self, name: str) -> int:
        code = self.rater_code(name)
        if not self.is_judge[code]:
            raise ValueError(f"{name!r} is an annotator, not a judge")
        return code

    def select(self, mask) -> PointwiseAnswers:
        """The rows where ``mask`` is true, on the same vocabulary (codes unchanged)."""
        mask = np.asarray(mask, dtype=bool)
        return PointwiseAnswers(
            self.response, self.scale, self.article[mask], self.criterion[mask], self.rater[mask], self.value[mask],
            self.articles, self.article_system, self.article_topic, self.systems, self.topics, self.criteria,
            self.raters, self.is_judge,
        )  # fmt: skip

    def for_criterion(self, name: str) -> PointwiseAnswers:
        if name not in self.criteria:
            raise ValueError(f"no criterion named {name!r} in these answers")
        return self.select(self.criterion == self.criteria.index(name))

    def clusters_of_articles(self, cluster: str) -> np.ndarray:
        """Per article code, the code of its bootstrap unit: itself (``"article"``) or its topic."""
        if cluster == ARTICLE:
            return np.arange(len(self.articles), dtype=np.int64)
        if cluster == TOPIC:
            return self.article_topic
        raise ValueError(f"cluster must be one of {', '.join(CLUSTERS)}, not {cluster!r}")

    @cached_property
    def grid(self) -> ItemGrid:
        n_crit = max(len(self.criteria), 1)
        key = self.article * n_crit + self.criterion
        keys, row_item = np.unique(key, return_inverse=True)
        answered = np.zeros((len(keys), len(self.raters)), dtype=bool)
        value = np.full((len(keys), len(self.raters)), np.nan)
        answered[row_item, self.rater] = True
        value[row_item, self.rater] = self.value
        return ItemGrid(keys // n_crit, keys % n_crit, answered, value)


def _codes(names: Sequence, what: str) -> tuple[tuple[str, ...], np.ndarray]:
    names = [str(n) for n in names]
    uniq = sorted(set(names))
    if uniq and not uniq[0]:
        raise ValueError(f"every answer needs a {what} (an empty {what} was given)")
    index = {name: i for i, name in enumerate(uniq)}
    return tuple(uniq), np.fromiter((index[n] for n in names), dtype=np.int64, count=len(names))


def _one_per(owner_codes: np.ndarray, owned_codes: np.ndarray, n_owners: int, owner: str, owned: str, owner_names, owned_names):
    """The one ``owned`` code of each ``owner`` code (an article's system, a rater's kind); ValueError
    when an owner has two."""
    out = np.full(n_owners, -1, dtype=np.int64)
    out[owner_codes] = owned_codes
    clash = out[owner_codes] != owned_codes
    if clash.any():
        o = int(owner_codes[clash][0])
        values = sorted({str(owned_names[c]) for c in owned_codes[owner_codes == o].tolist()})
        raise ValueError(f"{owner} {owner_names[o]!r} has more than one {owned}: {', '.join(values)}")
    return out


def _is_number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return v is None
    return True


def _check_values(value: np.ndarray, response: str, scale) -> tuple[int, int] | None:
    if response not in RESPONSES:
        raise ValueError(f"response must be one of {', '.join(RESPONSES)}, not {response!r}")
    if response == BINARY:
        bad = ~(np.isnan(value) | (value == 0) | (value == 1))
        if bad.any():
            raise ValueError(f"a checklist answer is 1 (yes), 0 (no) or NaN (N/A), not {float(value[bad][0]):g}")
        return None
    if response == NOMINAL:
        names = tuple(scale or ())
        if len(names) < 2 or not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
            raise ValueError(f"a nominal table needs its classes: two names or more, each once, not {scale!r}")
        bad = ~(np.isnan(value) | ((value == np.round(value)) & (value >= 0) & (value < len(names))))
        if bad.any():
            raise ValueError(f"a nominal answer is a class code from 0 to {len(names) - 1} (or NaN for N/A), not {float(value[bad][0]):g}")
        return names
    if np.isnan(value).any():
        raise ValueError(f"N/A is an answer of checklists and nominal criteria only; a {response} answer needs a value")
    if not np.isfinite(value).all():
        raise ValueError(f"a {response} answer must be a finite number")
    if response == COUNT:
        return None
    if scale is None:
        raise ValueError("a rating table needs its scale: (lowest, highest) point")
    lo, hi = scale
    if not (float(lo).is_integer() and float(hi).is_integer() and lo < hi):
        raise ValueError(f"a rating scale is two integer points, the lowest first, not {scale!r}")
    lo, hi = int(lo), int(hi)
    bad = (value != np.round(value)) | (value < lo) | (value > hi)
    if bad.any():
        raise ValueError(f"a rating on the scale {lo}-{hi} is one of its integer points, not {float(value[bad][0]):g}")
    return lo, hi


def pointwise_table(
    *,
    article: Sequence[str],
    system: Sequence[str],
    topic: Sequence[str],
    criterion: Sequence[str],
    rater: Sequence[str],
    value: Sequence[float],
    is_judge: Sequence[bool],
    response: str,
    scale: tuple | None = None,
) -> PointwiseAnswers:
    """A :class:`PointwiseAnswers` from columns (one entry per answer).

    ``response`` is one of ``binary``, ``rating``, ``count``, ``nominal`` (see the module docstring
    for the values each takes); ``scale`` is required for ``rating`` and ``nominal`` (its classes). Raises ValueError when the columns
    differ in length, a value does not fit the response type, an article has two systems or
    topics, a rater is both judge and annotator, or a rater answered an item twice."""
    columns = {"article": article, "system": system, "topic": topic, "criterion": criterion, "rater": rater, "value": value}
    columns["is_judge"] = is_judge
    lengths = {name: len(col) for name, col in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"the columns differ in length: {lengths}")
    try:
        values = np.asarray([math.nan if v is None else float(v) for v in value], dtype=np.float64)
    except (TypeError, ValueError):
        bad = next(v for v in value if not _is_number(v))
        raise ValueError(f"an answer's value is a number (or None/NaN for N/A), not {bad!r}") from None
    scale = _check_values(values, response, scale)
    articles, a_codes = _codes(article, "article")
    systems, s_codes = _codes(system, "system")
    topics, t_codes = _codes(topic, "topic")
    criteria, c_codes = _codes(criterion, "criterion")
    raters, r_codes = _codes(rater, "rater")
    judge_flags = np.asarray([bool(j) for j in is_judge], dtype=np.int64)
    article_system = _one_per(a_codes, s_codes, len(articles), "article", "system", articles, systems)
    article_topic = _one_per(a_codes, t_codes, len(articles), "article", "topic", articles, topics)
    kinds = _one_per(r_codes, judge_flags, len(raters), "rater", "kind (judge and annotator)", raters, ("annotator", "judge"))
    key = (a_codes * max(len(criteria), 1) + c_codes) * max(len(raters), 1) + r_codes
    uniq, counts = np.unique(key, return_counts=True)
    if (counts > 1).any():
        k = int(uniq[counts > 1][0])
        r = k % len(raters)
        c = (k // len(raters)) % len(criteria)
        a = k // len(raters) // len(criteria)
        raise ValueError(
            f"{int((counts > 1).sum())} items have several answers from one rater, e.g. {raters[r]!r} on "
            f"{articles[a]!r}, criterion {criteria[c]!r}: keep one answer per rater and item"
        )
    return PointwiseAnswers(
        response, scale, a_codes, c_codes, r_codes, values, articles, article_system, article_topic,
        systems, topics, criteria, raters, kinds.astype(bool),
    )  # fmt: skip


def _order(response: str, scale) -> tuple:
    """Tables by response type, then scale: ratings by their points, nominal tables by their classes."""
    if response == NOMINAL:
        return response, (), scale
    return response, scale or (0, 0), ()


def pointwise_tables(rows: Iterable[Answer]) -> dict[tuple[str, tuple | None], PointwiseAnswers]:
    """One table per (response type, scale) found in ``rows``: a rubric may mix checklist questions,
    1-5 and 1-10 ratings, counts and lists of classes. Keys: ``("binary", None)``, ``("rating", (1, 5))``,
    ``("count", None)``, ``("nominal", ("Yes", "Partially", "No"))``."""
    groups: dict[tuple[str, tuple | None], list[Answer]] = {}
    for row in rows:
        scale = None
        if row.response == RATING and row.scale is not None:
            scale = tuple(int(p) for p in row.scale)
        elif row.response == NOMINAL and row.scale is not None:
            scale = tuple(str(name) for name in row.scale)
        groups.setdefault((row.response, scale), []).append(row)
    out = {}
    for (response, scale), group in sorted(groups.items(), key=lambda kv: _order(*kv[0])):
        out[(response, scale)] = pointwise_table(
            article=[r.article for r in group], system=[r.system for r in group], topic=[r.topic for r in group],
            criterion=[r.criterion for r in group], rater=[r.rater for r in group], value=[r.value for r in group],
            is_judge=[r.is_judge for r in group], response=response, scale=scale,
        )  # fmt: skip
    return out
