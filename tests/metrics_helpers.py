"""Labels and checks shared by the tests of calibration.metrics (tests/test_metrics*.py): pure numpy,
no database."""

from __future__ import annotations

import math

import numpy as np

from calibration import metrics as M
from calibration.metrics import LabelRow, LabelTable

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
