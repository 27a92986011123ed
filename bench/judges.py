"""Wall time of a judge run against a fake endpoint with fixed latency, versus the ideal.

    python bench/judges.py [../shared/wlc-sample] [--pairs 100] [--latency 0.2] [--concurrency 32 8] [--sequential]
    python bench/judges.py --pacing [--concurrency 32]     # about 150 s
    python bench/judges.py --checklist [--concurrency 32]  # one-article criteria: readings x 4 categories
    python bench/judges.py --local [--units 1] [--max-tokens 768]  # a real model: llama.cpp's server on this machine

Builds a fresh SQLite database (set DATABASE_URL to measure another server) with
`--pairs` reference pairs: the Wiki Live Challenge sample when present, else
topics synthesized from the demo articles. Then, for each concurrency, it runs a
new judge (one call per criterion category: 3 calls a pair) against the fake
OpenAI-compatible server of the tests (tests/llm_server.py, started in a process
of its own like a remote endpoint) answering after `--latency` seconds, through
the real openai client and the real engine.

Printed per concurrency: calls, wall time, the ideal (calls x latency /
concurrency) and their ratio (target <= 1.3 at 32; with 300 calls on 32 workers
some worker makes 10 calls, so 2.0 s, a ratio of 1.07, is the floor); the same
for a baseline, the run's requests sent by a bare thread pool the way the
engine sends them (what the client and the interpreter cost on this machine,
with no engine and no database); and the time the database
spent executing the run's queries (timed by a `connection.execute_wrapper`,
which unlike CaptureQueriesContext does not format every statement), as a share
of the wall time: the engine writes from one thread while the HTTP threads
wait, so the database is not the bottleneck while that share stays well under
100%, and the gap between the run and the bare baseline bounds what the engine
and the database add together. `--sequential` adds concurrency 1 (calls x
latency seconds).

The engine keeps a client per endpoint, key and concurrency, so each timed run
makes its own (about 40 ms of its wall time here), as in a fresh worker process;
the warm-up run only loads the client's modules.

`--checklist` runs, instead, the one-article scenario (issue 25): a campaign of the checklist
rubric (fixtures/checklist_report_presentation.json, 10 yes/no questions in 4 categories) whose
readings (one per article of the first `--pairs` pairs, made directly) are judged one call per
reading and category at the first `--concurrency`. Printed: readings, calls, wall time, the ideal
(units x latency / concurrency) and their ratio (target <= 1.2 at 32), the answers stored, the
bare floor (as above) and the database's share of the wall time.

`--local` measures, instead, a real model (docs/how-to/local-judge.md): it starts llama.cpp's server with the
pinned SmolLM2-135M-Instruct (scripts/local_judge.py, 1 generation and 2 prompt threads, one slot of
8,192 tokens, the model's training context) and sends it, for the demo pair and for the shortest
pair of the Wiki Live Challenge sample (when present), the engine's own request (`RunPlan.request`:
prompt, schema, temperature 0) for the `--units` units with the fewest criteria, generation capped
at `--max-tokens`. Printed per unit: criteria, prompt tokens (and cached), completion tokens, the
server's own prompt and generation tokens per second (llama.cpp's `timings`), the seconds the unit
took, and whether its answer was readable.

`--pacing` runs, instead, the provider-limits scenario: a judge with `rpm=120`
against an endpoint that answers 429 to the 151st request within any trailing
60 s, 300 calls (100 pairs x 3) at the first `--concurrency`. Printed: the 429s
the server gave and the run counted (both 0 when the pacing holds), the most
requests the server saw within any 60 s, the wall time (about 150 s: a request
every 0.5 s) and the requests per minute achieved (about 120), and the workers'
waits for the pacer, summed.
"""

import argparse
import io
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import django_on_scratch_database, load_sample_or_demo  # noqa: E402  (bench/ is on sys.path)

