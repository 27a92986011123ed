"""Batch runs (judges.batch) against the loopback server's Batch API, through the real openai client."""

import os
import signal
import subprocess
import sys
import time
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from judges.models import CachedResponse, JudgeBatch, JudgeCall, JudgeRun, JudgeUnit, JudgeVerdict
from judges.pricing import token_cost
from judges.selectors import run_estimate
from judges.services import judge_create, judge_run_create, judge_run_execute, judge_run_stop
from tests.conftest import REPO
from tests.helpers import run as command
from tests.test_judge_commands import add_fake, database_for_a_subprocess, rows
from tests.test_judge_pages import work_off_the_queue

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"
SECRET = "sk-test-batch-3e9d41"
# The batch prices a judge gets when none are set: half of 2.50 / 1.25 (cached) / 10.
BATCH_INPUT, BATCH_CACHED, BATCH_OUTPUT = Decimal("1.25"), Decimal("0.625"), Decimal(5)


@pytest.fixture(autouse=True)
def quick_polls(settings, monkeypatch):
    settings.JUDGE_BATCH_POLL_SECONDS = 0.01
    monkeypatch.setenv(KEY_ENV, SECRET)


def llm_judge(server, name="fake-gpt", **options):
    judge, _ = judge_create(
        name=name,
        model="fake-judge",
        base_url=server.base_url,
        api_key_env=KEY_ENV,
        input_price="2.50",
        cached_input_price="1.25",
        output_price="10",
        max_tokens=4000,
        **options,
    )
    return judge


def execute(campaign, judge, **options):
    options.setdefault("concurrency", 2)
    return judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, **options))


def winners(judge):
    """Each verdict of the judge by (pair, criterion, order shown)."""
    return {
        (v.unit.pair_id, v.criterion_id, v.unit.a_first): v.winner
        for v in JudgeVerdict.objects.filter(unit__judge=judge).select_related("unit")
    }


def batch_bill(answered):
    """What the server's log of batch answers costs at the default batch prices, rounded per call as stored."""
    return sum(
        (
            token_cost(
                judge=type("Prices", (), {"input_price": BATCH_INPUT, "cached_input_price": BATCH_CACHED, "output_price": BATCH_OUTPUT}),
                prompt_tokens=a["prompt_tokens"],
                cached_tokens=a["cached_tokens"],
                completion_tokens=a["completion_tokens"],
            )
            for a in answered
            if a.get("batch")
        ),
        Decimal(0),
    )


def test_it_gives_the_synchronous_verdicts_at_batch_prices(campaign, llm_server):
    llm_server.cached_tokens = 100
    synchronous, batched = llm_judge(llm_server, "sync-gpt"), llm_judge(llm_server, "batch-gpt")
    sync = execute(campaign, synchronous, seed=5)
    # The two judges ask the same questions: without this the batch run would be answered from the cache.
    CachedResponse.objects.all().delete()
    sent_before = len(llm_server.requests)

    run = execute(campaign, batched, seed=5, batch=True)

    assert (sync.status, run.status) == (JudgeRun.Status.FINISHED, JudgeRun.Status.FINISHED), run.message
    assert len(llm_server.requests) == sent_before  # nothing went through /chat/completions
    assert len(llm_server.batch_submissions) == 1 and len(llm_server.batch_submissions[0]["custom_ids"]) == 24
    assert (run.units_total, run.units_done, run.errors, run.calls) == (24, 24, 0, 24)
    orders = {(u.pair_id, u.category_id, u.a_first) for u in JudgeUnit.objects.filter(judge=batched, status=JudgeUnit.Status.DONE)}
    assert len(orders) == 24 and orders == {(u.pair_id, u.category_id, u.a_first) for u in JudgeUnit.objects.filter(judge=synchronous)}
    assert len(winners(batched)) == 8 * 39 and winners(batched) == winners(synchronous)
    # At the batch prices: the server's bill of the lines it answered, and half the synchronous cost.
    billed = [a for a in llm_server.answered if a.get("batch")]
    assert len(billed) == 24 and run.cost_usd == batch_bill(billed) > 0
    assert abs(2 * run.cost_usd - sync.cost_usd) <= Decimal("1e-8") * 24
    assert run.cached_tokens == 100 * 24
    # Every call names its batch and the ids a provider's usage export shows.
    batch = JudgeBatch.objects.get()
    assert (batch.status, batch.provider_status, batch.requests, batch.completed) == (JudgeBatch.Status.READ, "completed", 24, 24)
    calls = list(JudgeCall.objects.filter(run=run))
    assert all(c.status == JudgeCall.Status.COMPLETED and c.batch_id == batch.pk and c.valid and c.reserved_usd > 0 for c in calls)
    assert {c.client_request_id for c in calls} == set(llm_server.batch_submissions[0]["custom_ids"])
    assert {c.response_id for c in calls} == {a["id"] for a in billed}
    assert {c.provider_request_id for c in calls} == {a["request_id"] for a in billed}
    assert all(body["response_format"]["type"] == "json_schema" for body in llm_server.batch_requests)
    assert llm_server.batch_submissions[0]["metadata"]["run"] == str(run.pk)


