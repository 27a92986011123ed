"""Nominal answers (one class of a list) in the pointwise statistics, against reference libraries on
shared inputs to 1e-6: Cohen's kappa (scikit-learn), Fleiss' kappa (statsmodels), Krippendorff's
alpha, nominal (krippendorff); the confusion against the human majority counted by hand; the alt-test
scored by accuracy; each class's prediction-powered share. No database."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

from calibration.metrics.pointwise import NOMINAL, pointwise_table
from calibration.metrics.pointwise_agreement import human_ceiling, judge_figures
from calibration.metrics.pointwise_panel import panels
from calibration.metrics.pointwise_powered import alt_test_inputs, alt_test_long_form, class_table, powered_means, powered_shares

krippendorff = pytest.importorskip("krippendorff")
inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")

TOL = 1e-6
CLASSES = ("Oui", "Partiellement", "Non", "Sans réponse", "Hors sujet")
HUMANS = ("ann", "bea", "cem")
JUDGE = "judge"


def _answers(seed: int = 5, articles: int = 60, criteria: int = 2, missing: float = 0.0, skipped: float = 0.0):
    """values[article, criterion, rater] (NaN: no answer, or a skipped N/A), three annotators then a judge."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, len(CLASSES), (articles, criteria))[..., None]
    noise = rng.integers(0, len(CLASSES), (articles, criteria, 4))
    values = np.where(rng.random((articles, criteria, 4)) < 0.3, noise, truth).astype(float)
    answered = rng.random(values.shape) >= missing
    values[rng.random(values.shape) < skipped] = np.nan
    cols = {k: [] for k in ("article", "system", "topic", "criterion", "rater", "value", "is_judge")}
    for a, c, r in zip(*np.nonzero(answered)):
        cols["article"].append(f"article-{a:03d}")
        cols["system"].append(f"sys-{a % 2}")
        cols["topic"].append(f"topic-{a}")
        cols["criterion"].append(f"crit-{c}")
        cols["rater"].append((*HUMANS, JUDGE)[r])
        cols["value"].append(values[a, c, r])
        cols["is_judge"].append(r == 3)
    values = np.where(answered, values, np.nan)
    return values, pointwise_table(**cols, response=NOMINAL, scale=CLASSES)


def test_it_gives_cohens_kappa_and_agreement_of_scikit_learn_over_the_answer_pairs():
    values, table = _answers(missing=0.1)
    x, h = [], []
    for a, c in np.ndindex(values.shape[:2]):
        if np.isnan(values[a, c, 3]):
            continue
        for r in range(3):
            if not np.isnan(values[a, c, r]):
                x.append(values[a, c, 3])
                h.append(values[a, c, r])
    figures = judge_figures(table, JUDGE, rounds=20).figures
    assert figures["kappa"].value == pytest.approx(cohen_kappa_score(x, h), abs=TOL)
    assert figures["agreement"].value == pytest.approx(accuracy_score(h, x), abs=TOL)
    assert figures["kappa"].n == len(x)


def test_it_gives_fleiss_kappa_of_statsmodels_and_alpha_of_krippendorff():
    values, table = _answers()
    human, with_judge = panels(table, rounds=20)
    items = values[:, :, :3].reshape(-1, 3)
    counts, _ = inter_rater.aggregate_raters(items.astype(int), n_cat=len(CLASSES))
    assert human.figures["fleiss_kappa"].value == pytest.approx(inter_rater.fleiss_kappa(counts), abs=TOL)
    expected = krippendorff.alpha(reliability_data=items.T, level_of_measurement="nominal")
    assert human.figures["alpha_nominal"].value == pytest.approx(expected, abs=TOL)
    everyone = values.reshape(-1, 4)
    expected = krippendorff.alpha(reliability_data=everyone.T, level_of_measurement="nominal")
    assert with_judge[JUDGE].figures["alpha_nominal"].value == pytest.approx(expected, abs=TOL)


def test_it_gives_alpha_of_krippendorff_with_missing_and_skipped_answers():
    values, table = _answers(seed=9, missing=0.25, skipped=0.1)
    human, _ = panels(table, rounds=20)
    items = values[:, :, :3].reshape(-1, 3)
    expected = krippendorff.alpha(reliability_data=items.T, level_of_measurement="nominal")
    assert human.figures["alpha_nominal"].value == pytest.approx(expected, abs=TOL)


