"""Server time of the pair page with the agents' steps shown, and of a vote on a step (issue 42).

    python bench/steps.py [--requests 200] [--steps 15]

On a fresh SQLite database (set DATABASE_URL for another server): the fixture of agent traces
(fixtures/steps/agent_traces.jsonl) with every article's steps lengthened to ``--steps`` (the
fixture's own steps, repeated with a counter), the 39-criterion rubric, and two campaigns on the
same pair: one showing the steps, one not. Times GETs of both pages and htmx POSTs of a vote on a
step (alternately up and down, each a real change with an audit row) through Django's test client.
Targets: the steps add at most 20 ms to the page's p95 and the vote's p95 is at most 10 ms.
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import django_on_scratch_database  # noqa: E402  (bench/ is on sys.path)

PAGE_ADDED_TARGET_MS = 20
VOTE_TARGET_MS = 10
WARM_UP = 10


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def lengthened(steps_per_article: int) -> Path:
    """The fixture with each article's steps cycled to ``steps_per_article``."""
    out = Path(tempfile.mkdtemp(prefix="bench-steps-")) / "traces.jsonl"
    rows = [json.loads(line) for line in (ROOT / "fixtures" / "steps" / "agent_traces.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        given = row["steps"]
        row["steps"] = [
            {**given[k % len(given)], "content": f"{given[k % len(given)]['content']} (pass {k // len(given) + 1})"}
            for k in range(steps_per_article)
        ]
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--steps", type=int, default=15, help="steps per article (so per side)")
    args = parser.parse_args()
    django_on_scratch_database("steps", debug=False)
    import io

    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    from annotate.models import Campaign, CriterionSet
    from annotate.services.campaigns import campaign_create
    from annotate.services.claims import assignment_claim_next

    call_command("import_articles", str(lengthened(args.steps)), "--benchmark", "traces", stdout=io.StringIO())
    call_command("import_criteria", str(ROOT / "fixtures" / "criteria" / "wiki_writing.json"), stdout=io.StringIO())
    rubric = CriterionSet.objects.get(key="wiki_writing")
    annotator = User.objects.create_user("bench-steps")
    client = Client(HTTP_HOST="localhost")
    client.force_login(annotator)

    def campaign(name: str, show_steps: bool):
        made = campaign_create(
            name=name, criterion_set=rubric, systems=["agent.alpha-2", "agent.beta.v3"], pair_mode=Campaign.PairMode.ALL,
            benchmark="traces", show_steps=show_steps, annotators=[annotator],
        )  # fmt: skip
        first = made.pairs.order_by("pk").first()
        made.pairs.exclude(pk=first.pk).delete()  # one pair: the same articles in both campaigns
        return assignment_claim_next(campaign=made, user=annotator)

    def timed(request) -> list[float]:
        times = []
        for i in range(WARM_UP + args.requests):
            started = time.perf_counter()
            response = request(i)
            elapsed = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                sys.exit(f"HTTP {response.status_code}: {response.content[:200]!r}")
            if i >= WARM_UP:
                times.append(elapsed)
        return times

    with_steps, without = campaign("with steps", True), campaign("without steps", False)
    step = with_steps.pair.article_a.steps.order_by("order").first()
    page_with = timed(lambda i: client.get(reverse("assignment", args=[with_steps.pk])))
    page_without = timed(lambda i: client.get(reverse("assignment", args=[without.pk])))
    vote_url = reverse("step-vote", args=[with_steps.pk, step.pk])
    votes = timed(lambda i: client.post(vote_url, {"vote": "down" if i % 2 else "up"}, headers={"HX-Request": "true"}))
    print(f"{args.requests} requests each on {connection.vendor}, {args.steps} steps per side, the 39-criterion rubric:")
    for name, times in (("page with steps   ", page_with), ("page without steps", page_without), ("vote on a step    ", votes)):
        print(f"  {name}: p50 {statistics.median(times):6.2f} ms  p95 {percentile(times, 0.95):6.2f} ms  max {max(times):6.2f} ms")
    added = percentile(page_with, 0.95) - percentile(page_without, 0.95)
    vote_p95 = percentile(votes, 0.95)
    print(f"  the steps add {added:.2f} ms to the page's p95 (target <= {PAGE_ADDED_TARGET_MS} ms: {added / PAGE_ADDED_TARGET_MS:.2f}x)")
    print(f"  the vote's p95 is {vote_p95:.2f} ms (target <= {VOTE_TARGET_MS} ms: {vote_p95 / VOTE_TARGET_MS:.2f}x)")


if __name__ == "__main__":
    main()
