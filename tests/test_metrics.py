"""Tests for calibration.metrics (pure numpy: no database is touched).

Run: SECRET_KEY=x .venv/bin/python -m pytest -p no:cacheprovider tests/test_metrics.py -q
"""

from __future__ import annotations

import math
import os
import sys
import warnings

import choix
import krippendorff
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.metrics import cohen_kappa_score

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from calibration import metrics as M  # noqa: E402
from calibration.metrics import LabelRow, LabelTable, bootstrap  # noqa: E402

W, S, G = "wikipedia", "storm", "gpt"
ELO = 400 / math.log(10)


def L(pair, crit, rater, winner, a=W, b=S, kind="human", cat=None, first=None, longer=None):
    return LabelRow(
        pair=pair,
        criterion=crit,
        category=cat or f"cat-{crit}",
        rater=rater,
        rater_kind=kind,
        system_a=a,
        system_b=b,
        winner=winner,
        first_system=first,
        longer_system=longer,
    )


def side(x: LabelRow) -> str:
    """The kappa category of a label: the pair's first system by name wins, the second wins, a tie."""
    first, second = sorted((x.system_a, x.system_b))
    return "a" if x.winner == first else "b" if x.winner == second else M.TIE


def J(pair, crit, winner, **kw):
    kw.setdefault("kind", "judge")
    return L(pair, crit, kw.pop("rater", "judge-1"), winner, **kw)


