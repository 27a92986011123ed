"""`ReportOptions` (calibration/report/options.py): one frozen value carries a report's options from a
query string or the command line to the cache key and back to a query string."""

import pytest
from django.http import QueryDict

from calibration.report.options import ReportOptions, options_with

DEFAULT_KEY = {"rounds": 1000, "seed": 0, "reference": None, "include_unsubmitted": False, "ensembles": []}


def test_it_keys_a_default_report_as_it_always_was():
    options = ReportOptions().with_rounds(1000)
    assert options.chosen() == {"rounds": 1000}
    assert options.cache_key(epsilon=(None, None)) == DEFAULT_KEY
    assert options.query == ""


def test_it_keys_only_the_options_that_differ_from_their_defaults():
    options = ReportOptions(rounds=200, majority_ties="half", unparsable="wrong", sensitivity=True)
    assert options.cache_key(epsilon=(None, None)) == {
        **DEFAULT_KEY,
        "rounds": 200,
        "sensitivity": True,
        "majority_ties": "half",
        "swap_policy": "tie",
        "unparsable": "wrong",
    }
    assert options.cache_key(epsilon=(0.15, "skilled annotators")) == {
        **options.cache_key(epsilon=(None, None)),
        "alt_epsilon": (0.15, "skilled annotators"),
        "alt_unit": "pair",
    }


def test_it_reads_a_query_string_and_gives_the_same_one_back():
    query = QueryDict("ensemble=a,b&ensemble=b,a,a&ensemble=c,d&swap_policy=both&human_reference=mace&sensitivity=1&majority_ties=draw")
    options = ReportOptions.from_query(query)
    assert options.ensembles == (("a", "b"), ("c", "d"))  # b,a votes as a,b: one ensemble
    assert (
        options.query
        == "ensemble=a%2Cb&ensemble=c%2Cd&swap_policy=both&unparsable=drop&human_reference=mace&sensitivity=1&majority_ties=draw"
    )
    assert ReportOptions.from_query(QueryDict(options.query)) == options
    assert options.charts_key(rounds=300) == {
        "rounds": 300,
        "ensembles": [("a", "b"), ("c", "d")],
        "swap_policy": "both",
        "unparsable": "drop",
        "human_reference": "mace",
        "sensitivity": True,
        "majority_ties": "draw",
    }


@pytest.mark.parametrize(
    "query, message",
    [
        ("swap_policy=sideways", "unknown swap policy 'sideways'"),
        ("human_reference=oracle", "unknown human reference 'oracle'"),
        ("majority_ties=coin", "unknown majority-tie convention 'coin'"),
        ("category_intervals=some", "category intervals must be one of auto, all, not 'some'"),
        ("sensitivity=perhaps", "sensitivity"),
        ("ensemble=solo", "an ensemble needs at least two different judges"),
    ],
)
def test_it_refuses_a_bad_value_with_the_reason(query, message):
    with pytest.raises(ValueError, match=message):
        ReportOptions.from_query(QueryDict(query))


def test_it_is_frozen_and_applies_changes_by_name():
    options = ReportOptions(seed=3)
    with pytest.raises(AttributeError):
        options.seed = 4
    assert options_with(options, {"rounds": 50}) == ReportOptions(seed=3, rounds=50)
    assert options_with(None, {}) == ReportOptions()
    with pytest.raises(TypeError):
        options_with(None, {"round": 50})
    with pytest.raises(ValueError, match="rounds must be 0 or more"):
        ReportOptions(rounds=-1)
