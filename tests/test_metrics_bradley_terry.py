"""Tests for calibration.metrics' Bradley-Terry scores and win rates (pure numpy: no database is touched).

Run: SECRET_KEY=x .venv/bin/python -m pytest -p no:cacheprovider tests/test_metrics_bradley_terry.py -q
"""

from __future__ import annotations

import math
import os
import sys

import choix
import numpy as np
import pytest
from scipy.optimize import minimize

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from calibration import metrics as M  # noqa: E402
from tests.metrics_helpers import ELO, G, L, S, W  # noqa: E402

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
    point = w.mean(axis=0)
    for kwargs in ({}, {"start": M.fit_point(point, 0), "point": point}):  # Newton alone; after the linearized start
        theta, group = M.fit_rounds(w, 0, **kwargs)
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
