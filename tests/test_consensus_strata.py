"""calibration.metrics.consensus: agreement on unanimous, split and single-annotator items (issue 40, item 3)."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from calibration.metrics import LabelTable
from calibration.metrics.consensus import SPLIT_NOTE, consensus

W, OTHER = "wikipedia", "other"


def table(rows: list[tuple[str, str, str, str]]) -> LabelTable:
    """rows: (pair, criterion, rater, winner); raters named 'human:*' are annotators."""
    return LabelTable.from_columns(
        pair=[r[0] for r in rows],
        criterion=[r[1] for r in rows],
        category=["cat"] * len(rows),
        rater=[r[2] for r in rows],
        rater_kind=["human" if r[2].startswith("human:") else "judge" for r in rows],
        system_a=[W] * len(rows),
        system_b=[OTHER] * len(rows),
        winner=[r[3] for r in rows],
    )


def simulated(seed: int = 7):
    """Three annotators on 240 pairs: 120 unanimous, 120 split two to one. `good` is right wherever the
    annotators agree and takes the majority on half the split items; `copier` takes the majority on every
    split item but is wrong on 20 of the unanimous ones: both have PAR 0.75 overall."""
    rng = np.random.default_rng(seed)
    humans, good, copier = [], [], []
    wrong_unanimous = set(rng.choice(120, size=20, replace=False).tolist())
    good_majority = set(rng.choice(np.arange(120, 240), size=60, replace=False).tolist())
    for p in range(240):
        pair = f"p{p}"
        major = W if rng.random() < 0.5 else OTHER
        minor = OTHER if major == W else W
        verdicts = [major] * 3 if p < 120 else [major, major, minor]
        rng.shuffle(verdicts)
        humans += [(pair, "c", f"human:h{i}", x) for i, x in enumerate(verdicts)]
        if p < 120:
            good.append((pair, "c", "good", major))
            copier.append((pair, "c", "copier", minor if p in wrong_unanimous else major))
        else:
            good.append((pair, "c", "good", major if p in good_majority else minor))
            copier.append((pair, "c", "copier", major))
    return table(humans), {"good": table(good), "copier": table(copier)}


def test_it_shows_a_majority_copier_that_overall_par_hides():
    humans, judges = simulated()
    result = consensus(humans, judges, rounds=500, seed=3)
    by = {j.rater: j for j in result.judges}
    assert result.n_items == {"unanimous": 120, "split": 120, "single": 0}
    assert result.split_share["c"].value == pytest.approx(0.5) and result.split_share["c"].n == 240
    # overall PAR: every human label once, the strata together
    overall = {
        name: sum(f.par.value * f.par.n for f in j.strata.values() if f.par.n) / sum(f.par.n for f in j.strata.values())
        for name, j in by.items()
    }
    assert overall["good"] == pytest.approx(0.75) and overall["copier"] == pytest.approx(0.75)
    good_u, copier_u = by["good"].strata["unanimous"].par, by["copier"].strata["unanimous"].par
    assert good_u.value == pytest.approx(1.0) and copier_u.value == pytest.approx(100 / 120)
    assert copier_u.ci_high < good_u.value  # apart on unanimous items, not by chance
    good_s, copier_s = by["good"].strata["split"].par, by["copier"].strata["split"].par
    assert good_s.value == pytest.approx(0.5) and copier_s.value == pytest.approx(2 / 3)
    # the humans' own agreement on split items: one agreeing pair of three
    assert result.humans.strata["split"].par.value == pytest.approx(1 / 3)
    assert result.humans.strata["unanimous"].par.value == pytest.approx(1.0)
    assert by["copier"].note == SPLIT_NOTE and by["good"].note == SPLIT_NOTE  # both beat 1/3 there
    for j in by.values():
        for f in j.strata.values():
            if f.par.n:
                assert f.par.ci_low <= f.par.value <= f.par.ci_high


def test_it_leaves_the_note_off_a_judge_below_the_humans_on_split_items():
    humans = table([("p0", "c", f"human:h{i}", w) for i, w in enumerate([W, W, OTHER])] + [("p1", "c", "human:h0", W)])
    judge = table([("p0", "c", "j", "tie"), ("p1", "c", "j", W)])
    result = consensus(humans, {"j": judge}, rounds=50)
    [j] = result.judges
    assert j.note is None and j.strata["split"].par.value == 0.0
    assert result.n_items == {"unanimous": 0, "split": 1, "single": 1}
    assert j.strata["single"].par.value == 1.0 and j.strata["single"].par.n == 1
    # an annotator has no one to agree with on a single item
    h0 = next(a for a in result.annotators if a.rater == "human:h0")
    assert h0.strata["single"].par.value is None and h0.strata["split"].par.value == pytest.approx(0.5)


def test_it_equals_scikit_learns_kappa_per_stratum():
    rng = np.random.default_rng(11)
    rows, judge = [], []
    for p in range(80):
        verdicts = rng.choice([W, OTHER, "tie"], size=3, p=[0.5, 0.35, 0.15]).tolist()
        rows += [(f"p{p}", "c", f"human:h{i}", x) for i, x in enumerate(verdicts)]
        judge.append((f"p{p}", "c", "j", rng.choice([W, OTHER, "tie"])))
    result = consensus(table(rows), {"j": table(judge)}, rounds=0)
    [j] = result.judges
    for stratum in ("unanimous", "split"):
        xs, ys = [], []
        for p in range(80):
            v = [r[3] for r in rows if r[0] == f"p{p}"]
            top = max(set(v), key=v.count)
            is_split = len(set(v)) > 1
            if is_split == (stratum == "split") and v.count(top) * 2 > 3:
                xs.append(judge[p][3])
                ys.append(top)
        assert j.strata[stratum].kappa.n == len(xs)
        assert j.strata[stratum].kappa.value == pytest.approx(cohen_kappa_score(xs, ys), abs=1e-9)
