"""calibration.metrics.humanlike: a judge's kappa with each annotator as a z-score against the annotators'
kappas with each other (issue 40), checked against scikit-learn's Cohen's kappa, and its pair-bootstrap
interval's coverage in a simulation."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from calibration.metrics import LabelRow
from calibration.metrics.humanlike import human_likeness

W, OTHER = "wikipedia", "other"


def rows_of(answers: dict[str, list[str]], kinds: dict[str, str]) -> list[LabelRow]:
    """One criterion per pair; `answers[rater][i]` is the winner on pair i ('' = not labelled)."""
    rows = []
    for rater, winners in answers.items():
        for i, winner in enumerate(winners):
            if winner:
                rows.append(
                    LabelRow(f"p{i}", "c", "cat", rater if kinds[rater] == "judge" else f"human:{rater}", kinds[rater], W, OTHER, winner)
                )
    return rows


# Four annotators and two judges on 12 pairs ("w": wikipedia wins, "o": the other, "t": tie; "" unlabelled).
HAND = {
    "ann": "w w o o w t w o w w o w",
    "ben": "w o o o w t w w w o o w",
    "cat": "w w o w w w w o o w o t",
    "dan": "o w o o w t w o w w w w",
    "sharp": "w w o o w t w o w w o w",
    "wild": "o o w w o w o w o o w o",
}
LETTER = {"w": W, "o": OTHER, "t": "tie", "": ""}


def test_it_equals_a_hand_computation_with_four_annotators_and_two_judges():
    answers = {r: [LETTER[x] for x in s.split(" ")] for r, s in HAND.items()}
    kinds = {r: "judge" if r in ("sharp", "wild") else "human" for r in HAND}
    result = human_likeness(rows_of(answers, kinds), ["sharp", "wild"], rounds=200, seed=1)
    humans = ["ann", "ben", "cat", "dan"]
    hh = [cohen_kappa_score(answers[a], answers[b]) for i, a in enumerate(humans) for b in humans[i + 1 :]]
    assert result.n_annotators == 4 and result.n_annotator_pairs == 6
    assert result.human_kappa_mean == pytest.approx(np.mean(hh), abs=1e-9)
    assert result.human_kappa_sd == pytest.approx(np.std(hh, ddof=1), abs=1e-9)
    for judge in result.judges:
        with_each = {h: cohen_kappa_score(answers[judge.judge], answers[h]) for h in humans}
        assert set(judge.kappas) == {f"human:{h}" for h in humans}
        for h, k in with_each.items():
            assert judge.kappas[f"human:{h}"].value == pytest.approx(k, abs=1e-9) and judge.kappas[f"human:{h}"].n == 12
        z = (np.mean(list(with_each.values())) - np.mean(hh)) / np.std(hh, ddof=1)
        assert judge.z.value == pytest.approx(z, abs=1e-9)
        assert judge.z.ci_low <= judge.z.value <= judge.z.ci_high
    by = {j.judge: j for j in result.judges}
    assert by["sharp"].klass == "super-consistent" and by["wild"].klass == "below humans"


def test_it_refuses_a_class_below_three_annotators():
    answers = {r: [LETTER[x] for x in HAND[r].split(" ")] for r in ("ann", "ben", "sharp")}
    result = human_likeness(rows_of(answers, {"ann": "human", "ben": "human", "sharp": "judge"}), ["sharp"], rounds=50)
    [judge] = result.judges
    assert judge.klass is None and judge.z.value is None and "at least 3" in judge.note
    assert result.n_annotator_pairs == 1 and judge.kappas  # the kappas are still given


def simulated(rng, accuracies: dict[str, float], pairs: int) -> list[LabelRow]:
    rows = []
    for p in range(pairs):
        for c in ("c1", "c2"):
            truth = W if rng.random() < 0.5 else OTHER
            other = OTHER if truth == W else W
            for rater, accuracy in accuracies.items():
                kind = "judge" if rater == "judge" else "human"
                name = rater if kind == "judge" else f"human:{rater}"
                rows.append(LabelRow(f"p{p}", c, "cat", name, kind, W, OTHER, truth if rng.random() < accuracy else other))
    return rows


def test_it_covers_the_true_z_at_the_nominal_rate():
    # Balanced binary truth: two raters of accuracies a and b have kappa (2a - 1)(2b - 1) in the population.
    accuracies = {"h1": 0.92, "h2": 0.85, "h3": 0.8, "h4": 0.75, "judge": 0.88}
    humans = ["h1", "h2", "h3", "h4"]
    kappa = lambda a, b: (2 * a - 1) * (2 * b - 1)  # noqa: E731
    hh = [kappa(accuracies[a], accuracies[b]) for i, a in enumerate(humans) for b in humans[i + 1 :]]
    true_z = (np.mean([kappa(accuracies["judge"], accuracies[h]) for h in humans]) - np.mean(hh)) / np.std(hh, ddof=1)
    rng = np.random.default_rng(20261128)
    covered, runs = 0, 200
    for run in range(runs):
        result = human_likeness(simulated(rng, accuracies, 150), ["judge"], rounds=400, seed=run)
        z = result.judges[0].z
        covered += z.ci_low <= true_z <= z.ci_high
    assert covered / runs >= 0.93, f"coverage {covered / runs:.3f} of {runs}"


def test_it_keeps_the_point_figures_and_says_why_when_a_crowd_is_too_large_to_resample(monkeypatch):
    from calibration.metrics import humanlike

    accuracies = {"h1": 0.92, "h2": 0.85, "h3": 0.8, "h4": 0.75, "judge": 0.88}
    rows = simulated(np.random.default_rng(5), accuracies, 60)
    full = human_likeness(rows, ["judge"], rounds=100, seed=1).judges[0]
    monkeypatch.setattr(humanlike, "MAX_BOOTSTRAP_CELLS", 10)
    cut = human_likeness(rows, ["judge"], rounds=100, seed=1).judges[0]
    assert cut.z.value == pytest.approx(full.z.value) and cut.klass == full.klass
    assert cut.z.ci_low is None and cut.note == humanlike.INTERVALS_WITHHELD