def walk_numbers(obj):
    """Every number inside nested dicts/lists/tuples."""
    if isinstance(obj, dict):
        for v in obj.values():
            yield from walk_numbers(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from walk_numbers(v)
    elif isinstance(obj, float):
        yield obj


def assert_no_nan(result):
    for x in walk_numbers(result.as_dict()):
        assert math.isfinite(x), result


def synthetic(
    n_pairs, n_crit=5, humans_per_item=1, p_agree=0.75, seed=0, clustered=False, systems=(W, S, G), judge="judge-1", judge_seed=0
):
    """Random labels: humans (from ``seed``), and one judge agreeing with the first
    human with probability p_agree (per item, or per whole pair when clustered);
    the judge's draws come from a separate generator so the humans do not depend
    on the judge settings."""
    rng = np.random.default_rng(seed)
    jrng = np.random.default_rng([seed, judge_seed])
    rows = []
    for p in range(n_pairs):
        a, b = rng.choice(systems, size=2, replace=False)
        longer = a if rng.random() < 0.5 else b
        pair_agrees = jrng.random() < p_agree
        for c in range(n_crit):
            cat = "catA" if c % 2 == 0 else "catB"
            outs = [a, b, M.TIE]
            truth = outs[rng.choice(3, p=[0.45, 0.4, 0.15])]
            for h in range(humans_per_item):
                hw = truth if rng.random() < 0.8 else outs[rng.integers(3)]
                rows.append(L(f"p{p}", f"c{c}", f"h{h}", hw, a=a, b=b, cat=cat, longer=longer))
            first_h = rows[-humans_per_item].winner
            agrees = pair_agrees if clustered else jrng.random() < p_agree
            jw = first_h if agrees else [o for o in outs if o != first_h][jrng.integers(2)]
            rows.append(J(f"p{p}", f"c{c}", jw, a=a, b=b, cat=cat, longer=longer, rater=judge))
    t = LabelTable.from_labels(rows)
    return t.judges(), t.humans()


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
# Bradley-Terry
# --------------------------------------------------------------------------


def scipy_bt(labels, reference):
    """Independent BT fit: maximize sum over labels of log P(verdict), with
    P(i beats j) = 1 / (1 + exp(theta_j - theta_i)) and a tie counted as half a
    win each way (log-likelihood 1/2 log p + 1/2 log (1 - p))."""
    systems = sorted({x.system_a for x in labels} | {x.system_b for x in labels})
    others = [s for s in systems if s != reference]
    idx = {s: i for i, s in enumerate(others)}

    def theta(x, s):
        return 0.0 if s == reference else x[idx[s]]

    def nll(x):
        total = 0.0
        for lab in labels:
            d = theta(x, lab.system_a) - theta(x, lab.system_b)
            log_pa, log_pb = -np.logaddexp(0, -d), -np.logaddexp(0, d)
            if lab.winner == lab.system_a:
                total += log_pa
            elif lab.winner == lab.system_b:
                total += log_pb
            else:
                total += 0.5 * log_pa + 0.5 * log_pb
        return -total

    res = minimize(nll, np.zeros(len(others)), method="BFGS", options={"gtol": 1e-9})
    return {s: 1000 + ELO * theta(res.x, s) for s in systems}


def bt_labels(n, systems, seed, strengths=None):
    rng = np.random.default_rng(seed)
    strengths = strengths or {s: rng.normal(0, 0.8) for s in systems}
    rows = []
    for k in range(n):
        if k % 3 == 0:  # three criteria per pair, one system pair per pair
            a, b = rng.choice(systems, size=2, replace=False)
        u = rng.random()
        p = 1 / (1 + math.exp(strengths[b] - strengths[a]))
        w = M.TIE if u < 0.15 else (a if rng.random() < p else b)
        rows.append(L(f"p{k // 3}", f"c{k % 3}", "h1", w, a=a, b=b, cat="catA" if k % 2 else "catB"))
    return rows


def test_it_fits_bradley_terry_equal_to_a_scipy_maximization():
    systems = [W, S, G, "rag", "outline"]
    labels = bt_labels(400, systems, seed=11)
    bt = M.bradley_terry(labels, rounds=200)
    want = scipy_bt(labels, W)
    assert not bt.degenerate and bt.rounds_degenerate == 0
    assert bt.scores[W].score == 1000.0
    for s in systems:
        assert bt.scores[s].score == pytest.approx(want[s], abs=0.01)
        assert bt.scores[s].ci_low <= bt.scores[s].score <= bt.scores[s].ci_high
    assert list(bt.scores) == sorted(systems, key=lambda s: -want[s])
    # the same MLE from choix on per-row data: each win doubled, a tie one win each way
    idx = {s: i for i, s in enumerate(systems)}
    rows = []
    for x in labels:
        a, b = idx[x.system_a], idx[x.system_b]
        if x.winner == x.system_a:
            rows += [(a, b), (a, b)]
        elif x.winner == x.system_b:
            rows += [(b, a), (b, a)]
        else:
            rows += [(a, b), (b, a)]
    th = choix.ilsr_pairwise(len(systems), rows, tol=1e-12, max_iter=1000)
    for s in systems:
        assert bt.scores[s].score == pytest.approx(1000 + ELO * (th[idx[s]] - th[idx[W]]), abs=0.01)
    assert sum(s.n for s in bt.scores.values()) == 2 * 400


def test_it_reproduces_a_hand_computed_two_system_case():
    # A beats B 3 times and loses once: P(A) = 3/4 = e^tA / (e^tA + e^tB) -> tA - tB = ln 3,
    # i.e. 400 * log10(3) = 190.85 Elo points
    labels = [L("p1", f"c{c}", "h1", "A" if c < 3 else "B", a="A", b="B") for c in range(4)]
    bt = M.bradley_terry(labels, reference="B", rounds=0)
    assert bt.scores["B"].score == 1000
    assert bt.scores["A"].score == pytest.approx(1000 + 400 * math.log10(3), abs=1e-6)
    # ties as half wins: 2 wins + 2 ties = 3 : 1 as well
    ties = [L("p1", f"c{c}", "h1", "A" if c < 2 else M.TIE, a="A", b="B") for c in range(4)]
    bt2 = M.bradley_terry(ties, reference="B", rounds=0)
    assert bt2.scores["A"].score == pytest.approx(1000 + 400 * math.log10(3), abs=1e-6)
    # other base/scale/anchor: natural log scale, anchor 0 -> ln 3
    bt3 = M.bradley_terry(labels, reference="B", base=math.e, scale=1, anchor=0, rounds=0)
    assert bt3.scores["A"].score == pytest.approx(math.log(3), abs=1e-9)


def test_it_reports_a_system_that_never_wins_as_not_estimable():
    core = bt_labels(300, [W, S, G], seed=12)
    loser = [L(f"q{k}", "c1", "h1", W if k % 2 else S, a=W if k % 2 else S, b="bad") for k in range(8)]
    bt = M.bradley_terry(core + loser, rounds=300)
    assert bt.degenerate and bt.not_estimable == ["bad"]
    bad = bt.scores["bad"]
    assert (bad.score, bad.estimable, bad.side, bad.wins, bad.losses) == (None, False, "below", 0.0, 8.0)
    assert bad.reason == "not estimable: 0 wins in 8 comparisons"
    assert bad.ci_low is None and bad.ci_high is None  # no interval for a score that does not exist
    assert list(bt.scores)[-1] == "bad" and bt.score_map()["bad"] == -math.inf
    # the rest is the exact limit of the full MLE: the fit without the loser's comparisons
    alone = M.bradley_terry(core, rounds=0)
    assert not alone.degenerate
    for s in (W, S, G):
        assert bt.scores[s].score == pytest.approx(alone.scores[s].score, abs=1e-6)
        assert math.isfinite(bt.scores[s].ci_low) and math.isfinite(bt.scores[s].ci_high)
    # two systems, A always wins: nothing is estimable against B, on the side A tends to
    only = [L("p1", f"c{c}", "h1", "A", a="A", b="B") for c in range(3)]
    bt2 = M.bradley_terry(only, reference="B", rounds=50)
    a = bt2.scores["A"]
    assert (a.score, a.side, a.reason) == (None, "above", "not estimable: 0 losses in 3 comparisons")
    assert bt2.scores["B"].score == 1000.0


def test_it_says_why_a_group_that_never_beats_the_reference_is_not_estimable():
    # X and Y beat each other, but only ever lose to the reference's group
    core = bt_labels(200, [W, S], seed=21)
    xy = [L(f"x{k}", "c1", "h1", "X" if k % 3 else "Y", a="X", b="Y") for k in range(9)]
    down = [L(f"d{k}", "c1", "h1", S, a=S, b="X" if k % 2 else "Y") for k in range(6)]
    bt = M.bradley_terry(core + xy + down, rounds=100)
    assert set(bt.not_estimable) == {"X", "Y"}
    x = bt.scores["X"]
    assert x.side == "below" and x.wins == 6 and "never beats wikipedia's group" in x.reason


def test_it_widens_a_rarely_winning_system_to_an_unbounded_lower_end():
    labels = bt_labels(300, [W, S], seed=22)
    # one win in 30 comparisons spread over 30 pairs: about 1 round in 3 has no win at all
    labels += [L(f"r{k}", "c1", "h1", "rare" if k == 0 else W, a=W, b="rare") for k in range(30)]
    bt = M.bradley_terry(labels, rounds=400)
    rare = bt.scores["rare"]
    assert rare.estimable and rare.score is not None and rare.ci_low == -math.inf and math.isfinite(rare.ci_high)
    assert bt.rounds_degenerate > 0 and not bt.degenerate


def test_it_anchors_on_the_mean_without_a_reference():
    systems = [W, S, G, "rag"]
    labels = bt_labels(400, systems, seed=23)
    by_ref = M.bradley_terry(labels, rounds=0)
    by_mean = M.bradley_terry(labels, reference=None, rounds=200)
    assert by_mean.reference is None and by_mean.anchor_kind == "mean"
    assert np.mean([s.score for s in by_mean.scores.values()]) == pytest.approx(1000, abs=1e-6)
    shift = by_mean.scores[W].score - 1000
    for s in systems:  # the same differences, moved as a whole
        assert by_mean.scores[s].score == pytest.approx(by_ref.scores[s].score + shift, abs=1e-6)
        assert by_mean.scores[s].ci_low < by_mean.scores[s].score < by_mean.scores[s].ci_high  # no system is fixed


def test_it_centres_every_bootstrap_round_on_the_same_anchor_systems():
    labels = bt_labels(300, [W, S, G], seed=22)
    labels += [L(f"r{k}", "c1", "h1", "rare" if k == 0 else W, a=W, b="rare") for k in range(30)]
    bt = M.bradley_terry(labels, reference=None, rounds=400)
    assert bt.anchor_systems == tuple(sorted((W, S, G)))  # "rare" has no finite score in some rounds
    assert np.mean([bt.scores[s].score for s in bt.anchor_systems]) == pytest.approx(1000, abs=1e-6)
    by_ref = M.bradley_terry(labels, rounds=400)
    for s in (S, G):
        mean_width = bt.scores[s].ci_high - bt.scores[s].ci_low
        ref_width = by_ref.scores[s].ci_high - by_ref.scores[s].ci_low
        assert bt.scores[s].ci_low <= bt.scores[s].score <= bt.scores[s].ci_high
        assert mean_width < 1.5 * ref_width  # no wide swings from rounds centred on other systems
    assert bt.scores["rare"].ci_low == -math.inf


def test_it_counts_win_rates_against_the_field():
    labels = [L("p1", "c1", "h1", "A", a="A", b="B"), L("p1", "c2", "h1", M.TIE, a="A", b="B"), L("p2", "c1", "h1", "C", a="A", b="C")]
    rates = M.win_rate_vs_field(labels, rounds=0)
    assert rates.reference is None
    assert rates.overall["A"].value == pytest.approx(1.5 / 3) and rates.overall["A"].n == 3
    assert rates.overall["B"].value == pytest.approx(0.5 / 2) and rates.overall["C"].value == 1.0


def test_it_gives_no_interval_to_a_system_compared_in_one_pair_only():
    labels = [L(p, f"c{c}", "h1", (S if c < wins else W), a=W, b=S) for p, wins in (("p1", 3), ("p2", 1)) for c in range(5)]
    labels += [L("p3", f"c{c}", "h1", (W if c < 3 else G), a=W, b=G) for c in range(5)]
    bt = M.bradley_terry(labels, rounds=200)
    assert bt.scores[G].score is not None and (bt.scores[G].ci_low, bt.scores[G].ci_high) == (None, None)
    assert bt.scores[S].ci_low is not None and bt.scores[S].ci_low < bt.scores[S].ci_high
    assert bt.scores[W].ci_low == bt.scores[W].ci_high == 1000.0


def test_it_fits_degenerate_rounds_on_the_pivots_group_as_choix_does():
    rng = np.random.default_rng(16)
    w = rng.integers(1, 6, size=(12, 4, 4)).astype(float)
    for r in range(12):
        np.fill_diagonal(w[r], 0)
    w[::2, 3, :] = 0  # system 3 never wins in even rounds
    w[1::4, :, 2] = 0  # system 2 never loses in some odd rounds
    theta, group = M.fit_rounds(w, 0)
    for r in range(12):
        inside = [i for i in range(4) if not (r % 2 == 0 and i == 3) and not (r % 4 == 1 and i == 2)]
        assert list(np.flatnonzero(group[r])) == inside
        th = M.fit_choix(w[r][np.ix_(inside, inside)])
        assert np.allclose(theta[r, inside], th - th[0], atol=1e-7)
    assert (theta[::2, 3] == -np.inf).all() and (theta[1::4, 2] == np.inf).all()


def test_it_uses_a_bootstrap_solver_that_matches_choix():
    rng = np.random.default_rng(13)
    w = rng.integers(1, 30, size=(25, 6, 6)) + 0.5 * rng.integers(0, 3, size=(25, 6, 6))
    for r in range(25):
        np.fill_diagonal(w[r], 0)
    got = M.fit_newton(w.astype(float), ref=2)
    for r in range(25):
        th = M.fit_choix(w[r])
        assert np.allclose(ELO * got[r], ELO * (th - th[2]), atol=1e-6)


def test_it_bootstraps_bradley_terry_deterministically():
    labels = bt_labels(300, [W, S, G], seed=14)
    a = M.bradley_terry(labels, seed=0)
    b = M.bradley_terry(labels, seed=0)
    assert a == b
    assert a.scores[W].ci_low == a.scores[W].ci_high == 1000.0  # the anchor does not move
    for s in a.scores.values():
        assert s.ci_low <= s.score <= s.ci_high
    with pytest.raises(ValueError, match="reference"):
        M.bradley_terry(labels, reference="nope")


def test_it_scores_categories_and_ranks_with_kendall_tau():
    labels = bt_labels(600, [W, S, G, "rag"], seed=15)
    by_cat = M.bradley_terry_by_category(labels, rounds=100)
    assert set(by_cat) == {"catA", "catB"}
    sub = [x for x in labels if x.category == "catA"]
    assert by_cat["catA"].scores[S].score == pytest.approx(M.bradley_terry(sub, rounds=0).scores[S].score)
    # (a, b) and (a, c) concordant, (b, c) discordant -> (2 - 1) / 3
    tau = M.kendall_tau({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 3, "c": 2, "d": 0})
    assert tau.tau == pytest.approx(1 / 3) and tau.n == 3 and tau.systems == ("a", "b", "c")
    full = M.bradley_terry(labels, rounds=0)
    assert M.kendall_tau(full, full).tau == pytest.approx(1.0)
    assert M.kendall_tau({"a": 1}, {"a": 2}).tau is None


def test_it_computes_win_rates_against_the_reference():
    labels = [
        L("p1", "c1", "h1", S, cat="x"),
        L("p1", "c2", "h1", M.TIE, cat="x"),
        L("p2", "c1", "h1", W, cat="y"),
        L("p2", "c2", "h1", W, cat="y"),
        L("p3", "c1", "h1", G, a=W, b=G, cat="x"),
        L("p3", "c2", "h1", G, a=W, b=G, cat="y"),
        L("p4", "c1", "h1", S, a=S, b=G, cat="x"),  # no reference: ignored
    ]
    wr = M.win_rate_vs_reference(labels, rounds=100)
    # storm: 1 win + 1 tie (1/2) + 2 losses over 4 = 0.375; gpt: 2 of 2
    assert wr.overall[S].value == pytest.approx(0.375) and wr.overall[S].n == 4
    assert wr.overall[G].value == 1.0 and wr.overall[G].n == 2
    # category x: storm (1 + 1/2) / 2, gpt 1/1; y: storm 0/2, gpt 1/1
    assert wr.by_category["x"][S].value == pytest.approx(0.75)
    assert wr.by_category["y"][S].value == 0.0 and wr.by_category["y"][G].n == 1
    assert W not in wr.overall


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
