"""calibration.metrics.raters: agreement among raters, checked against scikit-learn and statsmodels."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from calibration import metrics as M
from calibration.metrics import LabelRow

# Real model names carry dots; nothing here may care.
SYSTEMS = ("pythia-6.9b", "cerebras-gpt-6.7B", "qwen2.5-72b", "claude-3.5-sonnet")


def dataset(n_pairs=60, criteria=3, raters=4, seed=3, skill=(0.9, 0.8, 0.7, 0.35), missing=0.0):
    """Raters who copy a hidden truth with their own probability, else answer at random."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_pairs):
        a, b = rng.choice(SYSTEMS, size=2, replace=False)
        for c in range(criteria):
            truth = rng.choice([a, b, M.TIE], p=[0.45, 0.45, 0.1])
            for r in range(raters):
                if rng.random() < missing:
                    continue
                winner = truth if rng.random() < skill[r] else rng.choice([a, b, M.TIE])
                rows.append(
                    LabelRow(pair=f"p{p}", criterion=f"c{c}", category="cat", rater=f"annotator.{r}", rater_kind="human",
                             system_a=str(a), system_b=str(b), winner=str(winner))
                )  # fmt: skip
    return rows


def side(x: LabelRow) -> str:
    """The category the coefficients use: the first of the pair's systems by name wins, the second, a tie."""
    first, second = sorted((x.system_a, x.system_b))
    return "1" if x.winner == first else "2" if x.winner == second else M.TIE


def verdicts_by_item(rows):
    by = {}
    for x in rows:
        by.setdefault(x.rater, {})[(x.pair, x.criterion)] = side(x)
    return by


def test_it_gives_cohens_kappa_for_every_two_raters_equal_to_scikit_learn():
    rows = dataset(missing=0.15)
    by = verdicts_by_item(rows)
    pairs = M.rater_pairs(rows, rounds=200)
    assert len(pairs) == 6
    for pair in pairs:
        common = sorted(set(by[pair.rater_a]) & set(by[pair.rater_b]))
        x = [by[pair.rater_a][i] for i in common]
        y = [by[pair.rater_b][i] for i in common]
        assert pair.kappa.value == pytest.approx(cohen_kappa_score(x, y), abs=1e-9)
        assert pair.kappa.n == pair.agreement.n == len(common)
        assert pair.agreement.value == pytest.approx(np.mean([u == v for u, v in zip(x, y)]))
        assert pair.kappa.ci_low <= pair.kappa.value <= pair.kappa.ci_high


def test_it_gives_fleiss_kappa_equal_to_statsmodels():
    rows = dataset()
    fk = M.fleiss_kappa(rows, rounds=200)
    categories = {"1": 0, "2": 1, M.TIE: 2}
    by_item = {}
    for x in rows:
        by_item.setdefault((x.pair, x.criterion), []).append(categories[side(x)])
    table = np.array([np.bincount(codes, minlength=len(categories)) for codes in by_item.values()])
    assert fk.raters_per_item == 4 and fk.n_items_left_out == 0 and fk.kappa.n == len(table)
    assert fk.kappa.value == pytest.approx(statsmodels_fleiss(table), abs=1e-9)
    assert fk.kappa.ci_low < fk.kappa.value < fk.kappa.ci_high


def test_it_computes_fleiss_kappa_on_the_items_with_the_usual_number_of_raters():
    rows = dataset(missing=0.1, seed=5)
    fk = M.fleiss_kappa(rows, rounds=0)
    counts = {}
    for x in rows:
        counts[(x.pair, x.criterion)] = counts.get((x.pair, x.criterion), 0) + 1
    usual = max(set(counts.values()) - {1}, key=list(counts.values()).count)
    kept = [k for k, n in counts.items() if n == usual]
    assert fk.raters_per_item == usual and fk.kappa.n == len(kept)
    assert fk.n_items_left_out == len(counts) - len(kept) > 0
    assert fk.kappa.ci is None  # no bootstrap asked for


def test_it_flags_the_rater_who_agrees_with_the_others_least():
    rows = dataset(n_pairs=120, skill=(0.9, 0.85, 0.9, 0.1), seed=11)
    found = {r.rater: r for r in M.raters_vs_others(rows, rounds=300)}
    assert [name for name, r in found.items() if r.outlier] == ["annotator.3"]
    by = verdicts_by_item(rows)
    # by hand for one rater: the strict majority of the three others
    agree = n = 0
    for item, mine in by["annotator.0"].items():
        others = [by[f"annotator.{r}"][item] for r in (1, 2, 3)]
        best = max(set(others), key=others.count)
        if others.count(best) * 2 > len(others):
            n += 1
            agree += mine == best
    assert found["annotator.0"].agreement.n == n and found["annotator.0"].agreement.value == pytest.approx(agree / n)


