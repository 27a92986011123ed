"""Tests for calibration.metrics (pure numpy: no database is touched).

Run: SECRET_KEY=x .venv/bin/python -m pytest -p no:cacheprovider tests/test_metrics.py -q
"""

from __future__ import annotations

import math
import os
import sys
import warnings

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from calibration import metrics as M  # noqa: E402
from calibration.metrics import LabelTable, bootstrap  # noqa: E402
from tests.metrics_helpers import G, J, L, S, W, assert_no_nan, side, synthetic  # noqa: E402

# --------------------------------------------------------------------------
# data model
# --------------------------------------------------------------------------


def test_it_builds_a_columnar_table_in_canonical_order():
    t = LabelTable.from_labels(
        [
            L("p1", "c1", "h1", W, a=W, b=S, first=W, longer=S),
            L("p1", "c2", "h1", M.TIE, a=S, b=W),
            J("p1", "c1", S, a=W, b=S, first=S),
        ]
    )
    assert t.vocab.systems == (S, W)  # name-sorted: storm < wikipedia
    assert list(t.sys_lo) == [0, 0, 0] and list(t.sys_hi) == [1, 1, 1]
    # wikipedia (= sys_hi) wins, tie, storm (= sys_lo) wins
    assert list(t.outcome) == [1, 2, 0]
    assert list(t.first) == [1, -1, 0] and list(t.longer) == [0, -1, -1]
    assert list(t.winner) == [1, 2, 0]  # tie code = number of systems
    assert len(t.humans()) == 2 and len(t.judges()) == 1
    back = t.to_labels()
    assert back[0].winner == W and back[0].first_system == W and back[0].longer_system == S
    assert back[2].rater_kind == "judge"
    # string-column constructor gives the same table
    t2 = LabelTable.from_columns(
        pair=["p1", "p1", "p1"],
        criterion=["c1", "c2", "c1"],
        category=["cat-c1", "cat-c2", "cat-c1"],
        rater=["h1", "h1", "judge-1"],
        rater_kind=["human", "human", "judge"],
        system_a=[W, S, W],
        system_b=[S, W, S],
        winner=[W, M.TIE, S],
        first_system=[W, None, S],
        longer_system=[S, None, None],
    )
    for col in ("pair", "criterion", "rater", "sys_lo", "sys_hi", "outcome", "first", "longer"):
        assert np.array_equal(getattr(t, col), getattr(t2, col))


def test_it_rejects_inconsistent_labels():
    with pytest.raises(ValueError):
        LabelTable.from_labels([L("p1", "c1", "h1", "gpt")])  # winner not in pair
    with pytest.raises(ValueError):
        LabelTable.from_labels([L("p1", "c1", "h1", W), L("p1", "c2", "h1", W, b=G)])  # pair changes systems
    with pytest.raises(ValueError):
        LabelTable.from_labels([L("p1", "c1", "h1", W), L("p1", "c2", "h1", W, kind="judge")])  # kind changes
    with pytest.raises(ValueError):
        LabelTable.from_labels([L("p1", "c1", "h1", W, first=G)])


# --------------------------------------------------------------------------
# agreement
# --------------------------------------------------------------------------

HUMANS = [
    L("p1", "c1", "h1", W, cat="style"),
    L("p1", "c1", "h2", W, cat="style"),
    L("p1", "c1", "h3", S, cat="style"),
    L("p1", "c2", "h1", M.TIE, cat="coverage"),
    L("p1", "c2", "h2", S, cat="coverage"),
    L("p2", "c1", "h1", S, cat="style"),
    L("p3", "c1", "h1", W, cat="style"),  # no judge verdict here
]
JUDGE = [
    J("p1", "c1", W, cat="style"),
    J("p1", "c2", S, cat="coverage"),
    J("p2", "c1", M.TIE, cat="style"),
    J("p4", "c1", W, cat="style"),  # no human here
]