def test_it_retries_unreadable_answers_in_a_follow_up_batch(campaign, llm_server):
    judge = llm_judge(llm_server, max_attempts=2)
    # The three units of one pair are the first batch's three lines; the first unit's retry is the follow-up's first.
    llm_server.script("truncated", "wrong_count", "bad_winner", "not_json")

    run = execute(campaign, judge, limit=1, batch=True)

    assert run.status == JudgeRun.Status.FINISHED
    assert [len(s["custom_ids"]) for s in llm_server.batch_submissions] == [3, 3]
    assert all(cid.endswith("-a2") for cid in llm_server.batch_submissions[1]["custom_ids"])
    assert (run.units_done, run.errors, run.calls) == (2, 1, 6)
    failed = JudgeUnit.objects.get(status=JudgeUnit.Status.ERROR)
    assert "unreadable answer after 2 attempt(s)" in failed.error and not failed.verdicts.exists()
    assert [c.valid for c in failed.calls.order_by("attempt")] == [False, False]
    invalid = JudgeCall.objects.filter(run=run, valid=False)
    assert invalid.count() == 4 and all(c.cost_usd > 0 and c.raw_response and c.error for c in invalid)
    assert run.cost_usd == batch_bill(llm_server.answered) == sum(c.cost_usd for c in JudgeCall.objects.filter(run=run))
    assert not JudgeCall.objects.filter(status=JudgeCall.Status.SENT).exists()
    assert "1 unit(s) in error" in run.message


def test_it_retries_a_line_the_provider_failed(campaign, llm_server):
    llm_server.script("500")

    run = execute(campaign, llm_judge(llm_server), limit=1, batch=True)

    assert run.status == JudgeRun.Status.FINISHED and (run.units_done, run.calls) == (3, 4)
    failed = JudgeCall.objects.get(http_status=500)
    assert (failed.attempt, failed.cost_usd, failed.valid) == (1, 0, False) and "HTTP 500" in failed.error
    assert JudgeCall.objects.get(unit=failed.unit, attempt=2).valid
    assert len(llm_server.batch_submissions) == 2


def test_it_asks_for_plain_json_when_the_batch_endpoint_refuses_the_schema(campaign, llm_server):
    llm_server.refuse_schema = True

    run = execute(campaign, llm_judge(llm_server), limit=1, batch=True)

    assert run.status == JudgeRun.Status.FINISHED and run.units_done == 3
    assert ["response_format" in body for body in llm_server.batch_requests] == [True] * 3 + [False] * 3
    assert "refused the JSON schema" in run.message


def test_it_splits_the_units_into_files_of_at_most_the_line_limit(campaign, llm_server, settings):
    settings.JUDGE_BATCH_MAX_LINES = 10

    run = execute(campaign, llm_judge(llm_server), batch=True)

    assert run.status == JudgeRun.Status.FINISHED and run.units_done == 24
    assert [len(s["custom_ids"]) for s in llm_server.batch_submissions] == [10, 10, 4]
    assert list(JudgeBatch.objects.values_list("requests", "status")) == [(10, "read"), (10, "read"), (4, "read")]
    assert JudgeCall.objects.filter(run=run).values("batch").distinct().count() == 3


def test_it_leaves_the_units_of_an_expired_batch_pending_and_resubmits_them(campaign, llm_server):
    judge = llm_judge(llm_server)
    llm_server.expire_batches = 2

    run = execute(campaign, judge, limit=2, batch=True)

    assert run.status == JudgeRun.Status.FINISHED and (run.units_done, run.errors) == (2, 0)
    assert JudgeUnit.objects.filter(status=JudgeUnit.Status.PENDING).count() == 4
    assert "ended expired: 4 request(s) never ran" in run.message and "4 unit(s) left; start the run again to resume" in run.message
    never_ran = JudgeCall.objects.filter(run=run, http_status__isnull=True)
    assert never_ran.count() == 4 and all(c.cost_usd == 0 and c.error.startswith("not run: batch_expired") for c in never_ran)
    assert run.cost_usd == batch_bill(llm_server.answered)
    llm_server.expire_batches = None

    again = execute(campaign, judge, limit=2, batch=True)

    assert again.status == JudgeRun.Status.FINISHED and again.units_done == 6 and again.calls == 4
    assert len(llm_server.batch_submissions[1]["custom_ids"]) == 4