def test_it_compares_judges_with_each_other_the_same_way():
    rows = [
        LabelRow(pair=x.pair, criterion=x.criterion, category=x.category, rater=x.rater.replace("annotator.", "gpt-4."),
                 rater_kind="judge", system_a=x.system_a, system_b=x.system_b, winner=x.winner)
        for x in dataset(raters=3, skill=(0.9, 0.9, 0.5))
    ]  # fmt: skip
    pairs = M.rater_pairs(rows, rounds=100)
    assert [(p.rater_a, p.rater_b) for p in pairs] == [("gpt-4.0", "gpt-4.1"), ("gpt-4.0", "gpt-4.2"), ("gpt-4.1", "gpt-4.2")]
    assert pairs[0].kappa.value > pairs[1].kappa.value


def test_it_says_nothing_rather_than_inventing_figures_without_overlap():
    rows = [
        LabelRow(pair="p1", criterion="c1", category="cat", rater="a", rater_kind="human", system_a="x.1", system_b="y", winner="x.1"),
        LabelRow(pair="p2", criterion="c1", category="cat", rater="b", rater_kind="human", system_a="x.1", system_b="y", winner="y"),
    ]  # fmt: skip
    assert M.rater_pairs(rows) == []
    fk = M.fleiss_kappa(rows)
    assert (fk.kappa.value, fk.kappa.n, fk.raters_per_item, fk.n_items_left_out) == (None, 0, None, 2)
    assert all(r.agreement.value is None and r.agreement.n == 0 and not r.outlier for r in M.raters_vs_others(rows))


# --- virtual ensemble judges ------------------------------------------------------------------


def judge_rows(name, verdicts):
    """verdicts: {(pair, criterion): winner} on pairs of x.1 vs y.2."""
    return [
        LabelRow(pair=p, criterion=c, category="cat", rater=name, rater_kind="judge", system_a="x.1", system_b="y.2", winner=w)
        for (p, c), w in verdicts.items()
    ]  # fmt: skip


def test_it_votes_an_ensemble_by_strict_majority_with_ties_otherwise():
    a = judge_rows("gpt-4.1", {("p1", "c1"): "x.1", ("p1", "c2"): "x.1", ("p2", "c1"): "y.2", ("p3", "c1"): "x.1"})
    b = judge_rows("claude-3.5-sonnet", {("p1", "c1"): "x.1", ("p1", "c2"): "y.2", ("p2", "c1"): M.TIE})
    c = judge_rows("qwen2.5-72b", {("p1", "c1"): "y.2", ("p1", "c2"): "y.2", ("p2", "c1"): "x.1"})
    three = M.ensemble_verdicts([a, b, c], "ensemble:3")
    got = {(x.pair, x.criterion): x.winner for x in three.to_labels()}
    # p3 is judged by one member only: left out; p2: three different answers -> tie
    assert got == {("p1", "c1"): "x.1", ("p1", "c2"): "y.2", ("p2", "c1"): M.TIE}
    assert {x.rater for x in three.to_labels()} == {"ensemble:3"}
    two = {(x.pair, x.criterion): x.winner for x in M.ensemble_verdicts([a, b], "pair").to_labels()}
    assert two == {("p1", "c1"): "x.1", ("p1", "c2"): M.TIE, ("p2", "c1"): M.TIE}  # like averaging two judges


def test_an_ensemble_is_scored_against_the_humans_like_any_judge():
    humans = [x for x in dataset(raters=3, seed=8)]
    truth = {(x.pair, x.criterion): x.winner for x in humans if x.rater == "annotator.0"}
    pairs = {(x.pair, x.criterion): (x.system_a, x.system_b) for x in humans}
    rng = np.random.default_rng(2)

    def judge(name, accuracy):
        return [
            LabelRow(pair=p, criterion=c, category="cat", rater=name, rater_kind="judge", system_a=pairs[p, c][0],
                     system_b=pairs[p, c][1], winner=w if rng.random() < accuracy else rng.choice([*pairs[p, c], M.TIE]))
            for (p, c), w in truth.items()
        ]  # fmt: skip

    members = [judge("j.1", 0.7), judge("j.2", 0.7), judge("j.3", 0.7)]
    vote = M.ensemble_verdicts(members, "j.1+j.2+j.3")
    assert len(vote) == len(truth)
    human_table = M.LabelTable.from_labels(humans)
    alone = M.agreement(members[0], human_table, rounds=0).par.value
    together = M.agreement(vote, human_table, rounds=0).par.value
    assert together > alone  # independent errors cancel out


def test_it_refuses_an_ensemble_of_one_or_of_raw_swapped_runs():
    a = judge_rows("gpt-4.1", {("p1", "c1"): "x.1"})
    with pytest.raises(ValueError, match="at least two"):
        M.ensemble_verdicts([a], "solo")
    twice = a + a
    with pytest.raises(ValueError, match="one verdict per item"):
        M.ensemble_verdicts([twice, a], "dup")
