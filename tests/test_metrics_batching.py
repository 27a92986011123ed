"""How the bootstrap's work is batched must not change a figure: Newton's rounds fitted in chunks,
the reach of the beat graph widened until it closes, percentile CIs taken column by column or all
at once, draw counts kept as bytes, rater pairs found by a sparse product (no database)."""

from __future__ import annotations

import os
import sys
import threading
import warnings
from itertools import combinations

import numpy as np
from scipy.sparse import csr_matrix

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from calibration import metrics as M  # noqa: E402
from calibration.metrics import bootstrap, ppi, ranking  # noqa: E402
from calibration.metrics.agreement import kappa_estimate  # noqa: E402
from calibration.metrics.labels import LabelRow  # noqa: E402

ELO = 400 / np.log(10)


def win_matrices(rounds: int, systems: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 9, size=(rounds, systems, systems)) + 0.5 * rng.integers(0, 2, size=(rounds, systems, systems))
    for r in range(rounds):
        np.fill_diagonal(w[r], 0)
    return w.astype(float)


def test_it_fits_each_round_as_if_alone_whatever_its_chunk():
    w = win_matrices(3 * ranking._NEWTON_CHUNK + 5, 7, seed=1)  # four chunks, the last one short
    point = w.mean(axis=0)
    start = M.fit_point(point, 3)
    for kwargs in ({}, {"start": start, "point": point}):  # from zero; from the point fit's linearized start
        together = M.fit_newton(w, ref=3, **kwargs)
        alone = np.concatenate([M.fit_newton(w[r : r + 1], ref=3, **kwargs) for r in range(len(w))])
        assert together.tobytes() == alone.tobytes()  # the same bits, not merely close
        th = M.fit_choix(w[-1])
        assert np.allclose(together[-1], th - th[3], atol=1e-8)


def bootstrap_rounds(rounds: int, systems: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(the point win matrix, rounds of its pair bootstrap) of a few hundred battles over many
    systems, as one judge sees them: most system pairs met once or twice, so many rounds leave a
    system out of the main group and the rounds' groups differ."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.8, systems)
    n = 5 * systems
    a = rng.integers(0, systems, n)
    b = (a + rng.integers(1, systems, n)) % systems
    u = rng.random(n)
    a_wins = 1 / (1 + np.exp(strength[b] - strength[a]))
    win_a = np.where(u < 0.1, 0.5, (u >= 0.1) * (rng.random(n) < a_wins))
    per_battle = np.zeros((n, systems * systems))
    per_battle[np.arange(n), a * systems + b] = win_a
    per_battle[np.arange(n), b * systems + a] += 1 - win_a
    counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(rounds)])
    return per_battle.sum(axis=0).reshape(systems, systems), (counts @ per_battle).reshape(rounds, systems, systems)


def test_it_fits_every_bootstrap_round_from_the_point_fit_as_choix_does():
    point, w = bootstrap_rounds(150, 12, seed=7)
    pivot = 0
    start = M.fit_choix(point)
    # the point fit, a far-off start, zero; Newton alone or after the linearized start of the point's Hessian
    fits = {
        (i, j): M.fit_rounds(w, pivot, start=first, point=shared)
        for i, first in enumerate((start, -3 * start, None))
        for j, shared in enumerate((None, point))
    }
    group = fits[0, 0][1]
    assert len({g.tobytes() for g in group}) > 1  # rounds of several groups
    for r in range(len(w)):
        inside = np.flatnonzero(group[r])
        th = M.fit_choix(w[r][np.ix_(inside, inside)])
        expected = th - th[list(inside).index(pivot)]
        for key, (theta, grp) in fits.items():
            assert (grp[r] == group[r]).all()
            assert np.abs(ELO * theta[r, inside] - ELO * expected).max() < 1e-6, (r, key)


