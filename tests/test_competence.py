"""calibration.metrics.competence: Dawid-Skene and MACE, held equal to crowd-kit's on shared inputs.

"Equal" (module doc): same starting point and iterations; every resolved item gets the same label;
posteriors, parameters and the competences derived from them agree to 1e-6.
"""

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import MACE, DawidSkene

from calibration.metrics import TIE, LabelRow, LabelTable, agreement
from calibration.metrics.competence import _answers, _ds_fit, _majority_start, dawid_skene, mace

# crowd-kit 1.4.2 uses pandas idioms that pandas 3 deprecates; its warnings are not ours.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::pandas.errors.Pandas4Warning")

SYSTEMS = ("gpt-4.1", "qwen2.5-72b")


def campaign(seed=5, n_pairs=50, criteria=4, skill=(0.9, 0.85, 0.75, 0.6, 0.34), missing=0.25, ties=0.12, never_tie=()):
    """Raters who copy a hidden truth with their own probability, else answer at random."""
    rng = np.random.default_rng(seed)
    a, b = SYSTEMS
    rows = []
    for p in range(n_pairs):
        for c in range(criteria):
            truth = rng.choice([a, b, TIE], p=[(1 - ties) / 2, (1 - ties) / 2, ties])
            for r, s in enumerate(skill):
                if rng.random() < missing:
                    continue
                options = [a, b] if r in never_tie or not ties else [a, b, TIE]
                winner = truth if rng.random() < s and truth in options else rng.choice(options)
                rows.append(LabelRow(f"pair.{p:03d}", f"crit.{c}", "cat", f"rater.{r}", "human", a, b, str(winner)))
    return LabelTable.from_labels(rows)


def crowd_frame(table: LabelTable) -> pd.DataFrame:
    """The table as crowd-kit reads it: one row per answer (task = item key, label = outcome code).

    crowd-kit's MACE numbers workers and labels in order of first appearance but takes its expected
    counts in sorted order; rows sorted by (label, worker) make the two orders the same (checked)."""
    df = pd.DataFrame({"task": table.item, "worker": [table.vocab.raters[r] for r in table.rater], "label": table.outcome.astype(int)})
    df = df.sort_values(["label", "worker", "task"], kind="stable").reset_index(drop=True)
    assert list(pd.factorize(df.worker)[1]) == sorted(set(df.worker))
    assert list(pd.factorize(df.label)[1]) == sorted(set(df.label))
    return df


def assert_labels_equal(ours, theirs: pd.Series):
    theirs = theirs.sort_index()
    resolved = ours.label >= 0
    assert resolved.sum() >= len(ours.label) - 2  # hardly any exact ties on these data
    np.testing.assert_array_equal(ours.label[resolved], theirs.values[resolved])


@pytest.mark.parametrize(
    "data",
    [campaign(), campaign(seed=9, never_tie=(1,)), campaign(seed=11, ties=0.0), campaign(seed=4, n_pairs=12, criteria=3, missing=0.5)],
    ids=["three-classes", "a-rater-never-says-tie", "no-ties", "sparse"],
)
def test_it_equals_crowd_kits_dawid_skene(data):
    ours = dawid_skene(data, rounds=0)
    ck = DawidSkene(n_iter=100, tol=1e-5).fit(crowd_frame(data))
    assert ours.iterations == len(ck.loss_history_)
    np.testing.assert_allclose(ours.posterior, ck.probas_.sort_index().values, atol=1e-6)
    assert_labels_equal(ours, ck.labels_)
    classes = list(ck.probas_.columns)
    assert ours.classes == tuple({0: "lo", 1: "hi", 2: TIE}[c] for c in classes)
    np.testing.assert_allclose(ours.parameters["priors"], ck.priors_.sort_index().values, atol=1e-6)
    confusion = ours.parameters["confusion"]  # raters x answer x truth
    for w, rater in enumerate(data.vocab.raters):
        for k, given in enumerate(classes):
            expected = ck.errors_.loc[(rater, given)].values if (rater, given) in ck.errors_.index else np.zeros(len(classes))
            np.testing.assert_allclose(confusion[w, k], expected, atol=1e-6)
        # competence: the prior-weighted chance of answering the true class
        diagonal = [ck.errors_.loc[(rater, c), c] if (rater, c) in ck.errors_.index else 0.0 for c in classes]
        reference = float(np.dot(diagonal, ck.priors_.sort_index().values))
        assert ours.competence_of(rater).competence.value == pytest.approx(reference, abs=1e-6)


