"""Server time of the annotation page and of an htmx label save, on the longest pair.

    python bench/annotate.py [../shared/wlc-sample] [--requests 200]

Imports the benchmark into a fresh SQLite database (set DATABASE_URL to measure
another server), opens a campaign on its longest pair (the reference plus the
longest generated article of one topic) with the 39-criterion rubric, and times
GETs of the page and POSTs saving one criterion through Django's test client.
Then it counts the queries of both requests on a 3-criterion campaign over a
short pair: the counts must not depend on the rubric or the articles.
Targets: page p95 <= 60 ms, save p95 <= 15 ms.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import django_on_scratch_database, load_sample_or_demo  # noqa: E402  (bench/ is on sys.path)

PAGE_TARGET_MS = 60
SAVE_TARGET_MS = 15
WARM_UP = 10
TINY_RUBRIC = {
    "name": "Three criteria",
    "categories": [
        {"id": "clear", "name": "Clear", "criteria": [{"id": "t_1", "text": "Plain sentences."}, {"id": "t_2", "text": "Short paragraphs."}]},
        {"id": "fair", "name": "Fair", "criteria": [{"id": "t_3", "text": "Fair to every side."}]},
    ],
}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, nargs="?", default=ROOT.parent / "shared" / "wlc-sample")
    parser.add_argument("--requests", type=int, default=200, help="timed requests of each kind")
    args = parser.parse_args()

    django_on_scratch_database("annotate")
    from django.contrib.auth.models import User
    from django.db import connection
    from django.db.models.functions import Length
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from annotate.models import Article, Criterion, CriterionSet
    from annotate.services import criterion_set_import
    from annotate.services.campaigns import campaign_create
    from annotate.services.claims import assignment_claim_next
    from annotate.sources import parse_rubric

    _, rubric_key = load_sample_or_demo(args.path)
    rubric = CriterionSet.objects.filter(key=rubric_key).order_by("-version").first()
    if rubric is None or rubric.criteria.count() != 39:
        sys.exit(f"no 39-criterion rubric '{rubric_key}' was imported")

    # Per topic: the reference and the longest generated article, by characters of displayed HTML.
    by_topic: dict[int, dict] = {}
    articles = Article.objects.select_related("system", "topic").annotate(chars=Length("html"))
    for article in articles.defer("html", "raw_markdown", "display_markdown", "toc"):
        slot = by_topic.setdefault(article.topic_id, {"ref": None, "gen": None})
        if article.system.is_reference:
            slot["ref"] = article
        elif slot["gen"] is None or article.chars > slot["gen"].chars:
            slot["gen"] = article
    pairs = sorted(
        ((s["ref"].chars + s["gen"].chars, s["ref"], s["gen"]) for s in by_topic.values() if s["ref"] and s["gen"]),
        key=lambda t: t[0],
    )
    if not pairs:
        sys.exit("no topic has a reference article and a generated one")
    # Unique names let the bench run again on a database given through DATABASE_URL.
    run = time.strftime("%Y%m%d-%H%M%S")
    annotator = User.objects.create_user(f"bench-{run}")
    client = Client(HTTP_HOST="localhost")
    client.force_login(annotator)

    def open_campaign(name: str, criterion_set: CriterionSet, chars: int, ref: Article, gen: Article):
        campaign = campaign_create(
            name=name,
            criterion_set=criterion_set,
            systems=[ref.system.key, gen.system.key],
            reference=ref.system.key,
            annotators=[annotator],
            benchmark=ref.topic.benchmark,
        )
        # The service pairs every topic the two systems share; measure on this one only.
        campaign.pairs.exclude(topic_id=ref.topic_id).delete()
        assignment = assignment_claim_next(campaign=campaign, user=annotator)
        print(f"{name}: '{ref.topic.title}', {ref.system.key} vs {gen.system.key}, {chars:,} characters of HTML, "
              f"{criterion_set.criteria.count()} criteria")
        return assignment

    def measure(label: str, request, count: int) -> tuple[list[float], set[int]]:
        times, queries = [], set()
        for i in range(WARM_UP + count):
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                response = request(i)
                elapsed = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                sys.exit(f"{label}: HTTP {response.status_code}")
            if i >= WARM_UP:
                times.append(elapsed)
                queries.add(len(captured))
        return times, queries

    def requests_for(assignment, criterion_key: str):
        page_url = reverse("assignment", args=[assignment.pk])
        save_url = reverse("label-save", args=[assignment.pk, criterion_key])

        def page(i):
            return client.get(page_url)

        def save(i):
            # Alternate both fields so that every save is a real change with an audit row.
            data = {"position": "12"[i % 2], "rationale": f"Reason number {i}: the lead is clearer."}
            return client.post(save_url, data, headers={"HX-Request": "true"})

        return page, save

    chars, ref, gen = pairs[-1]
    long_assignment = open_campaign(f"Bench {run}: longest pair", rubric, chars, ref, gen)
    first_key = Criterion.objects.filter(criterion_set=rubric).order_by("order").values_list("key", flat=True)[0]
    page, save = requests_for(long_assignment, first_key)
    page_times, page_queries = measure("page", page, args.requests)
    save_times, save_queries = measure("save", save, args.requests)

    print(f"\n{args.requests} requests each on {connection.vendor}, server time through django.test.Client:")
    for name, times, queries, target in (
        ("page GET ", page_times, page_queries, PAGE_TARGET_MS),
        ("htmx save", save_times, save_queries, SAVE_TARGET_MS),
    ):
        p95 = percentile(times, 0.95)
        print(
            f"  {name}: p50 {statistics.median(times):6.2f} ms  p95 {p95:6.2f} ms  max {max(times):6.2f} ms  "
            f"| {'/'.join(map(str, sorted(queries)))} queries  | target p95 <= {target} ms: {p95 / target:.2f}x the target"
        )

    tiny, problems = parse_rubric(TINY_RUBRIC, key="bench_three", source="bench")
    if problems:
        sys.exit("; ".join(map(str, problems)))
    tiny_set, _ = criterion_set_import(rubric=tiny)
    chars, ref, gen = pairs[0]
    print()
    short_assignment = open_campaign(f"Bench {run}: short pair, 3 criteria", tiny_set, chars, ref, gen)
    page, save = requests_for(short_assignment, "t_1")
    _, short_page_queries = measure("page", page, 20)
    _, short_save_queries = measure("save", save, 20)
    print(f"  queries per request: page {'/'.join(map(str, sorted(short_page_queries)))} "
          f"(39 criteria: {'/'.join(map(str, sorted(page_queries)))}), "
          f"save {'/'.join(map(str, sorted(short_save_queries)))} (39 criteria: {'/'.join(map(str, sorted(save_queries)))})")
    constant = short_page_queries == page_queries and short_save_queries == save_queries
    print(f"  query counts {'are constant' if constant else 'DIFFER'} across rubric size and article length")


if __name__ == "__main__":
    main()