def test_it_computes_par_variants_by_hand():
    r = M.agreement(JUDGE, HUMANS, rounds=200)
    # matched human labels (6): p1c1 W=W yes, W=W yes, S!=W no; p1c2 tie!=S no, S=S yes; p2c1 S!=tie no
    assert r.par.value == pytest.approx(3 / 6) and r.par.n == 6
    # majorities: p1c1 W (2 of 3), p1c2 none (1 tie vs 1 S), p2c1 S (1 of 1)
    # judge W vs W yes, tie vs S no -> 1/2; one item without a majority
    assert r.par_majority.value == pytest.approx(1 / 2) and r.par_majority.n == 2
    assert r.n_no_majority == 1
    # no ties: drop p1c2/h1 (human tie) and p2c1 (judge tie): kept 4, agree 3
    assert r.par_no_ties.value == pytest.approx(3 / 4) and r.par_no_ties.n == 4
    assert r.share_kept == pytest.approx(4 / 6)
    # kappa on majority items: judge [W, tie] vs humans [W, S]; po = 1/2,
    # pe = (judge W 1/2 * human W 1/2) = 1/4; kappa = (1/2 - 1/4) / (3/4) = 1/3
    assert r.kappa.value == pytest.approx(1 / 3) and r.kappa.n == 2
    assert r.kappa.value == pytest.approx(cohen_kappa_score(["a", M.TIE], ["a", "b"]), abs=1e-12)
    # breakdowns: c1/style: 4 labels, 2 agree; c2/coverage: 2 labels, 1 agrees
    assert r.by_criterion["c1"].value == pytest.approx(0.5) and r.by_criterion["c1"].n == 4
    assert r.by_criterion["c2"].value == pytest.approx(0.5) and r.by_criterion["c2"].n == 2
    assert r.by_category["style"].n == 4 and r.by_category["coverage"].n == 2
    assert r.n_items == 3 and r.n_pairs == 2 and r.judge == "judge-1"
    assert r.par.small_n is True


def test_it_matches_sklearn_kappa_on_random_data():
    rng = np.random.default_rng(5)
    systems = [W, S, G, "rag", "outline"]
    rows = []
    for p in range(150):
        a, b = rng.choice(systems, size=2, replace=False)
        for c in range(4):
            outs = [a, b, M.TIE]
            truth = rng.integers(3)
            for h in range(3):
                o = truth if rng.random() < 0.6 else rng.integers(3)
                rows.append(L(f"p{p}", f"c{c}", f"h{h}", outs[o], a=a, b=b))
            o = truth if rng.random() < 0.5 else rng.integers(3)
            rows.append(J(f"p{p}", f"c{c}", outs[o], a=a, b=b))
    t = LabelTable.from_labels(rows)
    r = M.agreement(t.judges(), t.humans(), rounds=100)
    # independent: majority per item with plain Python
    votes, judge = {}, {}
    for x in rows:
        key = (x.pair, x.criterion)
        if x.rater_kind == "human":
            votes.setdefault(key, []).append(side(x))
        else:
            judge[key] = side(x)
    y_judge, y_major = [], []
    for key, vs in votes.items():
        top = max(set(vs), key=vs.count)
        if vs.count(top) * 2 > len(vs):
            y_judge.append(judge[key])
            y_major.append(top)
    assert r.kappa.n == len(y_judge)
    assert r.kappa.value == pytest.approx(cohen_kappa_score(y_judge, y_major), abs=1e-6)
    assert r.par_majority.value == pytest.approx(np.mean(np.array(y_judge) == np.array(y_major)), abs=1e-12)
    assert r.kappa.ci_low <= r.kappa.value <= r.kappa.ci_high


def test_it_aligns_tables_built_separately():
    # judge and humans converted on their own have different vocabularies
    j = LabelTable.from_labels(JUDGE[:2])
    h = LabelTable.from_labels(HUMANS + [L("p9", "c7", "h9", G, a=G, b="zeta")])
    assert j.vocab != h.vocab
    r = M.agreement(j, h, rounds=50)
    assert r.par.n == 5 and r.par.value == pytest.approx(3 / 5)