def test_it_leaves_its_batches_at_the_provider_when_stopped_and_reads_them_when_resumed(campaign, llm_server):
    judge = llm_judge(llm_server)
    llm_server.hold_batches = True

    def stop_once_submitted(run):
        if JudgeBatch.objects.exists() and run.status == JudgeRun.Status.RUNNING:
            run.status = judge_run_stop(run=run).status

    stopped = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, batch=True), progress=stop_once_submitted)

    assert stopped.status == JudgeRun.Status.STOPPED and stopped.units_done == 0
    assert "1 batch(es) left at the provider" in stopped.message and "without submitting them again" in stopped.message
    assert JudgeCall.objects.filter(status=JudgeCall.Status.SENT, batch__isnull=False).count() == 24
    llm_server.hold_batches = False

    resumed = execute(campaign, judge, batch=True)

    assert resumed.status == JudgeRun.Status.FINISHED and resumed.units_done == 24, resumed.message
    assert len(llm_server.batch_submissions) == 1
    assert not JudgeCall.objects.filter(status=JudgeCall.Status.SENT).exists()
    assert JudgeCall.objects.filter(run=resumed, valid=True).count() == 24 and resumed.cost_usd == batch_bill(llm_server.answered)


def test_it_submits_only_what_the_budget_covers_at_batch_prices(campaign, llm_server):
    judge = llm_judge(llm_server)
    judge.input_price, judge.output_price = Decimal(1000), Decimal(0)
    judge.save()
    whole = run_estimate(campaign=campaign, judge=judge).batch_cost_usd
    budget = (whole / 2).quantize(Decimal("0.01"))

    run = execute(campaign, judge, budget_usd=budget, batch=True)

    assert run.status == JudgeRun.Status.BUDGET and 0 < run.units_done < 24
    assert run.cost_usd <= budget and len(llm_server.batch_submissions) == 1
    assert len(llm_server.batch_submissions[0]["custom_ids"]) == run.units_done
    assert "Stopped at the budget" in run.message


def test_it_refuses_a_batch_run_of_a_baseline(campaign):
    longer, _ = judge_create(name="longer", kind="length")

    with pytest.raises(ValidationError, match="only an LLM judge runs through the Batch API"):
        judge_run_create(campaign=campaign, judge=longer, batch=True)


def test_it_shows_both_costs_in_a_dry_run(campaign, llm_server):
    judge = llm_judge(llm_server)
    estimate = run_estimate(campaign=campaign, judge=judge, swap=True)
    judge.batch_input_price, judge.batch_output_price = Decimal(2), Decimal(4)
    judge.save()
    priced = run_estimate(campaign=campaign, judge=judge, swap=True)

    result = command("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--swap", "--dry-run")

    assert result.code == 0, result.err
    assert abs(2 * estimate.batch_cost_usd - estimate.cost_usd) <= Decimal("1e-8") * 48 and estimate.batch_cost_usd > 0
    expected = (Decimal(priced.prompt_tokens) * 2 + Decimal(priced.completion_tokens) * 4) / 1_000_000
    assert abs(priced.batch_cost_usd - expected) <= Decimal("1e-8") * 48
    assert f"${priced.cost_usd:.4f} synchronous, ${priced.batch_cost_usd:.4f} with --batch" in result.out
    assert f"estimated total: ${priced.cost_usd:.4f} synchronous, ${priced.batch_cost_usd:.4f} with --batch" in result.out
    assert llm_server.batch_submissions == [] and not JudgeRun.objects.exists()


def test_it_runs_a_batch_from_the_command_with_its_figures(campaign, llm_server):
    add_fake(llm_server)
    command("add_judge", "longer", "--kind", "length")

    result = command("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--judge", "longer", "--limit", "2", "--batch")

    assert result.code == 0, result.err
    fake, longer = JudgeRun.objects.get(judge__name="fake-gpt"), JudgeRun.objects.get(judge__name="longer")
    assert fake.batch and not longer.batch  # a baseline is judged offline whatever the flag
    assert (fake.status, fake.units_done) == (JudgeRun.Status.FINISHED, 6)
    figures = (
        f"Batch API: 6 calls answered through 1 batch(es), ${fake.cost_usd:.8f} at the batch prices; 0 batch(es) still at the provider"
    )
    assert figures in result.out
    assert "batch(es) at the provider (" in result.err  # progress while it waited


