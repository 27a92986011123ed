"""judges.imports: the one place imported judge verdicts are stored, whichever file they came from."""

import pytest

from interchange import LABEL_COLUMNS
from judges.imports import imported_judge_create, imported_unit_save
from judges.models import Judge, JudgeUnit, JudgeVerdict
from tests.test_import_labels import import_labels, label_row, write_csv

pytestmark = pytest.mark.django_db


@pytest.fixture
def unit_args(campaign):
    pair = campaign.pairs.order_by("order").first()
    criteria = list(campaign.criterion_set.criteria.filter(category__key="well_written").order_by("order")[:2])
    judge = imported_judge_create(name="elsewhere", model="imported:elsewhere")
    return {
        "judge": judge,
        "pair": pair,
        "category_id": criteria[0].category_id,
        "criterion_id": None,
        "a_first": True,
    }, criteria


def stored(unit: JudgeUnit) -> set:
    return {(v.criterion_id, v.winner, v.rationale) for v in unit.verdicts.all()}


def test_it_creates_an_imported_judge():
    judge = imported_judge_create(name="from-a-file", model="gpt-x")

    assert (judge.kind, judge.model) == (Judge.Kind.IMPORTED, "gpt-x")


def test_it_stores_a_unit_once_and_counts_the_same_verdicts_as_unchanged(unit_args):
    args, (first, second) = unit_args
    verdicts = [(first.id, "a", "Clearer."), (second.id, "tie", "")]

    assert imported_unit_save(**args, verdicts=verdicts, errors=[]) == "new"
    assert imported_unit_save(**args, verdicts=list(reversed(verdicts)), errors=[]) == "unchanged"

    unit = JudgeUnit.objects.get()
    assert (unit.status, unit.error) == (JudgeUnit.Status.DONE, "")
    assert stored(unit) == set(verdicts)


def test_it_rewrites_a_unit_whose_verdicts_changed(unit_args):
    args, (first, second) = unit_args
    imported_unit_save(**args, verdicts=[(first.id, "a", ""), (second.id, "a", "")], errors=[])

    outcome = imported_unit_save(**args, verdicts=[(first.id, "b", "Changed its mind.")], errors=[])

    assert outcome == "updated"
    assert stored(JudgeUnit.objects.get()) == {(first.id, "b", "Changed its mind.")}
    assert JudgeVerdict.objects.count() == 1


def test_it_puts_a_unit_with_errors_in_error_and_keeps_its_good_verdicts(unit_args):
    args, (first, _) = unit_args

    imported_unit_save(
        **args,
        verdicts=[(first.id, "b", "")],
        errors=["ww_cc_2: Error: 429", "ww_cc_2: Error: 429"],
    )

    unit = JudgeUnit.objects.get()
    assert unit.status == JudgeUnit.Status.ERROR
    assert unit.error == "ww_cc_2: Error: 429\nww_cc_2: Error: 429"
    assert stored(unit) == {(first.id, "b", "")}
    assert imported_unit_save(**args, verdicts=[(first.id, "b", "")], errors=["ww_cc_2: Error: 429"]) == "updated"


def test_it_keeps_per_criterion_units_apart(unit_args):
    args, (first, second) = unit_args

    for criterion in (first, second):
        assert (
            imported_unit_save(
                **{**args, "criterion_id": criterion.id},
                verdicts=[(criterion.id, "a", "")],
                errors=[],
            )
            == "new"
        )

    assert sorted(JudgeUnit.objects.values_list("criterion_id", flat=True)) == sorted([first.id, second.id])


def test_it_stores_judge_rows_of_a_labels_file_per_criterion_for_a_criterion_mode_judge(demo_campaign, tmp_path):
    judge = imported_judge_create(name="careful", model="m")
    Judge.objects.filter(pk=judge.pk).update(mode=Judge.Mode.CRITERION)
    judge_row = {
        **label_row(),
        "rater_kind": "judge",
        "rater": "careful",
        "started_at": "",
        "error": "",
    }
    rows = [
        {
            **judge_row,
            "left_system": "atlas_agent",
            "right_system": "wikipedia",
            "winner_system": "wikipedia",
        },
        {
            **judge_row,
            "criterion": "ww_cc_2",
            "left_system": "atlas_agent",
            "right_system": "wikipedia",
            "winner_system": "atlas_agent",
        },
        {
            **judge_row,
            "criterion": "ww_cc_3",
            "winner_system": "",
            "rationale": "",
            "error": "timed out",
        },
    ]
    path = write_csv(tmp_path / "labels.csv", rows, columns=(*LABEL_COLUMNS, "error"))

    # The judge made before the import is named on purpose: the global judge of that name (issue 39, item 13).
    first, again = import_labels(path, "--judge-scope", "global"), import_labels(path, "--judge-scope", "global")

    assert first.code == 0, first.err
    assert "judge units (pair, order, category or criterion): 3 new, 0 updated, 0 unchanged; judges created: 0" in first.out
    assert "judge units (pair, order, category or criterion): 0 new, 0 updated, 3 unchanged; judges created: 0" in again.out
    units = {u.criterion.key: u for u in JudgeUnit.objects.filter(judge=judge).select_related("criterion", "pair__article_a__system")}
    assert {key: (u.a_first, u.status, u.error) for key, u in units.items()} == {
        "ww_cc_1": (False, "done", ""),
        "ww_cc_2": (False, "done", ""),
        "ww_cc_3": (True, "error", "timed out"),
    }
    assert units["ww_cc_1"].pair.article_a.system.key == "wikipedia"
    assert [v.winner for v in units["ww_cc_1"].verdicts.all()] == ["a"]
    assert [v.winner for v in units["ww_cc_2"].verdicts.all()] == ["b"]


def confidence_rows(*confidences: str) -> list[dict]:
    """One imported judge's rows on three criteria of one pair, with the confidences given."""
    row = {**label_row(), "rater_kind": "judge", "rater": "sure-of-itself", "started_at": ""}
    return [{**row, "criterion": f"ww_cc_{i}", "confidence": c} for i, c in enumerate(confidences, 1)]


def test_it_stores_the_confidence_column_of_judge_rows(demo_campaign, tmp_path):
    path = write_csv(tmp_path / "labels.csv", confidence_rows("0.8", "1", ""), columns=(*LABEL_COLUMNS, "confidence"))

    result = import_labels(path)

    assert result.code == 0, result.err
    stored = dict(JudgeVerdict.objects.filter(unit__judge__name="sure-of-itself").values_list("criterion__key", "confidence"))
    assert stored == {"ww_cc_1": 0.8, "ww_cc_2": 1.0, "ww_cc_3": None}


@pytest.mark.parametrize("bad", ["1.5", "-0.1", "sure", "nan"])
def test_it_refuses_a_bad_confidence_on_its_line_and_writes_nothing(demo_campaign, tmp_path, bad):
    path = write_csv(tmp_path / "labels.csv", confidence_rows("0.8", bad, "0.6"), columns=(*LABEL_COLUMNS, "confidence"))

    result = import_labels(path)

    assert result.code == 1
    assert f"{path}:3: confidence must be a number from 0 to 1 (or empty), got '{bad}'" in result.err
    assert f"{path}:2:" not in result.err and f"{path}:4:" not in result.err
    assert not Judge.objects.filter(name="sure-of-itself").exists()
    assert JudgeUnit.objects.count() == JudgeVerdict.objects.count() == 0
