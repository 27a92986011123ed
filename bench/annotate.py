"""Server time of the annotation page and of an htmx label save, on the longest pair; then a whole
pair labelled by keyboard in Chromium, with the control keys and the time per criterion.

    python bench/annotate.py [../shared/wlc-sample] [--requests 200] [--no-browser]

Imports the benchmark into a fresh SQLite database (set DATABASE_URL to measure
another server), opens a campaign on its longest pair (the reference plus the
longest generated article of one topic) with the 39-criterion rubric, and times
GETs of the page and POSTs saving one criterion through Django's test client.
Then it counts the queries of both requests on a 3-criterion campaign over a
short pair: the counts must not depend on the rubric or the articles.
Targets: page p95 <= 60 ms, save p95 <= 15 ms. The same for the single-article page (a reading of
the longest article, with fixtures/rating_writing_1to5.json's 39 rated criteria) and its answer
save: targets p95 <= 20 ms and <= 10 ms. Then the page of a group (fixtures/ranking_three.json's three
rankings over the three longest articles of the longest pair's topic) and a ranking's save, against
the pair page's targets (three articles drawn instead of two).

Last, unless --no-browser or /usr/bin/chromium is missing, it serves the database with
`manage.py runserver` and drives Debian's Chromium through all 39 criteria of the longest pair by
keyboard (bench/keyboard_flow.py says how), then checks every answer in the database. It prints the
control keys per criterion (every key but the rationale's text; issue 20's target: at most 3, where
the flow `j`, choice, `Tab`, `Tab`, `Esc` took 5) and the time per criterion.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import django_on_scratch_database, load_sample_or_demo  # noqa: E402  (bench/ is on sys.path)

PAGE_TARGET_MS = 60
SAVE_TARGET_MS = 15
READING_PAGE_TARGET_MS = 20
READING_SAVE_TARGET_MS = 10
WARM_UP = 10
TINY_RUBRIC = {
    "name": "Three criteria",
    "categories": [
        {
            "id": "clear",
            "name": "Clear",
            "criteria": [{"id": "t_1", "text": "Plain sentences."}, {"id": "t_2", "text": "Short paragraphs."}],
        },
        {"id": "fair", "name": "Fair", "criteria": [{"id": "t_3", "text": "Fair to every side."}]},
    ],
}


def print_timing(name: str, times: list[float], queries: list[int], target: float) -> None:
    """One measured request's line: p50, p95 and max time, the query counts, and p95 against its target."""
    p95 = percentile(times, 0.95)
    print(
        f"  {name}: p50 {statistics.median(times):6.2f} ms  p95 {p95:6.2f} ms  max {max(times):6.2f} ms  "
        f"| {'/'.join(map(str, sorted(queries)))} queries  | target p95 <= {target} ms: {p95 / target:.2f}x the target"
    )


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, nargs="?", default=ROOT.parent / "shared" / "wlc-sample")
    parser.add_argument("--requests", type=int, default=200, help="timed requests of each kind")
    parser.add_argument("--no-browser", action="store_true", help="skip labelling a pair by keyboard in Chromium")
    args = parser.parse_args()

    django_on_scratch_database("annotate")
    from django.contrib.auth.models import User
    from django.db import connection, reset_queries
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

    def open_campaign(name: str, criterion_set: CriterionSet, chars: int, ref: Article, gen: Article, user=annotator):
        campaign = campaign_create(
            name=name,
            criterion_set=criterion_set,
            systems=[ref.system.key, gen.system.key],
            reference=ref.system.key,
            annotators=[user],
            benchmark=ref.topic.benchmark,
        )
        # The service pairs every topic the two systems share; measure on this one only.
        campaign.pairs.exclude(topic_id=ref.topic_id).delete()
        assignment = assignment_claim_next(campaign=campaign, user=user)
        print(
            f"{name}: '{ref.topic.title}', {ref.system.key} vs {gen.system.key}, {chars:,} characters of HTML, "
            f"{criterion_set.criteria.count()} criteria"
        )
        return assignment

    def measure(label: str, request, count: int) -> tuple[list[float], set[int]]:
        times, queries = [], set()
        for i in range(WARM_UP + count):
            reset_queries()  # the log keeps 9,000 queries: past that, a capture's count reads 0
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
        print_timing(name, times, queries, target)

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
    print(
        f"  queries per request: page {'/'.join(map(str, sorted(short_page_queries)))} "
        f"(39 criteria: {'/'.join(map(str, sorted(page_queries)))}), "
        f"save {'/'.join(map(str, sorted(short_save_queries)))} (39 criteria: {'/'.join(map(str, sorted(save_queries)))})"
    )
    constant = short_page_queries == page_queries and short_save_queries == save_queries
    print(f"  query counts {'are constant' if constant else 'DIFFER'} across rubric size and article length")

    # The single-article page (a reading): the longest article alone with the 39 criteria rated 1 to 5.
    from annotate.sources import read_rubric

    rated, problems = read_rubric(ROOT / "fixtures" / "rating_writing_1to5.json", key="rating_writing_1to5")
    if problems:
        sys.exit("; ".join(map(str, problems)))
    rated_set, _ = criterion_set_import(rubric=rated)
    chars, ref, gen = pairs[-1]
    longest = max((ref, gen), key=lambda article: article.chars)
    print()
    campaign = campaign_create(
        name=f"Bench {run}: longest article alone",
        criterion_set=rated_set,
        systems=[ref.system.key, gen.system.key],
        reference=ref.system.key,
        annotators=[annotator],
        benchmark=ref.topic.benchmark,
    )
    campaign.readings.exclude(article_a=longest).delete()
    reading = assignment_claim_next(campaign=campaign, user=annotator)
    first_rated = rated_set.criteria.order_by("order").values_list("key", flat=True)[0]
    print(f"{campaign.name}: '{ref.topic.title}', {longest.chars:,} characters of HTML, {rated_set.criteria.count()} rated criteria")
    reading_url = reverse("assignment", args=[reading.pk])
    answer_url = reverse("label-save", args=[reading.pk, first_rated])
    reading_times, reading_queries = measure("reading page", lambda i: client.get(reading_url), args.requests)
    answer_times, answer_queries = measure(
        "reading save",
        lambda i: client.post(answer_url, {"value": "24"[i % 2], "rationale": f"Reason {i}: plain prose."}, headers={"HX-Request": "true"}),
        args.requests,
    )
    for name, times, queries, target in (
        ("reading page GET ", reading_times, reading_queries, READING_PAGE_TARGET_MS),
        ("reading htmx save", answer_times, answer_queries, READING_SAVE_TARGET_MS),
    ):
        print_timing(name, times, queries, target)

    group_bench(args, client, annotator, run, measure, by_topic_articles(pairs[-1][1].topic_id))

    if args.no_browser:
        return
    from keyboard_flow import CHROMIUM, PASSWORD, label_pair_by_keyboard, serve

    if not CHROMIUM.exists():
        print(f"\n{CHROMIUM} is missing: no keyboard run (apt-get install chromium)")
        return
    from annotate.models import Label

    typist = User.objects.create_user(f"bench-keys-{run}", password=PASSWORD)
    chars, ref, gen = pairs[-1]
    print()
    assignment = open_campaign(f"Bench {run}: keyboard", rubric, chars, ref, gen, user=typist)
    keys = list(Criterion.objects.filter(criterion_set=rubric).order_by("order").values_list("key", flat=True))
    server, url = serve(ROOT)
    try:
        keyboard = label_pair_by_keyboard(url=url, username=typist.username, assignment_id=assignment.pk, keys=keys)
    finally:
        server.terminate()
        server.wait(timeout=30)
    labels = Label.objects.filter(assignment=assignment)
    assignment.refresh_from_db()
    if assignment.status != "submitted":
        sys.exit(f"keyboard run: Ctrl+Enter did not submit the pair (status {assignment.status})")
    complete = sum(bool(label.winner) and label.rationale.startswith("Reason ") for label in labels)
    if complete != len(keys):
        sys.exit(f"keyboard run: {complete} of {len(keys)} criteria stored with their winner and rationale")
    per_key = ", ".join(f"{name} x{count}" for name, count in keyboard.keys_by_name.most_common())
    mean_keys = statistics.mean(keyboard.control_keys)
    ms = [s * 1000 for s in keyboard.seconds]
    print(f"  keyboard, {len(keys)} criteria in Chromium (keys the page advertises: {' '.join(keyboard.advertised)}):")
    print(
        f"    control keys per criterion: mean {mean_keys:.2f}, max {max(keyboard.control_keys)}, n = {len(keys)} criteria "
        f"({per_key}; {keyboard.text_keys} text keys not counted) | target max <= 3: "
        f"{'met' if max(keyboard.control_keys) <= 3 else 'NOT met'}; {mean_keys / 5:.2f}x the 5 keys of the old flow"
    )
    print(
        f"    time per criterion, first key to last: p50 {statistics.median(ms):.0f} ms  p95 {percentile(ms, 0.95):.0f} ms  "
        f"max {max(ms):.0f} ms (typing the rationale included)"
    )
    print(
        f"    whole pair {keyboard.whole_pair_seconds:.1f} s = {keyboard.whole_pair_seconds / len(keys) * 1000:.0f} ms per criterion, "
        f"every save confirmed {keyboard.confirm_seconds * 1000:.0f} ms after the last key; all {complete} answers stored"
    )
    print(
        f"    keys to bring the other article's matching section into view: {keyboard.match_keys} "
        f"(the most any of the {keyboard.match_checked} matched sections of Article 1 needed) | target 1: "
        f"{'met' if keyboard.match_keys == 1 else 'NOT met'}"
    )
    per_criterion = keyboard.saves / len(keys)
    print(
        f"    POSTs per criterion: {per_criterion:.2f} ({keyboard.saves} saves for {len(keys)} criteria, each rationale typed in one go) "
        f"| target <= 1.0: {'met' if per_criterion <= 1.0 else 'NOT met'}; issue 37 measured 2.5 before"
    )
    print(
        f"    Submit (Ctrl+Enter): server {keyboard.submit_server_ms:.0f} ms for the submit request, {keyboard.saves_on_submit} saves sent again, "
        f"next page loaded {keyboard.submit_wall_ms:.0f} ms after the key | target server <= 300 ms: "
        f"{'met' if keyboard.submit_server_ms <= 300 else 'NOT met'}; issue 37 measured 2.2 s before"
    )


