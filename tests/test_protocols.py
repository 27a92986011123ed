"""protocols: the registry, and every registered protocol defines what `protocols.base.REQUIRED` lists (no Django)."""

import pytest

import protocols
from protocols import pairwise
from protocols.base import REQUIRED


def test_it_lists_pairwise_as_the_default_protocol():
    assert protocols.NAMES[0] == "pairwise"
    assert protocols.DEFAULT == "pairwise"
    assert protocols.get("pairwise") is pairwise


@pytest.mark.parametrize("name", ["", "Pairwise", "no-such", None, 3])
def test_it_refuses_a_name_that_is_no_protocol_and_lists_the_ones_there_are(name):
    listed = ", ".join(protocols.NAMES)
    assert protocols.problem(name) == f"protocol '{name}' is not one of: {listed}"
    with pytest.raises(ValueError, match=f"is not one of: {listed}"):
        protocols.get(name)


@pytest.mark.parametrize("name", list(protocols.REGISTRY))
def test_it_finds_every_required_name_in_each_protocol(name):
    module = protocols.REGISTRY[name]
    assert [attribute for attribute in REQUIRED if not hasattr(module, attribute)] == []
    assert module.NAME == name
    assert set(protocols.arities(module)) <= set(protocols.ITEM_ARTICLES)  # items of its size exist
    assert protocols.get(name) is module


def test_it_stores_a_pairwise_answer_by_side_and_shows_it_by_position():
    assert pairwise.stored_answer("1", order="ab") == "a"
    assert pairwise.stored_answer("1", order="ba") == "b"
    assert pairwise.shown_answer("b", order="ba") == "1"
    assert pairwise.stored_answer("", order="ba") == ""
    assert pairwise.stored_overall("2", order="ab") == "b"
    assert pairwise.stored_overall("both_bad", order="ab") == "both_bad"
    assert pairwise.shown_overall("a", order="ba") == "2"
    assert pairwise.shown_overall("tie", order="ba") == "tie"


def test_it_says_what_is_wrong_with_a_pairwise_answer():
    assert pairwise.answer_problems("tie", allow_tie=True) == []
    assert pairwise.answer_problems("tie", allow_tie=False) == ["This campaign does not allow ties: choose Article 1 or Article 2."]
    assert pairwise.answer_problems("3", allow_tie=False) == ["Choose Article 1, Article 2."]
    assert pairwise.overall_problems("a") == ["Choose Article 1, Article 2, Tie or Both bad."]
    assert pairwise.metric_outcome("b", system_a="x", system_b="y") == "y"
