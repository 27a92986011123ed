import json

import pytest

from annotate.models import Criterion, CriterionSet
from tests.conftest import FIXTURES
from tests.helpers import RUBRIC, run

pytestmark = pytest.mark.django_db


def write(tmp_path, data, name="rubric.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_it_imports_categories_subcategories_and_criteria_in_order(tmp_path):
    result = run("import_criteria", str(write(tmp_path, RUBRIC)))
    assert result.code == 0, result.err
    criterion_set = CriterionSet.objects.get()
    assert (criterion_set.key, criterion_set.version) == ("rubric", 1)
    rows = list(criterion_set.criteria.values_list("key", "category__key", "subcategory_key", "order", "watch_class"))
    assert rows == [
        ("ww_cc_1", "well_written", "clear_concise", 0, ""),
        ("ww_wtw_1", "well_written", "words_to_watch", 1, "puffery"),
        ("n_1", "neutral", "", 2, ""),
    ]


def test_it_keeps_old_versions_when_the_text_changes(tmp_path):
    path = write(tmp_path, RUBRIC)
    run("import_criteria", str(path))
    assert "(unchanged)" in run("import_criteria", str(path)).out
    changed = json.loads(json.dumps(RUBRIC))
    changed["categories"][1]["criteria"][0]["text"] = "Fair to every side, and says so."
    path.write_text(json.dumps(changed), encoding="utf-8")
    assert "rubric v2 (new)" in run("import_criteria", str(path)).out
    v1 = Criterion.objects.get(criterion_set__version=1, key="n_1")
    v2 = Criterion.objects.get(criterion_set__version=2, key="n_1")
    assert v1.text == "Fair to every side."
    assert v2.text == "Fair to every side, and says so."


@pytest.mark.parametrize(
    "data, message",
    [
        ({"categories": [{"id": "a", "criteria": [{"id": "x", "text": "1"}, {"id": "x", "text": "2"}]}]}, "duplicate criterion id 'x'"),
        (
            {"categories": [{"id": "a", "criteria": [{"id": "x", "text": "1"}]}, {"id": "a", "criteria": [{"id": "y", "text": "1"}]}]},
            "duplicate category id 'a'",
        ),
        ({"categories": [{"id": "a", "criteria": [{"id": "x", "text": ""}]}]}, "criterion 'x' has no text"),
        ({"categories": []}, "is not a criteria file"),
        ([1, 2], "is not a criteria file"),
    ],
)
def test_it_refuses_a_bad_criteria_file_whole(tmp_path, data, message):
    result = run("import_criteria", str(write(tmp_path, data)))
    assert result.code == 1
    assert message in result.err
    assert CriterionSet.objects.count() == 0


def test_it_reports_invalid_json_with_its_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n"categories": [\n', encoding="utf-8")
    result = run("import_criteria", str(path))
    assert result.code == 1
    assert f"{path}:3: is not valid JSON" in result.err


def test_it_ships_the_39_criterion_rubric():
    result = run("import_criteria", str(FIXTURES / "criteria" / "wiki_writing.json"))
    assert result.code == 0, result.err
    criterion_set = CriterionSet.objects.get(key="wiki_writing")
    per_category = {c.key: c.criteria.count() for c in criterion_set.categories.all()}
    assert per_category == {"well_written": 21, "broad_coverage": 8, "neutral": 10}
    per_sub = {}
    for criterion in criterion_set.criteria.filter(category__key="well_written"):
        per_sub[criterion.subcategory_key] = per_sub.get(criterion.subcategory_key, 0) + 1
    assert per_sub == {"clear_concise": 3, "lead_section": 7, "words_to_watch": 11}
    assert criterion_set.criteria.filter(subcategory_key="words_to_watch", watch_class="").count() == 0


def one_criterion(response):
    return {"categories": [{"id": "a", "criteria": [{"id": "x", "text": "Is it so?", "response": response}]}]}


def test_it_stores_each_criterion_s_response_type(tmp_path):
    result = run("import_criteria", str(FIXTURES / "checklist_report_presentation.json"))
    assert result.code == 0, result.err
    responses = dict(Criterion.objects.values_list("key", "response"))
    assert len(responses) == 10
    assert responses["pr_lead_1"] == {"type": "checklist", "allow_na": False}
    assert responses["pr_sections_2"] == {"type": "checklist", "allow_na": True}
    # The articles are shown without their citations (issue 41): the shipped checklist asks nothing of them.
    assert not [key for key in responses if "citation" in key]
    result = run("import_criteria", str(FIXTURES / "rating_writing_1to5.json"))
    assert result.code == 0, result.err
    rated = Criterion.objects.filter(criterion_set__key="rating_writing_1to5")
    assert rated.count() == 39
    assert {tuple(p["value"] for p in c.response["points"]) for c in rated} == {(1, 2, 3, 4, 5)}


@pytest.mark.parametrize(
    "response, stored",
    [
        (
            {"type": "nominal", "classes": ["Oui", "Partiellement ", "Non", "Sans réponse", "无关"]},
            {"type": "nominal", "classes": ["Oui", "Partiellement", "Non", "Sans réponse", "无关"]},
        ),
        ({"type": "nominal", "classes": ["a", "b"], "na": "skip"}, {"type": "nominal", "classes": ["a", "b"], "na": "skip"}),
        ({"type": "checklist", "na": "class"}, {"type": "checklist", "allow_na": True, "na": "class"}),
        ({"type": "checklist", "na": "skip"}, {"type": "checklist", "allow_na": True}),
        ({"type": "checklist", "allow_na": True, "na": "class"}, {"type": "checklist", "allow_na": True, "na": "class"}),
    ],
)
def test_it_stores_a_nominal_response_and_an_na_mode(tmp_path, response, stored):
    result = run("import_criteria", str(write(tmp_path, one_criterion(response))))
    assert result.code == 0, result.err
    assert Criterion.objects.get().response == stored


def test_it_keeps_a_rubric_without_responses_pairwise_and_versions_a_changed_response(tmp_path):
    path = write(tmp_path, one_criterion({"type": "count", "score": [{"at_most": 1, "score": 2}, {"score": 0}]}))
    assert run("import_criteria", str(path)).code == 0
    path.write_text(json.dumps(one_criterion({"type": "count"})), encoding="utf-8")
    assert "rubric v2 (new)" in run("import_criteria", str(path)).out
    assert Criterion.objects.get(criterion_set__version=2).response == {"type": "count"}
    run("import_criteria", str(write(tmp_path, RUBRIC, name="plain.json")))
    assert list(Criterion.objects.filter(criterion_set__key="plain").values_list("response", flat=True)) == [{}, {}, {}]


@pytest.mark.parametrize(
    "response, message",
    [
        ({"type": "likert"}, "criterion 'x': response type 'likert' is not one of: pairwise, checklist, rating, count, nominal, text"),
        ({"type": "nominal", "classes": ["only"]}, "criterion 'x': classes must be a list of 2 to 200 class names"),
        ({"type": "nominal", "classes": ["Oui", " oui "]}, "criterion 'x': two classes have the same name (case and spacing aside)"),
        ({"type": "nominal", "classes": ["a", ""]}, "criterion 'x': class 2 must be a non-empty string"),
        ({"type": "nominal", "classes": ["a", "b"], "na": "maybe"}, "criterion 'x': na must be one of 'skip', 'class', not 'maybe'"),
        ({"type": "nominal", "classes": ["a", "NA"], "na": "class"}, "criterion 'x': with na given, no class may be named 'na'"),
        ({"type": "nominal", "classes": ["a", "b|c"]}, "criterion 'x': class 2 ('b|c') contains '|'"),
        ({"type": "nominal", "classes": ["a", "b" * 21]}, "criterion 'x': class 2 ('bbbbbbbbbbbbbbbbbbbbb') is longer than 20 characters"),
        ({"type": "nominal", "classes": ["a", "b"], "order": 1}, "criterion 'x': a nominal response has no parameter 'order'"),
        ({"type": "checklist", "na": "count"}, "criterion 'x': na must be one of 'skip', 'class', not 'count'"),
        ({"type": "checklist", "allow_na": False, "na": "class"}, "criterion 'x': na is given but allow_na is false"),
        ("rating", "criterion 'x': response must be an object with a 'type', not str"),
        ({"type": "checklist", "allow_na": "yes"}, "criterion 'x': allow_na must be true or false, not 'yes'"),
        ({"type": "rating", "points": [{"value": 1, "label": "low"}]}, "criterion 'x': points must be a list of 2 to 11"),
        (
            {"type": "rating", "points": [{"value": 1, "label": "low"}, {"value": 3, "label": "high"}]},
            "criterion 'x': the points' values must be consecutive integers in increasing order, not [1, 3]",
        ),
        ({"type": "count", "score": [{"at_most": 2, "score": 1}]}, "criterion 'x': the last score rule must have no 'at_most'"),
        (
            {"type": "count", "score": [{"at_most": 2, "score": 1}, {"at_most": 1, "score": 2}, {"score": 0}]},
            "criterion 'x': score rule 2: at_most must be an integer above 2, not 1",
        ),
        ({"type": "count", "score": [{"score": "2*x"}]}, "criterion 'x': score rule 1 must be an object with a number 'score'"),
        ({"type": "pairwise", "points": []}, "criterion 'x': a pairwise response takes no parameters (got points)"),
    ],
)
def test_it_refuses_a_bad_response_whole_with_one_line(tmp_path, response, message):
    result = run("import_criteria", str(write(tmp_path, one_criterion(response))))
    assert result.code == 1
    assert message in result.err
    assert len([line for line in result.err.splitlines() if "criterion 'x'" in line]) == 1
    assert CriterionSet.objects.count() == 0
