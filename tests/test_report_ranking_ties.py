"""Ranks and Kendall's tau with equal scores, and one anchor set for every rater without a reference.

Two systems with identical records get Bradley–Terry scores that differ in their last bits; tau and
ranks must see them tied, whatever the bootstrap rounds.
"""

import numpy as np
import pytest
from scipy import stats

from calibration import metrics as M
from calibration.metrics import LabelRow
from calibration.report.build import report_from_inputs
from calibration.report.formats import render
from tests.calibration_builders import assert_contract, offline_campaign, offline_inputs, summary

# s1 and s2 have the same record against every other system and split their own games: the exact
# maximum-likelihood scores are equal, the computed ones differ by floating-point noise.
TWINS = [
    ("s1", "s0", 3, 3), ("s2", "s0", 3, 3), ("s1", "s3", 4, 5), ("s2", "s3", 4, 5), ("s1", "s4", 1, 1), ("s2", "s4", 1, 1),
    ("s1", "s2", 3, 3), ("s0", "s3", 5, 2), ("s0", "s4", 2, 5), ("s3", "s4", 3, 2),
]  # fmt: skip
# A judge that ranks s1 above s2 and otherwise like the humans.
JUDGE = [
    ("s1", "s0", 4, 2), ("s2", "s0", 3, 3), ("s1", "s3", 4, 5), ("s2", "s3", 3, 5), ("s1", "s4", 2, 1), ("s2", "s4", 1, 1),
    ("s1", "s2", 4, 2), ("s0", "s3", 5, 2), ("s0", "s4", 2, 5), ("s3", "s4", 3, 2),
]  # fmt: skip


def labels(games, rater: str, kind: str) -> list[LabelRow]:
    out = []
    for a, b, wins_a, wins_b in games:
        for k in range(wins_a + wins_b):
            # one pair per comparison, shared by the humans and the judge
            out.append(LabelRow(f"{a}-{b}-{k}", "c1", "style", rater, kind, a, b, a if k < wins_a else b))
    return out


def test_it_ties_scores_within_the_tolerance_as_scipy_ties_exact_ones():
    humans = M.bradley_terry(labels(TWINS, "h", "human"), reference=None, rounds=0)
    judge = M.bradley_terry(labels(JUDGE, "j", "judge"), reference=None, rounds=0)
    h, j = humans.score_map(), judge.score_map()
    assert h["s1"] == pytest.approx(h["s2"], abs=1e-9)  # equal but for floating-point noise (which may be none)
    # The noise the fit may leave, made sure of: s2 a few bits above s1 (the fit's own noise depends on the CPU's kernels).
    h["s2"] = h["s1"] * (1 + 4e-15)
    assert h["s1"] != h["s2"]
    systems = sorted(h)
    tied = [h["s2"] if s == "s1" else h[s] for s in systems]  # the same scores with the tie made exact
    expected = stats.kendalltau(tied, [j[s] for s in systems])
    tau = M.kendall_tau(h, judge)
    assert (tau.tau, tau.p_value) == (pytest.approx(expected.statistic, abs=1e-12), pytest.approx(expected.pvalue, abs=1e-12))
    untied = stats.kendalltau([h[s] for s in systems], [j[s] for s in systems]).statistic
    assert untied != pytest.approx(tau.tau)  # what breaking the tie by noise gave
    assert humans.scores["s1"].rank == humans.scores["s2"].rank and list(humans.scores).index("s1") < list(humans.scores).index("s2")


# Twins again, and s5, which wins once only: with a bootstrap it is no anchor system, and the
# re-centred scores carry other noise than with rounds = 0.
TWINS_AND_RARE = [
    ("s1", "s0", 1, 4), ("s2", "s0", 1, 4), ("s1", "s3", 1, 2), ("s2", "s3", 1, 2), ("s1", "s4", 3, 5), ("s2", "s4", 3, 5),
    ("s1", "s2", 1, 1), ("s0", "s3", 4, 3), ("s0", "s4", 1, 5), ("s3", "s4", 5, 3), ("s5", "s0", 1, 5),
]  # fmt: skip
JUDGE_AND_RARE = [g if g[:2] != ("s1", "s2") else ("s1", "s2", 2, 1) for g in TWINS_AND_RARE]