def test_it_returns_n0_and_none_without_overlap():
    r = M.agreement([J("p8", "c1", W)], HUMANS, rounds=100)
    assert r.par.n == 0 and r.par.value is None and r.par.ci is None and r.par.small_n
    assert r.par_majority.value is None and r.kappa.value is None and r.kappa.n == 0
    assert r.par_no_ties.value is None and r.share_kept is None
    assert r.by_category == {} and r.by_criterion == {} and r.n_items == 0 and r.n_pairs == 0
    assert_no_nan(r)
    # empty inputs too
    r0 = M.agreement([], [], rounds=10)
    assert r0.par.n == 0 and r0.judge == ""
    d = M.paired_difference([J("p8", "c1", W)], [J("p8", "c1", W, rater="j2")], HUMANS)
    assert d.difference.value is None and d.significant is False and d.par_a is None


def test_it_handles_all_ties():
    humans = [L(f"p{p}", "c1", f"h{h}", M.TIE) for p in range(4) for h in range(2)]
    judge = [J(f"p{p}", "c1", M.TIE) for p in range(4)]
    r = M.agreement(judge, humans, rounds=100)
    assert r.par.value == 1.0 and r.par_majority.value == 1.0
    assert r.par_no_ties.value is None and r.par_no_ties.n == 0 and r.share_kept == 0.0
    # one category on both sides: chance agreement 1 -> kappa undefined (sklearn gives nan)
    assert r.kappa.value is None and r.kappa.n == 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns that kappa is undefined here
        assert math.isnan(cohen_kappa_score([M.TIE] * 4, [M.TIE] * 4))
    c = M.human_ceiling(humans, rounds=100)
    assert c.loo_par.value == 1.0 and c.all_pairs_par.value == 1.0
    assert c.alpha.value is None  # a single value in the domain: alpha undefined
    assert_no_nan(r)
    assert_no_nan(c)
    assert M.prefers_longer(judge).value is None


def test_it_handles_a_single_pair():
    humans = [L("p1", f"c{c}", "h1", W if c < 3 else S) for c in range(4)]
    judge = [J("p1", f"c{c}", W) for c in range(4)]
    r = M.agreement(judge, humans, rounds=200)
    # 3 of 4 criteria agree; every bootstrap round draws the one pair -> CI is the point
    assert r.par.value == pytest.approx(0.75) and r.par.ci == pytest.approx((0.75, 0.75))
    assert r.n_pairs == 1 and r.par.small_n
    bt = M.bradley_terry(humans, rounds=50)
    # wikipedia 3 wins, storm 1 win: gap 400 log10(3)
    assert bt.scores[W].score - bt.scores[S].score == pytest.approx(400 * math.log10(3), abs=1e-6)


# --------------------------------------------------------------------------
# bootstrap
# --------------------------------------------------------------------------


def test_it_bootstrap_is_deterministic_under_a_seed():
    j, h = synthetic(60, seed=1)
    a = M.agreement(j, h, seed=0)
    b = M.agreement(j, h, seed=0)
    c = M.agreement(j, h, seed=7)
    assert a.par.ci == b.par.ci and a.kappa.ci == b.kappa.ci and a.by_criterion == b.by_criterion
    assert a.par.ci != c.par.ci
    assert a.par.value == c.par.value


def test_it_ci_contains_the_point_estimate():
    j, h = synthetic(80, humans_per_item=3, seed=2)
    r = M.agreement(j, h)
    for est in [r.par, r.par_majority, r.par_no_ties, r.kappa, *r.by_category.values(), *r.by_criterion.values()]:
        assert est.ci_low <= est.value <= est.ci_high
    c = M.human_ceiling(h)
    for est in (c.loo_par, c.all_pairs_par, c.alpha):
        assert est.ci_low <= est.value <= est.ci_high


