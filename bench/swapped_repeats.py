"""What swapped repeats cost a claim, and whether they come at the rate asked.

    python bench/swapped_repeats.py [--topics 100] [--rate 0.2] [--gap 5]

Builds a synthetic catalogue (--topics topics, each written by the reference and 4 agents: 4 reference
pairs a topic) on a fresh SQLite database (set DATABASE_URL to use another server). One annotator claims
and submits every pair through the real claim service, once in a campaign without repeats and once with
--rate and --gap. It prints the mean and the last tenth's mean milliseconds and queries per claim of both
(the repeat picker reads the annotator's submitted work on every claim, so its cost grows with it), their
ratio, the share of originals repeated against the rate, and the smallest gap seen.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import AGENTS, django_on_scratch_database, wiki_catalogue  # noqa: E402  (bench/ is on sys.path)


def run(criterion_set, name: str, rate: float, gap: int) -> dict:
    from django.contrib.auth.models import User
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from annotate.models import Assignment
    from annotate.services.campaigns import campaign_create
    from annotate.services.claims import assignment_claim_next

    user = User.objects.create_user(f"worker-{name}")
    campaign = campaign_create(
        name=name, criterion_set=criterion_set, systems=["wikipedia", *AGENTS], annotators=[user], repeat_rate=rate, repeat_gap=gap
    )
    times, queries = [], []
    while True:
        reset_queries()  # the log keeps 9,000 statements: counted from empty each time
        start = time.perf_counter()
        with CaptureQueriesContext(connection) as captured:
            claimed = assignment_claim_next(campaign=campaign, user=user)
        times.append((time.perf_counter() - start) * 1000)
        queries.append(len(captured))
        if claimed is None:
            break
        Assignment.objects.filter(pk=claimed.pk).update(status=Assignment.Status.SUBMITTED, submitted_at=claimed.claimed_at)
    mine = Assignment.objects.filter(pair__campaign=campaign, annotator=user)
    order = {pk: i for i, pk in enumerate(mine.order_by("submitted_at", "id").values_list("pk", flat=True))}
    gaps = [order[r.pk] - order[r.repeat_of_id] - 1 for r in mine.exclude(repeat_of=None)]
    tail = max(1, len(times) // 10)
    return {
        "claims": len(times) - 1,
        "originals": mine.filter(repeat_of=None).count(),
        "repeats": len(gaps),
        "min_gap": min(gaps) if gaps else None,
        "ms": statistics.mean(times),
        "ms_tail": statistics.mean(times[-tail:]),
        "queries": statistics.mean(queries),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--gap", type=int, default=5)
    args = parser.parse_args()
    django_on_scratch_database("swapped-repeats", debug=False)
    criterion_set = wiki_catalogue(topics=args.topics, benchmark="repeats-bench")
    off = run(criterion_set, "no repeats", 0.0, args.gap)
    on = run(criterion_set, "repeats", args.rate, args.gap)
    for label, r in (("without repeats", off), (f"repeat rate {args.rate:g}, gap {args.gap}", on)):
        print(
            f"{label}: {r['claims']} claims ({r['originals']} originals, {r['repeats']} repeats); "
            f"{r['ms']:.1f} ms a claim (last tenth {r['ms_tail']:.1f} ms), {r['queries']:.1f} queries a claim"
        )
    print(
        f"ratio with/without: {on['ms'] / off['ms']:.2f}x time (last tenth {on['ms_tail'] / off['ms_tail']:.2f}x), "
        f"{on['queries'] / off['queries']:.2f}x queries"
    )
    print(
        f"share of originals repeated: {on['repeats'] / on['originals']:.3f} (rate asked {args.rate:g}); "
        f"smallest gap seen: {on['min_gap']} (asked at least {args.gap})"
    )


if __name__ == "__main__":
    main()
