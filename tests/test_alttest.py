"""The Alternative Annotator Test (calibration.metrics.alttest): a hand-computed example, the
paper's per-annotator loop on random inputs (scipy's t-test and statsmodels' Benjamini-Yekutieli
as references), judges that copy an annotator or answer at random, and the designs that cannot
support the test. No database.

The ``meta-evaluator`` package also implements the alt-test, but it is not a reference here: in a
throw-away Python 3.13 venv it downloads 92 wheels (216 MB; 50 packages this project does not
have, among them litellm, boto3, polars and huggingface-hub) and installs to 906 MB, and its
alt-test module does not even import without its `ui` extra (the package's __init__ imports
uvicorn). Its alt-test is a port of the authors' loop, which ``paper_loop`` below writes out."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from calibration.metrics.alttest import Ratings, alt_test, alt_test_by_criterion, by_adjusted
from calibration.metrics.bootstrap import draw_counts

multitest = pytest.importorskip("statsmodels.stats.multitest")  # a dev dependency (pyproject [dev])

TOL = 1e-9


# --------------------------------------------------------------------------
# the paper's procedure, written as a plain loop (the reference)
# --------------------------------------------------------------------------


def _score(pred, others, scoring):
    if scoring == "categorical":
        return sum(pred == o for o in others) / len(others)
    return -math.sqrt(sum((pred - o) ** 2 for o in others) / len(others))


def paper_loop(humans: dict, judge: dict, epsilon: float, scoring: str = "categorical", min_items: int = 30, q: float = 0.05):
    """Leave out each annotator; W_f, W_h per item against the remaining annotators; one-sided
    t-test per annotator (scipy); BY over the annotators (statsmodels). Items need 2+ annotators
    and a judge verdict. Returns (per annotator {name: (p, mean W_f)}, adjusted p, omega, rho)."""
    on_item: dict = {}
    for annotator, labels in humans.items():
        for item in labels:
            on_item.setdefault(item, []).append(annotator)
    usable = {i for i, who in on_item.items() if len(who) >= 2 and i in judge}
    per_annotator = {}
    for left_out in sorted(humans):
        wf, wh = [], []
        for item in sorted(i for i in humans[left_out] if i in usable):
            others = [humans[a][item] for a in on_item[item] if a != left_out]
            s_h = _score(humans[left_out][item], others, scoring)
            s_f = _score(judge[item], others, scoring)
            wf.append(1 if s_f >= s_h else 0)
            wh.append(1 if s_h >= s_f else 0)
        if len(wf) < min_items:
            continue
        diffs = [h - f for h, f in zip(wh, wf)]
        p = stats.ttest_1samp(diffs, epsilon, alternative="less").pvalue
        ci = stats.ttest_1samp(diffs, 0.0).confidence_interval(0.95)
        per_annotator[left_out] = (p, float(np.mean(wf)), (ci.low, ci.high))
    ps = [p for p, _, _ in per_annotator.values()]
    rejected, adjusted, _, _ = multitest.multipletests(ps, alpha=q, method="fdr_by")
    omega = float(np.mean(rejected))
    rho = float(np.mean([wf for _, wf, _ in per_annotator.values()]))
    return per_annotator, adjusted, omega, rho


def _random_design(seed: int, n_items: int, n_annotators: int, scoring: str, coverage: float = 0.8):
    """Annotators label a random share of the items (1-5 scale or 3 answers); the judge skips a few."""
    rng = np.random.default_rng(seed)
    humans = {}
    truth = rng.integers(1, 6, n_items) if scoring == "numeric" else rng.integers(0, 3, n_items)
    for a in range(n_annotators):
        keep = rng.random(n_items) < coverage
        noise = rng.integers(1, 6, n_items) if scoring == "numeric" else rng.integers(0, 3, n_items)
        labels = np.where(rng.random(n_items) < 0.6, truth, noise)
        humans[f"ann-{a}"] = {f"item {i}": int(labels[i]) for i in np.flatnonzero(keep)}
    noise = rng.integers(1, 6, n_items) if scoring == "numeric" else rng.integers(0, 3, n_items)
    judged = np.where(rng.random(n_items) < 0.55, truth, noise)
    judge = {f"item {i}": int(judged[i]) for i in range(n_items) if rng.random() < 0.95}
    return humans, judge


@pytest.mark.parametrize("scoring", ["categorical", "numeric"])
@pytest.mark.parametrize("seed", range(6))
def test_it_equals_the_papers_loop_on_random_inputs(seed, scoring):
    humans, judge = _random_design(seed, n_items=90, n_annotators=3 + seed % 3, scoring=scoring)
    epsilon = (0.1, 0.15, 0.2)[seed % 3]
    per_annotator, adjusted, omega, rho = paper_loop(humans, judge, epsilon, scoring)
    result = alt_test(Ratings.from_annotations(humans), Ratings.from_verdicts(judge), epsilon=epsilon, unit="item", scoring=scoring)
    assert result.ran and result.epsilon == epsilon
    assert [a.annotator for a in result.annotators] == list(per_annotator)
    for test, adj in zip(result.annotators, adjusted):
        p, mean_wf, ci = per_annotator[test.annotator]
        assert test.p == pytest.approx(p, abs=TOL)
        assert test.diff_ci == pytest.approx(ci, abs=TOL)  # the t-interval of mean(W_h - W_f)
        assert test.mean_wf == pytest.approx(mean_wf, abs=TOL)
        assert test.p_adjusted == pytest.approx(adj, abs=TOL)
    assert result.omega == pytest.approx(omega, abs=TOL)
    assert result.rho.value == pytest.approx(rho, abs=TOL)
    assert result.n_annotators == len(per_annotator)


def test_it_corrects_as_statsmodels_does():
    p = np.random.default_rng(4).random(25) ** 3
    assert by_adjusted(p) == pytest.approx(multitest.multipletests(p, method="fdr_by")[1], abs=1e-12)


# --------------------------------------------------------------------------
# a hand-computed example
# --------------------------------------------------------------------------

# Six items, three annotators who label all of them, categorical answers x / y.
HAND = {
    "A": {1: "x", 2: "x", 3: "y", 4: "x", 5: "y", 6: "x"},
    "B": {1: "x", 2: "y", 3: "y", 4: "x", 5: "x", 6: "x"},
    "C": {1: "y", 2: "y", 3: "y", 4: "x", 5: "y", 6: "y"},
}
HAND_JUDGE = {1: "x", 2: "y", 3: "x", 4: "x", 5: "y", 6: "x"}
# Worked by hand. Leaving out A, item 2: B and C say y; A (x) matches 0 of 2, the judge (y) 2 of 2,
# so W_f = 1, W_h = 0, W_h - W_f = -1. Item 3: both say y; A matches, the judge does not: +1. Items
# 1, 5, 6: A and the judge match the same number of others (a tie, 0); item 4: all x (0).
HAND_DIFFS = {"A": [0, -1, 1, 0, 0, 0], "B": [0, 0, 1, 0, -1, 0], "C": [-1, 0, 1, 0, 0, -1]}
HAND_WF = {"A": 5 / 6, "B": 5 / 6, "C": 5 / 6}  # the judge loses only item 3, to everyone


def test_it_equals_a_hand_computed_example():
    epsilon = 0.5
    # means 0, 0, -1/6; sample variances 2/5, 2/5, (102/36)/5; t = (mean - 0.5) / sqrt(var / 6), df 5
    t_hand = {"A": -0.5 / math.sqrt(0.4 / 6), "B": -0.5 / math.sqrt(0.4 / 6), "C": (-1 / 6 - 0.5) / math.sqrt(102 / 36 / 5 / 6)}
    assert t_hand["A"] == pytest.approx(-1.936492, abs=1e-6) and t_hand["C"] == pytest.approx(-2.169305, abs=1e-6)
    p_hand = {k: stats.t.cdf(t, 5) for k, t in t_hand.items()}
    # BY with m = 3, H_3 = 11/6: p sorted C, A, B; adjusted = min over j >= i of p_(j) * 3 * H_3 / j
    c_m = 3 * 11 / 6
    adj_top = p_hand["A"] * c_m / 3
    adjusted = {"A": adj_top, "B": adj_top, "C": min(adj_top, p_hand["C"] * c_m / 1)}
    for q, omega in ((0.05, 0.0), (0.2, 1.0)):
        result = alt_test(Ratings.from_annotations(HAND), Ratings.from_verdicts(HAND_JUDGE), epsilon=epsilon, unit="item", q=q, min_items=6)
        assert result.ran and result.n_annotators == 3 and result.items_per_annotator == {"A": 6, "B": 6, "C": 6}
        for test in result.annotators:
            name = test.annotator
            assert test.mean_diff == pytest.approx(np.mean(HAND_DIFFS[name]), abs=TOL)
            assert test.mean_wf == pytest.approx(HAND_WF[name], abs=TOL)
            assert test.t == pytest.approx(t_hand[name], abs=1e-9)
            assert test.p == pytest.approx(p_hand[name], abs=1e-9)
            assert test.p_adjusted == pytest.approx(adjusted[name], abs=1e-9)
        assert result.omega == omega and result.passes == (omega >= 0.5)
        assert result.rho.value == pytest.approx(5 / 6, abs=TOL)
    assert adj_top == pytest.approx(0.1014, abs=1e-4)  # between the two q's: neither or all are rejected


# --------------------------------------------------------------------------
# judges that copy, judges that guess
# --------------------------------------------------------------------------


def _careful(seed: int, n_items: int, n_annotators: int, keep: float):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n_items)
    labels = np.where(rng.random((n_annotators, n_items)) < keep, truth, rng.integers(0, 3, (n_annotators, n_items)))
    humans = Ratings.from_rows(
        (f"pair {i // 3}", f"crit {i % 3}", f"ann {a}", int(labels[a, i])) for a in range(n_annotators) for i in range(n_items)
    )
    return rng, labels, humans


def _judge(labels_row) -> Ratings:
    return Ratings.from_rows((f"pair {i // 3}", f"crit {i % 3}", "judge", int(v)) for i, v in enumerate(labels_row))


@pytest.mark.parametrize("n_annotators", [3, 5])
@pytest.mark.parametrize("unit", ["item", "pair"])
def test_it_passes_a_judge_that_copies_an_annotator_with_omega_one(n_annotators, unit):
    _, labels, humans = _careful(1, n_items=240, n_annotators=n_annotators, keep=0.85)
    result = alt_test(humans, _judge(labels[1]), epsilon=0.2, unit=unit)
    assert result.ran and result.n_annotators == n_annotators
    assert result.omega == 1.0 and result.passes
    copied = next(a for a in result.annotators if a.annotator == "ann 1")
    assert copied.degenerate and copied.p == 0.0 and copied.mean_diff == 0.0  # every comparison with itself is a tie


@pytest.mark.parametrize("unit", ["item", "pair"])
def test_it_fails_a_random_judge_against_five_careful_annotators_with_omega_zero(unit):
    rng, labels, humans = _careful(2, n_items=240, n_annotators=5, keep=0.9)
    result = alt_test(humans, _judge(rng.integers(0, 3, 240)), epsilon=0.2, unit=unit)
    assert result.ran and result.n_annotators == 5
    assert result.omega == 0.0 and not result.passes
    assert result.rho.value < 0.5 and result.rho.ci_high < 0.6


def test_it_pools_by_pair_as_a_loop_over_pairs_does():
    rng, labels, humans = _careful(3, n_items=150, n_annotators=4, keep=0.7)
    judged = np.where(rng.random(150) < 0.7, labels[0], rng.integers(0, 3, 150))
    result = alt_test(humans, _judge(judged), epsilon=0.15, unit="pair")
    # reference: per annotator, mean over each pair's three criteria of W_h - W_f, then scipy's t-test
    ps = []
    for a in range(4):
        others = np.delete(labels, a, axis=0)
        s_h = (others == labels[a]).mean(axis=0)
        s_f = (others == judged).mean(axis=0)
        d = ((s_h >= s_f).astype(float) - (s_f >= s_h)).reshape(-1, 3).mean(axis=1)
        ps.append(stats.ttest_1samp(d, 0.15, alternative="less").pvalue)
        assert result.annotators[a].n == 50
        assert result.annotators[a].mean_wf == pytest.approx((s_f >= s_h).reshape(-1, 3).mean(axis=1).mean(), abs=TOL)
    assert [a.p for a in result.annotators] == pytest.approx(ps, abs=TOL)
    assert [a.p_adjusted for a in result.annotators] == pytest.approx(multitest.multipletests(ps, method="fdr_by")[1], abs=TOL)


def test_it_corrects_per_criterion_across_criteria_and_annotators():
    rng, labels, humans = _careful(4, n_items=3 * 60, n_annotators=3, keep=0.75)
    judged = np.where(rng.random(180) < 0.75, labels[2], rng.integers(0, 3, 180))
    result = alt_test_by_criterion(humans, _judge(judged), epsilon=0.2)
    ps = []
    for c in range(3):
        for a in range(3):
            own = labels[a, c::3]
            others = np.delete(labels, a, axis=0)[:, c::3]
            s_h, s_f = (others == own).mean(axis=0), (others == judged[c::3]).mean(axis=0)
            d = (s_h >= s_f).astype(float) - (s_f >= s_h)
            ps.append(stats.ttest_1samp(d, 0.2, alternative="less").pvalue)
    adjusted = multitest.multipletests(ps, method="fdr_by")[1]
    got = [a.p_adjusted for r in result.results for a in r.annotators]
    assert got == pytest.approx(adjusted, abs=TOL)
    assert result.n_criteria == 3 and result.n_ran == 3 and result.n_tests == 9
    passed = sum(np.mean(adjusted[3 * c : 3 * c + 3] <= 0.05) >= 0.5 for c in range(3))
    assert result.n_passed == passed
    assert result.summary().startswith(f"passes on {passed} of 3 criteria")


# --------------------------------------------------------------------------
# designs that cannot support the test, degenerate inputs, bad arguments
# --------------------------------------------------------------------------


def test_it_cannot_run_with_one_vote_per_item():
    humans = Ratings.from_rows((f"battle {i}", "", "crowd", ("a", "b", "tie")[i % 3]) for i in range(500))
    judge = Ratings.from_rows((f"battle {i}", "", "gpt", "a") for i in range(500))
    result = alt_test(humans, judge, epsilon=0.1)
    assert not result.ran and result.omega is None and result.passes is None and result.rho is None
    assert result.n_annotators == 0 and result.humans_per_item_max == 1
    assert "no item has labels from 2 annotators (at most 1 per item)" in result.reason
    assert "cannot run" in result.summary()


def test_it_cannot_run_with_two_annotators_and_says_how_many_items_each_has():
    _, labels, humans = _careful(5, n_items=90, n_annotators=2, keep=0.8)
    result = alt_test(humans, _judge(labels[0]), epsilon=0.2, unit="item")
    assert not result.ran and result.items_per_annotator == {"ann 0": 90, "ann 1": 90}
    assert result.reason == (
        "2 of 2 annotators have at least 30 usable items (usable items per annotator: ann 0 90, ann 1 90); at least 3 are needed"
    )


def test_it_leaves_out_annotators_under_thirty_items_and_counts_pairs_in_the_pooled_form():
    _, labels, humans = _careful(6, n_items=90, n_annotators=4, keep=0.8)  # 30 pairs of 3 criteria
    keep = ~((humans.rater == "ann 3") & (np.char.startswith(humans.pair.astype(str), "pair 2")))  # ann 3 skips pairs 2, 20-29
    humans = Ratings(humans.pair[keep], humans.criterion[keep], humans.rater[keep], humans.value[keep])
    by_pair = alt_test(humans, _judge(labels[0]), epsilon=0.2, unit="pair")
    assert by_pair.items_per_annotator["ann 3"] == 19 and by_pair.untested == {"ann 3": 19}
    assert by_pair.ran and by_pair.n_annotators == 3
    by_item = alt_test(humans, _judge(labels[0]), epsilon=0.2, unit="item")
    assert by_item.items_per_annotator["ann 3"] == 57 and by_item.n_annotators == 4
    fewer = alt_test(humans, _judge(labels[0]), epsilon=0.2, unit="pair", min_items=31)
    assert not fewer.ran and "0 of 4 annotators have at least 31 usable pairs" in fewer.reason


def test_it_decides_degenerate_t_tests_deterministically():
    # Annotators that always agree, a judge that agrees with them: every W_h - W_f is 0.
    humans = Ratings.from_rows((i, "", a, "x") for a in "ABC" for i in range(40))
    same = alt_test(humans, Ratings.from_rows((i, "", "j", "x") for i in range(40)), epsilon=0.1, unit="item")
    assert all(a.degenerate and a.t is None and a.p == 0.0 for a in same.annotators) and same.omega == 1.0
    # ... a judge that always disagrees: every W_h - W_f is 1 >= epsilon, so p = 1
    other = alt_test(humans, Ratings.from_rows((i, "", "j", "y") for i in range(40)), epsilon=0.1, unit="item")
    assert all(a.degenerate and a.p == 1.0 and a.diff_ci is None for a in other.annotators) and other.omega == 0.0
    # scipy agrees where its answer is defined (mean below epsilon: p = 0)
    assert stats.ttest_1samp(np.zeros(40), 0.1, alternative="less").pvalue == 0.0


def test_it_requires_epsilon_and_rejects_bad_input():
    humans = Ratings.from_annotations(HAND)
    judge = Ratings.from_verdicts(HAND_JUDGE)
    with pytest.raises(TypeError):
        alt_test(humans, judge)  # no default epsilon
    for bad in (None, -0.1, 1.0, float("nan")):
        with pytest.raises(ValueError):
            alt_test(humans, judge, epsilon=bad)
    with pytest.raises(ValueError, match="unit"):
        alt_test(humans, judge, epsilon=0.1, unit="criterion")
    twice = Ratings.from_rows([(1, "", "A", "x"), (1, "", "A", "y")])
    with pytest.raises(ValueError, match="two labels on one item"):
        alt_test(twice, judge, epsilon=0.1)
    with pytest.raises(ValueError, match="two verdicts"):
        alt_test(humans, Ratings.from_rows([(1, "", "j", "x"), (1, "", "j", "y")]), epsilon=0.1)
    with pytest.raises(ValueError, match="finite"):
        alt_test(Ratings.from_rows([(1, "", "A", float("nan"))]), Ratings.from_rows([(1, "", "j", 2.0)]), epsilon=0.1, scoring="numeric")
    with pytest.raises(ValueError, match="needs numbers"):
        alt_test(humans, judge, epsilon=0.1, scoring="numeric")


def test_it_carries_epsilon_and_n_in_its_dict():
    result = alt_test(Ratings.from_annotations(HAND), Ratings.from_verdicts(HAND_JUDGE), epsilon=0.5, unit="item", min_items=6)
    out = result.as_dict()
    assert out["epsilon"] == 0.5 and out["n_annotators"] == 3 and out["items_per_annotator"] == {"A": 6, "B": 6, "C": 6}
    assert out["rho"]["n"] == 18 and out["rho"]["n_pairs"] == 6 and out["summary"].startswith("fails: omega = 0.00")


def test_it_gives_rho_the_pair_bootstrap_interval_of_a_plain_loop():
    # the same seeded draws as the report's pair bootstrap: round r draws each pair counts[r, pair] times
    rng, labels, humans = _careful(7, n_items=3 * 40, n_annotators=3, keep=0.7)
    judged = np.where(rng.random(120) < 0.6, labels[0], rng.integers(0, 3, 120))
    # annotator 2 skips pairs 0-9: annotators rest on different pairs, so rho is not a pooled ratio
    skipped = (humans.rater == "ann 2") & np.isin(humans.pair, [f"pair {k}" for k in range(10)])
    humans = Ratings(humans.pair[~skipped], humans.criterion[~skipped], humans.rater[~skipped], humans.value[~skipped])
    present = np.ones((3, 40))
    present[2, :10] = 0
    for unit in ("item", "pair"):
        result = alt_test(humans, _judge(judged), epsilon=0.2, unit=unit, rounds=300, seed=3)
        counts = draw_counts(40, 300, 3)  # 40 pairs, in name order (pair 0, pair 1, pair 10, ...)
        order = np.argsort([f"pair {k}" for k in range(40)])
        wf = []
        for a in range(3):
            rows = present[:, np.repeat(np.arange(40), 3)] > 0  # who labelled each item
            others = [b for b in range(3) if b != a]
            hits_h = sum(np.where(rows[b], labels[b] == labels[a], 0) for b in others)
            hits_f = sum(np.where(rows[b], labels[b] == judged, 0) for b in others)
            wf.append((hits_f >= hits_h).astype(float).reshape(40, 3))  # W_f per pair and criterion
        draws = []
        for r in range(300):
            weight = np.empty(40)
            weight[order] = counts[r]
            per_annotator = []
            for a in range(3):
                per_pair = present[a] * (wf[a].mean(axis=1) if unit == "pair" else wf[a].sum(axis=1))
                units = present[a] * (1.0 if unit == "pair" else 3.0)
                per_annotator.append((weight * per_pair).sum() / (weight * units).sum())
            draws.append(np.mean(per_annotator))
        low, high = np.percentile(draws, [2.5, 97.5])
        assert (result.rho.ci_low, result.rho.ci_high) == pytest.approx((low, high), abs=1e-9)
        assert result.rho.n_pairs == 40 and result.rho.n == (110 if unit == "pair" else 330)