def test_it_ci_shrinks_with_more_pairs():
    small = M.agreement(*synthetic(25, seed=3))
    large = M.agreement(*synthetic(400, seed=3))
    width = lambda e: e.ci_high - e.ci_low  # noqa: E731
    assert width(large.par) < width(small.par) / 2
    assert width(large.kappa) < width(small.kappa) / 2


def test_it_resamples_whole_pairs():
    # agreement is decided per pair: all 39 criteria of a pair agree or all disagree,
    # so the effective sample is 60 pairs, not 2,340 labels
    j, h = synthetic(60, n_crit=39, p_agree=0.7, seed=4, clustered=True)
    r = M.agreement(j, h, rounds=1000, seed=0)

    # independent, slow pair bootstrap with the same draws (pair codes sorted, 1000 x n_pairs indices)
    keys_j = {(x.pair, x.criterion): x.winner for x in j.to_labels()}
    per_pair = {}
    for x in h.to_labels():
        agree, n = per_pair.get(x.pair, (0, 0))
        per_pair[x.pair] = (agree + (keys_j[(x.pair, x.criterion)] == x.winner), n + 1)
    names = sorted(per_pair, key=lambda name: h.vocab.pairs.index(name))
    rng = np.random.default_rng(0)
    draws = rng.integers(0, len(names), size=(1000, len(names)))
    stats = []
    for row in draws:
        agree = sum(per_pair[names[i]][0] for i in row)
        n = sum(per_pair[names[i]][1] for i in row)
        stats.append(agree / n)
    lo, hi = np.percentile(stats, [2.5, 97.5])
    assert r.par.ci == pytest.approx((lo, hi), abs=1e-12)

    # a per-label bootstrap would be far too narrow
    agree_labels = np.array([keys_j[(x.pair, x.criterion)] == x.winner for x in h.to_labels()], dtype=float)
    rng = np.random.default_rng(1)
    label_stats = agree_labels[rng.integers(0, len(agree_labels), size=(1000, len(agree_labels)))].mean(axis=1)
    l_lo, l_hi = np.percentile(label_stats, [2.5, 97.5])
    assert (hi - lo) > 3 * (l_hi - l_lo)


def test_it_bootstraps_large_inputs_in_blocks_with_the_same_draws(monkeypatch):
    j, h = synthetic(50, seed=8)
    whole = M.agreement(j, h, rounds=300)
    # force the block path (no cache, 14 rounds per block): same draws, same CIs
    monkeypatch.setattr(bootstrap, "CACHE_CELLS", 10)
    monkeypatch.setattr(bootstrap, "CHUNK_CELLS", 700)
    assert len(list(M.draw_count_blocks(50, 300, 0))) == 22
    blocks = M.agreement(j, h, rounds=300)  # counts kept as bytes
    assert blocks.par.ci == whole.par.ci and blocks.kappa.ci == whole.kappa.ci
    monkeypatch.setattr(bootstrap, "_COMPACT_CELLS", 10)
    regenerated = M.agreement(j, h, rounds=300)  # counts drawn again for every figure
    assert regenerated.par.ci == whole.par.ci and regenerated.kappa.ci == whole.kappa.ci


def test_it_resamples_a_wide_sparse_statistic_as_the_dense_product():
    rng = np.random.default_rng(30)
    per_unit = np.zeros((400, 64))
    per_unit[np.arange(400), rng.integers(0, 64, size=400)] = rng.random(400)
    boot = bootstrap.PairBootstrap(np.arange(400), 200, 0)
    dense = next(M.draw_count_blocks(400, 200, 0)) @ per_unit
    assert np.allclose(boot.resample(per_unit), dense, atol=1e-12)