@pytest.mark.parametrize("method", ["vb", "em"])
@pytest.mark.parametrize(
    "data", [campaign(), campaign(seed=9, never_tie=(1,)), campaign(seed=11, ties=0.0)], ids=["three-classes", "never-tie", "no-ties"]
)
def test_it_equals_crowd_kits_mace(data, method):
    ours = mace(data, method=method, iterations=50, rounds=0)
    ck = MACE(n_restarts=1, n_iter=50, method=method, random_state=0).fit(crowd_frame(data))
    np.testing.assert_allclose(ours.posterior, ck.probas_.sort_index().values, atol=1e-6)
    assert_labels_equal(ours, ck.labels_)
    np.testing.assert_allclose(ours.parameters["spam"], ck.spamming_, atol=1e-6)
    np.testing.assert_allclose(ours.parameters["strategy"], ck.thetas_, atol=1e-6)
    competence = ck.spamming_[:, 1] / ck.spamming_.sum(axis=1)
    np.testing.assert_allclose([r.competence.value for r in ours.raters], competence, atol=1e-6)
    for r, row in zip(ours.raters, ck.thetas_):
        np.testing.assert_allclose(r.spamming, row, atol=1e-6)


def test_it_equals_crowd_kits_mace_with_its_ten_restarts_when_one_is_asked():
    # crowd-kit draws every restart from the same seed, so its ten restarts are one
    data = campaign(seed=21)
    ck = MACE(n_iter=20, random_state=3).fit(crowd_frame(data))
    ours = mace(data, iterations=20, init_seed=3, rounds=0)
    np.testing.assert_allclose(ours.posterior, ck.probas_.sort_index().values, atol=1e-6)


def test_it_refits_a_bootstrap_draw_as_crowd_kit_fits_the_drawn_pairs():
    """A pair drawn k times weighs k: the weighted fit equals crowd-kit's on the pairs copied k times."""
    data = campaign(seed=13, n_pairs=30)
    d = _answers(data)
    counts = np.random.default_rng(0).poisson(1.0, size=len(d.units)).astype(float)
    weight = counts[d.task_unit]
    keep = weight > 0
    sub = d.subset(keep)
    posterior, priors, confusion, _ = _ds_fit(sub, weight[keep], _majority_start(sub), 100, 1e-5)
    copies = []
    for unit, k in enumerate(counts):
        rows = data.select(data.pair == d.units[unit])
        for copy in range(int(k)):
            copies.append(pd.DataFrame({"task": [f"{i}#{copy}" for i in rows.item], "worker": [data.vocab.raters[r] for r in rows.rater],
                                        "label": rows.outcome.astype(int)}))  # fmt: skip
    frame = pd.concat(copies, ignore_index=True)
    ck = DawidSkene(n_iter=100, tol=1e-5).fit(frame)
    np.testing.assert_allclose(priors, ck.priors_.sort_index().values, atol=1e-6)
    for w, rater in enumerate(data.vocab.raters):
        for k in range(3):
            if (rater, k) in ck.errors_.index:
                np.testing.assert_allclose(confusion[w, k], ck.errors_.loc[(rater, k), [0, 1, 2]].values, atol=1e-6)


