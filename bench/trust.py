"""Can a judge stand in for the humans? The alt-test, selective judging and cascades on Chatbot
Arena votes (../shared/realdata/arena-ppr), the alt-test planner's claim, and the time they take
on a 100k-label synthetic campaign.

    .venv/bin/python bench/trust.py [--data DIR] [--alpha 0.15,0.35] [--delta 0.1] [--epsilon 0.1] [--seed 0]
        [--costs gpt-3.5-turbo=0.00065,gpt-4-0125-preview=0.013,claude-3-opus-20240229=0.0225] [--human-cost 0.5]

Printed, in order:

1. Arena, the alt-test of each judge with the crowd vote as the humans: the folder has one vote per
   battle, so no battle can leave an annotator out against others, and the test says it cannot run
   (with its numbers). epsilon 0.1 is the authors' value for crowd workers.
2. Arena, selective judging. The folder has verdicts only: no token probabilities, no repeated
   calls. The confidence used instead is a proxy, the share of the three judges that give this
   judge's verdict (1/3, 2/3 or 1), which needs all three verdicts on every battle: the cascade's
   cost column counts each judge only on the battles that reach it, as it would with a confidence
   that comes with the judge's own call (token probabilities). Agreement is 3-way with the crowd
   vote (both tie kinds merged); the agreement at each level of the proxy is printed first. Each
   alpha of ``--alpha`` (default the issue's 0.15, and 0.35) gets its own block. The battles are split at random (seeded) into a calibration half
   and a held-out half. Per judge: lambda-hat, coverage and agreement on the calibration half with
   95% CIs, the guarantee in words, and the agreement on accepted held-out battles beside
   1 - alpha. Then the cascade (cheapest first, by the assumed costs: the folder has none; the
   defaults are list prices per 1M tokens times 1,000 prompt and 100 completion tokens, and 0.50
   per human vote), its composition and cost against all-human, and its held-out check.
3. The planner: the chance that a judge passes the alt-test (3 annotators, A/B/tie, human kappa
   0.5, epsilon 0.2, 100 items each), as good as the humans and noisier, and the items per
   annotator needed for 80% power: the issue's "a noisier judge passes about 9 times in 10".
4. Time: a synthetic campaign of 100,035 human labels (855 pairs x 39 criteria x 3 annotators)
   and three judges' verdicts with confidences on its 33,345 items: the pooled, item and
   per-criterion alt-tests of one judge plus the three judges' selective calibration and cascade
   (alpha 0.1, delta 0.1; 1,000 bootstrap rounds each), best of 3 runs, against the 2 s target.
   Then what the report adds: its `alt_test` section (``calibration.report.alttest.section``: the
   pooled and per-criterion alt-tests of each of the three judges, 1,000 rounds) on the same campaign
   as a LabelTable, best of 3, against the same 2 s.

When the data folder is absent, parts 1 and 2 print one "skipped: ..." line. Nothing here is
part of the test suite.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # first, before bench/: bench/calibration.py would shadow the calibration package

from bench.arena_ppr import DATA, JUDGES, TIES, read_votes  # noqa: E402 (after the path is set)
from calibration.metrics.alttest import Ratings, alt_test, alt_test_by_criterion  # noqa: E402
from calibration.metrics.alttest_plan import alt_test_items_needed, alt_test_power  # noqa: E402
from calibration.metrics.selective import (  # noqa: E402
    CascadeJudge,
    cascade_calibrate,
    cascade_holdout,
    selective_calibrate,
    selective_holdout,
)

COSTS = {"gpt-3.5-turbo": 0.00065, "gpt-4-0125-preview": 0.013, "claude-3-opus-20240229": 0.0225}
TARGET_SECONDS = 2.0


def side(row: dict) -> str:
    return "tie" if row["winner"] in TIES else {"model_a": "a", "model_b": "b"}[row["winner"]]


def ci(estimate) -> str:
    if estimate is None:
        return "—"
    interval = f" [{estimate.ci_low:.3f}, {estimate.ci_high:.3f}]" if estimate.ci is not None else ""
    return f"{estimate.value:.3f}{interval} (n = {estimate.n})"


def arena(data: Path, alphas: list[float], delta: float, epsilon: float, seed: int, costs: dict, human_cost: float) -> None:
    if not (data / "human.json").is_file():
        print(f"skipped: {data} has no human.json (the arena votes are not here)")
        return
    crowd = read_votes(data / "human.json")
    nums = np.array(sorted(crowd))
    human = np.array([side(crowd[n]) for n in nums])
    verdicts = {}
    for name in JUDGES:
        votes = read_votes(data / f"{name}.json")
        verdicts[name] = np.array([side(votes[n]) if n in votes else "" for n in nums])
    print(f"Arena: {len(nums):,} battles, one crowd vote each; judges {', '.join(JUDGES)}")

    print(f"\n1. Alt-test (crowd vote as the humans, epsilon = {epsilon:g}, the authors' value for crowd workers)")
    humans = Ratings(nums, np.full(len(nums), "better"), np.full(len(nums), "crowd"), human)
    for name in JUDGES:
        have = verdicts[name] != ""
        judge = Ratings(nums[have], np.full(have.sum(), "better"), np.full(have.sum(), name), verdicts[name][have])
        result = alt_test(humans, judge, epsilon=epsilon)
        print(f"  {name}: {result.summary()}")

    stacked = np.stack([verdicts[name] for name in JUDGES])
    confidence = {name: (stacked == verdicts[name]).mean(axis=0) for name in JUDGES}
    agree = {name: verdicts[name] == human for name in JUDGES}
    print("\n2. Selective judging (confidence: the share of the three judges that give the judge's verdict; a proxy)")
    for name in JUDGES:
        levels = np.unique(confidence[name])
        shown = ", ".join(
            f"{lv:.2f}: {agree[name][confidence[name] == lv].mean():.3f} (n = {(confidence[name] == lv).sum():,})" for lv in levels
        )
        print(f"  {name}: agreement with the crowd by confidence {shown}")
    order = np.random.default_rng(seed).permutation(len(nums))
    calib, held = np.sort(order[: len(nums) // 2]), np.sort(order[len(nums) // 2 :])
    print(f"  calibration battles {len(calib):,}, held-out battles {len(held):,} (seeded split)")
    for alpha in alphas:
        selective_block(confidence, agree, calib, held, alpha, delta, costs, human_cost)


def selective_block(confidence, agree, calib, held, alpha, delta, costs, human_cost) -> None:
    print(f"\n  alpha = {alpha:g}, delta = {delta:g}")
    for name in JUDGES:
        result = selective_calibrate(confidence[name][calib], agree[name][calib], alpha=alpha, delta=delta, judge=name)
        check = selective_holdout(confidence[name][held], agree[name][held], threshold=result.threshold, alpha=alpha)
        lam = "none (abstains always)" if result.threshold is None else f"{result.threshold:.3f}"
        print(f"  {name}: lambda-hat {lam}")
        print(f"    calibration: coverage {ci(result.coverage)}, agreement on accepted {ci(result.agreement)}")
        print(f"    {result.guarantee}")
        print(
            f"    held-out: coverage {ci(check.coverage)}, agreement on accepted {ci(check.agreement)} beside 1 - alpha = {1 - alpha:.2f}"
        )
    judges = [CascadeJudge(name, confidence[name][calib], agree[name][calib], costs[name]) for name in JUDGES]
    cascade = cascade_calibrate(judges, alpha=alpha, delta=delta, human_cost_per_item=human_cost)
    print(f"  Cascade (costs per verdict assumed: {', '.join(f'{k} {v:g}' for k, v in costs.items())}; human {human_cost:g})")
    for stage in cascade.stages:
        per = "—" if stage.cost_per_accepted is None else f"{stage.cost_per_accepted:.4f}"
        lam = "none" if stage.selective.threshold is None else f"{stage.selective.threshold:.3f}"
        print(
            f"    {stage.selective.judge}: reaches {stage.n_reaching:,}, lambda-hat {lam}, accepts {stage.n_accepted:,} "
            f"({stage.share:.1%}), cost {stage.cost:.2f}, per accepted battle {per}"
        )
    print(f"    humans: {cascade.n_to_humans:,} ({cascade.human_share:.1%}), cost {cascade.n_to_humans * human_cost:.2f}")
    saving = "—" if cascade.saving is None else f"{cascade.saving:.1%}"
    print(f"    cascade cost {cascade.cost:.2f} against all-human {cascade.all_human_cost:.2f} (saving {saving})")
    print(f"    agreement on judge-accepted battles {ci(cascade.agreement)}")
    print(f"    {cascade.guarantee}")
    ordered = [s.selective.judge for s in cascade.stages]
    out = cascade_holdout(cascade, [confidence[n][held] for n in ordered], [agree[n][held] for n in ordered])
    overall = out["overall"]
    print(f"    held-out: judges accept {overall.n_accepted:,} of {overall.n:,}, agreement {ci(overall.agreement)} beside {1 - alpha:.2f}")


def planner() -> None:
    print("\n3. Planner: 3 annotators, A/B/tie, human kappa 0.5 (noise 0.29), epsilon 0.2, 100 items each, 4,000 campaigns")
    s = np.sqrt(0.5)
    for noise in (0.35, 0.40, 0.45, 0.50):
        margin = (2 / 3) * s * (s - (1 - noise))
        power = alt_test_power(n_items=100, epsilon=0.2, kappa=0.5, margin=margin, simulations=4000)
        p = power.worse
        print(
            f"  judge noise {noise:.2f} (agreement with an annotator {margin:.3f} below the annotators'): passes "
            f"{p.value:.3f} [{p.ci_low:.3f}, {p.ci_high:.3f}]; a judge as good as the humans passes {power.equal.value:.3f}"
        )
    needed = alt_test_items_needed(target=0.8, epsilon=0.2, kappa=0.5, margin=0.05, sizes=range(30, 201, 10), simulations=2000)
    at = needed.at(needed.n_items)
    print(
        f"  items per annotator for 80% power (judge as good as the humans): {needed.n_items}; there a judge 0.05 worse "
        f"in agreement passes {at.worse.value:.3f}"
    )
    print(f"  model: {at.model}")


def synthetic(seed: int = 0):
    rng = np.random.default_rng(seed)
    pairs, criteria, annotators = 855, 39, 3
    items = pairs * criteria
    truth = rng.integers(0, 3, items)
    labels = np.where(rng.random((annotators, items)) < 0.75, truth, rng.integers(0, 3, (annotators, items)))
    pair = np.tile(np.repeat(np.arange(pairs), criteria), annotators)
    crit = np.tile(np.tile(np.arange(criteria), pairs), annotators)
    rater = np.repeat(np.arange(annotators), items)
    humans = Ratings(pair, crit, rater, labels.ravel())
    majority = np.where((labels[1] == labels[2]), labels[1], labels[0])  # the reference of selective judging
    judges = []
    for k, keep in enumerate((0.6, 0.7, 0.8)):
        confidence = rng.random(items)
        verdict = np.where(rng.random(items) < keep + (1 - keep) * confidence, truth, rng.integers(0, 3, items))
        judges.append((f"judge-{k}", verdict, confidence, verdict == majority, 0.001 * (k + 1)))
    return humans, pair[:items], crit[:items], judges


def timing() -> None:
    humans, pair, crit, judges = synthetic()
    name, verdict, *_ = judges[1]
    judge = Ratings(pair, crit, np.full(len(pair), name), verdict)
    print(f"\n4. Time: synthetic campaign, {len(humans):,} human labels on {len(pair):,} items, 3 judges")
    best = {}
    for _ in range(3):
        marks = [time.perf_counter()]
        pooled = alt_test(humans, judge, epsilon=0.15, unit="pair")
        marks.append(time.perf_counter())
        item = alt_test(humans, judge, epsilon=0.15, unit="item")
        marks.append(time.perf_counter())
        per_criterion = alt_test_by_criterion(humans, judge, epsilon=0.15)
        marks.append(time.perf_counter())
        cascade = cascade_calibrate(
            [CascadeJudge(n, c, a, cost) for n, _, c, a, cost in judges], alpha=0.1, delta=0.1, human_cost_per_item=0.5, pair=pair
        )
        marks.append(time.perf_counter())
        for part, seconds in zip(("pooled", "item", "per criterion", "cascade"), np.diff(marks)):
            best[part] = min(best.get(part, np.inf), seconds)
    total = sum(best.values())
    print(f"  alt-test pooled by pair: {best['pooled']:.3f} s ({pooled.summary()})")
    print(f"  alt-test item form: {best['item']:.3f} s ({item.summary()})")
    print(f"  alt-test per criterion: {best['per criterion']:.3f} s ({per_criterion.summary()})")
    shares = ", ".join(f"{s.selective.judge} {s.share:.1%}" for s in cascade.stages)
    print(f"  selective + cascade, 3 judges: {best['cascade']:.3f} s ({shares}, humans {cascade.human_share:.1%})")
    print(f"  total {total:.3f} s; target at most {TARGET_SECONDS:.1f} s: ratio {total / TARGET_SECONDS:.2f}")


def report_timing() -> None:
    """The time the report's alt_test section adds on the synthetic campaign (three judges)."""
    import os

    os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from calibration.metrics import LabelTable, Vocab
    from calibration.report import alttest as report_alttest

    humans, pair, crit, judges = synthetic()
    n_pairs, n_crit = int(pair.max()) + 1, int(crit.max()) + 1
    raters = ("human:a0", "human:a1", "human:a2") + tuple(j[0] for j in judges)
    vocab = Vocab(tuple(f"p{i}" for i in range(n_pairs)), tuple(f"c{i}" for i in range(n_crit)), ("all",), raters,
                  ("human",) * 3 + ("judge",) * len(judges), ("sys_a", "sys_b"))  # fmt: skip

    def table(p, c, rater, outcome):
        z = np.zeros(len(p), np.int32)
        return LabelTable(vocab, p, c, z, rater, z, z + 1, outcome, z - 1, z - 1)

    human_table = table(humans.pair, humans.criterion, humans.rater, humans.value)
    merged = {name: table(pair, crit, np.full(len(pair), 3 + k), verdict) for k, (name, verdict, *_) in enumerate(judges)}
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        section = report_alttest.section(human_table, merged, epsilon=0.15, reason="bench", source="given", rounds=1000, seed=0)
        best = min(best, time.perf_counter() - start)
    verdicts = ", ".join(
        f"{name} omega {f['pooled']['omega']:.2f}, {f['by_criterion']['n_passed']} of {f['by_criterion']['n_criteria']} criteria"
        for name, f in section["judges"].items()
    )
    print(f"  report's alt_test section, 3 judges, 1,000 rounds: {best:.3f} s added to the report ({verdicts})")
    print(f"  target at most {TARGET_SECONDS:.1f} s: ratio {best / TARGET_SECONDS:.2f}")


def parse_costs(text: str) -> dict:
    costs = dict(COSTS)
    for part in filter(None, text.split(",")):
        name, _, value = part.partition("=")
        if name not in costs:
            raise SystemExit(f"--costs: unknown judge {name!r} (judges: {', '.join(JUDGES)})")
        costs[name] = float(value)
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--alpha", default="0.15,0.35", help="one or more, comma-separated")
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--costs", default="")
    parser.add_argument("--human-cost", type=float, default=0.5)
    args = parser.parse_args()
    alphas = [float(a) for a in args.alpha.split(",") if a.strip()]
    arena(args.data, alphas, args.delta, args.epsilon, args.seed, parse_costs(args.costs), args.human_cost)
    planner()
    timing()
    report_timing()


if __name__ == "__main__":
    main()
