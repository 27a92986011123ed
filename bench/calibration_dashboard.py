"""Server time of the calibration report, dashboard and downloads on a campaign of realistic size.

    python bench/calibration_dashboard.py [../shared/wlc-sample] [--humans 3] [--judges 4] [--rounds 1000]

Imports the benchmark into a fresh SQLite database (set DATABASE_URL to measure
another server): 20 topics x 6 systems against wikipedia = 120 pairs, 39
criteria. Adds seeded synthetic work: `--humans` annotators on every pair
(3: 14,040 labels) and `--judges` judges run in both orders on every pair
(4: 37,440 verdicts, 2,880 calls). Without the sample, the demo articles are
used (8 pairs).

Then times, through django.test.Client: the report alone (cold), the dashboard
with an empty cache (report + charts + page), the dashboard again (cached), the
htmx disagreement fragment, and each download with a warm cache.
"""

import argparse
import random
import sys
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import django_on_scratch_database, load_sample_or_demo  # noqa: E402  (bench/ is on sys.path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, nargs="?", default=ROOT.parent / "shared" / "wlc-sample")
    parser.add_argument("--humans", type=int, default=3)
    parser.add_argument("--judges", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1000)
    args = parser.parse_args()

    django_on_scratch_database("calibration")
    from django.contrib.auth.models import User
    from django.core.cache import cache
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse
    from django.utils import timezone

    from annotate.models import Assignment, CriterionSet, Label, System
    from annotate.services.campaigns import campaign_create
    from calibration.report.build import build_report
    from judges.models import Judge, JudgeCall, JudgeUnit, JudgeVerdict

    _, rubric_key = load_sample_or_demo(args.path)
    rubric = CriterionSet.objects.filter(key=rubric_key).order_by("-version").first()
    run = time.strftime("%Y%m%d-%H%M%S")
    rng = random.Random(0)
    now = timezone.now()
    annotators = [User.objects.create_user(f"bench-{run}-{i}") for i in range(args.humans)]
    systems = list(System.objects.values_list("key", flat=True))
    campaign = campaign_create(
        name=f"Bench calibration {run}", criterion_set=rubric, systems=systems, overlap=max(1, args.humans), annotators=annotators or None
    )
    pairs = list(campaign.pairs.all())
    criteria = list(rubric.criteria.select_related("category"))
    # A latent verdict per item; every rater copies it with some probability, else guesses.
    truth = {(p.pk, c.pk): rng.choice("ab") for p in pairs for c in criteria}

    def verdict(pair, criterion, accuracy: float) -> str:
        return truth[pair.pk, criterion.pk] if rng.random() < accuracy else rng.choice(("a", "b", "a", "b", "tie"))

    started = time.perf_counter()
    with transaction.atomic():
        for user in annotators:
            assignments = Assignment.objects.bulk_create(
                [
                    Assignment(
                        pair=p,
                        annotator=user,
                        a_first=(first := rng.random() < 0.5),
                        order="ab" if first else "ba",
                        status=Assignment.Status.SUBMITTED,
                        claimed_at=now,
                        last_activity_at=now,
                        submitted_at=now,
                    )
                    for p in pairs
                ]
            )
            Label.objects.bulk_create(
                [
                    Label(
                        assignment=a,
                        criterion=c,
                        winner=verdict(a.pair, c, 0.75),
                        rationale="A synthetic reason.",
                        created_at=now,
                        saved_at=now,
                    )
                    for a in assignments
                    for c in criteria
                ],
                batch_size=2000,
            )
        for j in range(args.judges):
            judge = Judge.objects.create(name=f"bench-{run}-judge-{j}", kind=Judge.Kind.IMPORTED, model=f"model-{j}")
            accuracy, price = 0.85 - 0.1 * j, Decimal("0.02") / (4**j)
            units = JudgeUnit.objects.bulk_create(
                [
                    JudgeUnit(judge=judge, pair=p, category=cat, a_first=first, order="ab" if first else "ba", status=JudgeUnit.Status.DONE)
                    for p in pairs
                    for cat in {c.category for c in criteria}
                    for first in (True, False)
                ]
            )
            calls = JudgeCall.objects.bulk_create(
                [
                    JudgeCall(
                        unit=u,
                        attempt=1,
                        request_hash=f"{judge.name}-{u.pk}",
                        valid=True,
                        prompt_tokens=20000,
                        completion_tokens=900,
                        cost_usd=price,
                        latency_ms=rng.randint(500, 4000),
                    )
                    for u in units
                ]
            )
            JudgeVerdict.objects.bulk_create(
                [
                    JudgeVerdict(unit=u, call=call, criterion=c, winner=verdict(u.pair, c, accuracy), rationale="A synthetic reason.")
                    for u, call in zip(units, calls)
                    for c in criteria
                    if c.category_id == u.category_id
                ],
                batch_size=2000,
            )
    labels = Label.objects.filter(assignment__pair__campaign=campaign).count()
    verdicts = JudgeVerdict.objects.filter(unit__pair__campaign=campaign).count()
    print(
        f"{len(pairs)} pairs x {len(criteria)} criteria; {labels:,} human labels, {verdicts:,} judge verdicts "
        f"(built in {time.perf_counter() - started:.1f} s) on {connection.vendor}; {args.rounds} bootstrap rounds"
    )

    staff = User.objects.create_user(f"bench-{run}-staff", is_staff=True)
    client = Client(HTTP_HOST="localhost")
    client.force_login(staff)
    dashboard = reverse("calibration-dashboard", args=[campaign.pk])

    def timed(label: str, action) -> None:
        with CaptureQueriesContext(connection) as captured:
            t = time.perf_counter()
            result = action()
            elapsed = time.perf_counter() - t
        status = getattr(result, "status_code", 200)
        if status != 200:
            sys.exit(f"{label}: HTTP {status}")
        print(f"  {label:<42} {elapsed * 1000:9.1f} ms  {len(captured):3d} queries")

    build_report(campaign, rounds=20)  # imports and first-use costs out of the way
    print("server time:")
    timed(f"report alone ({args.rounds} rounds, cold)", lambda: build_report(campaign, rounds=args.rounds))
    cache.clear()
    timed("dashboard, empty cache (1000 rounds)", lambda: client.get(dashboard))
    timed("dashboard, cached report and charts", lambda: client.get(dashboard))
    criterion = criteria[-1].key
    timed("disagreement fragment (htmx)", lambda: client.get(dashboard, {"criterion": criterion}, headers={"HX-Request": "true"}))
    for fmt in ("json", "csv", "md", "html"):
        timed(f"download {fmt} (cached report)", lambda: client.get(reverse("calibration-download", args=[campaign.pk, fmt])))


if __name__ == "__main__":
    main()
