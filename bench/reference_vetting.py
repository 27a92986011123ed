"""Vetting the human reference (issue 26): the simulated campaign's figures, and the cost of
Dawid-Skene and MACE with their bootstrap, against crowd-kit's fits.

    .venv/bin/python bench/reference_vetting.py [--rounds 200] [--sizes 10000,100000] [--no-crowd-kit]

Part 1 prints, for the seeded campaign of tests/test_reference_vetting.py (four careful annotators,
one who answers at random, one who picks the article shown first 60% of the time, 84 pairs of 6
criteria, every annotator on every pair, a quarter of the pairs met again in the other order, 24
known-answer pairs with 3 targeted criteria each), each annotator's gold accuracy (clustered Wilson
95% CI), Dawid-Skene and MACE competence (pair bootstrap, ``--rounds``), first-position rate and
position consistency (pair bootstrap, 1000 rounds).

Part 2 times, on campaigns of ``--sizes`` labels (5 annotators of skills 0.9 to 0.35 on every item,
8 criteria a pair): one fit of each model (median of 3), the fit with its
bootstrap of ``--rounds`` rounds, and crowd-kit's fit on the same answers with the ratio (crowd-kit
only up to 20,000 labels: it is slow). Times are CPU seconds of this process (time.process_time),
all its threads together, which a busy machine does not inflate as it does wall time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.metrics import TIE, LabelTable  # noqa: E402
from calibration.metrics.competence import dawid_skene, mace  # noqa: E402
from calibration.metrics.quality import gold_accuracy, human_position  # noqa: E402
from tests.test_reference_vetting import ANNOTATORS, simulate  # noqa: E402


def ci(e) -> str:
    if e.value is None:
        return "—"
    return f"{e.value:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}] n={e.n} pairs={e.n_pairs}"


def part_one(rounds: int) -> None:
    humans, expected, kinds, _ = simulate()
    gold = {g.rater: g.accuracy for g in gold_accuracy(humans, expected, kinds=kinds)}
    ds = {r.rater: r.competence for r in dawid_skene(humans, rounds=rounds).raters}
    mc = {r.rater: r.competence for r in mace(humans, rounds=rounds).raters}
    pos = {p.rater: p for p in human_position(humans)}
    print(f"simulated campaign: {len(humans)} human labels, {len(expected)} gold items; 95% CIs")
    for name in ANNOTATORS:
        print(f"  {name}")
        print(f"    gold accuracy        {ci(gold[name])}")
        print(f"    Dawid-Skene          {ci(ds[name])}")
        print(f"    MACE                 {ci(mc[name])}")
        print(f"    first-position rate  {ci(pos[name].first_position_rate)}")
        print(f"    consistency          {ci(pos[name].consistency)}")


def campaign(n_labels: int, seed: int = 0) -> LabelTable:
    rng = np.random.default_rng(seed)
    skill = np.array([0.9, 0.8, 0.7, 0.55, 0.35])
    n_items = n_labels // len(skill)
    truth = rng.choice(3, size=n_items, p=[0.45, 0.45, 0.1])
    right = rng.random((n_items, len(skill))) < skill
    answer = np.where(right, truth[:, None], rng.integers(0, 3, size=(n_items, len(skill))))
    names = np.array(["gpt-4.1", "qwen2.5-72b", TIE])
    items = np.repeat(np.arange(n_items), len(skill))
    return LabelTable.from_columns(
        pair=[f"p{i // 8}" for i in items],
        criterion=[f"c{i % 8}" for i in items],
        category=["cat"] * len(items),
        rater=[f"rater.{r}" for r in np.tile(np.arange(len(skill)), n_items)],
        rater_kind=["human"] * len(items),
        system_a=["gpt-4.1"] * len(items),
        system_b=["qwen2.5-72b"] * len(items),
        winner=names[answer.ravel()].tolist(),
    )


def timed(fn, repeat: int = 3) -> float:
    """Median CPU seconds of this process (time.process_time): on a shared machine wall time also
    counts other people's work."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def part_two(sizes: list[int], rounds: int, crowd_kit: bool) -> None:
    print(f"\nCPU seconds (median of 3, the bootstraps once; {rounds} rounds)")
    for n in sizes:
        t = campaign(n)
        line = f"  {len(t):>7} labels  DS fit {timed(lambda: dawid_skene(t, rounds=0)):.3f}s"
        line += f"  MACE fit {timed(lambda: mace(t, rounds=0)):.3f}s"
        line += f"  DS+bootstrap {timed(lambda: dawid_skene(t, rounds=rounds), 1):.1f}s"
        line += f"  MACE+bootstrap {timed(lambda: mace(t, rounds=rounds), 1):.1f}s"
        print(line)
        if crowd_kit and n <= 20_000:
            import pandas as pd
            from crowdkit.aggregation import MACE, DawidSkene

            df = pd.DataFrame({"task": t.item, "worker": [t.vocab.raters[r] for r in t.rater], "label": t.outcome.astype(int)})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ck_ds = timed(lambda: DawidSkene(n_iter=100, tol=1e-5).fit(df), 1)
                ck_mace = timed(lambda: MACE(n_restarts=1, n_iter=50).fit(df), 1)
            ours_ds, ours_mace = timed(lambda: dawid_skene(t, rounds=0)), timed(lambda: mace(t, rounds=0))
            print(
                f"           crowd-kit DS {ck_ds:.3f}s ({ck_ds / ours_ds:.0f}x ours)  crowd-kit MACE (1 restart) {ck_mace:.3f}s "
                f"({ck_mace / ours_mace:.0f}x ours)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--no-crowd-kit", action="store_true")
    args = parser.parse_args()
    part_one(args.rounds)
    part_two([int(x) for x in args.sizes.split(",")], args.rounds, not args.no_crowd_kit)


if __name__ == "__main__":
    main()