def test_it_computes_paired_differences_on_the_same_pairs():
    j1, h = synthetic(300, seed=6, p_agree=0.9)
    j2, h2 = synthetic(300, seed=6, p_agree=0.6, judge="judge-2", judge_seed=1)  # same humans, worse judge
    assert np.array_equal(h.outcome, h2.outcome)
    d = M.paired_difference(j1, j2, h)
    a1, a2 = M.agreement(j1, h), M.agreement(j2, h)
    assert d.judge_a == "judge-1" and d.judge_b == "judge-2"
    assert d.difference.value == pytest.approx(a1.par.value - a2.par.value, abs=1e-12)
    assert d.par_a == pytest.approx(a1.par.value) and d.par_b == pytest.approx(a2.par.value)
    assert d.difference.n == a1.par.n and d.significant and d.difference.ci_low > 0
    # a judge against itself: every round gives 0, CI (0, 0) does not exclude 0
    same = M.paired_difference(j1, j1, h)
    assert same.difference.value == 0 and same.difference.ci == (0.0, 0.0) and not same.significant
    # hand example: judge-1 of JUDGE vs a judge saying W everywhere on p1c1, p1c2
    other = [J("p1", "c1", W, rater="j2"), J("p1", "c2", W, rater="j2")]
    hd = M.paired_difference(JUDGE, other, HUMANS, rounds=100)
    # common items p1c1 (3 labels: both judges W -> 2 agree each), p1c2 (2 labels:
    # judge-1 S agrees once, j2 W agrees never) -> (3 - 2) / 5
    assert hd.difference.value == pytest.approx(1 / 5) and hd.difference.n == 5


# --------------------------------------------------------------------------
# position and length bias
# --------------------------------------------------------------------------

SWAPPED = [
    J("p1", "c1", W, first=W, longer=W),
    J("p1", "c1", W, first=S, longer=W),  # consistent
    J("p1", "c2", W, first=W, longer=W),
    J("p1", "c2", S, first=S, longer=W),  # flips with the order
    J("p2", "c1", M.TIE, first=W, longer=S),
    J("p2", "c1", M.TIE, first=S, longer=S),  # consistent tie
    J("p2", "c2", S, first=W, longer=S),  # one order only
]


def test_it_measures_position_bias_by_hand():
    # items with both orders: p1c1 same, p1c2 different, p2c1 same (tie) -> 2/3
    pc = M.position_consistency(SWAPPED, rounds=100)
    assert pc.value == pytest.approx(2 / 3) and pc.n == 3
    # non-tie verdicts: W|W first yes, W|S first no, W|W first yes, S|S first yes, S|W first no -> 3/5
    fp = M.first_position_rate(SWAPPED, rounds=100)
    assert fp.value == pytest.approx(3 / 5) and fp.n == 5


def test_it_merges_swapped_runs():
    merged = M.merge_swapped(SWAPPED)
    got = {(x.pair, x.criterion): x.winner for x in merged.to_labels()}
    assert got == {("p1", "c1"): W, ("p1", "c2"): M.TIE, ("p2", "c1"): M.TIE, ("p2", "c2"): S}
    assert all(x.first_system is None for x in merged.to_labels())
    strict = M.merge_swapped(SWAPPED, require_both=True)
    assert len(strict) == 3
    # merged verdicts are one per item, so agreement accepts them; raw swapped runs are refused
    with pytest.raises(ValueError, match="merge_swapped"):
        M.agreement(SWAPPED, HUMANS)
    r = M.agreement(merged, HUMANS, rounds=50)
    # p1c1 W vs humans W, W, S -> 2; p1c2 tie vs tie, S -> 1; p2c1 tie vs S -> 0 => 3/6
    assert r.par.value == pytest.approx(3 / 6) and r.par.n == 6