TARGET_RATIO_AT_32 = 1.3
TARGET_CHECKLIST_RATIO = 1.2
CHECKLIST = ROOT / "fixtures" / "checklist_report_presentation.json"
KEY_ENV = "BENCH_JUDGE_API_KEY"
PACED_RPM = 120
SERVER_LIMIT = (150, 60.0)  # requests within a trailing window of seconds, as a provider's rpm limit


# The fake endpoint runs in its own process, as a real one would: it must not take this process's CPU.
# Given a rate limit (requests, seconds) it enforces it; when its stdin closes it prints the 429s it
# gave and the most requests it saw within any window of those seconds.
SERVER = """
import sys
sys.path.insert(0, sys.argv[1])
from tests.llm_server import FakeLLM

with FakeLLM(latency=float(sys.argv[2])) as server:
    window = 60.0
    if len(sys.argv) > 3:
        server.rate_limit = (int(sys.argv[3]), float(sys.argv[4]))
        window = server.rate_limit[1]
    print(server.base_url, flush=True)
    sys.stdin.read()
    arrivals, most, first = sorted(server.arrivals), 0, 0
    for last, arrived in enumerate(arrivals):
        while arrivals[first] <= arrived - window:
            first += 1
        most = max(most, last - first + 1)
    print(server.rate_limited, most, flush=True)
"""


class Endpoint:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.rate_limited = 0  # 429s the server gave, known once it has stopped
        self.most_in_window = 0  # the most requests it saw within any window of its rate limit (60 s without one)


@contextmanager
def fake_endpoint(latency: float, rate_limit: tuple[int, float] | None = None) -> Iterator[Endpoint]:
    limit = [str(rate_limit[0]), str(rate_limit[1])] if rate_limit else []
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(ROOT), str(latency), *limit], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    endpoint = Endpoint(process.stdout.readline().strip())
    try:
        yield endpoint
    finally:
        process.stdin.close()
        figures = process.stdout.readline().split()
        process.wait(timeout=10)
        if len(figures) == 2:
            endpoint.rate_limited, endpoint.most_in_window = int(figures[0]), int(figures[1])


