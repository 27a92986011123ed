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
