"""The run engine (judges.services.judge_run_execute) against a real HTTP server through the real openai client."""

import math
from decimal import Decimal

import pytest

from annotate.models import Criterion
from annotate.services.campaigns import campaign_create
from judges.models import CachedResponse, JudgeCall, JudgeRun, JudgeUnit, JudgeVerdict
from judges.selectors import run_estimate
from judges.services import judge_create, judge_run_create, judge_run_execute, judge_run_stop

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"
SECRET = "sk-test-do-not-leak-7f3a9c"
CATEGORY_SIZES = {"well_written": 21, "broad_coverage": 8, "neutral": 10}


@pytest.fixture
def llm_judge(llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    judge, _ = judge_create(
        name="fake-gpt",
        model="fake-judge",
        base_url=llm_server.base_url,
        api_key_env=KEY_ENV,
        input_price="2.50",
        cached_input_price="1.25",
        output_price="10",
        max_tokens=4000,
    )
    return judge


def execute(campaign, judge, **options):
    options.setdefault("concurrency", 4)
    run = judge_run_create(campaign=campaign, judge=judge, **options)
    return judge_run_execute(run=run)


def always(position):
    return lambda key, message: position


def test_it_asks_each_category_once_per_pair_and_maps_positions_to_sides(campaign, llm_judge, llm_server):
    llm_server.policy = always("1")

    run = execute(campaign, llm_judge, limit=2, swap=True)

    assert run.status == JudgeRun.Status.FINISHED, run.message
    assert len(llm_server.requests) == 2 * 2 * 3  # pairs x orders x categories
    assert (run.units_total, run.units_done, run.errors, run.calls) == (12, 12, 0, 12)
    units = JudgeUnit.objects.filter(run=run).select_related("category", "pair__article_a", "pair__article_b")
    for unit in units:
        assert unit.status == JudgeUnit.Status.DONE and unit.criterion is None
        verdicts = list(unit.verdicts.all())
        assert len(verdicts) == CATEGORY_SIZES[unit.category.key]
        # "1" is always Article 1: article A when it was shown first, else B.
        assert {v.winner for v in verdicts} == {"a" if unit.a_first else "b"}
        assert all(v.call.valid and v.rationale.startswith("Fake reason for") for v in verdicts)
    assert JudgeVerdict.objects.filter(unit__run=run).count() == 2 * 2 * 39
    # The judge reads the same citation-stripped text humans see, Article 1 first.
    unit = units.filter(a_first=False).first()
    user = llm_server.requests[0]["messages"][1]["content"]
    assert all(r["model"] == "fake-judge" and r["response_format"]["type"] == "json_schema" for r in llm_server.requests)
    prompts = [r["messages"][1]["content"] for r in llm_server.requests]
    first = next(p for p in prompts if unit.pair.article_b.display_markdown.strip() in p.split("===== Article 2 =====")[0])
    assert unit.pair.article_a.display_markdown.strip() in first.split("===== Article 2 =====")[1]
    assert user.startswith("Topic: ")


def test_it_draws_one_order_per_pair_and_category_from_the_seed(campaign, llm_judge, llm_server):
    run = execute(campaign, llm_judge, seed=7)

    assert run.status == JudgeRun.Status.FINISHED
    assert run.units_total == 8 * 3 == len(llm_server.requests)
    orders = {(u.pair_id, u.category_id): u.a_first for u in JudgeUnit.objects.filter(run=run)}
    assert len(orders) == 24 and set(orders.values()) == {True, False}
    again = run_estimate(campaign=campaign, judge=llm_judge, seed=7)
    assert (again.units_total, again.units_pending) == (24, 0)  # the same draw: nothing left to do
    assert run_estimate(campaign=campaign, judge=llm_judge, seed=8).units_pending > 0


def test_it_retries_a_server_error(campaign, llm_judge, llm_server):
    llm_server.script("500")

    run = execute(campaign, llm_judge, limit=1, concurrency=1)

    assert run.status == JudgeRun.Status.FINISHED and run.units_done == 3
    assert len(llm_server.requests) == 4
    failed = JudgeCall.objects.get(run=run, http_status=500)
    assert (failed.attempt, failed.valid, failed.cost_usd, failed.prompt_tokens) == (1, False, 0, 0)
    assert "HTTP 500" in failed.error
    assert JudgeCall.objects.get(unit=failed.unit, attempt=2).valid


def test_it_records_a_bad_request_as_the_units_error_without_retrying(campaign, llm_judge, llm_server):
    llm_server.script("400")

    run = execute(campaign, llm_judge, limit=1, concurrency=1)

    assert run.status == JudgeRun.Status.FINISHED and (run.units_done, run.errors, run.calls) == (2, 1, 3)
    unit = JudgeUnit.objects.get(run=run, status=JudgeUnit.Status.ERROR)
    assert "HTTP 400" in unit.error and "context window" in unit.error
    assert all("response_format" in body for body in llm_server.requests)  # not taken for a refused schema
    assert "plain JSON" not in run.message


def test_it_asks_for_plain_json_when_the_endpoint_refuses_the_schema(campaign, llm_judge, llm_server):
    llm_server.refuse_schema = True

    run = execute(campaign, llm_judge, limit=2, swap=True, concurrency=2)

    assert run.status == JudgeRun.Status.FINISHED and (run.units_done, run.errors) == (12, 0)
    refused = list(JudgeCall.objects.filter(run=run, http_status=400))
    assert 1 <= len(refused) <= 2  # the workers that sent before the first refusal came back
    assert all(c.cost_usd == 0 and "json_schema" in c.error for c in refused)
    assert run.calls == 12 + len(refused) and JudgeVerdict.objects.filter(unit__run=run).count() == 2 * 2 * 39
    plain = [body for body in llm_server.requests if "response_format" not in body]
    assert len(plain) == 12
    assert "refused the JSON schema" in run.message and "plain JSON" in run.message
    # What was sent without the schema is cached under its own hash...
    valid = JudgeCall.objects.filter(run=run, valid=True)
    assert {c.request_hash for c in valid} == set(CachedResponse.objects.values_list("request_hash", flat=True))
    assert not {c.request_hash for c in valid} & {c.request_hash for c in refused}
    # ... and answers the same questions later, for free, without a refused request first.
    copy = campaign_create(
        name="Copy", criterion_set=campaign.criterion_set, systems=["wikipedia", "atlas_agent", "quill_researcher"], benchmark="demo"
    )
    assert run_estimate(campaign=copy, judge=llm_judge, swap=True).cached == 12
    again = execute(copy, llm_judge, swap=True)
    assert again.units_done == 48
    assert JudgeCall.objects.filter(run=again, from_cache=True, valid=True, cost_usd=0).count() == 12


def test_it_waits_as_long_as_retry_after_says(campaign, llm_judge, llm_server):
    llm_server.script(("429", 1))

    run = execute(campaign, llm_judge, limit=1, concurrency=1)

    # Our own first backoff is 0.5 s (at most 0.55 with jitter): a second's wait can only come
    # from the header. Measured by the server, between the refused request and its retry.
    assert llm_server.arrivals[1] - llm_server.arrivals[0] >= 1.0
    assert run.status == JudgeRun.Status.FINISHED and run.units_done == 3
    throttled = JudgeCall.objects.get(run=run, http_status=429)
    assert throttled.cost_usd == 0 and "HTTP 429" in throttled.error


def test_it_retries_after_a_timeout(campaign, llm_judge, llm_server):
    llm_judge.timeout_seconds = 0.5
    llm_judge.save()
    llm_server.script("timeout")

    run = execute(campaign, llm_judge, limit=1, concurrency=1)

    assert run.status == JudgeRun.Status.FINISHED and run.units_done == 3
    timed_out = JudgeCall.objects.get(run=run, attempt=1, unit__calls__attempt=2)
    assert timed_out.error.startswith("timeout") and timed_out.http_status is None and timed_out.cost_usd == 0


@pytest.mark.parametrize("fault", ["truncated", "wrong_count", "bad_winner", "not_json", "no_choices"])
def test_it_bills_and_retries_an_unreadable_answer(campaign, llm_judge, llm_server, fault):
    llm_server.script(fault)

    run = execute(campaign, llm_judge, limit=1, concurrency=1)

    assert run.status == JudgeRun.Status.FINISHED and run.units_done == 3
    bad = JudgeCall.objects.get(run=run, valid=False)
    assert bad.http_status == 200 and bad.prompt_tokens > 0 and bad.cost_usd > 0
    assert bad.raw_response and bad.error
    assert not JudgeVerdict.objects.filter(call=bad).exists()
    assert JudgeCall.objects.get(unit=bad.unit, attempt=2).valid
    assert run.calls == 4 and run.cost_usd == sum(c.cost_usd for c in JudgeCall.objects.filter(run=run))


def test_it_keeps_the_body_of_a_reply_that_is_no_completion(campaign, llm_judge, llm_server):
    llm_server.script("no_choices")

    run = execute(campaign, llm_judge, limit=1, concurrency=1)

    bad = JudgeCall.objects.get(run=run, valid=False)
    assert bad.error == "the reply has no choices: the upstream model is overloaded"
    assert '"error"' in bad.raw_response and '"usage"' in bad.raw_response


def test_it_records_a_unit_that_stays_unreadable_as_an_error_never_a_verdict(campaign, llm_judge, llm_server):
    llm_server.script("truncated", "wrong_count", "bad_winner")

    run = execute(campaign, llm_judge, limit=1, concurrency=1)

    assert run.status == JudgeRun.Status.FINISHED
    assert (run.units_done, run.errors, run.calls) == (2, 1, 5)
    unit = JudgeUnit.objects.get(run=run, status=JudgeUnit.Status.ERROR)
    assert "unreadable answer after 3 attempt(s)" in unit.error and "winner '3'" in unit.error
    calls = list(unit.calls.order_by("attempt"))
    assert [c.valid for c in calls] == [False, False, False]
    assert all(c.raw_response and c.cost_usd > 0 for c in calls)
    assert not unit.verdicts.exists()
    assert not CachedResponse.objects.filter(request_hash=calls[0].request_hash).exists()
    assert "1 unit(s) in error" in run.message


def test_it_accounts_for_every_token_and_cent(campaign, llm_judge, llm_server):
    llm_server.cached_tokens = 300
    llm_server.script("500", "wrong_count")  # the first request fails unbilled, the second is billed and retried

    run = execute(campaign, llm_judge, limit=3, concurrency=3)

    assert run.status == JudgeRun.Status.FINISHED
    assert run.calls == len(llm_server.requests) == 9 + 2
    # Independently of the engine: the fake bills ceil(characters / 4) of the messages it got and of its answer.
    billed_prompts = [math.ceil(sum(len(m["content"]) for m in body["messages"]) / 4) for body in llm_server.requests[1:]]
    answers = [c.raw_response for c in JudgeCall.objects.filter(run=run, http_status=200)]
    completions = [math.ceil(len(text) / 4) for text in answers]
    assert len(answers) == len(billed_prompts) == 10
    assert (run.prompt_tokens, run.cached_tokens, run.completion_tokens) == (sum(billed_prompts), 300 * 10, sum(completions))
    expected = (
        sum(Decimal(p - 300) * Decimal("2.50") + 300 * Decimal("1.25") for p in billed_prompts) + sum(completions) * Decimal(10)
    ) / 1_000_000
    stored = JudgeRun.objects.get(pk=run.pk)
    assert stored.cost_usd == run.cost_usd == sum(c.cost_usd for c in JudgeCall.objects.filter(run=run))
    assert round(stored.cost_usd, 2) == round(expected, 2)
    assert abs(stored.cost_usd - expected) <= Decimal("0.00000001") * 10  # each call is rounded to 1e-8 USD


def test_it_answers_identical_requests_from_the_cache_for_free(campaign, llm_judge, llm_server):
    first = execute(campaign, llm_judge, swap=True)
    assert first.calls == 48 and first.cost_usd > 0
    # Another campaign on the same articles asks exactly the same questions.
    copy = campaign_create(
        name="Copy", criterion_set=campaign.criterion_set, systems=["wikipedia", "atlas_agent", "quill_researcher"], benchmark="demo"
    )
    llm_server.reset()

    second = execute(copy, llm_judge, swap=True)

    assert second.status == JudgeRun.Status.FINISHED
    assert llm_server.requests == []
    assert (second.units_done, second.calls, second.cost_usd, second.prompt_tokens) == (48, 48, 0, 0)
    assert all(c.from_cache and c.valid and c.cost_usd == 0 for c in JudgeCall.objects.filter(run=second))
    assert JudgeVerdict.objects.filter(unit__run=second).count() == 8 * 2 * 39
    mirrored = {
        (v.unit.pair.article_a_id, v.unit.pair.article_b_id, v.unit.a_first, v.criterion_id): v.winner
        for v in JudgeVerdict.objects.select_related("unit__pair")
        if v.unit.run_id == first.pk
    }
    assert all(
        mirrored[v.unit.pair.article_a_id, v.unit.pair.article_b_id, v.unit.a_first, v.criterion_id] == v.winner
        for v in JudgeVerdict.objects.filter(unit__run=second).select_related("unit__pair")
    )


def test_it_stops_before_the_budget_and_resumes_without_redoing(campaign, llm_judge, llm_server):
    """One request at a time, so that the stop is exact: every request left only when its worst case fit
    beside what the earlier ones had cost, and the run stopped at the first one whose worst case did not."""
    llm_judge.input_price, llm_judge.output_price, llm_judge.max_tokens = Decimal(1000), Decimal(0), 4000
    llm_judge.save()
    whole = run_estimate(campaign=campaign, judge=llm_judge).cost_usd
    budget = (whole / 2).quantize(Decimal("0.01"))

    run = execute(campaign, llm_judge, budget_usd=budget, concurrency=1)

    assert run.status == JudgeRun.Status.BUDGET
    calls = list(JudgeCall.objects.filter(run=run).order_by("pk"))
    assert 0 < len(calls) == run.units_done == len(llm_server.requests) < 24
    spent = Decimal(0)
    for call in calls:
        assert call.reserved_usd > 0 and spent + call.reserved_usd <= budget
        spent += call.cost_usd
    assert run.cost_usd == spent <= budget
    assert "Stopped at the budget" in run.message and "start the run again to resume" in run.message
    done_before = set(JudgeUnit.objects.filter(status=JudgeUnit.Status.DONE).values_list("pk", flat=True))
    requests_before = len(llm_server.requests)

    rest = execute(campaign, llm_judge, concurrency=1)

    assert rest.status == JudgeRun.Status.FINISHED
    assert rest.units_done == 24 and rest.calls == 24 - len(done_before) == len(llm_server.requests) - requests_before > 0
    assert not JudgeCall.objects.filter(run=rest, unit__in=done_before).exists()
    # The request the budget refused is the one the resumed run sent first: its worst case did not fit.
    refused = JudgeCall.objects.filter(run=rest).order_by("pk").first()
    assert budget - spent < refused.reserved_usd


def test_it_spends_nothing_with_a_budget_too_small_for_one_request(campaign, llm_judge, llm_server):
    run = execute(campaign, llm_judge, budget_usd=Decimal("0.0001"))

    assert run.status == JudgeRun.Status.BUDGET and run.cost_usd == 0 and run.units_done == 0
    assert llm_server.requests == []


def test_it_stops_cleanly_when_asked_and_resumes_later(campaign, llm_judge, llm_server):
    llm_server.latency = 0.1  # 24 units at concurrency 2 outlast the engine's half-second status poll

    def stop_after_two(run):
        if run.units_done >= 2 and run.status == JudgeRun.Status.RUNNING:
            run.status = judge_run_stop(run=run).status

    run = judge_run_create(campaign=campaign, judge=llm_judge, concurrency=2)
    run = judge_run_execute(run=run, progress=stop_after_two)

    assert run.status == JudgeRun.Status.STOPPED
    assert 2 <= run.units_done < 24
    assert run.units_done == JudgeUnit.objects.filter(status=JudgeUnit.Status.DONE).count()
    rest = execute(campaign, llm_judge)
    assert rest.status == JudgeRun.Status.FINISHED and rest.calls == 24 - run.units_done


def test_it_keeps_many_requests_in_flight(campaign, llm_judge, llm_server):
    llm_server.latency = 0.2  # long enough for every worker to have its request out at once

    run = execute(campaign, llm_judge, concurrency=8)

    assert run.status == JudgeRun.Status.FINISHED and len(llm_server.requests) == 24
    assert llm_server.max_in_flight == 8  # as many as asked for, never more


def test_it_sends_one_request_at_a_time_when_asked(campaign, llm_judge, llm_server):
    llm_server.latency = 0.05

    run = execute(campaign, llm_judge, limit=2, concurrency=1)

    assert run.status == JudgeRun.Status.FINISHED and len(llm_server.requests) == 6
    assert llm_server.max_in_flight == 1


def test_it_waits_until_a_retry_after_date(campaign, llm_judge, llm_server):
    # An HTTP date has whole seconds: 3 s ahead is at least 2 s ahead when it is read.
    llm_server.script(("429", 3, "date"))

    run = execute(campaign, llm_judge, limit=1, concurrency=1)

    assert run.status == JudgeRun.Status.FINISHED and run.units_done == 3
    assert llm_server.arrivals[1] - llm_server.arrivals[0] >= 1.5  # our own backoff would be 0.55 s at most
    throttled = JudgeCall.objects.get(run=run, http_status=429)
    assert throttled.cost_usd == 0 and "HTTP 429" in throttled.error


def test_it_records_a_unit_whose_http_retries_run_out_as_an_error(campaign, llm_judge, llm_server, monkeypatch):
    from judges import transport

    monkeypatch.setattr(transport, "RETRY_BASE_SECONDS", 0.001)  # the backoff itself is not under test here
    llm_server.script(*["500"] * (transport.HTTP_RETRIES + 1))  # the first unit's every attempt fails

    run = execute(campaign, llm_judge, limit=1, concurrency=1)

    assert run.status == JudgeRun.Status.FINISHED
    failed = JudgeUnit.objects.get(status=JudgeUnit.Status.ERROR)
    assert failed.error == f"HTTP 500: Error code: 500 - the fake server failed on purpose (gave up after {transport.HTTP_RETRIES} retries)"
    calls = list(failed.calls.order_by("id"))
    assert [c.http_status for c in calls] == [500] * (transport.HTTP_RETRIES + 1)
    assert all(c.cost_usd == 0 and not c.valid for c in calls)  # an HTTP error is never billed
    assert not JudgeVerdict.objects.filter(unit=failed).exists()
    assert JudgeUnit.objects.filter(status=JudgeUnit.Status.DONE).count() == 2 == run.units_done  # the other two units
    assert run.calls == len(llm_server.requests) == transport.HTTP_RETRIES + 1 + 2
    assert run.cost_usd == sum(c.cost_usd for c in JudgeCall.objects.filter(run=run))


def test_it_sends_the_key_from_the_environment_and_stores_it_nowhere(campaign, llm_judge, llm_server):
    llm_server.script("not_json")

    run = execute(campaign, llm_judge, limit=1, concurrency=2)

    assert llm_server.authorizations == [f"Bearer {SECRET}"] * 4
    stored = [str(v) for c in JudgeCall.objects.filter(run=run).values() for v in c.values()]
    stored += [str(v) for v in JudgeRun.objects.filter(pk=run.pk).values().get().values()]
    assert not any(SECRET in text for text in stored)


def test_it_reuses_one_client_per_endpoint_key_and_concurrency(llm_judge):
    from judges.services import _client

    first, again, other_key = _client(llm_judge, "sk-one", 4), _client(llm_judge, "sk-one", 4), _client(llm_judge, "sk-two", 4)

    assert first is again  # connections stay open across runs of a worker process
    assert other_key is not first and other_key.api_key == "sk-two"  # a rotated key takes effect
    assert _client(llm_judge, "sk-one", 32) is not first  # a pool as large as the run's concurrency


def test_it_fails_a_run_whose_key_variable_is_not_set(campaign, llm_judge, llm_server, monkeypatch):
    monkeypatch.delenv(KEY_ENV)

    run = execute(campaign, llm_judge)

    assert run.status == JudgeRun.Status.FAILED
    assert f"The environment variable {KEY_ENV}" in run.message and "not set" in run.message
    assert llm_server.requests == []


def test_it_fails_a_run_the_endpoint_refuses(campaign, llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    judge, _ = judge_create(name="lost", model="m", base_url=llm_server.base_url.replace("/v1", "/nowhere"), api_key_env=KEY_ENV)

    run = execute(campaign, judge, concurrency=1)

    assert run.status == JudgeRun.Status.FAILED and "HTTP 404" in run.message
    assert run.units_done == 0 and JudgeUnit.objects.filter(status=JudgeUnit.Status.PENDING).count() == 24


def test_it_judges_offline_with_the_baselines(campaign, llm_server):
    length, _ = judge_create(name="longer", kind="length")
    watch, _ = judge_create(name="watch", kind="words-to-watch", per_criterion=True)
    coin, _ = judge_create(name="coin", kind="random")

    runs = [execute(campaign, judge, limit=2, swap=True) for judge in (length, watch, coin)]

    assert [r.status for r in runs] == [JudgeRun.Status.FINISHED] * 3
    assert [r.units_total for r in runs] == [12, 2 * 2 * 39, 12]
    assert all(r.calls == 0 and r.cost_usd == 0 for r in runs) and llm_server.requests == []
    for verdict in JudgeVerdict.objects.filter(unit__judge=length).select_related("unit__pair__article_a", "unit__pair__article_b"):
        pair = verdict.unit.pair
        assert verdict.winner == ("a" if pair.article_a.word_count > pair.article_b.word_count else "b")
    assert JudgeVerdict.objects.filter(unit__judge=watch).count() == 2 * 2 * 39
    coin_sides = set(JudgeVerdict.objects.filter(unit__judge=coin).values_list("winner", flat=True))
    assert coin_sides == {"a", "b"}  # no ties: the campaign allows none
    assert Criterion.objects.filter(key__startswith="ww_wtw").exclude(watch_class="").exists()
