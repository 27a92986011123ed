"""Orderings of k articles (calibration.metrics.orderings): Kendall's W by hand and against scipy's
Friedman test, Plackett-Luce strengths against choix's maximum likelihood, and a judge's agreement
with the humans' mean ranks by hand."""

import itertools

import choix
import numpy as np
import pytest
from scipy import stats

from calibration.metrics.orderings import (
    Ordering,
    agreement_among,
    kendalls_w,
    leave_one_out_ceiling,
    mid_ranks,
    order_agreement,
    ordering_of,
    pairs_of,
    plackett_luce,
)
from protocols import ranking


def ordering(item, rater, text):
    """'a>b=c>d': best first, '=' joining tied systems."""
    return Ordering(item, rater, tuple(tuple(group.split("=")) for group in text.split(">")))


def test_it_gives_tied_systems_the_mean_of_the_ranks_they_span():
    assert mid_ranks([["b"], ["a", "c"], ["d"]]) == {"b": 1, "a": 2.5, "c": 2.5, "d": 4}


def test_it_computes_kendalls_w_with_ties_as_by_hand():
    # Three raters, four objects; the third ties the first two. Rank sums 3.5, 6.5, 8 and 12 (mean 7.5),
    # S = 16 + 1 + 0.25 + 20.25 = 37.5; ties: 2^3 - 2 = 6; W = 12 S / (3^2 (4^3 - 4) - 3 * 6) = 450 / 522.
    ranks = np.array([[1, 2, 3, 4], [1, 3, 2, 4], [1.5, 1.5, 3, 4]])

    assert kendalls_w(ranks) == pytest.approx(450 / 522, abs=1e-12)
    # The same through Friedman's chi-square, which scipy corrects for ties alike: W = chi2 / (m (n - 1)).
    chi2, _ = stats.friedmanchisquare(*ranks.T)
    assert kendalls_w(ranks) == pytest.approx(chi2 / (3 * 3), abs=1e-12)


def test_it_gives_w_one_for_raters_who_agree_and_refuses_what_is_undefined():
    assert kendalls_w(np.array([[1, 2, 3], [1, 2, 3]])) == pytest.approx(1.0)
    assert np.isnan(kendalls_w(np.array([[1, 2, 3]])))
    assert np.isnan(kendalls_w(np.array([[1.5, 1.5], [1.5, 1.5]])))


def test_it_gives_each_items_w_where_its_raters_ranked_the_same_systems():
    rows = [ordering("t1", "x", "a>b>c"), ordering("t1", "y", "a>c>b"), ordering("t2", "x", "a>b"), ordering("t3", "x", "a>b")]
    rows.append(ordering("t3", "y", "a>c"))

    assert agreement_among(rows) == {"t1": pytest.approx(kendalls_w(np.array([[1, 2, 3], [1, 3, 2]])))}


def sampled_orderings(strengths, *, k, n_items, raters, seed):
    """Orderings drawn from a Plackett-Luce model: each item a random k of the systems."""
    rng = np.random.default_rng(seed)
    systems = list(strengths)
    rows = []
    for item in range(n_items):
        shown = list(rng.choice(systems, size=k, replace=False))
        for rater in range(raters):
            left, order = list(shown), []
            while left:
                weights = np.exp([strengths[s] for s in left])
                order.append(left.pop(rng.choice(len(left), p=weights / weights.sum())))
            rows.append(Ordering(f"t{item}", f"r{rater}", tuple((s,) for s in order)))
    return rows


