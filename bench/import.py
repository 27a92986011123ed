"""Time to import and clean a benchmark, and its throughput in MB/s of markdown.

    python bench/import.py ../shared/wlc-sample [--rounds 3]

Each round imports into a fresh SQLite database (set DATABASE_URL to measure
another server) and reports reading, cleaning + rendering, and database writes
separately. The target is >= 5 MB/s end to end on a 2-core machine.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import django_on_scratch_database  # noqa: E402  (bench/ is on sys.path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path)
    parser.add_argument("--benchmark")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    django_on_scratch_database("import")
    from django.conf import settings
    from django.db import connection

    from annotate.models import Article, Criterion, CriterionSet, System, Topic
    from annotate.services import articles_import, articles_prepare
    from annotate.sources import read_wlc

    rows = []
    for round_no in range(1, args.rounds + 1):
        for model in (Article, Topic, System, Criterion, CriterionSet):
            model.objects.all().delete()
        t0 = time.perf_counter()
        batch = read_wlc(args.path, benchmark=args.benchmark, max_bytes=settings.MAX_ARTICLE_BYTES)
        t1 = time.perf_counter()
        prepared = articles_prepare(batch.articles)
        t2 = time.perf_counter()
        summary = articles_import(batch=batch, prepared=prepared)
        t3 = time.perf_counter()
        mb = summary.markdown_bytes / 1_000_000
        rows.append((t1 - t0, t2 - t1, t3 - t2, t3 - t0, mb))
        print(
            f"round {round_no}: {summary.articles_created} articles, {mb:.2f} MB markdown | "
            f"read {t1 - t0:.3f} s, clean+render {t2 - t1:.3f} s ({mb / (t2 - t1):.1f} MB/s), "
            f"db {t3 - t2:.3f} s | total {t3 - t0:.3f} s = {mb / (t3 - t0):.1f} MB/s"
        )
    total = statistics.median(r[3] for r in rows)
    mb = rows[0][4]
    print(
        f"median of {len(rows)} rounds on {connection.vendor}: {total:.3f} s, {mb / total:.1f} MB/s "
        f"(target 5 MB/s: {mb / total / 5:.1f}x the target)"
    )


if __name__ == "__main__":
    main()
