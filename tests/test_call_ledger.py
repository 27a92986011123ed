"""The write-ahead call ledger: every attempt's call row exists before the request leaves, so a run
killed with requests in flight (SIGKILL, a real subprocess) leaves them as "possibly billed", and the
loopback server's own log of what it answered (what a provider bills) costs between the recorded
cost and the recorded plus possibly-billed cost. Resuming buys no finished unit again."""

import json
import os
import subprocess
import sys
import time
from decimal import Decimal

import pytest
from django.db import connection
from django.urls import reverse

from judges.engine import judge_run_execute
from judges.models import Judge, JudgeCall, JudgeRun, JudgeUnit
from judges.pricing import token_cost
from judges.services import judge_create, judge_run_create
from tests.conftest import REPO
from tests.test_judge_commands import KEY_ENV, SECRET, add_fake, database_for_a_subprocess, kill_after_units, rows

pytestmark = pytest.mark.django_db
USD = Decimal("0.00000001")


def provider_bill(answered: list[dict], judge: Judge) -> Decimal:
    """What the loopback server's log of answered calls costs at the judge's prices."""
    return sum(
        (
            token_cost(
                judge=judge, prompt_tokens=a["prompt_tokens"], cached_tokens=a["cached_tokens"], completion_tokens=a["completion_tokens"]
            )
            for a in answered
        ),
        Decimal(0),
    )


@pytest.fixture
def llm_judge(llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    judge, _ = judge_create(
        name="gpt-4.1-mini", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV,
        input_price="2.50", output_price="10", max_tokens=2000,
    )  # fmt: skip
    return judge


@pytest.mark.django_db(transaction=True)
def test_it_writes_each_attempt_down_before_sending_it(campaign, llm_judge, llm_server):
    """Seen from the server while it answers: the call row of the very request being answered exists,
    found by the X-Client-Request-Id the request carries, "sent", with its attempt number."""
    seen: dict[str, tuple | None] = {}

    def policy(key, user_message):
        # runs in the server's thread, on its own database connection, while the request is in flight
        own = llm_server.answering.client_request_id
        seen[own] = JudgeCall.objects.filter(client_request_id=own).values_list("status", "attempt", "run").first()
        return "1"

    llm_server.policy = policy
    llm_server.script("500")  # the first request fails: its unit's retry is attempt 2
    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=llm_judge, concurrency=1))
    connection.close()

    assert run.status == JudgeRun.Status.FINISHED and run.units_done == 24
    # Every answered request had its own row, written before the answer: never one without.
    assert set(seen) == {a["client_request_id"] for a in llm_server.answered} and len(seen) == 24 and "" not in seen
    assert set(seen.values()) <= {(JudgeCall.Status.SENT, 1, run.pk), (JudgeCall.Status.SENT, 2, run.pk)}
    assert [attempt for _, attempt, _ in seen.values()].count(2) == 1  # the retry's own row was written before it left
    calls = JudgeCall.objects.filter(run=run)
    assert not calls.filter(status=JudgeCall.Status.SENT).exists()  # every row completed
    assert calls.count() == 25 and calls.filter(attempt=2).count() == 1
    # Ids to reconcile with the provider: ours on every row, theirs where the server answered
    answered = {a["client_request_id"]: a for a in llm_server.answered}
    assert len(answered) == 24 and set(answered) <= set(calls.values_list("client_request_id", flat=True))
    for call in calls.filter(http_status=200):
        a = answered[call.client_request_id]
        assert call.provider_request_id == a["request_id"] and call.response_id == a["id"]
    failed = calls.get(http_status=500)
    assert failed.provider_request_id.startswith("req-fake-") and failed.cost_usd == 0
    assert calls.filter(reserved_usd__lte=0).count() == 0
    assert run.cost_usd == provider_bill(llm_server.answered, llm_judge)


@pytest.mark.django_db(transaction=True)
def test_it_drops_the_rows_of_requests_it_never_sent(campaign, llm_judge, llm_server):
    """A budget that stops the run leaves queued requests unsent: no row claims they might cost."""
    llm_server.latency = 0.05
    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=llm_judge, concurrency=4, budget_usd=Decimal("0.06")))
    assert run.status == JudgeRun.Status.BUDGET
    assert not JudgeCall.objects.filter(status=JudgeCall.Status.SENT).exists()
    assert JudgeCall.objects.count() == len(llm_server.requests)


