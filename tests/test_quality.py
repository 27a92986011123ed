"""calibration.metrics.quality: gold accuracy with a clustered Wilson interval (held equal to
statsmodels), the humans' position figures, and the flags that gather them."""

import numpy as np
import pytest
import statsmodels.api as sm
from statsmodels.stats.proportion import proportion_confint

from calibration.metrics import TIE, LabelTable
from calibration.metrics.quality import (
    GoldAccuracy,
    HumanPosition,
    clustered_se,
    clustered_share,
    flagged_raters,
    gold_accuracy,
    gold_pause_due,
    human_position,
)

REF, COPY = "wikipedia", "wikipedia~lead.removed"


def table(rows):
    """rows: (pair, criterion, rater, kind, winner, first shown or None)."""
    cols = {k: [] for k in ("pair", "criterion", "category", "rater", "rater_kind", "system_a", "system_b", "winner", "first_system")}
    for pair, crit, rater, kind, winner, first in rows:
        for key, value in zip(cols, (pair, crit, "cat", rater, kind, REF, COPY, winner, first)):
            cols[key].append(value)
    return LabelTable.from_columns(**cols)


def test_it_equals_statsmodels_wilson_when_every_pair_holds_one_answer():
    rng = np.random.default_rng(1)
    for n in (1, 7, 40, 300):
        hits = rng.random(n) < 0.7
        e = clustered_share(hits, np.arange(n))
        lo, hi = proportion_confint(int(hits.sum()), n, method="wilson")
        assert (e.value, e.n, e.n_pairs) == (pytest.approx(hits.mean()), n, n)
        if 0 < hits.sum() < n:
            assert (e.ci_low, e.ci_high) == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9))


def test_it_widens_the_wilson_interval_by_the_design_effect_of_statsmodels_cluster_variance():
    rng = np.random.default_rng(2)
    pairs = np.repeat(np.arange(30), 4)
    skill = rng.random(30)[pairs]  # answers of one pair hang together
    hits = rng.random(len(pairs)) < skill
    fit = sm.OLS(hits.astype(float), np.ones(len(hits))).fit(cov_type="cluster", cov_kwds={"groups": pairs})
    assert clustered_se(hits, pairs) == pytest.approx(float(fit.bse[0]), rel=1e-9)
    p, n = hits.mean(), len(hits)
    design_effect = float(fit.bse[0]) ** 2 / (p * (1 - p) / (n - 1))  # against n independent answers
    votes = n / design_effect
    assert votes < n  # correlated answers are worth fewer
    e = clustered_share(hits, pairs)
    lo, hi = proportion_confint(p * votes, votes, method="wilson")
    assert (e.ci_low, e.ci_high) == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9))
    plain = proportion_confint(int(hits.sum()), len(hits), method="wilson")
    assert e.ci_high - e.ci_low > plain[1] - plain[0]


def test_it_counts_each_pair_once_when_a_share_is_all_or_nothing():
    e = clustered_share(np.ones(12), np.repeat(np.arange(3), 4))
    lo, hi = proportion_confint(3, 3, method="wilson")
    assert (e.value, e.n, e.n_pairs) == (1.0, 12, 3)
    assert (e.ci_low, e.ci_high) == (pytest.approx(lo), pytest.approx(hi))
    assert clustered_share(np.zeros(0), np.zeros(0)).value is None


def test_it_scores_only_the_targeted_criteria_of_gold_pairs_and_counts_a_tie_as_wrong():
    expected = {("g1", "lead"): REF, ("g1", "cover"): REF, ("g2", "lead"): REF}
    labels = table([
        ("g1", "lead", "alice", "human", REF, REF),
        ("g1", "cover", "alice", "human", TIE, REF),
        ("g1", "style", "alice", "human", COPY, REF),  # not targeted: not scored
        ("g2", "lead", "alice", "human", COPY, COPY),
        ("g2", "lead", "alice", "human", REF, REF),  # a swapped repeat counts again
        ("g1", "lead", "judge.4.1", "judge", REF, None),
        ("n1", "lead", "bob", "human", REF, REF),  # not a gold pair: bob is not scored
    ])  # fmt: skip
    gold = {g.rater: g for g in gold_accuracy(labels, expected, kinds={"g1": "lead_removed", "g2": "section_removed"})}
    assert set(gold) == {"alice", "judge.4.1"}
    alice = gold["alice"]
    assert (alice.accuracy.value, alice.accuracy.n, alice.accuracy.n_pairs, alice.n_ties) == (0.5, 4, 2, 1)
    assert alice.by_kind["lead_removed"].value == 0.5 and alice.by_kind["section_removed"].value == 0.5
    assert gold["judge.4.1"].rater_kind == "judge" and gold["judge.4.1"].accuracy.value == 1.0
    assert gold_accuracy(labels, {}) == []