def test_it_measures_length_bias_by_hand():
    merged = M.merge_swapped(SWAPPED)
    humans = [
        L("p1", "c1", "h1", W, longer=W),  # longer
        L("p1", "c2", "h1", S, longer=W),  # shorter
        L("p2", "c1", "h1", S, longer=S),  # longer
        L("p2", "c2", "h1", M.TIE, longer=S),  # tie: excluded
        L("p3", "c1", "h1", W, longer=W),  # longer
    ]
    judge = M.prefers_longer(merged, rounds=100)
    # judge non-tie merged verdicts: p1c1 W (longer), p2c2 S (longer) -> 2/2
    assert judge.value == 1.0 and judge.n == 2
    # humans: p1c1 yes, p1c2 no, p2c1 yes, p3c1 yes -> 3/4
    people = M.prefers_longer(humans, rounds=100)
    assert people.value == pytest.approx(3 / 4) and people.n == 4


# --------------------------------------------------------------------------
# human ceiling
# --------------------------------------------------------------------------

CEILING = [
    L("p1", "c1", "h1", W),
    L("p1", "c1", "h2", W),
    L("p1", "c1", "h3", S),
    L("p1", "c2", "h1", M.TIE),
    L("p1", "c2", "h2", S),
    L("p2", "c1", "h1", S),
    L("p2", "c2", "h2", W),
    L("p2", "c2", "h3", W),
]


def test_it_computes_the_human_ceiling_by_hand():
    c = M.human_ceiling(CEILING, rounds=100)
    # leave-one-out: p1c1 W's others {W, S} no majority (x2, excluded); S's others {W, W} -> W, no;
    # p1c2 each other is the single remaining label: tie vs S no, S vs tie no;
    # p2c1 single label (excluded); p2c2 W vs W yes twice  -> 2 / 5, 3 excluded
    assert c.loo_par.value == pytest.approx(2 / 5) and c.loo_par.n == 5 and c.n_loo_excluded == 3
    # all pairs: p1c1 3 pairs (1 agreeing), p1c2 1 pair (0), p2c2 1 pair (1) -> 2 / 5
    assert c.all_pairs_par.value == pytest.approx(2 / 5) and c.all_pairs_par.n == 5
    # alpha: pairable values n = 3 + 2 + 2 = 7; sum o_cc = 2*1/2 + 0 + 2*1/1 = 3;
    # n_c: W 4, S 2, tie 1 -> sum n_c^2 = 21; alpha = 1 - 6 * (7 - 3) / (49 - 21) = 1/7
    assert c.alpha.value == pytest.approx(1 / 7, abs=1e-12) and c.alpha.n == 3
    assert c.n_items == 4 and c.n_items_multi == 3


def reliability_matrix(table: LabelTable) -> np.ndarray:
    """raters x items, kappa categories (first system wins, second wins, tie) as numbers, NaN where missing."""
    items = {}
    for x in table.to_labels():
        items.setdefault((x.pair, x.criterion), {})[x.rater] = side(x)
    raters = sorted({x.rater for x in table.to_labels()})
    codes = {"a": 0, "b": 1, M.TIE: 2}
    data = np.full((len(raters), len(items)), np.nan)
    for u, votes in enumerate(items.values()):
        for r, name in enumerate(raters):
            if name in votes:
                data[r, u] = codes[votes[name]]
    return data


def test_it_matches_the_krippendorff_package():
    got = M.human_ceiling(CEILING, rounds=0).alpha.value
    want = krippendorff.alpha(reliability_data=reliability_matrix(LabelTable.from_labels(CEILING)), level_of_measurement="nominal")
    assert got == pytest.approx(want, abs=1e-6)
    for seed, per_item in [(0, 2), (1, 3), (2, 4)]:
        _, h = synthetic(120, n_crit=4, humans_per_item=per_item, seed=seed)
        # drop some labels so items have varying numbers of raters (some a single one)
        h = h.select(np.random.default_rng(seed).random(len(h)) < 0.8)
        c = M.human_ceiling(h, rounds=200)
        want = krippendorff.alpha(reliability_data=reliability_matrix(h), level_of_measurement="nominal")
        assert c.alpha.value == pytest.approx(want, abs=1e-6)
        assert c.alpha.ci_low <= c.alpha.value <= c.alpha.ci_high