def test_it_starts_a_batch_run_from_the_web(client, campaign, rachel, llm_server, transactional_db):
    judge = llm_judge(llm_server)
    longer, _ = judge_create(name="longer", kind="length")
    client.force_login(rachel)
    page = client.get(reverse("judge-campaign", args=[campaign.pk]))
    assert page.status_code == 200 and 'name="batch"' in page.content.decode() and "Batch API (cheaper, slower)" in page.content.decode()

    refused = client.post(reverse("judge-run-start", args=[campaign.pk]), {"judge": longer.pk, "concurrency": "1", "batch": "on"})
    response = client.post(
        reverse("judge-run-start", args=[campaign.pk]), {"judge": judge.pk, "concurrency": "1", "limit": "1", "batch": "on"}
    )

    assert refused.status_code == 422 and "only an LLM judge runs through the Batch API" in refused.content.decode()
    assert response.status_code == 302
    run = JudgeRun.objects.get()
    assert run.batch and run.status == JudgeRun.Status.QUEUED
    work_off_the_queue()
    run.refresh_from_db()
    assert (run.status, run.units_done) == (JudgeRun.Status.FINISHED, 3)
    assert len(llm_server.batch_submissions) == 1 and llm_server.requests == []


# --- real kills -------------------------------------------------------------------------


def run_judges_batch(url: str) -> tuple[list[str], dict]:
    env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": "x", "DEBUG": "0", KEY_ENV: SECRET}
    return [sys.executable, "manage.py", "run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--batch"], env


def kill(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


@pytest.mark.django_db(transaction=True)
def test_it_resumes_a_run_killed_while_polling_without_submitting_again(campaign, tmp_path, llm_server):
    assert add_fake(llm_server).code == 0
    url = database_for_a_subprocess(tmp_path)
    command_line, env = run_judges_batch(url)
    llm_server.hold_batches = True

    process = subprocess.Popen(command_line, cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        for line in process.stderr:
            if "(in_progress)" in line:
                break
        kill(process)
    finally:
        if process.poll() is None:
            process.kill()
        process.stderr.close()
    assert rows(url, "select status, provider_status, requests from judges_judgebatch") == [("submitted", "in_progress", 24)]
    assert rows(url, "select count(*) from judges_judgecall where status = 'sent' and batch_id is not null") == [(24,)]
    assert len(llm_server.batch_submissions) == 1 and llm_server.answered == []
    llm_server.hold_batches = False

    resumed = subprocess.run(command_line, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)

    assert resumed.returncode == 0, resumed.stderr
    assert len(llm_server.batch_submissions) == 1 and len(llm_server.answered) == 24  # submitted once, billed once
    assert rows(url, "select status, count(*) from judges_judgeunit group by status") == [("done", 24)]
    assert rows(url, "select count(*) from judges_judgecall where status = 'sent'") == [(0,)]
    valid_per_unit = rows(url, "select count(*) from judges_judgecall where valid group by unit_id")
    assert len(valid_per_unit) == 24 and set(valid_per_unit) == {(1,)}
    assert rows(url, "select count(*) from judges_judgeverdict") == [(8 * 39,)]
    assert rows(url, "select status from judges_judgebatch") == [("read",)]
    runs = rows(url, "select status, message from judges_judgerun order by id")
    assert runs[0][0] == "stopped" and "took over" in runs[0][1] and runs[1][0] == "finished"
    assert "Batch API: 24 calls answered through 1 batch(es)" in resumed.stdout


@pytest.mark.django_db(transaction=True)
def test_it_finds_a_batch_the_provider_accepted_just_before_the_kill(campaign, tmp_path, llm_server, monkeypatch):
    assert add_fake(llm_server).code == 0
    url = database_for_a_subprocess(tmp_path)
    command_line, env = run_judges_batch(url)
    llm_server.hang_batch_create = True  # the batch is made, its id never reaches the client
    monkeypatch.setattr(llm_server, "hang_seconds", 60.0)  # held until the kill, however slow the machine

    process = subprocess.Popen(command_line, cwd=REPO, env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not llm_server.batch_submissions and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        kill(process)
    finally:
        if process.poll() is None:
            process.kill()
        llm_server.release_batch_create()
    assert len(llm_server.batch_submissions) == 1
    assert rows(url, "select count(*) from judges_judgebatch") == [(0,)]
    assert rows(url, "select count(*) from judges_judgecall where status = 'sent' and batch_id is null") == [(24,)]
    llm_server.hang_batch_create = False
    llm_server.batch_polls = 0

    resumed = subprocess.run(command_line, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)

    assert resumed.returncode == 0, resumed.stderr
    assert len(llm_server.batch_submissions) == 1 and len(llm_server.answered) == 24
    assert rows(url, "select provider_batch_id, status from judges_judgebatch") == [(llm_server.batch_submissions[0]["id"], "read")]
    assert rows(url, "select status, count(*) from judges_judgeunit group by status") == [("done", 24)]
    assert rows(url, "select count(*) from judges_judgecall where status = 'sent'") == [(0,)]