@pytest.mark.django_db(transaction=True)
def test_it_counts_calls_in_flight_at_a_kill_as_possibly_billed_and_resumes_without_buying_twice(campaign, tmp_path, llm_server):
    assert add_fake(llm_server, name="gpt-4.1-mini").code == 0
    judge = Judge.objects.get(name="gpt-4.1-mini")
    url = database_for_a_subprocess(tmp_path)
    env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": "x", KEY_ENV: SECRET}
    llm_server.latency = 0.3
    command = [sys.executable, "manage.py", "run_judges", "--campaign", "Pilot", "--judge", "gpt-4.1-mini", "--concurrency", "6"]

    # Past the first round of requests, so that more jobs than workers have been queued.
    kill_after_units(command, env, "gpt-4.1-mini", 12)
    time.sleep(2 * llm_server.latency)  # the server finishes (and bills) the requests it was holding

    done_at_kill = {unit for (unit,) in rows(url, "select id from judges_judgeunit where status = 'done'")}
    assert 12 <= len(done_at_kill) < 24
    recorded = sum((Decimal(str(c)) for (c,) in rows(url, "select cost_usd from judges_judgecall where status = 'completed'")), Decimal(0))
    sent = rows(url, "select client_request_id, reserved_usd, unit_id from judges_judgecall where status = 'sent'")
    possibly = sum((Decimal(str(r)) for _, r, _ in sent), Decimal(0))
    billed = provider_bill(llm_server.answered, judge)
    assert sent, "some requests were in flight at the kill"
    # Only requests handed to the network, at most one per worker: none of the jobs merely queued.
    worst = max(Decimal(str(r)) for (r,) in rows(url, "select reserved_usd from judges_judgecall"))
    assert len(sent) <= 6 and possibly <= 6 * worst
    # each call's cost is stored rounded to 1e-8 USD; the server's bill is summed unrounded
    rounding = USD * (len(llm_server.answered) + 1)
    assert recorded - rounding <= billed <= recorded + possibly + rounding
    assert billed > recorded  # the kill did cost something the platform never saw answered...
    # ...and every call the server answered has its row: completed, or sent with no answer recorded
    completed_ids = {i for (i,) in rows(url, "select client_request_id from judges_judgecall where status = 'completed'")}
    sent_ids = {i for i, _, _ in sent}
    for a in llm_server.answered:
        assert a["client_request_id"] in completed_ids | sent_ids
    assert not {unit for _, _, unit in sent} & done_at_kill
    answered_before = len(llm_server.answered)

    resumed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)

    assert resumed.returncode == 0, resumed.stderr
    assert "possibly billed" in resumed.stdout and f"{len(sent)} call" in resumed.stdout
    assert rows(url, "select status, count(*) from judges_judgeunit group by status") == [("done", 24)]
    # No finished unit bought again: the resumed run asked only for the units not done at the kill.
    new_ids = {a["client_request_id"] for a in llm_server.answered[answered_before:]}
    assert new_ids and all(i.isalnum() for i in new_ids)  # hex: safe to quote in the query below
    bought_again = rows(url, f"select unit_id from judges_judgecall where client_request_id in ({','.join(repr(i) for i in new_ids)})")
    assert len(bought_again) == len(new_ids) == 24 - len(done_at_kill)
    assert not {unit for (unit,) in bought_again} & done_at_kill
    # The killed run's unanswered calls stay on record, apart from the recorded cost, each at its own
    # request's worst case: what the resumed run reserved for the same unit's request.
    assert rows(url, "select count(*) from judges_judgecall where status = 'sent'") == [(len(sent),)]
    for _, reserved, unit in sent:
        again = rows(url, f"select reserved_usd from judges_judgecall where unit_id = {int(unit)} and status = 'completed' and attempt = 1")
        assert again and Decimal(str(again[-1][0])) == Decimal(str(reserved))
    report = subprocess.run(
        [sys.executable, "manage.py", "calibration_report", "--campaign", "Pilot", "--rounds", "0"], cwd=REPO, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    section = json.loads(report.stdout)["judges"][0]
    assert section["n_possibly_billed_calls"] == len(sent)
    assert abs(Decimal(str(section["possibly_billed_usd"])) - possibly) <= USD  # the report rounds to 1e-8


def test_it_shows_recorded_and_possibly_billed_costs_on_the_run_page(client, campaign, llm_judge, rachel):
    run = judge_run_create(campaign=campaign, judge=llm_judge)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.STOPPED, cost_usd=Decimal("0.0125"))
    unit = JudgeUnit.objects.create(
        judge=llm_judge, pair=campaign.pairs.first(), category=campaign.criterion_set.categories.first(), a_first=True, order="ab"
    )
    for attempt, reserved in ((1, "0.02"), (2, "0.03")):
        JudgeCall.objects.create(
            unit=unit, run=run, attempt=attempt, status=JudgeCall.Status.SENT, reserved_usd=Decimal(reserved), request_hash="h"
        )
    client.force_login(rachel)
    html = client.get(reverse("judge-campaign", args=[campaign.pk])).content.decode()
    assert "+ up to 0.05000000 possibly billed (2 calls sent, no answer recorded)" in html
    assert '<td class="num">0.05000000 (2 calls)</td>' in html
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
    assert "+ up to 0.05000000 in flight" in client.get(reverse("judge-campaign", args=[campaign.pk])).content.decode()


def test_it_shows_the_pacing_and_the_429s_on_the_run_page(client, campaign, llm_judge, rachel):
    Judge.objects.filter(pk=llm_judge.pk).update(rpm=120, tpm=200_000)
    run = judge_run_create(campaign=campaign, judge=llm_judge, concurrency=8)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.FINISHED, paced_ms=61_500, rate_limited=3)
    client.force_login(rachel)
    html = client.get(reverse("judge-campaign", args=[campaign.pk])).content.decode()
    assert "paced under 120 requests and 200000 tokens per minute: the workers waited 62 s for their turn" in html
    assert "3 × 429 (rate limited), backed off" in html
