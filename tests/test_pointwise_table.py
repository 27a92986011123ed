"""The pointwise answers table (calibration/metrics/pointwise.py): building it from columns and
from rows of a mixed rubric, and a clear ValueError for every kind of bad input. No database."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.metrics.pointwise import BINARY, COUNT, RATING, Answer, pointwise_table, pointwise_tables


def _cols(values, raters=None, **overrides):
    n = len(values)
    cols = {
        "article": [f"art-{i}" for i in range(n)],
        "system": ["gpt-4.1"] * n,
        "topic": ["Zürich, Île-de-France"] * n,
        "criterion": ["clarity"] * n,
        "rater": raters or ["ann"] * n,
        "value": values,
        "is_judge": [False] * n,
    }
    cols.update(overrides)
    return cols


def test_it_builds_a_table_with_names_as_given():
    cols = _cols([1.0, 5.0, 3.0], raters=["ann", "claude-3.5", "ann"], is_judge=[False, True, False])
    cols["article"] = ["Ångström", "Ångström", "b.2"]
    table = pointwise_table(**cols, response=RATING, scale=(1, 5))
    assert table.articles == ("b.2", "Ångström")
    assert table.humans == ("ann",) and table.judges == ("claude-3.5",)
    assert table.topics == ("Zürich, Île-de-France",) and table.systems == ("gpt-4.1",)
    assert len(table) == 3 and table.scale == (1, 5)
    grid = table.grid
    assert grid.value.shape == (2, 2)  # two items (articles x one criterion), two raters
    assert np.isnan(grid.value[0, 1]) and grid.value[1].tolist() == [1.0, 5.0]


def test_it_keeps_not_applicable_as_an_answer():
    table = pointwise_table(**_cols([1.0, 0.0, math.nan]), response=BINARY)
    assert table.grid.answered.all() and np.isnan(table.grid.value[2, 0])


@pytest.mark.parametrize(
    "values,response,scale,message",
    [
        ([1.0, 2.0], BINARY, None, "a checklist answer is 1 \\(yes\\), 0 \\(no\\) or NaN \\(N/A\\), not 2$"),
        ([1.0, math.nan], RATING, (1, 5), "N/A is an answer of checklists and nominal criteria only"),
        ([1.0, math.inf], COUNT, None, "must be a finite number"),
        ([1.0, 6.0], RATING, (1, 5), "a rating on the scale 1-5 is one of its integer points, not 6$"),
        ([1.0, 2.5], RATING, (1, 5), "not 2.5"),
        ([1.0], RATING, None, "needs its scale"),
        ([1.0], RATING, (5, 1), "the lowest first"),
        ([1.0], "likert", None, "response must be one of binary, rating, count, nominal, not 'likert'"),
        ([1.0, "four"], COUNT, None, "an answer's value is a number \\(or None/NaN for N/A\\), not 'four'"),
    ],
)
def test_it_refuses_values_that_do_not_fit_the_response(values, response, scale, message):
    with pytest.raises(ValueError, match=message):
        pointwise_table(**_cols(values), response=response, scale=scale)


def test_it_refuses_inconsistent_columns():
    with pytest.raises(ValueError, match="the columns differ in length"):
        pointwise_table(**_cols([1.0, 2.0], raters=["ann"]), response=COUNT)
    with pytest.raises(ValueError, match="article 'art-0' has more than one system: a.1, b.2"):
        pointwise_table(**_cols([1.0, 2.0], article=["art-0", "art-0"], system=["a.1", "b.2"], raters=["ann", "bob"]), response=COUNT)
    with pytest.raises(ValueError, match="rater 'ann' has more than one kind"):
        pointwise_table(**_cols([1.0, 2.0], is_judge=[False, True]), response=COUNT)
    with pytest.raises(ValueError, match="several answers from one rater, e.g. 'ann' on 'art-0', criterion 'clarity'"):
        pointwise_table(**_cols([1.0, 2.0], article=["art-0", "art-0"]), response=COUNT)
    with pytest.raises(ValueError, match="every answer needs a rater"):
        pointwise_table(**_cols([1.0], raters=[""]), response=COUNT)


def test_it_splits_a_mixed_rubric_by_response_and_scale():
    rows = [
        Answer("a1", "s", "t", "citations match", "ann", 1.0, BINARY),
        Answer("a1", "s", "t", "citations match", "gpt-4.1", math.nan, BINARY, is_judge=True),
        Answer("a1", "s", "t", "clarity", "ann", 4.0, RATING, scale=(1, 5)),
        Answer("a1", "s", "t", "depth", "ann", 9.0, RATING, scale=(1, 10)),
        Answer("a1", "s", "t", "errors", "ann", 3.0, COUNT),
    ]
    tables = pointwise_tables(rows)
    assert list(tables) == [(BINARY, None), (COUNT, None), (RATING, (1, 5)), (RATING, (1, 10))]
    assert tables[(BINARY, None)].judges == ("gpt-4.1",)
    assert tables[(RATING, (1, 10))].criteria == ("depth",)


def test_it_selects_a_criterion_and_names_unknown_ones():
    cols = _cols([1.0, 2.0], criterion=["clarity", "depth"])
    table = pointwise_table(**cols, response=COUNT)
    assert len(table.for_criterion("depth")) == 1
    with pytest.raises(ValueError, match="no criterion named 'style'"):
        table.for_criterion("style")
    with pytest.raises(ValueError, match="no rater named 'zed'"):
        table.judge_code("zed")
