"""calibration.metrics.conventions: how a judge's two orders and its failed verdicts count (no database).

The hand example (one pair, wikipedia against atlas_agent, three criteria; two annotators):

    criterion        c1 c2 c3
    alice             a  a  b
    bob               a  b  b
    judge, A first    a  a  a
    judge, B first    a  b  tie
"""

import numpy as np
import pytest

from calibration import metrics as M
from calibration.metrics import LabelRow

W, A = "wikipedia", "atlas_agent"


def rows(rater: str, kind: str, sides: str, *, first: str | None = None, pair: str = "p1", criteria=("c1", "c2", "c3")) -> list[LabelRow]:
    winner = {"a": W, "b": A, "t": "tie"}
    return [LabelRow(pair, c, "style", rater, kind, W, A, winner[s], first) for c, s in zip(criteria, sides)]


HUMANS = rows("alice", "human", "aab") + rows("bob", "human", "abb")
JUDGE = rows("judge", "judge", "aaa", first=W) + rows("judge", "judge", "abt", first=A)


def par(policy: str) -> M.Estimate:
    table = M.LabelTable.from_labels(HUMANS + JUDGE)
    votes = M.judge_votes(table.judges(), swap_policy=policy)
    return M.agreement(votes.items, table.humans(), rounds=0, share=votes.share).par


def test_it_counts_each_order_as_half_a_verdict_under_half():
    # c1: both orders a -> alice 1, bob 1. c2: a | b -> alice ½, bob ½. c3: a | tie -> alice 0, bob 0.
    assert par("half").value == pytest.approx(3 / 6) and par("half").n == 6


def test_it_merges_disagreeing_orders_into_a_tie_by_default_and_into_a_wrong_verdict_under_both():
    # tie: c1 a, c2 tie, c3 tie -> 2 of 6 (c1). both: c2 and c3 wrong -> 2 of 6 as well; a human tie tells them apart.
    assert par("tie").value == pytest.approx(2 / 6)
    assert par("both").value == pytest.approx(2 / 6)
    humans = rows("alice", "human", "atb")  # alice says tie on c2, where the orders disagree
    table = M.LabelTable.from_labels(humans + JUDGE)
    for policy, expected in (("tie", 2 / 3), ("both", 1 / 3), ("half", 1 / 3)):
        votes = M.judge_votes(table.judges(), swap_policy=policy)
        assert M.agreement(votes.items, table.humans(), rounds=0, share=votes.share).par.value == pytest.approx(expected), policy


def test_it_counts_an_item_the_judge_never_answered_only_when_asked():
    # c4: alice says a; the judge was asked with atlas_agent first and gave nothing usable.
    table = M.LabelTable.from_labels(HUMANS + rows("alice", "human", "a", criteria=("c4",)) + JUDGE)
    failed = M.LabelTable.from_labels(rows("judge", "judge", "t", first=A, criteria=("c4",)))
    humans = table.humans()
    dropped = M.judge_votes(table.judges(), failed)
    wrong = M.judge_votes(table.judges(), failed, unparsable="wrong")
    assert dropped.n_unparsable == wrong.n_unparsable == 1
    assert M.agreement(dropped.items, humans, rounds=0, share=dropped.share).par.n == 6
    counted = M.agreement(wrong.items, humans, rounds=0, share=wrong.share)
    # c4 now counts, as wrong: 2 of 7 under the tie policy.
    assert (counted.par.n, counted.par.value) == (7, pytest.approx(2 / 7))
    # Cohen's kappa on the items with a human majority (c1 a, c3 b, c4 a) against the judge's tie-policy
    # verdicts (a, tie, wrong): po = 1/3; judge a 1, tie 1, wrong 1; humans a 2, b 1 -> pe = 2/9.
    assert (counted.kappa.n, counted.kappa.value) == (3, pytest.approx((1 / 3 - 2 / 9) / (1 - 2 / 9)))
    half = M.judge_votes(table.judges(), failed, swap_policy="half", unparsable="wrong")
    assert M.agreement(half.items, humans, rounds=0, share=half.share).par.value == pytest.approx(3 / 7)


def test_it_makes_an_item_with_a_failed_order_wrong_under_tie_and_both_and_half_wrong_under_half():
    # The judge's atlas-first answer on c1 failed; it has both orders on c2 (a | b) and c3 (a | tie).
    judge = rows("judge", "judge", "aaa", first=W) + rows("judge", "judge", "bt", first=A, criteria=("c2", "c3"))
    table = M.LabelTable.from_labels(HUMANS + judge)
    failed = M.LabelTable.from_labels(rows("judge", "judge", "t", first=A, criteria=("c1",)))
    for policy, unparsable, expected in (
        ("tie", "drop", 2 / 6),  # c1 rests on its one answer, a: alice and bob agree
        ("tie", "wrong", 0 / 6),  # c1 is wrong; c2 and c3 are ties, which no human gave
        ("both", "wrong", 0 / 6),
        ("half", "wrong", (1 + 1 + 0) / 6),  # c1: a | wrong -> ½ + ½; c2: a | b -> ½ + ½; c3: a | tie -> 0
    ):
        votes = M.judge_votes(table.judges(), failed, swap_policy=policy, unparsable=unparsable)
        got = M.agreement(votes.items, table.humans(), rounds=0, share=votes.share).par.value
        assert got == pytest.approx(expected), (policy, unparsable)


def test_it_gives_the_default_figures_through_the_general_path():
    """tie + wrong without any failure is the default convention computed the general way: equal, CIs too."""
    rng = np.random.default_rng(3)
    labels = []
    for p in range(14):
        for c in ("c1", "c2", "c3", "c4"):
            for who in ("alice", "bob"):
                labels.append(LabelRow(f"p{p}", c, "style", who, "human", W, A, rng.choice([W, A, "tie"])))
            for first in (W, A):
                labels.append(LabelRow(f"p{p}", c, "style", "judge", "judge", W, A, rng.choice([W, A, "tie"]), first))
    table = M.LabelTable.from_labels(labels)
    default = M.judge_votes(table.judges())
    general = M.judge_votes(table.judges(), M.LabelTable.empty(table.vocab), unparsable="wrong")
    assert default.share is None and general.share is not None
    a = M.agreement(default.items, table.humans(), rounds=200, seed=1)
    b = M.agreement(general.items, table.humans(), rounds=200, seed=1, share=general.share)
    for name in ("par", "par_majority", "par_no_ties", "kappa"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x.value, x.n, x.n_pairs) == (pytest.approx(y.value, abs=1e-12), y.n, y.n_pairs), name
        assert x.ci == pytest.approx(y.ci, abs=1e-12), name
    assert a.share_kept == pytest.approx(b.share_kept)
    other = M.merge_swapped(table.judges())
    d1 = M.paired_difference(default.items, other, table.humans(), rounds=100)
    d2 = M.paired_difference(general.items, other, table.humans(), rounds=100, share_a=general.share)
    assert d1.difference.value == pytest.approx(d2.difference.value) and d1.difference.ci == pytest.approx(d2.difference.ci)


def test_it_refuses_an_unknown_convention():
    with pytest.raises(ValueError, match="unknown swap policy 'mean'"):
        M.judge_votes(M.LabelTable.from_labels(JUDGE), swap_policy="mean")
    with pytest.raises(ValueError, match="unknown unparsable policy 'skip'"):
        M.check_convention("tie", "skip")
