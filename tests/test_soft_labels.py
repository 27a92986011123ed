"""calibration.metrics.soft_labels: the annotators' distribution per item and a judge's total-variation
distance to it (issue 40, item 6)."""

import numpy as np
import pytest
from scipy.spatial.distance import cityblock

from calibration.metrics import LabelTable
from calibration.metrics.soft_labels import human_distributions, soft_label_rows, soft_score
from calibration.metrics.ties import answer_distribution


def table(rows):
    return LabelTable.from_columns(
        pair=[r[0] for r in rows],
        criterion=[r[1] for r in rows],
        category=["cat"] * len(rows),
        rater=[r[2] for r in rows],
        rater_kind=["human" if r[2].startswith("human:") else "judge" for r in rows],
        system_a=["zeta"] * len(rows),
        system_b=["alpha"] * len(rows),
        winner=[r[3] for r in rows],
    )


HUMANS = [
    ("p0", "c", "human:a", "alpha"), ("p0", "c", "human:b", "alpha"), ("p0", "c", "human:c", "tie"), ("p0", "c", "human:d", "zeta"),
    ("p0", "c", "human:a", "zeta"),  # a second verdict of a: its first counts
    ("p1", "c", "human:a", "zeta"),
]  # fmt: skip


def test_it_exports_each_items_distribution():
    rows = soft_label_rows(table(HUMANS))
    assert rows[0] == {
        "pair": "p0", "criterion": "c", "system_1": "alpha", "system_2": "zeta", "n": 4,
        "count_1": 2, "count_2": 1, "count_tie": 1, "share_1": 0.5, "share_2": 0.25, "share_tie": 0.25,
    }  # fmt: skip
    assert rows[1]["n"] == 1 and rows[1]["share_2"] == 1.0


def test_it_equals_a_hand_total_variation():
    humans = table(HUMANS)
    d = human_distributions(humans)
    judge = table([("p0", "c", "j", "alpha"), ("p1", "c", "j", "tie")])
    dist = answer_distribution(judge.outcome, np.array([0.6, 0.8]))
    result = soft_score("j", judge.item, dist, judge.outcome, d, rounds=0, seed=0)
    # p0: judge (0.6, 0.2, 0.2) vs humans (0.5, 0.25, 0.25): 1/2 (0.1 + 0.05 + 0.05) = 0.1
    # p1: judge (0.1, 0.1, 0.8) vs humans (0, 1, 0): 1/2 (0.1 + 0.9 + 0.8) = 0.9
    assert result.tv.value == pytest.approx(0.5) and result.tv.n == 2
    reference = np.mean([cityblock(dist[i], d.shares[i]) / 2 for i in range(2)])  # scipy's L1 distance, halved
    assert result.tv.value == pytest.approx(reference, abs=1e-12)
    # whole verdicts: p0 (1, 0, 0) vs (0.5, 0.25, 0.25): 0.5; p1 (0, 0, 1) vs (0, 1, 0): 1
    assert result.tv_hard.value == pytest.approx(0.75)


def test_it_leaves_out_items_without_a_confidence_and_gives_an_interval():
    rng = np.random.default_rng(0)
    rows, judge = [], []
    for p in range(60):
        rows += [(f"p{p}", "c", f"human:h{i}", rng.choice(["alpha", "zeta", "tie"])) for i in range(3)]
        judge.append((f"p{p}", "c", "j", "alpha"))
    j = table(judge)
    conf = np.where(np.arange(60) < 50, 0.7, np.nan)
    result = soft_score("j", j.item, answer_distribution(j.outcome, np.nan_to_num(conf)) + np.where(np.isnan(conf), np.nan, 0)[:, None],
                        j.outcome, human_distributions(table(rows)), rounds=200, seed=1)  # fmt: skip
    assert result.tv.n == 50 and result.tv.ci_low <= result.tv.value <= result.tv.ci_high
