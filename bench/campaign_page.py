"""Size and server time of a big campaign's page: 27,000 imported pairs.

    .venv/bin/python bench/campaign_page.py [--pairs 27000] [--raters 400]

Builds, in a fresh SQLite database (DATABASE_URL for another), a labels-only
campaign of `--pairs` battles between 30 systems, one submitted vote each from a
crowd of `--raters`, with one criterion, written in bulk. Then asks for the
campaign page through Django's test client as staff and prints its size and time,
against issue 21's "today" (3.2 MB for 27k pairs) and its target (<= 300 KB).
"""

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import django_on_scratch_database  # noqa: E402  (bench/ is on sys.path)

TODAY_KB, TARGET_KB = 3.2 * 1024, 300


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=27_000)
    parser.add_argument("--raters", type=int, default=400)
    args = parser.parse_args()

    django_on_scratch_database("campaign-page")
    from django.contrib.auth.models import User
    from django.db import transaction
    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    from annotate.models import Article, Assignment, Campaign, Category, Criterion, CriterionSet, Label, Pair, System, Topic
    from annotate.services.items import pairs_save

    now = timezone.now()
    t = time.perf_counter()
    with transaction.atomic():
        rubric = CriterionSet.objects.create(key="one", version=1, name="One question", content_hash="-")
        category = Category.objects.create(criterion_set=rubric, key="c", name="C", order=0)
        criterion = Criterion.objects.create(criterion_set=rubric, category=category, key="better", text="Which is better?", order=0)
        campaign = Campaign.objects.create(name="big", criterion_set=rubric, labels_only=True, allow_tie=True, rationale_required=False)
        systems = System.objects.bulk_create([System(key=f"model-{i}.v1", name=f"model-{i}") for i in range(30)])
        topics = Topic.objects.bulk_create(
            [Topic(benchmark="labels-only:big", title=f"battle {i:06d}", slug=f"battle-{i:06d}") for i in range(args.pairs)],
            batch_size=2000,
        )
        articles = Article.objects.bulk_create(
            [Article(topic=topic, system=systems[(i + k) % 30], raw_markdown="", display_markdown="", html="", toc=[], word_count=0,
                     raw_word_count=0, content_hash="-", source="no text: imported with labels")
             for i, topic in enumerate(topics) for k in (0, 1 + i % 29)],
            batch_size=2000,
        )  # fmt: skip
        pairs = pairs_save(
            [
                Pair(campaign=campaign, topic=topic, article_a=articles[2 * i], article_b=articles[2 * i + 1], order=i)
                for i, topic in enumerate(topics)
            ],
            batch_size=2000,
        )
        raters = User.objects.bulk_create([User(username=f"crowd{i:04d}", is_active=False) for i in range(args.raters)])
        assignments = Assignment.objects.bulk_create(
            [Assignment(pair=p, annotator=raters[i % args.raters], a_first=True, order="ab", status="submitted", claimed_at=now, last_activity_at=now, submitted_at=now)
             for i, p in enumerate(pairs)],
            batch_size=2000,
        )  # fmt: skip
        Label.objects.bulk_create(
            [Label(assignment=a, criterion=criterion, winner="a", created_at=now, saved_at=now) for a in assignments], batch_size=2000
        )
    print(f"built a labels-only campaign of {args.pairs:,} pairs, {args.raters} raters in {time.perf_counter() - t:.1f} s")

    staff = User.objects.create_user("bench-staff", is_staff=True)
    client = Client(HTTP_HOST="localhost")
    client.force_login(staff)
    url = reverse("campaign-detail", args=[campaign.pk])
    client.get(url)
    t = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - t
    if response.status_code != 200:
        sys.exit(f"campaign page: HTTP {response.status_code}")
    kb = len(response.content) / 1024
    print(f"campaign page of {args.pairs:,} pairs: {kb:,.0f} KB in {elapsed:.2f} s "
          f"({kb / TODAY_KB:.3f}x of today's {TODAY_KB / 1024:.1f} MB; target <= {TARGET_KB} KB: {'met' if kb <= TARGET_KB else 'NOT met'})")  # fmt: skip


if __name__ == "__main__":
    main()
