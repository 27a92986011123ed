"""calibration.metrics.sensitivity: the judge statistics recomputed under each human reference."""

import numpy as np
import pytest

from calibration.metrics import TIE, Estimate, LabelRow, LabelTable, agreement
from calibration.metrics.competence import dawid_skene, mace
from calibration.metrics.sensitivity import adjudicated_reference, reference_sensitivity, standard_references

A, B = "gpt-4.1", "qwen2.5-72b"


def labels(n_pairs=40, seed=0):
    """Three careful annotators, one who answers at random, and a judge that copies the truth."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_pairs):
        truth = rng.choice([A, B, TIE], p=[0.45, 0.45, 0.1])
        for rater in ("ana", "ben", "cleo", "random"):
            winner = rng.choice([A, B, TIE]) if rater == "random" or rng.random() > 0.9 else truth
            rows.append(LabelRow(f"p{p}", "lead", "cat", rater, "human", A, B, str(winner)))
        rows.append(LabelRow(f"p{p}", "lead", "cat", "judge.1", "judge", A, B, str(truth)))
    return LabelTable.from_labels(rows)


def par(judges, reference):
    if not len(reference):
        raise ValueError("an empty reference")
    out = {}
    for name in judges.rater_names():
        a = agreement(judges.for_rater(name), reference, rounds=200)
        out[name] = {
            "PAR": a.par,
            "verdict": "replaces" if a.par.value >= 0.85 else "does not replace",
            "raters": len(reference.rater_names()),
        }
    return out


def test_it_tabulates_each_statistic_under_each_reference_with_its_shift_from_the_baseline():
    t = labels()
    humans = t.humans()
    refs = standard_references(humans, dawid_skene=dawid_skene(humans, rounds=0), mace=mace(humans, rounds=0), flagged=["random"])
    table = reference_sensitivity(t, refs, par)
    assert table.baseline == "majority"
    assert [r.name for r in table.references] == ["majority", "dawid-skene", "mace", "exclude-flagged"]
    assert [(r.judge, r.statistic) for r in table.rows] == [("judge.1", "PAR"), ("judge.1", "verdict"), ("judge.1", "raters")]
    par_row, verdict_row, raters_row = table.rows
    base = par_row.cells["majority"]
    assert base.shift == 0.0 and not base.changed and base.n == 160 and base.ci is not None
    cleaned = par_row.cells["exclude-flagged"]
    assert cleaned.n == 120 and cleaned.shift > 0.1 and cleaned.outside_baseline_ci
    assert verdict_row.cells["majority"].value == "does not replace"
    assert verdict_row.cells["exclude-flagged"].value == "replaces" and verdict_row.cells["exclude-flagged"].changed
    assert verdict_row.cells["exclude-flagged"].shift is None
    assert raters_row.cells["dawid-skene"].value == 1.0 and raters_row.cells["dawid-skene"].shift == -3.0
    info = {r.name: r for r in table.references}
    assert (info["majority"].n_labels, info["majority"].n_items, info["majority"].n_raters) == (160, 40, 4)
    assert info["exclude-flagged"].note.endswith("(random)") and info["dawid-skene"].n_labels == 40
    assert table.as_dict()["rows"][0]["cells"]["mace"]["value"] == par_row.cells["mace"].value


def test_it_records_a_reference_the_statistics_cannot_use_and_goes_on():
    t = labels()
    humans = t.humans()
    refs = [("majority", humans), ("nobody", humans.select(np.zeros(len(humans), dtype=bool)), "an empty reference")]
    table = reference_sensitivity(t, refs, par)
    info = {r.name: r for r in table.references}
    assert info["nobody"].reason == "cannot run: an empty reference" and info["majority"].reason is None
    cell = table.rows[0].cells["nobody"]
    assert cell.value is None and cell.changed and cell.shift is None


def test_it_replaces_the_labels_of_adjudicated_items_and_counts_them():
    t = labels(n_pairs=5)
    humans = t.humans()
    decided = LabelTable.from_labels([LabelRow("p0", "lead", "cat", "adjudicator", "human", A, B, TIE),
                                      LabelRow("p3", "lead", "cat", "adjudicator", "human", B, A, A)])  # fmt: skip
    merged, n = adjudicated_reference(humans, decided)
    assert n == 2 and len(merged) == 3 * 4 + 2
    rows = {(x.pair, x.rater): x.winner for x in merged.to_labels()}
    assert rows[("p0", "adjudicator")] == TIE and rows[("p3", "adjudicator")] == A
    assert not any(pair in ("p0", "p3") and rater != "adjudicator" for pair, rater in rows)
    refs = standard_references(humans, adjudicated=decided)
    assert [r[0] for r in refs] == ["majority", "exclude-flagged", "adjudicated"]
    assert refs[-1][2].startswith("2 items adjudicated")
    assert refs[1][1] is not humans and len(refs[1][1]) == len(humans)  # nobody flagged: all labels kept


def test_it_refuses_bad_references_and_bad_values():
    t = labels(n_pairs=3)
    with pytest.raises(ValueError, match="at least one reference"):
        reference_sensitivity(t, [], par)
    with pytest.raises(ValueError, match="unique"):
        reference_sensitivity(t, [("majority", t.humans()), ("majority", t.humans())], par)
    with pytest.raises(TypeError, match="statistic must be"):
        reference_sensitivity(t, [("majority", t.humans())], lambda j, r: {"judge.1": {"PAR": [0.5]}})
    ok = reference_sensitivity(t, [("majority", t.humans())], lambda j, r: {"judge.1": {"PAR": Estimate(None, 0)}})
    assert ok.rows[0].cells["majority"].value is None and not ok.rows[0].cells["majority"].changed