def test_it_gives_the_same_tau_and_ranks_whatever_the_rounds():
    results = []
    for rounds in (0, 30, 200):
        humans = M.bradley_terry(labels(TWINS_AND_RARE, "h", "human"), reference=None, rounds=rounds, seed=0)
        judge = M.bradley_terry(labels(JUDGE_AND_RARE, "j", "judge"), reference=None, rounds=rounds, seed=0)
        tau = M.kendall_tau(humans, judge)
        results.append((tau.tau, tau.p_value, [(s.system, s.rank) for s in humans.scores.values()]))
    assert results[0] == results[1] == results[2]


def test_it_levels_values_with_chains_of_ties_and_equal_infinities():
    levels = M.tie_levels(np.array([1.0, 1.0 + 5e-7, 1.0 + 9e-7, 2.0, np.inf, np.inf, -np.inf]))
    assert levels.tolist() == [1, 1, 1, 2, 3, 3, 0]


def arena(seed: int = 0) -> list[LabelRow]:
    """Four systems, no reference. The humans compare all of them often; the judge sees `rare` in a few
    pairs only, so that `rare` leaves its group in some bootstrap rounds and is no anchor of its own."""
    rng = np.random.default_rng(seed)
    out = []
    strength = {"alpha": 0.6, "bravo": 0.3, "charlie": 0.0, "rare": -0.2}
    names = sorted(strength)
    k = rare_won = 0
    for _ in range(40):
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                k += 1
                p = 1 / (1 + np.exp(strength[b] - strength[a]))
                out.append(LabelRow(f"g{k}", "c1", "style", "human:ann", "human", a, b, a if rng.random() < p else b))
                if "rare" not in (a, b):
                    out.append(LabelRow(f"g{k}", "c1", "style", "judge", "judge", a, b, a if rng.random() < p else b))
                elif k % 9 == 0:  # the judge sees few of rare's pairs, and rare wins one of them
                    other = b if a == "rare" else a
                    out.append(LabelRow(f"g{k}", "c1", "style", "judge", "judge", a, b, "rare" if not rare_won else other))
                    rare_won = 1
    return out


def test_it_anchors_every_rater_on_the_same_systems_without_a_reference():
    rows = arena()
    table = M.LabelTable.from_labels(rows)
    alone = {
        name: M.bradley_terry(part, reference=None, rounds=200).candidate_anchors
        for name, part in (("humans", table.humans()), ("judge", M.merge_swapped(table.for_rater("judge"))))
    }
    assert alone["humans"] != alone["judge"]  # each would pick its own set
    report = report_from_inputs(offline_campaign(), offline_inputs(rows, [summary("judge")]), rounds=200)
    assert_contract(report)
    anchor = report["parameters"]["anchor"]
    shared = sorted(set(alone["humans"]) & set(alone["judge"]))
    assert anchor["kind"] == "mean" and anchor["systems"] == shared and ", ".join(shared) in anchor["text"]
    for rater in ("humans", "judge"):
        assert report["bradley_terry_meta"][rater]["anchor_systems"] == shared
        scores = {s["system"]: s["score"] for s in report["bradley_terry"][rater]}
        assert np.mean([scores[s] for s in shared]) == pytest.approx(1000.0, abs=0.01)
    for category_scores in (report["bradley_terry_by_category"]["humans"], report["bradley_terry_by_category"]["judge"]):
        assert set(category_scores) == {"style"}
    md = render(report, "md")
    assert f"the mean score of {', '.join(shared)} is 1000 for every rater" in md