class QueryTimer:
    """Seconds spent in the database driver, and the number of statements."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds += time.perf_counter() - started
            self.count += 1


def timed_execute(run):
    """Executes a judge run with its queries timed; returns the run as it ended, its wall time in
    seconds and the query timer, and says so when the run did not finish cleanly."""
    from django.db import connection

    from judges.engine import judge_run_execute

    timer = QueryTimer()
    with connection.execute_wrapper(timer):
        started = time.perf_counter()
        run = judge_run_execute(run=run)
        wall = time.perf_counter() - started
    if run.status != "finished" or run.errors:
        print(f"run {run.pk}: {run.status} {run.message}")
    return run, wall, timer


def synthesize_pairs(count: int) -> None:
    """Topics copied from the demo articles until there are `count` reference pairs."""
    from annotate.models import Article, Topic

    demo = list(Article.objects.select_related("topic", "system"))
    by_topic: dict[int, list] = {}
    for article in demo:
        by_topic.setdefault(article.topic_id, []).append(article)
    templates = [articles for articles in by_topic.values() if any(a.system.is_reference for a in articles)]
    made, number = sum(len(a) - 1 for a in templates), 0
    while made < count:
        articles = templates[number % len(templates)]
        number += 1
        topic = Topic.objects.create(benchmark="bench", title=f"{articles[0].topic.title} {number}", slug=f"bench-{number}")
        copies = []
        for article in articles:
            # A different text per copy, so no request is answered from the cache.
            text = f"{article.display_markdown}\n\nCopy {number}."
            copies.append(
                Article(
                    topic=topic,
                    system=article.system,
                    raw_markdown=text,
                    display_markdown=text,
                    html=article.html,
                    toc=article.toc,
                    word_count=article.word_count + 2,
                    raw_word_count=article.raw_word_count + 2,
                    content_hash=f"bench-{number}-{article.pk}",
                )
            )
        Article.objects.bulk_create(copies)
        made += len(articles) - 1


def local(sample: Path, units: int, max_tokens: int) -> None:
    import json
    import socket
    import urllib.request

    script = ROOT / "scripts" / "local_judge.py"
    if subprocess.run([sys.executable, str(script), "install"], check=False).returncode != 0:
        sys.exit("the local judge's server and model could not be installed (scripts/local_judge.py install)")
    os.environ.setdefault("JUDGE_ALLOW_ADDRESSES", "127.0.0.1")
    os.environ.setdefault("JUDGE_BASE_URL_HOSTS", "127.0.0.1")
    django_on_scratch_database("judges-local", debug=False)
    from django.core.management import call_command

    import protocols
    from annotate.models import Campaign, CriterionSet, System
    from annotate.services.campaigns import campaign_create
    from judges.selectors import run_plan
    from judges.services import judge_build
    from protocols.base import InvalidResponse

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    key = "bench-local-key"
    server = subprocess.Popen(
        [sys.executable, str(script), "serve", "--port", str(port), "--ctx", "8192"],
        env={**os.environ, "LOCAL_JUDGE_API_KEY": key}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        if subprocess.run([sys.executable, str(script), "wait", "--port", str(port), "--seconds", "300"], check=False).returncode:
            sys.exit("the local judge's server did not come up")
        call_command("load_demo", stdout=io.StringIO())
        cases = [("demo", Campaign.objects.get(name="Demo campaign"))]
        if (sample / "data").is_dir():
            call_command("import_wlc", str(sample), "--quiet-progress", stdout=io.StringIO(), stderr=io.StringIO())
            reference = System.objects.get(key="wikipedia", is_reference=True)
            shortest = min(
                (a for a in reference.articles.select_related("topic")),
                key=lambda a: a.word_count + min((o.word_count for o in a.topic.articles.exclude(pk=a.pk)), default=10**9),
            )
            other = shortest.topic.articles.exclude(pk=shortest.pk).order_by("word_count").first()
            criterion_set = CriterionSet.objects.get(key="wiki_writing_criteria")
            campaign = campaign_create(
                name="Local sample pair", criterion_set=criterion_set, systems=["wikipedia", other.system.key],
                benchmark=shortest.topic.benchmark,
            )  # fmt: skip
            campaign.pairs.exclude(topic=shortest.topic).delete()
            cases.append((f"sample: {shortest.topic.title} ({shortest.word_count} + {other.word_count} words)", campaign))
        else:
            print(f"{sample} has no data/ folder: the demo pair only")
        judge = judge_build(
            name="bench-local", model="smollm2-135m-instruct-q4_1", base_url=f"http://127.0.0.1:{port}/v1",
            api_key_env="LOCAL_JUDGE_API_KEY", max_tokens=max_tokens,
        )  # fmt: skip
        print(f"SmolLM2-135M-Instruct Q4_1 on llama.cpp's server (1 generation / 2 prompt threads), max_tokens {max_tokens}")
        print(
            f"{'pair':<52} {'criteria':>8} {'prompt':>7} {'cached':>6} {'compl':>6} {'prompt t/s':>10} {'gen t/s':>8} {'s/unit':>7}  answer"
        )
        judge.save()
        for label, campaign in cases:
            plan = run_plan(campaign=campaign, judge=judge, limit=1)
            for unit in sorted(plan.units, key=lambda u: len(u.criteria))[:units]:
                request = plan.request(unit)
                body = {"model": judge.model, "messages": request.messages, "temperature": 0, "max_tokens": max_tokens,
                        "response_format": request.response_format}  # fmt: skip
                started = time.perf_counter()
                post = urllib.request.Request(
                    f"http://127.0.0.1:{port}/v1/chat/completions", data=json.dumps(body).encode(),
                    headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
                )  # fmt: skip
                try:
                    with urllib.request.urlopen(post, timeout=3600) as reply:
                        data = json.loads(reply.read())
                except urllib.error.HTTPError as exc:
                    print(f"{label[:52]:<52} {len(unit.criteria):>8} HTTP {exc.code}: {exc.read()[:160].decode('utf-8', 'replace')}")
                    continue
                seconds = time.perf_counter() - started
                usage, timings = data.get("usage", {}), data.get("timings", {})
                content = data["choices"][0]["message"]["content"]
                try:
                    protocols.parse_reply(request, content)
                    answer = "readable, every criterion"
                except InvalidResponse as exc:
                    answer = f"unreadable: {str(exc)[:60]}"
                print(
                    f"{label[:52]:<52} {len(unit.criteria):>8} {usage.get('prompt_tokens', 0):>7} "
                    f"{(usage.get('prompt_tokens_details') or {}).get('cached_tokens', 0):>6} {usage.get('completion_tokens', 0):>6} "
                    f"{timings.get('prompt_per_second', 0):>10.1f} {timings.get('predicted_per_second', 0):>8.1f} {seconds:>7.1f}  {answer}"
                )
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, nargs="?", default=ROOT.parent / "shared" / "wlc-sample")
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the fake endpoint takes to answer")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 8])
    parser.add_argument("--sequential", action="store_true", help="also concurrency 1 (pairs x 3 x latency seconds)")
    parser.add_argument(
        "--pacing",
        action="store_true",
        help=f"instead: a judge with rpm={PACED_RPM} against a server allowing {SERVER_LIMIT[0]} requests a minute",
    )
    parser.add_argument("--checklist", action="store_true", help="instead: a checklist rubric's readings (one article per call)")
    parser.add_argument("--local", action="store_true", help="instead: a real model on this machine (llama.cpp's server)")
    parser.add_argument("--units", type=int, default=1, help="--local: units per pair, those with the fewest criteria first")
    parser.add_argument("--max-tokens", type=int, default=768, help="--local: the generation cap per unit")
    args = parser.parse_args()
    if args.local:
        local(args.path, args.units, args.max_tokens)
        return

    os.environ[KEY_ENV] = "bench-not-a-real-key"
    # The fake endpoint listens on 127.0.0.1, which judges may reach only when allowed (judges/outbound.py).
    os.environ.setdefault("JUDGE_ALLOW_ADDRESSES", "127.0.0.1")
    os.environ.setdefault("JUDGE_BASE_URL_HOSTS", "127.0.0.1")
    django_on_scratch_database("judges", debug=False)
    from django.db import connection

    from annotate.models import Article, CriterionSet, System
    from annotate.services.campaigns import campaign_create
    from judges.engine import judge_run_execute
    from judges.models import JudgeCall
    from judges.services import judge_create, judge_run_create

    source, _ = load_sample_or_demo(args.path)
    reference = System.objects.filter(is_reference=True).first()
    available = Article.objects.exclude(system=reference).count()
    if available < args.pairs:
        synthesize_pairs(args.pairs)
    criterion_set = CriterionSet.objects.order_by("-id").first()
    systems = list(System.objects.values_list("key", flat=True))
    campaign = campaign_create(name="Bench", criterion_set=criterion_set, systems=systems, reference=reference.key)
    pairs = min(args.pairs, campaign.pairs.count())
    categories = criterion_set.categories.count()
    print(
        f"{pairs} pairs from {source}; {criterion_set.criteria.count()} criteria in {categories} categories; "
        f"fake endpoint latency {args.latency:.2f} s; database {connection.vendor}"
    )
    if args.pacing:
        pacing(campaign, pairs, args.latency, args.concurrency[0])
        return
    if args.checklist:
        checklist(systems, reference.key, pairs, args.latency, args.concurrency[0])
        return

    levels = list(dict.fromkeys(args.concurrency + ([1] if args.sequential else [])))
    print(
        f"{'concurrency':>11} {'calls':>6} {'wall s':>7} {'ideal s':>7} {'ratio':>6} {'bare s':>7} {'bare ratio':>10} "
        f"{'db s':>6} {'db share':>8} {'queries/unit':>12} {'call ms':>8}"
    )
    ratios = {}
    with fake_endpoint(args.latency) as endpoint:
        base_url = endpoint.base_url
        # Warm-up, not timed: the first request of a process imports the client's modules and builds its models.
        warm, _ = judge_create(name="bench-warm-up", model="fake-judge-warm-up", base_url=base_url, api_key_env=KEY_ENV)
        judge_run_execute(run=judge_run_create(campaign=campaign, judge=warm, concurrency=1, limit=1))
        for level in levels:
            # A judge (and model) per level: its requests differ from the others', so none is answered from the cache.
            judge, _ = judge_create(
                name=f"bench-{level}",
                model=f"fake-judge-{level}",
                base_url=base_url,
                api_key_env=KEY_ENV,
                input_price="2.5",
                output_price="10",
            )
            bare = bare_client_seconds(campaign, judge, level, pairs)
            run = judge_run_create(campaign=campaign, judge=judge, concurrency=level, limit=pairs)
            run, wall, timer = timed_execute(run)
            latencies = list(JudgeCall.objects.filter(run=run).values_list("latency_ms", flat=True))
            ideal = run.calls * args.latency / level
            ratios[level] = wall / ideal
            print(
                f"{level:>11} {run.calls:>6} {wall:>7.2f} {ideal:>7.2f} {wall / ideal:>6.2f} {bare:>7.2f} {bare / ideal:>10.2f} "
                f"{timer.seconds:>6.2f} {timer.seconds / wall:>8.0%} {timer.count / max(run.units_total, 1):>12.1f} "
                f"{sum(latencies) / max(len(latencies), 1):>8.0f}"
            )
    print("bare: the same requests sent by a plain thread pool through the same client calls, no engine and no database.")
    print("db s: time in the database driver, all of it on one thread while the HTTP workers keep sending.")
    if 32 in ratios:
        verdict = "ok" if ratios[32] <= TARGET_RATIO_AT_32 else "SLOWER THAN THE TARGET"
        print(f"ratio at 32: {ratios[32]:.2f} (target <= {TARGET_RATIO_AT_32}): {verdict}")


def pacing(campaign, pairs: int, latency: float, concurrency: int) -> None:
    """The issue's done-when: with rpm 120 against a server refusing more than 150 requests a minute,
    a 300-call run meets no 429. No warm-up: the server sees the run's requests and no others."""
    from judges.engine import judge_run_execute
    from judges.services import judge_create, judge_run_create

    limit, window = SERVER_LIMIT
    print(f"pacing: rpm {PACED_RPM} against a server answering 429 beyond {limit} requests in {window:.0f} s; concurrency {concurrency}")
    with fake_endpoint(latency, SERVER_LIMIT) as endpoint:
        judge, _ = judge_create(
            name="bench-paced",
            model="fake-judge-paced",
            base_url=endpoint.base_url,
            api_key_env=KEY_ENV,
            input_price="2.5",
            output_price="10",
            rpm=PACED_RPM,
        )
        run = judge_run_create(campaign=campaign, judge=judge, concurrency=concurrency, limit=pairs)
        started = time.perf_counter()
        run = judge_run_execute(run=run)
        wall = time.perf_counter() - started
    if run.status != "finished" or run.errors:
        print(f"run {run.pk}: {run.status} {run.message}")
    print(f"{'calls':>6} {'429 server':>10} {'429 run':>7} {f'most in {window:.0f} s':>10} {'wall s':>7} {'req/min':>7} {'paced s':>8}")
    print(
        f"{run.calls:>6} {endpoint.rate_limited:>10} {run.rate_limited:>7} {endpoint.most_in_window:>10} {wall:>7.1f} "
        f"{run.calls / wall * 60:>7.1f} {run.paced_ms / 1000:>8.0f}"
    )
    print("paced s: the workers' waits for the pacer, summed over the workers.")
    verdict = "ok" if endpoint.rate_limited == run.rate_limited == 0 else "RATE LIMITED"
    print(f"429s: {endpoint.rate_limited} at the server, {run.rate_limited} on the run: {verdict}")