def test_it_gives_each_competence_a_pair_bootstrap_interval_and_its_counts():
    data = campaign(seed=2, n_pairs=40)
    for model in (dawid_skene(data, rounds=100), mace(data, rounds=100)):
        for r in model.raters:
            e = r.competence
            assert e.ci_low <= e.value <= e.ci_high, (model.method, r)
            assert e.n == int((data.rater == data.vocab.raters.index(r.rater)).sum())
            assert e.n_pairs == len(np.unique(data.pair[data.rater == data.vocab.raters.index(r.rater)]))
        # the same seed draws the same pairs: the intervals repeat
        again = dawid_skene(data, rounds=100) if model.method == "dawid-skene" else mace(data, rounds=100)
        assert [r.competence for r in again.raters] == [r.competence for r in model.raters]


def test_it_counts_only_a_raters_first_answer_on_an_item():
    data = campaign(seed=3, n_pairs=20)
    rater = data.vocab.raters.index("rater.0")
    repeat = data.select(data.rater == rater)
    flipped = LabelTable(repeat.vocab, repeat.pair, repeat.criterion, repeat.category, repeat.rater, repeat.sys_lo, repeat.sys_hi,
                         (repeat.outcome + 1) % 3, repeat.first, repeat.longer)  # fmt: skip
    with_repeats = LabelTable.concat(data, flipped)
    for fit in (dawid_skene, mace):
        np.testing.assert_allclose(fit(with_repeats, rounds=0).posterior, fit(data, rounds=0).posterior)


def test_it_gives_a_reference_the_report_can_use_in_place_of_the_humans():
    humans = campaign(seed=6)
    model = dawid_skene(humans, rounds=0)
    ref = model.reference
    assert len(ref) == len(model.label) - model.n_unresolved == len(np.unique(humans.item))
    assert ref.rater_names() == ["dawid-skene"] and ref.vocab.rater_kinds[-1] == "human"
    # a judge that copies the aggregated labels agrees with this reference completely
    judge = LabelTable(ref.vocab, ref.pair, ref.criterion, ref.category, ref.rater, ref.sys_lo, ref.sys_hi, ref.outcome, ref.first,
                       ref.longer)  # fmt: skip
    rows = [LabelRow(x.pair, x.criterion, x.category, "judge.1", "judge", x.system_a, x.system_b, x.winner) for x in judge.to_labels()]
    assert agreement(LabelTable.from_labels(rows), ref, rounds=0).par.value == 1.0
    # and the aggregate agrees with the raters wherever three or more are unanimous
    mine = {(x.pair, x.criterion): x.winner for x in ref.to_labels()}
    by_item = {}
    for x in humans.to_labels():
        by_item.setdefault((x.pair, x.criterion), []).append(x.winner)
    unanimous = [k for k, v in by_item.items() if len(v) >= 3 and len(set(v)) == 1]
    assert unanimous and all(mine[k] == by_item[k][0] for k in unanimous)


def test_it_leaves_an_exact_tie_unresolved_instead_of_picking_the_first_class():
    # two equally reliable raters who always disagree: nothing tells a from b
    rows = []
    for p in range(6):
        rows.append(LabelRow(f"p{p}", "c", "cat", "r1", "human", *SYSTEMS, SYSTEMS[0]))
        rows.append(LabelRow(f"p{p}", "c", "cat", "r2", "human", *SYSTEMS, SYSTEMS[1]))
    model = dawid_skene(LabelTable.from_labels(rows), rounds=0)
    assert model.n_unresolved == 6 and len(model.reference) == 0


def test_it_says_when_it_cannot_run():
    for fit in (dawid_skene, mace):
        empty = fit(LabelTable.empty(), rounds=10)
        assert empty.reason == "no labels to aggregate" and empty.raters == () and len(empty.reference) == 0
    with pytest.raises(ValueError, match="MACE method"):
        mace(campaign(), method="gibbs")
    with pytest.raises(ValueError, match="rounds"):
        dawid_skene(campaign(), rounds=-1)
    with pytest.raises(TypeError, match="LabelTable"):
        dawid_skene(campaign().to_labels())