def test_it_fits_plackett_luce_as_choix_finds_the_maximum_likelihood():
    truth = {"wikipedia": 1.0, "atlas": 0.4, "gpt": 0.0, "qwen": -0.5, "llama": -0.9}
    rows = sampled_orderings(truth, k=3, n_items=120, raters=2, seed=4)
    rows.append(ordering("t-tied", "r0", "atlas=gpt>qwen"))
    systems = sorted(truth)
    data = [tuple(systems.index(g[0]) for g in row.groups) for row in rows if row.strict]

    fit = plackett_luce(rows, alpha=0.0, rounds=200)

    reference = choix.opt_rankings(len(systems), data, alpha=1e-9)
    reference -= reference.mean()
    assert [fit.strengths[s].value for s in systems] == pytest.approx(list(reference), abs=1e-3)
    assert (fit.n_rankings, fit.n_skipped_tied, fit.n_items) == (240, 1, 120)
    # The strengths recover the order they were drawn from, each inside its interval.
    assert sorted(systems, key=lambda s: -fit.strengths[s].value) == sorted(truth, key=lambda s: -truth[s])
    for s in systems:
        e = fit.strengths[s]
        assert e.ci_low <= e.value <= e.ci_high and e.n == 240


def test_it_regularizes_as_choix_ilsr_does_with_the_same_alpha():
    rows = [ordering("t1", "x", "a>b>c"), ordering("t2", "x", "a>c>b"), ordering("t3", "x", "b>a>c")]

    fit = plackett_luce(rows, rounds=50)

    reference = choix.ilsr_rankings(3, [(0, 1, 2), (0, 2, 1), (1, 0, 2)], alpha=0.01)
    assert [fit.strengths[s].value for s in "abc"] == pytest.approx(list(reference - reference.mean()), abs=1e-9)


def test_it_measures_a_judge_against_the_humans_mean_ranks_as_by_hand():
    humans = [ordering("t1", "h1", "a>b>c"), ordering("t1", "h2", "a>c>b"), ordering("t2", "h1", "a>b>c"), ordering("t2", "h2", "a>b>c")]
    judge = [ordering("t1", "j", "a>b>c"), ordering("t2", "j", "c>b>a"), ordering("t9", "j", "a>b>c")]

    result = order_agreement(judge, humans, rounds=200)

    # t1: the humans' mean ranks a 1, b 2.5, c 2.5 (b and c tied: that pair is left out); t2: reversed.
    tau_1 = stats.kendalltau([1, 2, 3], [1, 2.5, 2.5]).statistic
    assert result.tau.value == pytest.approx((tau_1 - 1) / 2)
    assert (result.n_items, result.n_pairs, result.n_pairs_humans_tied) == (2, 5, 1)
    assert result.pairs_alike.value == pytest.approx(2 / 5)
    assert result.pairs_alike.ci_low <= 0.4 <= result.pairs_alike.ci_high


def test_it_gives_the_humans_leave_one_out_ceiling():
    humans = [ordering("t1", "h1", "a>b>c"), ordering("t1", "h2", "a>c>b"), ordering("t2", "h1", "a>b>c"), ordering("t2", "h2", "a>b>c")]
    humans.append(ordering("t3", "h1", "a>b>c"))  # one human: no ceiling of its own

    ceiling = leave_one_out_ceiling(humans, rounds=200)

    assert ceiling.value == pytest.approx((1 / 3 + 1) / 2)
    assert (ceiling.n, ceiling.n_pairs) == (2, 2)


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_it_takes_items_of_three_to_six_articles(k):
    systems = [f"s{i}" for i in range(6)]
    rows = [Ordering(f"t{n}", "r", tuple((s,) for s in order)) for n, order in enumerate(itertools.permutations(systems[:k]))][:30]

    fit = plackett_luce(rows, rounds=20)

    assert len(fit.strengths) == k and sum(e.value for e in fit.strengths.values()) == pytest.approx(0, abs=1e-9)


def test_it_names_a_stored_rankings_slots_by_their_systems_and_breaks_it_into_pairs():
    stored = ranking.stored_answer("3>1=2", order="cab")  # the rater saw slot c, then a, then b
    named = ordering_of("t1", "alice", ranking.metric_outcome(stored), {"a": "wiki", "b": "atlas", "c": "scribe"})
    assert named == Ordering("t1", "alice", (("atlas",), ("scribe", "wiki")))
    assert pairs_of(named) == [("atlas", "scribe", "atlas"), ("atlas", "wiki", "atlas"), ("scribe", "wiki", "tie")]
    assert len(pairs_of(ordering("t", "r", "a>b>c>d>e>f"))) == 15
