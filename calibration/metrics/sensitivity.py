"""How the judge statistics move when the human reference is defined differently.

Every judge statistic assumes the humans are right. :func:`standard_references` builds the
references the report can use; :func:`reference_sensitivity` recomputes the judge statistics under
each, through a callable the caller supplies (the report's own PAR, kappa, alternative-annotator
test...), and tabulates the values with their shift from the first reference (the baseline).

The references (:data:`REFERENCES`):

* ``majority``: the human labels as they are, the report's reference today (a statistic computed on
  every label stays so; kappa and PAR against the majority use the strict majority of each item).
* ``dawid-skene`` and ``mace``: one label per item, the aggregate of :mod:`competence` (a tie is a
  class); unresolved items are left out.
* ``exclude-flagged``: the human labels without those of the flagged raters (:func:`quality.flagged_raters`).
* ``adjudicated`` (when adjudications are given): the human labels, with every label of an
  adjudicated item replaced by the one adjudicated answer.

A statistic that needs several humans per item (the alternative-annotator test) cannot run on a
one-label-per-item reference: the callable says so by returning None (or raising ValueError for the
whole reference), and the table shows the cell as not computed rather than failing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Mapping, Sequence, Union

import numpy as np

from calibration.metrics.bootstrap import Estimate
from calibration.metrics.labels import LabelTable, align_tables

REFERENCES = ("majority", "dawid-skene", "mace", "exclude-flagged", "adjudicated")
StatisticValue = Union[Estimate, float, int, str, bool, None]
Statistics = Callable[[LabelTable, LabelTable], Mapping[str, Mapping[str, StatisticValue]]]
_SAME = 1e-9


# --------------------------------------------------------------------------
# the references
# --------------------------------------------------------------------------


def _first_per_item(table: LabelTable) -> LabelTable:
    _, first = np.unique(table.item, return_index=True)
    return table.select(np.sort(first))


def adjudicated_reference(humans: LabelTable, adjudicated: LabelTable) -> tuple[LabelTable, int]:
    """(the human labels with each adjudicated item's labels replaced by its adjudicated answer, the
    number of adjudicated items). ``adjudicated``: the adjudicators' answers (the first per item counts)."""
    if not len(adjudicated):
        return humans, 0
    if not len(humans):
        final = _first_per_item(adjudicated)
        return final, len(final)
    humans, adjudicated = align_tables(humans, adjudicated)
    final = _first_per_item(adjudicated)
    kept = humans.select(~np.isin(humans.item, final.item))
    return LabelTable.concat(kept, final), len(final)


def standard_references(
    humans: LabelTable,
    *,
    dawid_skene=None,
    mace=None,
    flagged: Iterable[str] = (),
    adjudicated: LabelTable | None = None,
) -> list[tuple[str, LabelTable, str]]:
    """The references in :data:`REFERENCES` order, as (name, labels, note) for :func:`reference_sensitivity`.

    ``humans``: the human labels (``table.humans()``). ``dawid_skene``/``mace``: the
    :class:`competence.Aggregate` of each (left out when None or when it could not run).
    ``flagged``: the raters the ``exclude-flagged`` reference drops (it is listed even when nobody is
    flagged: then it equals ``majority``). ``adjudicated``: adjudicated answers, or None for no such reference.
    """
    out = [("majority", humans, "the human labels as they are")]
    for aggregate in (dawid_skene, mace):
        if aggregate is not None and aggregate.reason is None:
            note = f"one {aggregate.method} label per item; {aggregate.n_unresolved} unresolved items left out"
            out.append((aggregate.method, aggregate.reference, note))
    flagged = sorted(set(flagged))
    present = [name for name in flagged if name in humans.rater_names()]
    keep = ~np.isin(humans.rater, [humans.vocab.raters.index(name) for name in present])
    note = f"without the labels of {len(present)} flagged raters" + (f" ({', '.join(present)})" if present else "")
    out.append(("exclude-flagged", humans.select(keep), note))
    if adjudicated is not None:
        table, n = adjudicated_reference(humans, adjudicated)
        out.append(("adjudicated", table, f"{n} items adjudicated; their other labels replaced"))
    return out


# --------------------------------------------------------------------------
# the table
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ReferenceInfo:
    """A reference's size (labels, items, raters), the caller's note, and ``reason`` when the
    statistics could not be computed under it at all."""

    name: str
    n_labels: int
    n_items: int
    n_raters: int
    note: str = ""
    reason: str | None = None