def test_it_counts_the_confusion_against_the_strict_human_majority():
    values, table = _answers(seed=11)
    expected = np.zeros((len(CLASSES), len(CLASSES)), dtype=int)
    kappa_x, kappa_m, split = [], [], 0
    for a, c in np.ndindex(values.shape[:2]):
        votes = np.bincount(values[a, c, :3].astype(int), minlength=len(CLASSES))
        if (votes == votes.max()).sum() > 1:
            split += 1
            continue
        expected[int(values[a, c, 3]), votes.argmax()] += 1
        kappa_x.append(values[a, c, 3])
        kappa_m.append(votes.argmax())
    found = judge_figures(table, JUDGE, rounds=20)
    assert found.confusion == expected.tolist()
    assert found.counts["no_majority"] == split
    assert found.figures["kappa_majority"].value == pytest.approx(cohen_kappa_score(kappa_x, kappa_m), abs=TOL)
    assert found.figures["agreement_majority"].value == pytest.approx(np.trace(expected) / expected.sum(), abs=TOL)
    ceiling, _ = human_ceiling(table, rounds=20)
    assert np.asarray(ceiling.confusion).sum() > 0 and len(ceiling.confusion) == len(CLASSES)


def test_it_scores_the_alt_test_by_accuracy():
    values, table = _answers(seed=13)
    humans, judge, scoring = alt_test_long_form(table, JUDGE)
    assert scoring == "categorical"
    inputs = alt_test_inputs(table, JUDGE)
    assert inputs.scoring == "accuracy"
    # Article 0, criterion 0, annotator 0 left out: the judge's and the annotator's share of the other two they match.
    row = np.flatnonzero((inputs.article == 0) & (inputs.criterion == 0) & (inputs.annotator == 0))[0]
    others = values[0, 0, 1:3]
    assert inputs.judge_score[row] == pytest.approx(np.mean(others == values[0, 0, 3]))
    assert inputs.human_score[row] == pytest.approx(np.mean(others == values[0, 0, 0]))


def test_it_gives_each_class_its_prediction_powered_share():
    values, table = _answers(seed=17)
    shares = powered_shares(table, JUDGE)
    assert list(shares) == list(CLASSES)
    for code, name in enumerate(CLASSES):
        means, _ = shares[name]
        direct, _ = powered_means(class_table(table, code), JUDGE)
        for system, mean in means.items():
            assert mean.ppi.value == pytest.approx(direct[system].ppi.value)
            rows = np.asarray([a % 2 == int(system[-1]) for a in range(values.shape[0])])
            human_share = np.mean([np.mean(values[a, c, :3] == code) for a in np.flatnonzero(rows) for c in range(values.shape[1])])
            assert mean.human.value == pytest.approx(human_share, abs=TOL)
    total = sum(shares[name][0]["sys-0"].human.value for name in CLASSES)
    assert total == pytest.approx(1.0, abs=TOL)


def test_it_refuses_a_code_outside_the_classes():
    with pytest.raises(ValueError, match="class code from 0 to 4"):
        pointwise_table(
            article=["a"], system=["s"], topic=["t"], criterion=["c"], rater=["r"], value=[5.0], is_judge=[False],
            response=NOMINAL, scale=CLASSES,
        )  # fmt: skip


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
def test_it_fits_dawid_skene_to_nominal_answers_as_crowd_kit_does():
    import pandas as pd
    from crowdkit.aggregation import DawidSkene

    from calibration.metrics.pointwise_reference import aggregated_labels

    values, table = _answers(seed=19, missing=0.2)
    rows = [
        (f"article-{a:03d}|crit-{c}", HUMANS[r], int(values[a, c, r]))
        for a, c in np.ndindex(values.shape[:2])
        for r in range(3)
        if not np.isnan(values[a, c, r])
    ]
    df = pd.DataFrame(rows, columns=["task", "worker", "label"]).sort_values(["label", "worker", "task"], kind="stable")
    expected = DawidSkene(n_iter=100, tol=1e-5).fit(df.reset_index(drop=True)).labels_
    labels, _, unresolved = aggregated_labels(table, "dawid-skene")
    grid = table.grid
    found = {f"{table.articles[a]}|{table.criteria[c]}": v for a, c, v in zip(grid.article, grid.criterion, labels) if not np.isnan(v)}
    assert unresolved == 0 and found == {task: float(label) for task, label in expected.items()}