def by_topic_articles(topic_id: int) -> list:
    """The topic's articles, longest displayed HTML first."""
    from django.db.models.functions import Length

    from annotate.models import Article

    return list(
        Article.objects.filter(topic_id=topic_id)
        .select_related("system", "topic")
        .annotate(chars=Length("html"))
        .defer("html", "raw_markdown", "display_markdown", "toc")
        .order_by("-chars", "id")
    )


def group_bench(args, client, annotator, run: str, measure, articles: list) -> None:
    """The page of a group of the topic's three longest articles and a ranking's save, timed."""
    from django.urls import reverse

    from annotate.models import Item
    from annotate.services import criterion_set_import
    from annotate.services.campaigns import campaign_create
    from annotate.services.claims import assignment_claim_next
    from annotate.sources import read_rubric

    print()
    if len(articles) < 3:
        print(f"group page: the topic has {len(articles)} articles, not 3: no group to time")
        return
    rubric, problems = read_rubric(ROOT / "fixtures" / "ranking_three.json", key="ranking_three")
    if problems:
        sys.exit("; ".join(map(str, problems)))
    ranked, _ = criterion_set_import(rubric=rubric)
    chosen = articles[:3]
    campaign = campaign_create(
        name=f"Bench {run}: a group of three",
        criterion_set=ranked,
        systems=[a.system.key for a in chosen],
        annotators=[annotator],
        benchmark=chosen[0].topic.benchmark,
    )
    Item.objects.filter(campaign=campaign, kind=Item.Kind.GROUP).exclude(topic_id=chosen[0].topic_id).delete()
    work = assignment_claim_next(campaign=campaign, user=annotator)
    chars = sum(a.chars for a in chosen)
    print(f"{campaign.name}: '{chosen[0].topic.title}', {chars:,} characters of HTML, {ranked.criteria.count()} ranking criteria")
    page_url = reverse("assignment", args=[work.pk])
    save_url = reverse("label-save", args=[work.pk, "rk_clear"])
    page_times, page_queries = measure("group page", lambda i: client.get(page_url), args.requests)
    save_times, save_queries = measure(
        "ranking save",
        lambda i: client.post(save_url, {"value": ("2>1>3", "3>1>2")[i % 2], "rationale": f"Reason {i}."}, headers={"HX-Request": "true"}),
        args.requests,
    )
    print_timing("group page GET   ", page_times, page_queries, PAGE_TARGET_MS)
    print_timing("ranking htmx save", save_times, save_queries, SAVE_TARGET_MS)


if __name__ == "__main__":
    main()