@dataclass(frozen=True)
class SensitivityCell:
    """One statistic of one judge under one reference.

    ``value``: a number (an Estimate's value), a verdict (str or bool), or None when not computed;
    ``ci``/``n``: the Estimate's, when it was one. Against the baseline's cell: ``shift`` (numbers
    only), ``changed`` (a verdict that differs, or a number that moved by more than 1e-9, or a value
    computed under one and not the other), ``outside_baseline_ci`` (a number outside the baseline's CI).
    """

    value: float | str | bool | None
    ci: tuple[float, float] | None
    n: int | None
    shift: float | None
    changed: bool
    outside_baseline_ci: bool


@dataclass(frozen=True)
class SensitivityRow:
    judge: str
    statistic: str
    cells: dict[str, SensitivityCell]


@dataclass(frozen=True)
class Sensitivity:
    """The table: rows (judge, statistic) in the order met, cells by reference name in reference order."""

    baseline: str
    references: tuple[ReferenceInfo, ...]
    rows: tuple[SensitivityRow, ...]

    def as_dict(self) -> dict:
        return asdict(self)


def _number(value: StatisticValue) -> tuple[float | str | bool | None, tuple[float, float] | None, int | None]:
    if isinstance(value, Estimate):
        return value.value, value.ci, value.n
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value, None, None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value), None, None
    raise TypeError(f"a statistic must be an Estimate, a number, a string, a bool or None, got {type(value).__name__}")


def _is_number(x) -> bool:
    return isinstance(x, float)


def _cell(value: StatisticValue, base: StatisticValue) -> SensitivityCell:
    v, ci, n = _number(value)
    b, b_ci, _ = _number(base)
    if _is_number(v) and _is_number(b):
        shift = v - b
        outside = b_ci is not None and not (b_ci[0] - _SAME <= v <= b_ci[1] + _SAME)
        return SensitivityCell(v, ci, n, shift, abs(shift) > _SAME, outside)
    return SensitivityCell(v, ci, n, None, v != b, False)


def _info(name: str, table: LabelTable, note: str, reason: str | None) -> ReferenceInfo:
    return ReferenceInfo(name, len(table), int(len(np.unique(table.item))), len(table.rater_names()), note, reason)


def reference_sensitivity(
    labels: LabelTable,
    references: Sequence[tuple[str, LabelTable] | tuple[str, LabelTable, str]],
    statistics: Statistics,
) -> Sensitivity:
    """Recompute the judge statistics under each reference and tabulate how they move.

    ``labels``: the label table holding the judges (its human rows are ignored: each reference stands
    in for them). ``references``: (name, reference labels[, note]) with unique names, the first being
    the baseline (usually ``majority``; see :func:`standard_references`). ``statistics(judges,
    reference)`` returns ``{judge: {statistic: value}}`` with values as in :class:`SensitivityCell`;
    it may raise ValueError for a reference it cannot use, which is recorded as that reference's
    ``reason`` (its cells are None). Raises ValueError on no references or a repeated name.
    """
    if not references:
        raise ValueError("give at least one reference (the first is the baseline)")
    names = [r[0] for r in references]
    if len(set(names)) != len(names) or not all(names):
        raise ValueError(f"reference names must be unique and non-empty, got {names}")
    judges = labels.judges()
    results: dict[str, Mapping[str, Mapping[str, StatisticValue]]] = {}
    infos = []
    for ref in references:
        name, table, note = ref[0], ref[1], (ref[2] if len(ref) > 2 else "")
        reason = None
        try:
            results[name] = statistics(judges, table)
        except ValueError as e:
            results[name], reason = {}, f"cannot run: {e}"
        infos.append(_info(name, table, note, reason))
    order: dict[tuple[str, str], None] = {}
    for name in names:
        for judge, stats in results[name].items():
            order.update(dict.fromkeys((judge, stat) for stat in stats))
    rows = []
    for judge, stat in order:
        base = results[names[0]].get(judge, {}).get(stat)
        cells = {name: _cell(results[name].get(judge, {}).get(stat), base) for name in names}
        rows.append(SensitivityRow(judge, stat, cells))
    return Sensitivity(names[0], tuple(infos), tuple(rows))