def sparse_rounds(rounds: int, systems: int, battles: int, spread: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(point, rounds) of a judge's category at the benchmark's scale: a few hundred battles over 30
    systems, most pairs met once or never; every round strongly connected (the others are dropped)."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, spread, systems)
    a = rng.integers(0, systems, battles)
    b = (a + rng.integers(1, systems, battles)) % systems
    u = rng.random(battles)
    win_a = np.where(u < 0.15, 0.5, (rng.random(battles) < 1 / (1 + np.exp(strength[b] - strength[a]))).astype(float))
    per_battle = np.zeros((battles, systems * systems))
    per_battle[np.arange(battles), a * systems + b] = win_a
    per_battle[np.arange(battles), b * systems + a] += 1 - win_a
    counts = np.stack([np.bincount(rng.integers(0, battles, battles), minlength=battles) for _ in range(rounds)])
    w = (counts @ per_battle).reshape(rounds, systems, systems)
    _, group = M.fit_rounds(w, 0)
    return per_battle.sum(axis=0).reshape(systems, systems), w[group.all(axis=1)]


def test_it_stops_every_round_of_sparse_data_within_1e_6_elo_of_its_mle():
    # The linearized start and the stopping tolerance (NEWTON_TOL) against choix, on rounds as far from
    # their point fit as a judge's (a median of 0.8 log), strengths spread as widely as the benchmark's and
    # three times as widely (the scaled Newton system of _newton_step over a range of e^-10).
    for spread, seed in ((1.0, 3), (3.0, 4)):
        point, w = sparse_rounds(120, 30, 450, spread, seed)
        assert len(w) > 60
        start = M.fit_point(point, 0)
        theta = M.fit_newton(w, 0, start=start, point=point)
        loose = M.fit_newton(w, 0, start=start, point=point, tol=1e-2)
        worst_loose = 0.0
        for r in range(len(w)):
            th = M.fit_choix(w[r])
            expected = ELO * (th - th[0])
            assert np.abs(ELO * theta[r] - expected).max() < 1e-6, (spread, r)
            worst_loose = max(worst_loose, np.abs(ELO * loose[r] - expected).max())
        assert worst_loose > 1e-4  # the data are hard enough for the check to bite: a loose tolerance fails it


def test_it_fits_the_point_as_choix_does_to_1e_9():
    point, _ = bootstrap_rounds(1, 12, seed=7)
    sparse, _ = sparse_rounds(5, 30, 450, 1.0, seed=3)
    wide, _ = sparse_rounds(5, 30, 450, 3.0, seed=4)
    dense = win_matrices(1, 9, seed=5)[0] * np.random.default_rng(6).uniform(0.2, 3.0, (9, 9))  # weighted: fractional counts
    for w in (point, sparse, wide, dense):
        for ref in (0, len(w) - 1):
            th = M.fit_choix(w)
            assert np.abs(M.fit_point(w, ref) - (th - th[ref])).max() < 1e-9


def test_it_gives_every_paired_difference_as_one_at_a_time():
    rng = np.random.default_rng(11)
    systems = ("wikipedia", "storm", "atlas")
    labels = []
    judged = {"j1": range(0, 60), "j2": range(10, 70), "j3": range(0, 60), "j4": range(70, 80), "j5": range(5, 75)}
    for p in range(80):
        a, b = rng.choice(systems, 2, replace=False)
        for c in ("c1", "c2"):
            truth = rng.choice([a, b, "tie"])
            for who in ("alice", "bob")[: 1 + p % 2]:
                labels.append(LabelRow(f"p{p}", c, "style", who, "human", a, b, truth if who == "alice" else rng.choice([a, b, "tie"])))
            for judge, items in judged.items():
                for first in (a, b) if p in items else ():
                    winner = truth if judge == "j3" else rng.choice([a, b, "tie"])  # j3 sides with alice: better than the others
                    labels.append(LabelRow(f"p{p}", c, "style", judge, "judge", a, b, winner, first))
    table = M.LabelTable.from_labels(labels)
    votes = [M.judge_votes(table.for_rater(j)) for j in ("j1", "j2", "j3", "j4")]
    votes.append(M.judge_votes(table.for_rater("j5"), M.LabelTable.empty(table.vocab), swap_policy="half"))  # shares
    humans = table.humans()
    assert votes[-1].share is not None

    together = M.paired_differences([(v.items, v.share) for v in votes], humans, rounds=300, seed=4)

    alone = [M.paired_difference(a.items, b.items, humans, 300, 4, share_a=a.share, share_b=b.share) for a, b in combinations(votes, 2)]
    assert together == alone
    assert [(d.judge_a, d.judge_b) for d in together][:2] == [("j1", "j2"), ("j1", "j3")]
    assert together[2].n_pairs == 0 and together[2].difference.value is None  # j1 and j4 share no pair
    assert any(d.significant for d in together) and any(d.difference.ci for d in together)
    thirds = votes[-1].share * 2 / 3 + np.array([0, 0, 1 / 3, 0])  # sums that depend on their order: one pair at a time
    votes_3 = [(v.items, v.share) for v in votes[:-1]] + [(votes[-1].items, thirds)]
    alone_3 = [M.paired_difference(a, b, humans, 300, 4, share_a=sa, share_b=sb) for (a, sa), (b, sb) in combinations(votes_3, 2)]
    assert M.paired_differences(votes_3, humans, rounds=300, seed=4) == alone_3


def closure(edges: np.ndarray) -> np.ndarray:
    """Warshall's transitive closure of one boolean matrix, the reference."""
    reach = edges | np.eye(len(edges), dtype=bool)
    for k in range(len(edges)):
        reach = reach | (reach[:, k][:, None] & reach[k, :][None, :])
    return reach


def test_it_finds_what_the_pivot_reaches_along_a_long_chain_and_in_dense_rounds():
    s = 30
    chain = np.zeros((s, s))
    chain[np.arange(s - 1), np.arange(1, s)] = 1  # 0 beats 1 beats 2 ... : 29 steps
    chain[s - 1, 0] = 1  # and the last beats the first: one cycle through every system
    rng = np.random.default_rng(2)
    dense = (rng.random((3, s, s)) < 0.3).astype(float)
    sparse = (rng.random((3, s, s)) < 0.04).astype(float)  # several groups, systems apart
    w = np.concatenate([chain[None], chain.T[None], dense, sparse])
    for pivot in (0, 13, s - 1):
        down, up = ranking._reach(w, pivot)
        for r in range(len(w)):
            reach = closure(w[r] > 0)
            assert (down[r] == reach[pivot, :]).all() and (up[r] == reach[:, pivot]).all(), (pivot, r)
        assert down[:2].all() and up[:2].all()
    broken = chain.copy()
    broken[s - 1, 0] = 0  # no cycle: i reaches j only downstream
    down, up = ranking._reach(broken[None], 13)
    assert (down[0] == (np.arange(s) >= 13)).all() and (up[0] == (np.arange(s) <= 13)).all()


def test_it_takes_the_same_percentile_ends_for_every_column_at_once():
    rng = np.random.default_rng(3)
    samples = rng.normal(size=(400, 6))
    samples[rng.random(400) < 0.2, 1] = np.nan  # some rounds undefined
    samples[:, 2] = np.nan  # no round defined
    samples[:, 3] = np.round(samples[:, 3])  # ties
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to silence: an undefined column is not handed to numpy
        lo, hi = bootstrap.percentile_ci(samples)
    for j in (0, 1, 3, 4, 5):
        ends = np.nanpercentile(samples[:, j], [2.5, 97.5])
        assert lo[j].tobytes() == ends[0].tobytes() and hi[j].tobytes() == ends[1].tobytes()
    assert np.isnan(lo[2]) and np.isnan(hi[2])


def test_it_keeps_small_draw_counts_as_bytes_with_the_same_counts():
    for n_units in (1, 7, 83, 255):
        blocks = list(bootstrap.draw_count_blocks(n_units, 300, 5))
        assert len(blocks) == 1 and blocks[0].dtype == np.float64
        assert (blocks[0] == bootstrap.draw_counts(n_units, 300, 5)).all()
    assert bootstrap._small_draw_counts(83, 300, 5).dtype == np.uint8


def test_it_pairs_only_raters_with_items_in_common_in_name_order():
    rows = []
    outcomes = ("wikipedia", "storm", "tie")
    for pair in range(40):
        for rater in ("carol", "alice", "bob") if pair < 20 else ("dave", "alice"):
            rows.append(LabelRow(pair, 0, "c", rater, "human", "wikipedia", "storm", outcomes[(pair + len(rater)) % 3]))
    rows.append(LabelRow(99, 0, "c", "erin", "human", "wikipedia", "storm", "storm"))  # shares nothing
    pairs = M.rater_pairs(rows, rounds=50)
    got = [(p.rater_a, p.rater_b, p.agreement.n) for p in pairs]
    assert got == [("alice", "bob", 20), ("alice", "carol", 20), ("alice", "dave", 20), ("bob", "carol", 20)]
    table = M.as_table(rows)
    for p in pairs:  # each pair against its own items, read directly
        a, b = (table.for_rater(p.rater_a), table.for_rater(p.rater_b))
        common = sorted(set(a.pair.tolist()) & set(b.pair.tolist()))
        same = [a.outcome[a.pair.tolist().index(i)] == b.outcome[b.pair.tolist().index(i)] for i in common]
        assert p.agreement.value == np.mean(same)
    assert all(x < y for x, y in combinations([(p.rater_a, p.rater_b) for p in pairs], 2))


def test_it_runs_one_choix_fit_at_a_time_across_threads():
    # choix changes the process's warning filters around each fit (not thread-safe before Python 3.14),
    # and the report fits raters on several threads: a fit waits for the one in progress.
    w = win_matrices(1, 5, seed=4)[0]
    done = threading.Event()
    worker = threading.Thread(target=lambda: (M.fit_choix(w), done.set()))
    with ranking._CHOIX_LOCK:
        worker.start()
        assert not done.wait(0.5)
    assert done.wait(30)
    worker.join()


def test_it_gives_every_rater_pair_as_one_at_a_time():
    rng = np.random.default_rng(8)
    systems = ("wikipedia", "storm", "atlas")
    rows = []
    for pair in range(300):  # bob and carol share every pair (more than 255 units: the other draw counts)
        a, b = rng.choice(systems, 2, replace=False)
        raters = ["bob", "carol"] + [r for r in ("alice", "dave", "erin", "frank") if rng.random() < 0.3]
        for c in ("c1", "c2"):
            for r in raters:
                rows.append(LabelRow(f"p{pair}", c, "style", r, "human", a, b, rng.choice([a, b, "tie"])))
    rows.append(LabelRow("p0", "c1", "style", "gus", "human", "wikipedia", "storm", "storm"))  # shares one item
    table = M.as_table(rows)
    got = M.rater_pairs(table, rounds=120, seed=3)
    expected = []
    for x, y in combinations(sorted(table.rater_names()), 2):
        tx, ty = table.for_rater(x), table.for_rater(y)
        ix, iy = np.flatnonzero(np.isin(tx.item, ty.item)), np.flatnonzero(np.isin(ty.item, tx.item))
        if not len(ix):
            continue
        ix, iy = ix[np.argsort(tx.item[ix])], iy[np.argsort(ty.item[iy])]
        pairs, cx, cy = tx.pair[ix], tx.outcome[ix].astype(np.int64), ty.outcome[iy].astype(np.int64)
        boot = bootstrap.PairBootstrap(pairs, 120, 3)
        kappa = kappa_estimate(pairs, cx, cy, 3, boot)
        expected.append(M.RaterPair(x, y, kappa, boot.ratios(pairs, (cx == cy).astype(float), np.ones(len(cx)))[0]))
    assert got == expected
    assert any(p.rater_a == "bob" and p.rater_b == "carol" and p.agreement.n_pairs == 300 for p in got)
    with_gus = [p for p in got if p.rater_b == "gus"]
    assert with_gus and all(p.agreement.n_pairs == 1 and p.kappa.shown_ci is None for p in with_gus)  # one item: no interval shown
    assert [(p.kappa.value, p.agreement.value) for p in M.rater_pairs(table, rounds=0)] == [(p.kappa.value, p.agreement.value) for p in got]


def test_it_counts_the_draws_of_one_index_matrix_whatever_the_blocks_it_is_drawn_in():
    for n_units, rounds in ((1, 4), (83, 300), (700, 400), (5333, 60)):  # one block of rows, several, one row per block
        bootstrap.draw_counts.cache_clear()
        index = np.random.default_rng(6).integers(0, n_units, size=(rounds, n_units), dtype=np.int64)
        expected = np.stack([np.bincount(row, minlength=n_units) for row in index]).astype(float)
        assert (bootstrap.draw_counts(n_units, rounds, 6) == expected).all()
        assert (np.concatenate(list(bootstrap.draw_count_blocks(n_units, rounds, 6))) == expected).all()


def test_it_codes_a_subset_of_clusters_as_coding_it_afresh():
    rng = np.random.default_rng(9)
    ids = rng.choice([3, 17, 40, 41, 99, 1000], size=200)
    every = ppi.Clusters.of(ids)
    for mask in (rng.random(200) < 0.3, ids != 40, np.zeros(200, dtype=bool), np.ones(200, dtype=bool)):
        got, afresh = every.subset(mask), ppi.Clusters.of(ids[mask])
        assert got.k == afresh.k == len(np.unique(ids[mask])) and (got.codes == afresh.codes).all()
        values = rng.normal(size=int(mask.sum()))
        assert ppi.cluster_sums(values, got).tobytes() == ppi.cluster_sums(values, ids[mask]).tobytes()


def test_it_resamples_statistics_together_with_the_figures_of_one_product_each():
    rng = np.random.default_rng(12)
    pairs = rng.integers(0, 90, 400)
    boot = bootstrap.PairBootstrap(pairs, 250, 7)
    halves = boot.per_unit(pairs, rng.integers(0, 3, (400, 3)) / 2)
    counts = boot.per_unit(pairs, rng.integers(0, 2, 400).astype(float), rng.integers(0, 40, 400), 40)  # wide and sparse
    weighted = boot.per_unit(pairs, rng.random(400) * 3.7)  # sums that depend on their order: one product each
    assert bootstrap.exact_sums(halves, boot.n_units) and not bootstrap.exact_sums(weighted, boot.n_units)
    counts_t = csr_matrix(counts.T)  # the sparse product, which exact sums may skip
    assert boot.resample(counts).tobytes() == (counts_t @ bootstrap.draw_counts(boot.n_units, 250, 7).T).T.tobytes()
    for statistics in ([halves, counts], [halves, weighted, counts]):
        together = boot.resample_together(statistics)
        assert [t.tobytes() for t in together] == [boot.resample(s).tobytes() for s in statistics]
    group = rng.integers(0, 4, 400)
    specs = [(pairs, rng.integers(0, 2, 400) * 0.5, np.ones(400), None, 1), (pairs, rng.random(400), rng.random(400) + 1, group, 4)]
    assert boot.ratios_many(specs) == [boot.ratios(*spec) for spec in specs]


def test_it_gives_every_rater_against_the_others_as_one_at_a_time():
    rng = np.random.default_rng(13)
    rows = []
    for pair in range(120):
        raters = [r for r in ("ann", "ben", "cy", "dee", "eve") if rng.random() < 0.6] + ["flo"] * (pair < 3)
        for r in raters:
            rows.append(LabelRow(f"p{pair}", "c", "s", r, "human", "wikipedia", "storm", str(rng.choice(["wikipedia", "storm", "tie"]))))
    table = M.as_table(rows)
    got = M.raters_vs_others(table, rounds=150, seed=2)
    # The reference: each rater's labels where the others have a strict majority, bootstrapped alone.
    item, outcome = table.item, table.outcome
    expected = []
    for name in sorted(table.rater_names()):
        mine = table.rater == table.vocab.raters.index(name)
        keep, same = [], []
        for row in np.flatnonzero(mine):
            others = outcome[(item == item[row]) & ~mine]
            counts = np.bincount(others, minlength=3)
            if len(others) and counts.max() * 2 > len(others):
                keep.append(row)
                same.append(float(outcome[row] == counts.argmax()))
        pairs = table.pair[keep]
        expected.append(bootstrap.PairBootstrap(pairs, 150, 2).ratios(pairs, np.array(same), np.ones(len(same)))[0])
    assert [r.agreement for r in got] == expected
    assert [r.rater for r in got][-1] == "flo" and got[-1].agreement.n_pairs <= 3


def test_it_widens_kept_draw_counts_to_the_counts_drawn_afresh():
    bootstrap.clear_draw_caches()
    drawn = bootstrap.draw_counts(700, 300, 11).copy()  # generated, and kept as bytes too
    assert bootstrap._kept.get((700, 300, 11)).dtype == np.uint8
    bootstrap.draw_counts.cache_clear()  # the float copies gone: the next one is widened from the bytes
    again = bootstrap.draw_counts(700, 300, 11)
    assert again.dtype == np.float64 and again.tobytes() == drawn.tobytes() and not again.flags.writeable
    bootstrap.clear_draw_caches()
    assert bootstrap.draw_counts(700, 300, 11).tobytes() == drawn.tobytes()
