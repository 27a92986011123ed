"""How soon a campaign has complete overlap sets, and how many repeated topics its schedule gives.

    python bench/schedule.py [--orders 12] [--calibration-pairs 0]

Builds a synthetic catalogue (20 topics, each written by the reference and 4
agents: 80 reference pairs) on a fresh SQLite database (set DATABASE_URL to use
another server) and hands out its work through the real claim service.

1. Overlap: 4 annotators, overlap 2 (160 assignments). Each annotator holds
   one pair at a time, as people working in parallel do: at every step a random
   annotator submits their pair and claims the next. When 25% and 50% of the
   assignments are submitted, it prints the share of submitted assignments whose
   pair already has its complete overlap set (overlap distinct annotators
   submitted), and the pairs with two or more submitted annotators. With
   --calibration-pairs N the campaign has a calibration set of N pairs.
2. Repeats: the simulation of tests/test_schedule.py (15 annotators, overlap 2,
   claims one at a time in a random arrival order, each submitted at once);
   160 slots that 15 annotators can fill without anybody meeting a topic twice.
   It prints the assignments that showed an annotator a topic they had met,
   per arrival order and in all.

Each part runs over --orders random arrival orders (seeds 0, 1, ...).
"""

import argparse
import random
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import AGENTS, django_on_scratch_database, wiki_catalogue  # noqa: E402  (bench/ is on sys.path)

TOPICS = 20


def same_order(campaign, seed: int) -> None:
    """Redraws the campaign's pair order from `seed` (the calibration set stays first), so that
    runs of this bench on different claim rules see the same campaigns."""
    from annotate.models import Pair

    pairs = list(Pair.objects.filter(campaign=campaign).order_by("order", "id"))
    head, rest = pairs[: campaign.calibration_pairs], sorted(pairs[campaign.calibration_pairs :], key=lambda p: p.pk)
    random.Random(f"order {seed}").shuffle(rest)
    for rank, pair in enumerate(head + rest):
        pair.order = rank
    Pair.objects.bulk_update(pairs, ["order"])


def overlap_run(criterion_set, seed: int, calibration_pairs: int, agents: int) -> dict:
    """One parallel run: the shares when 25% and 50% of the assignments are submitted, and its repeats."""
    from django.contrib.auth.models import User

    from annotate.models import Assignment
    from annotate.services.campaigns import campaign_create
    from annotate.services.claims import assignment_claim_next

    people = [User.objects.create_user(f"o{agents}-{seed}-{i}") for i in range(4)]
    options = {"calibration_pairs": calibration_pairs} if calibration_pairs else {}
    campaign = campaign_create(
        name=f"overlap {agents} {seed}",
        criterion_set=criterion_set,
        systems=["wikipedia", *AGENTS[:agents]],
        overlap=2,
        annotators=people,
        **options,
    )
    same_order(campaign, seed)
    # A calibration pair's set is every member; any other pair's is the overlap.
    needs = {
        p.pk: (len(people) if i < calibration_pairs else campaign.overlap) for i, p in enumerate(campaign.pairs.order_by("order", "id"))
    }
    total = sum(needs.values())
    draw = random.Random(seed)
    holding = {user.pk: assignment_claim_next(campaign=campaign, user=user) for user in draw.sample(people, len(people))}
    per_pair: Counter = Counter()
    submitted = 0
    marks = {round(total * 0.25): "25%", round(total * 0.50): "50%"}
    out = {}
    met = {user.pk: {holding[user.pk].pair.topic_id} for user in people}
    repeats = 0
    working = [u for u in people if holding[u.pk] is not None]
    while working:
        user = draw.choice(working)
        work = holding[user.pk]
        Assignment.objects.filter(pk=work.pk).update(status=Assignment.Status.SUBMITTED)
        per_pair[work.pair_id] += 1
        submitted += 1
        if submitted in marks:
            complete = sum(n for pair, n in per_pair.items() if n >= needs[pair])
            out[marks[submitted]] = (complete / submitted, sum(1 for n in per_pair.values() if n >= 2), submitted)
        holding[user.pk] = assignment_claim_next(campaign=campaign, user=user)
        if holding[user.pk] is None:
            working.remove(user)
        else:
            repeats += holding[user.pk].pair.topic_id in met[user.pk]
            met[user.pk].add(holding[user.pk].pair.topic_id)
    out["repeats"] = repeats
    return out


def repeats_run(criterion_set, seed: int) -> int:
    """tests/test_schedule.py's simulation under one arrival order: the repeats it gave."""
    from django.contrib.auth.models import User

    from annotate.models import Assignment
    from annotate.services.campaigns import campaign_create
    from annotate.services.claims import assignment_claim_next

    people = [User.objects.create_user(f"r{seed}-{i:02d}") for i in range(15)]
    campaign = campaign_create(
        name=f"repeats {seed}", criterion_set=criterion_set, systems=["wikipedia", *AGENTS], overlap=2, annotators=people
    )
    same_order(campaign, seed)
    met = {user.pk: set() for user in people}
    waiting, draw, repeats = list(people), random.Random(seed), 0
    while waiting:
        user = draw.choice(waiting)
        work = assignment_claim_next(campaign=campaign, user=user)
        if work is None:
            waiting.remove(user)
            continue
        repeats += work.pair.topic_id in met[user.pk]
        met[user.pk].add(work.pair.topic_id)
        Assignment.objects.filter(pk=work.pk).update(status=Assignment.Status.SUBMITTED)
    return repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orders", type=int, default=12, help="random arrival orders per part")
    parser.add_argument("--calibration-pairs", type=int, default=0, help="calibration set of the overlap part's campaigns")
    args = parser.parse_args()

    django_on_scratch_database("schedule", debug=False)
    criterion_set = wiki_catalogue(topics=TOPICS, benchmark="schedule-bench")
    from annotate.models import Campaign
    from annotate.selectors import campaign_design

    for agents in (4, 2):
        runs = [overlap_run(criterion_set, seed, args.calibration_pairs, agents) for seed in range(args.orders)]
        design = campaign_design(campaign=Campaign.objects.get(name=f"overlap {agents} 0"))
        print(
            f"1. Overlap 2, 4 annotators in parallel, {TOPICS} topics x {agents} reference pairs ({design.slots} slots, "
            f"{design.forced_repeats} repeats forced), calibration set {args.calibration_pairs}, {args.orders} orders"
        )
        for mark in ("25%", "50%"):
            shares = [run[mark][0] for run in runs]
            multi = [run[mark][1] for run in runs]
            print(
                f"   after {mark} of the work ({runs[0][mark][2]} submitted): complete overlap set for "
                f"{statistics.mean(shares):.0%} of submitted assignments (lowest {min(shares):.0%}, highest {max(shares):.0%}); "
                f"pairs with 2+ annotators: mean {statistics.mean(multi):.1f}"
            )
        repeats = [run["repeats"] for run in runs]
        print(f"   repeated topics per order: {repeats}; in all {sum(repeats)}")

    print(
        f"2. Repeats: 15 annotators, overlap 2, {TOPICS} topics x {len(AGENTS)} pairs (160 slots, no repeat forced), {args.orders} orders"
    )
    repeats = [repeats_run(criterion_set, seed) for seed in range(args.orders)]
    print(f"   repeated topics per order: {repeats}; in all {sum(repeats)}")


if __name__ == "__main__":
    main()