def checklist(systems: list[str], reference: str, pairs: int, latency: float, concurrency: int) -> None:
    """One-article criteria: a checklist campaign's readings, one call per reading and category."""
    from annotate.models import Pair
    from annotate.services.campaigns import campaign_create
    from judges.engine import judge_run_execute
    from judges.models import JudgeVerdict
    from judges.services import judge_create, judge_run_create
    from tests.reading_builders import readings_create, rubric_import

    criterion_set = rubric_import(CHECKLIST, "checklist_report_presentation")
    campaign = campaign_create(name="Bench checklist", criterion_set=criterion_set, systems=systems, reference=reference)
    # The first `pairs` pairs, and so their articles' readings.
    keep = list(Pair.objects.filter(campaign=campaign).order_by("order", "id").values_list("pk", flat=True)[:pairs])
    Pair.objects.filter(campaign=campaign).exclude(pk__in=keep).delete()
    readings = len(readings_create(campaign))
    categories = criterion_set.categories.count()
    print(
        f"checklist: {readings} readings x {categories} categories ({criterion_set.criteria.count()} yes/no criteria); concurrency {concurrency}"
    )
    with fake_endpoint(latency) as endpoint:
        warm, _ = judge_create(name="bench-checklist-warm-up", model="fake-judge-warm-up", base_url=endpoint.base_url, api_key_env=KEY_ENV)
        judge_run_execute(run=judge_run_create(campaign=campaign, judge=warm, concurrency=1, limit=1))
        judge, _ = judge_create(
            name="bench-checklist", model="fake-judge-checklist", base_url=endpoint.base_url, api_key_env=KEY_ENV,
            input_price="2.5", output_price="10",
        )  # fmt: skip
        bare = bare_client_seconds(campaign, judge, concurrency, pairs)
        run = judge_run_create(campaign=campaign, judge=judge, concurrency=concurrency)
        run, wall, timer = timed_execute(run)
    ideal = run.units_total * latency / concurrency
    answers = JudgeVerdict.objects.filter(unit__run=run).exclude(answer="").count()
    print(
        f"{'units':>6} {'calls':>6} {'answers':>7} {'wall s':>7} {'ideal s':>7} {'ratio':>6} {'bare s':>7} {'bare ratio':>10} {'db s':>6} {'db share':>8}"
    )
    print(
        f"{run.units_total:>6} {run.calls:>6} {answers:>7} {wall:>7.2f} {ideal:>7.2f} {wall / ideal:>6.2f} {bare:>7.2f} {bare / ideal:>10.2f} "
        f"{timer.seconds:>6.2f} {timer.seconds / wall:>8.0%}"
    )
    print("bare: the same requests from a plain thread pool, no engine and no database (what this machine allows now).")
    verdict = "ok" if wall / ideal <= TARGET_CHECKLIST_RATIO else "SLOWER THAN THE TARGET"
    print(f"ratio at {concurrency}: {wall / ideal:.2f} (target <= {TARGET_CHECKLIST_RATIO}): {verdict}")


def bare_client_seconds(campaign, judge, level: int, pairs: int) -> float:
    """The floor: the run's requests sent the way the engine sends them (the client's
    `post` with an X-Client-Request-Id, the raw response's x-request-id header read, the
    reply read by `read_completion`) from `level` threads, nothing stored."""
    import openai

    from judges.selectors import run_plan
    from judges.transport import new_client_request_id
    from judges.wire import read_completion

    plan = run_plan(campaign=campaign, judge=judge, limit=pairs)
    requests = [plan.request(unit) for unit in plan.pending()]
    client = openai.OpenAI(base_url=judge.base_url, api_key=os.environ[KEY_ENV], max_retries=0, timeout=judge.timeout_seconds)

    def send(request) -> None:
        body = {
            "model": judge.model,
            "messages": request.messages,
            "response_format": request.response_format,
            "temperature": judge.temperature,
            "max_tokens": judge.max_tokens,
        }
        options = {"headers": {"X-Client-Request-Id": new_client_request_id()}}
        response = client.post("/chat/completions", body=body, cast_to=openai.APIResponse[bytes], options=options)
        response.headers.get("x-request-id")
        read_completion(response.parse())

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=level) as pool:
        list(pool.map(send, requests))
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