# --------------------------------------------------------------------------
# cost vs agreement
# --------------------------------------------------------------------------


def test_it_finds_the_pareto_frontier():
    pts = [
        M.JudgePoint("j1", 1.0, 0.70),
        M.JudgePoint("j2", 2.0, 0.80),
        M.JudgePoint("j3", 3.0, 0.75),  # dominated by j2 (cheaper and better)
        M.JudgePoint("j4", 0.5, 0.60),
        M.JudgePoint("j5", 1.0, 0.65),  # dominated by j1 (same cost, better)
        ("j6", 2.0, 0.80),  # equal to j2: neither dominates
    ]
    assert [p.name for p in M.pareto_frontier(pts)] == ["j4", "j1", "j2", "j6"]


def diff(a, b, value, lo, hi, n=1000):
    est = M.Estimate(value, n, lo, hi)
    return M.PairedDifference(a, b, est, None, None, 100, lo > 0 or hi < 0)


def test_it_recommends_the_cheapest_judge_not_significantly_below_the_best():
    judges = [M.JudgePoint("big", 10.0, 0.80, 1000), M.JudgePoint("mid", 2.0, 0.78, 1000), M.JudgePoint("cheap", 0.5, 0.70, 1000)]
    diffs = [diff("big", "mid", 0.02, -0.01, 0.05), diff("big", "cheap", 0.10, 0.05, 0.15)]
    rec = M.recommend(judges, diffs)
    assert rec.judge == "mid" and rec.best == "big"
    assert "0.780" in rec.sentence and "0.800" in rec.sentence and "n=1,000" in rec.sentence
    assert "\n" not in rec.sentence
    # a difference given the other way round (mid - big) is flipped
    rec2 = M.recommend(judges, [diff("mid", "big", -0.02, -0.05, 0.01), diffs[1]])
    assert rec2.judge == "mid"
    # everyone cheaper is significantly worse -> the best judge itself
    rec3 = M.recommend(judges, [diff("big", "mid", 0.05, 0.01, 0.09), diffs[1]])
    assert rec3.judge == "big" and "best" in rec3.sentence


def test_it_recommends_from_real_paired_differences():
    j1, h = synthetic(300, seed=6, p_agree=0.9)
    j2, _ = synthetic(300, seed=6, p_agree=0.9, judge="judge-2", judge_seed=1)  # equally good, cheaper
    a1, a2 = M.agreement(j1, h), M.agreement(j2, h)
    d = M.paired_difference(j1, j2, h)
    assert not d.significant
    rec = M.recommend([M.JudgePoint("judge-1", 5, a1.par.value, a1.par.n), M.JudgePoint("judge-2", 1, a2.par.value, a2.par.n)], [d])
    assert rec.judge == "judge-2"


def test_it_serializes_without_nan_and_flags_small_n():
    j, h = synthetic(10, n_crit=2, seed=9)
    r = M.agreement(j, h)
    assert r.par.n == 20 and r.par.small_n is True
    assert M.Estimate(0.5, 30).small_n is False
    d = r.as_dict()
    assert d["par"]["small_n"] is True and set(d["par"]) == {"value", "n", "ci_low", "ci_high", "n_pairs", "small_n"}
    assert d["par"]["n_pairs"] == 10  # the pairs the bootstrap resamples
    assert_no_nan(r)
    assert_no_nan(M.bradley_terry(h, reference=W, rounds=100))


def test_it_finds_strict_majorities_of_named_verdicts_group_by_group():
    groups = [["storm", "storm", "wikipedia"], ["storm", "wikipedia"], [], [M.TIE, M.TIE, "storm"], ["wikipedia"]]
    assert M.majority_winners(groups) == ["storm", None, None, M.TIE, "wikipedia"]
    assert M.majority_winners([[], []]) == [None, None]
    assert M.majority_winner(["a", "b", "b", "b", "a"]) == "b" and M.majority_winner(["a", "b"]) is None
