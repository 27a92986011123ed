"""Dawid-Skene and MACE on one-article checklist answers (issue 39, item 7): the aggregated labels and
posteriors equal crowd-kit's on the same answers to 1e-6, and each judge is compared with them
(agreement and Cohen's kappa as scikit-learn computes them on the same pairs)."""

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import MACE, DawidSkene
from sklearn.metrics import accuracy_score, cohen_kappa_score

from calibration.metrics.competence import categorical_fit
from calibration.metrics.pointwise import BINARY, RATING
from calibration.metrics.pointwise_reference import MEAN_ONLY, aggregated_labels, aggregated_reference
from tests.test_pointwise_references import HUMANS, _answers

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::pandas.errors.Pandas4Warning")
TOL = 1e-6


def _frame(values):
    """The annotators' answers (not N/A) as crowd-kit reads them; rows sorted by (label, worker, task)
    so that crowd-kit's order of first appearance is the sorted one (as tests/test_competence.py does)."""
    rows = [
        (f"t{a:03d}.{c}", HUMANS[r], int(values[a, c, r]))
        for a, c in np.ndindex(values.shape[:2])
        for r in range(4)
        if not np.isnan(values[a, c, r])
    ]
    df = pd.DataFrame(rows, columns=["task", "worker", "label"])
    return df.sort_values(["label", "worker", "task"], kind="stable").reset_index(drop=True)


def _codes(df):
    task = pd.factorize(df.task, sort=True)[0]
    worker = pd.factorize(df.worker, sort=True)[0]
    return task, worker, df.label.values


@pytest.mark.parametrize("seed", [5, 8])
def test_it_equals_crowd_kit_on_checklist_answers(seed):
    values, _, _ = _answers(BINARY, seed=seed)
    df = _frame(values)
    task, worker, label = _codes(df)
    posterior, competence = categorical_fit(task, worker, label, method="dawid-skene")
    ck = DawidSkene(n_iter=100, tol=1e-5).fit(df)
    np.testing.assert_allclose(posterior, ck.probas_.sort_index().values, atol=TOL)
    posterior, _ = categorical_fit(task, worker, label, method="mace")
    ck_mace = MACE(n_restarts=1, n_iter=50, method="vb", random_state=0).fit(df)
    np.testing.assert_allclose(posterior, ck_mace.probas_.sort_index().values, atol=TOL)


@pytest.mark.parametrize("method", ["dawid-skene", "mace"])
def test_it_compares_each_judge_with_the_aggregated_labels(method):
    values, _, table = _answers(BINARY, seed=5)
    df = _frame(values)
    fitted = (DawidSkene(n_iter=100, tol=1e-5) if method == "dawid-skene" else MACE(n_restarts=1, n_iter=50, random_state=0)).fit(df)
    truth = fitted.labels_
    result = aggregated_reference(table, method, rounds=0)
    assert result.n_items == len(truth) - result.unresolved
    for j, name in ((4, "gpt-4.1"), (5, "judge.b")):
        x, y = [], []
        for key, label in truth.items():
            a, c = (int(p) for p in key[1:].split("."))
            if not np.isnan(values[a, c, j]):
                x.append(int(values[a, c, j]))
                y.append(int(label))
        figures = result.judges[name].figures
        assert abs(figures["agreement"].value - accuracy_score(y, x)) < TOL
        assert abs(figures["kappa"].value - cohen_kappa_score(x, y)) < TOL
        assert figures["agreement"].n == len(x)
    assert set(result.competence) == set(HUMANS)


def test_it_refuses_numeric_answers_as_mean_only():
    _, _, table = _answers(RATING)
    with pytest.raises(ValueError, match="majority/mean only"):
        aggregated_labels(table, "dawid-skene")
    assert "majority/mean only" in MEAN_ONLY


@pytest.mark.django_db
def test_it_applies_the_reference_to_checklists_and_says_mean_only_for_numbers(tmp_path):
    from annotate.models import Campaign
    from calibration.report.build import build_report
    from calibration.report.formats import render_table_csv
    from tests.helpers import run
    from tests.test_report_pointwise import synthetic_rows, write_csv

    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0
    assert run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "a.csv", synthetic_rows(topics=12)))).code == 0
    report = build_report(Campaign.objects.get(name="arena"), rounds=20, human_reference="dawid-skene")
    tables = {t["response"]: t for t in report["pointwise"]["tables"]}
    checklist = tables["binary"]["human_reference"]
    assert checklist["applied"] is True and checklist["method"] == "dawid-skene"
    assert set(checklist["competence"]) == {"ann_1", "ann_2", "ann_3"}
    assert checklist["judges"]["close-judge"]["figures"]["agreement"]["n"] > 0
    for numeric in ("rating", "count"):
        assert tables[numeric]["human_reference"] == {"method": "dawid-skene", "applied": False, "note": MEAN_ONLY}
    note = next(n for n in report["notes"] if n.startswith("One-article answers and --human-reference dawid-skene"))
    assert "dawid-skene fitted to checklist (24 items" in note and "count, rating 1-5: majority/mean only" in note
    rows = render_table_csv(report, "pointwise_judges")
    assert "close-judge against dawid-skene,agreement" in rows and "coin-judge against dawid-skene,kappa" in rows
    plain = build_report(Campaign.objects.get(name="arena"), rounds=20)
    assert all(t["human_reference"] is None for t in plain["pointwise"]["tables"])