def test_it_refuses_an_expected_winner_that_is_not_in_the_pair():
    labels = table([("g1", "lead", "alice", "human", REF, REF)])
    with pytest.raises(ValueError, match="not one of its systems"):
        gold_accuracy(labels, {("g1", "lead"): "gpt-4.1"})


def test_it_pauses_only_after_enough_gold_pairs_and_only_when_clearly_below_the_threshold():
    def gold(hits_per_pair):
        hits = np.concatenate([np.ones(3) * h for h in hits_per_pair])
        return GoldAccuracy("alice", "human", clustered_share(hits, np.repeat(np.arange(len(hits_per_pair)), 3)), 0)

    poor = gold([0, 0, 1, 0, 0, 0, 0, 1, 0, 0])
    assert "paused" in gold_pause_due(poor, threshold=0.8, after_pairs=10)
    assert gold_pause_due(poor, threshold=0.8, after_pairs=11) is None  # not enough pairs yet
    assert gold_pause_due(gold([1, 1, 1, 0, 1, 1, 1, 1, 0, 1]), threshold=0.8, after_pairs=5) is None
    with pytest.raises(ValueError):
        gold_pause_due(poor, threshold=0, after_pairs=1)


def test_it_gives_each_human_position_figures_from_swapped_repeats_and_skips_judges():
    rows = []
    for p in range(40):
        pair = f"p{p}"
        # lefty picks whatever is shown first, both times; steady answers the same both ways
        rows += [(pair, "c", "lefty", "human", REF, REF), (pair, "c", "lefty", "human", COPY, COPY)]
        rows += [(pair, "c", "steady", "human", REF, COPY if p % 2 else REF), (pair, "c", "steady", "human", REF, REF if p % 2 else COPY)]
        rows += [(pair, "c", "judge.1", "judge", REF, REF)]
        rows += [(pair, "c", "unknown.order", "human", REF, None)]
    position = {p.rater: p for p in human_position(table(rows), rounds=200)}
    assert set(position) == {"lefty", "steady"}  # judges and answers of unknown order left out
    assert position["lefty"].consistency.value == 0.0 and position["lefty"].first_position_rate.value == 1.0
    assert position["lefty"].lean == "first" and position["lefty"].consistency.n == 40
    assert position["steady"].consistency.value == 1.0 and position["steady"].first_position_rate.value == 0.5
    assert position["steady"].lean is None


def test_it_gathers_the_flags_with_their_reasons():
    weak = GoldAccuracy("carl", "human", clustered_share(np.r_[np.ones(10), np.zeros(30)], np.repeat(np.arange(20), 2)), 0)
    fine = GoldAccuracy("dora", "human", clustered_share(np.r_[np.ones(35), np.zeros(5)], np.repeat(np.arange(20), 2)), 0)
    judge = GoldAccuracy("judge.1", "judge", weak.accuracy, 0)
    leaning = HumanPosition("lena", clustered_share(np.zeros(5), np.arange(5)), clustered_share(np.ones(40), np.arange(40)), "first")
    flags = flagged_raters(gold=[weak, fine, judge], position=[leaning], flagged_elsewhere={"dora": ["pasted one rationale 5 times"]})
    assert set(flags) == {"carl", "lena", "dora"}
    assert "gold accuracy 0.25" in flags["carl"][0] and "below 0.70" in flags["carl"][0]
    assert "first-position rate 1.00" in flags["lena"][0]
    assert flags["dora"] == ("pasted one rationale 5 times",)
    assert flagged_raters() == {}
