"""The protocol registry fails closed: a protocol whose items no page or model holds, or that leaves out
part of the contract, is refused where a rubric names it, never routed to the nearest shape."""

import json
import types

import pytest

import protocols
from annotate.models import CriterionSet
from protocols import checklist
from tests.helpers import run

pytestmark = pytest.mark.django_db


def register(monkeypatch, name, **changes):
    """A protocol module built from the checklist's parts, with `changes` set (None: left out)."""
    module = types.ModuleType(f"protocols.{name}")
    for attribute in protocols.base.REQUIRED:
        setattr(module, attribute, getattr(checklist, attribute))
    module.NAME = name
    for attribute, value in changes.items():
        if value is None:
            delattr(module, attribute)
        else:
            setattr(module, attribute, value)
    monkeypatch.setitem(protocols.REGISTRY, name, module)


def rubric_asking(tmp_path, kind):
    criterion = {"id": "x", "text": "Order the articles from best to worst.", "response": {"type": kind}}
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps({"categories": [{"id": "c", "criteria": [criterion]}]}))
    return path


@pytest.mark.parametrize("articles", [7, 0, "2"])
def test_it_refuses_a_rubric_naming_a_protocol_of_an_arity_no_item_has(tmp_path, monkeypatch, articles):
    register(monkeypatch, "rank3", ARTICLES=articles)

    result = run("import_criteria", str(rubric_asking(tmp_path, "rank3")))

    assert result.code == 1
    assert f"criterion 'x': response type 'rank3' asks about {articles!r} articles at once; items here hold 1 to 6" in result.err
    assert CriterionSet.objects.count() == 0
    with pytest.raises(ValueError, match="items here hold 1 to 6"):
        protocols.get("rank3")  # and no other layer can route it to a pair or a reading


def test_it_refuses_a_protocol_that_leaves_out_part_of_the_contract(tmp_path, monkeypatch):
    register(monkeypatch, "halfdone", parse_verdicts=None, metric_outcome=None)

    result = run("import_criteria", str(rubric_asking(tmp_path, "halfdone")))

    assert result.code == 1
    assert "criterion 'x': response type 'halfdone' is incomplete: it does not define parse_verdicts, metric_outcome" in result.err
    assert CriterionSet.objects.count() == 0


def test_it_accepts_the_same_module_with_the_arity_of_an_item(tmp_path, monkeypatch):
    register(monkeypatch, "alike", ARTICLES=1)

    result = run("import_criteria", str(rubric_asking(tmp_path, "alike")))

    assert result.code == 0, result.err
    assert CriterionSet.objects.get().criteria.count() == 1


def test_it_refuses_a_protocol_whose_partial_no_page_can_draw(tmp_path, monkeypatch):
    stored_as_named = lambda response: ({**checklist.read_response(response)[0], "type": "unseen"}, [])  # noqa: E731
    register(monkeypatch, "unseen", PARTIAL="annotate/answers/unseen.html", read_response=stored_as_named)

    result = run("import_criteria", str(rubric_asking(tmp_path, "unseen")))

    assert result.code == 1
    assert (
        "criterion 'x': response type 'unseen' has no partial to draw its answers on the page (no template 'annotate/answers/unseen.html')"
        in result.err
    )
    assert CriterionSet.objects.count() == 0


def test_it_refuses_a_protocol_that_names_no_partial(tmp_path, monkeypatch):
    register(monkeypatch, "partless", PARTIAL=None)

    result = run("import_criteria", str(rubric_asking(tmp_path, "partless")))

    assert result.code == 1 and "response type 'partless' is incomplete: it does not define PARTIAL" in result.err
    assert CriterionSet.objects.count() == 0


def test_it_draws_each_protocols_answer_controls_with_its_own_partial():
    from django.template.loader import get_template

    for name, module in protocols.REGISTRY.items():
        assert get_template(module.PARTIAL), name
