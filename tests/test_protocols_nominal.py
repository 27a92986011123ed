"""The nominal protocol (one class of a list) and a "not applicable" that is a class (issue 39): answers,
stored forms, the metrics' codes, the judge's schema and the reply parser. Pure, no database."""

import math

import pytest

import protocols
from protocols import checklist, nominal
from protocols.base import CriterionSpec

CLASSES = ["Oui", "Partiellement", "Non", "Sans réponse", "Hors sujet"]
FIVE = protocols.criterion_response({"type": "nominal", "classes": CLASSES})[0]
SKIP = protocols.criterion_response({"type": "nominal", "classes": ["a", "b"], "na": "skip"})[0]
AS_CLASS = protocols.criterion_response({"type": "nominal", "classes": ["a", "b"], "na": "class"})[0]
CHECK_CLASS = protocols.criterion_response({"type": "checklist", "na": "class"})[0]


def test_it_registers_nominal_as_a_one_article_protocol():
    assert protocols.get("nominal") is nominal and nominal.ARTICLES == 1
    assert protocols.criterion_response({"type": "nominal", "classes": CLASSES}) == ({"type": "nominal", "classes": CLASSES}, [])


def test_it_accepts_a_class_of_the_list_and_nothing_else():
    assert nominal.answer_problems("Sans réponse", response=FIVE) == []
    assert nominal.answer_problems("", response=FIVE) == []
    assert nominal.answer_problems("oui", response=FIVE) == [f"Choose one of: {', '.join(CLASSES)}."]
    assert nominal.answer_problems("na", response=FIVE) != []
    assert nominal.answer_problems("na", response=SKIP) == []
    assert nominal.outcome_problems("Hors sujet", response=FIVE) == []
    assert nominal.outcome_problems("Maybe", response=FIVE) == [f"'Maybe' is not one of {', '.join(CLASSES)}"]


def test_it_gives_the_metrics_the_class_code_and_na_as_the_rubric_says():
    assert [nominal.metric_outcome(name, response=FIVE) for name in CLASSES] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert math.isnan(nominal.metric_outcome("na", response=SKIP))
    assert nominal.metric_outcome("na", response=AS_CLASS) == 2.0
    assert nominal.metric_table(FIVE) == ("nominal", tuple(CLASSES))
    assert nominal.metric_table(SKIP) == ("nominal", ("a", "b"))
    assert nominal.metric_table(AS_CLASS) == ("nominal", ("a", "b", "na"))
    with pytest.raises(ValueError, match="'c' is not a class"):
        nominal.metric_outcome("c", response=SKIP)


def test_it_makes_a_checklist_na_a_class_of_its_own_where_the_rubric_says_so():
    skipped = protocols.criterion_response({"type": "checklist", "allow_na": True})[0]
    assert checklist.metric_table(skipped) == ("binary", None)
    assert math.isnan(checklist.metric_outcome("na", response=skipped))
    assert checklist.metric_table(CHECK_CLASS) == ("nominal", ("yes", "no", "na"))
    assert [checklist.metric_outcome(v, response=CHECK_CLASS) for v in ("yes", "no", "na")] == [0.0, 1.0, 2.0]
    assert checklist.answer_problems("na", response=CHECK_CLASS) == []


def test_it_asks_a_judge_with_the_classes_as_an_enum_one_property_per_criterion():
    request = nominal.build_request(
        topic="Tides", article="Body.", category="Relations", category_description="",
        criteria=[CriterionSpec("rel", "Which relation?", FIVE), CriterionSpec("na_ok", "Applies?", SKIP)], structured=True,
    )  # fmt: skip
    schema = request.response_format["json_schema"]
    assert schema["name"] == "nominal"
    answers = schema["schema"]["properties"]["answers"]
    assert answers["required"] == ["rel", "na_ok"] == list(answers["properties"])
    assert answers["properties"]["rel"]["properties"]["answer"] == {"type": "string", "enum": CLASSES}
    assert answers["properties"]["na_ok"]["properties"]["answer"]["enum"] == ["a", "b", "na"]
    assert '- rel: Which relation? ["Oui", "Partiellement", "Non", "Sans réponse", "Hors sujet"]' in request.messages[1]["content"]


def test_it_reads_a_judges_class_case_and_spacing_aside_and_stores_the_rubrics_name():
    content = '{"answers": {"rel": {"reason": "r", "answer": "  sans   RÉPONSE "}, "na_ok": {"reason": "", "answer": "NA"}}}'
    found = nominal.parse_verdicts(content, criteria=("rel", "na_ok"), responses=(FIVE, SKIP))
    assert found == {"rel": ("Sans réponse", "r"), "na_ok": ("na", "")}


def test_it_refuses_a_criterion_without_classes_before_asking():
    with pytest.raises(ValueError, match="criterion k has no classes"):
        nominal.build_request(
            topic="T", article="A", category="C", category_description="", criteria=[CriterionSpec("k", "x", {})], structured=True
        )
