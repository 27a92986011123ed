"""The guess question put to LLM judges (`run_judges --guess`): one call of its own per pair and order,
billed, written ahead, budgeted and cached like the others, against the real loopback HTTP server."""

import json
from decimal import Decimal

import pytest

from judges.models import JudgeCall, JudgeRun, JudgeUnit
from judges.selectors import run_estimate, run_plan
from judges.services import judge_create, judge_run_create, judge_run_execute
from judges.transport import CallSettings

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"
GUESS_WORDS = "Which article do you think is the"


@pytest.fixture
def llm_judge(llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-guess")
    judge, _ = judge_create(
        name="fake-gpt", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV,
        input_price="2.50", output_price="10", max_tokens=4000,
    )  # fmt: skip
    return judge


def execute(campaign, judge, **options):
    options.setdefault("concurrency", 4)
    return judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, **options))


def guess_requests(server) -> list[dict]:
    return [r for r in server.requests if GUESS_WORDS in r["messages"][-1]["content"]]


def test_it_asks_one_guess_per_pair_and_order_and_stores_the_answers_by_side(campaign, llm_judge, llm_server):
    llm_server.guess_policy = lambda message: "first"

    run = execute(campaign, llm_judge, limit=2, swap=True, guess=True)

    assert run.status == JudgeRun.Status.FINISHED, run.message
    assert len(llm_server.requests) == 2 * 2 * (3 + 1)  # pairs x orders x (categories + the guess question)
    assert len(guess_requests(llm_server)) == llm_server.guess_requests == 4
    guesses = JudgeUnit.objects.filter(run=run, question=JudgeUnit.Question.GUESS)
    assert guesses.count() == 4 and (run.units_total, run.units_done) == (16, 16)
    # "first" is Article 1: article A when A was shown first.
    assert {(u.a_first, u.guess) for u in guesses} == {(True, "a"), (False, "b")}
    assert all(u.category_id is None and not u.verdicts.exists() for u in guesses)
    calls = JudgeCall.objects.filter(unit__in=guesses)
    assert calls.count() == 4 and all(c.valid and c.cost_usd > 0 and c.status == JudgeCall.Status.COMPLETED for c in calls)
    assert run.cost_usd == sum(c.cost_usd for c in JudgeCall.objects.filter(run=run))


def test_it_asks_nothing_more_by_default(campaign, llm_judge, llm_server):
    run = execute(campaign, llm_judge, limit=2, swap=True)

    assert run.status == JudgeRun.Status.FINISHED, run.message
    assert len(llm_server.requests) == 2 * 2 * 3 and llm_server.guess_requests == 0
    assert not JudgeUnit.objects.filter(question=JudgeUnit.Question.GUESS).exists()
    assert run.calls == run.units_total == 12


def test_it_asks_once_per_order_shown_when_orders_are_drawn_per_category(campaign, llm_judge, llm_server):
    run = execute(campaign, llm_judge, seed=7, guess=True)

    assert run.status == JudgeRun.Status.FINISHED, run.message
    shown = set(JudgeUnit.objects.filter(run=run, question=JudgeUnit.Question.VERDICTS).values_list("pair_id", "a_first"))
    asked = set(JudgeUnit.objects.filter(run=run, question=JudgeUnit.Question.GUESS).values_list("pair_id", "a_first"))
    assert asked == shown and llm_server.guess_requests == len(shown)
    assert len(llm_server.requests) == 8 * 3 + len(shown)


def test_it_keeps_the_guess_out_of_the_verdicts_conversations(campaign, llm_judge, llm_server):
    execute(campaign, llm_judge, limit=2, swap=True, guess=True)

    asked = guess_requests(llm_server)
    verdicts = [r for r in llm_server.requests if r not in asked]
    assert len(verdicts) == 12
    for request in verdicts:
        text = " ".join(m["content"] for m in request["messages"])
        assert GUESS_WORDS not in text and "Wikipedia" not in text and "guess" not in text.lower()
    for request in asked:
        # A conversation of its own: the system prompt and the question, no verdict before it.
        assert [m["role"] for m in request["messages"]] == ["system", "user"]
        assert request["response_format"]["json_schema"]["name"] == "guess"
        assert request["response_format"]["json_schema"]["schema"]["properties"]["guess"]["enum"] == ["first", "second", "unknown"]
        assert "Which article do you think is the Wikipedia article?" in request["messages"][1]["content"]


def test_it_counts_the_guess_calls_in_the_budget_and_stops_before_sending(campaign, llm_judge, llm_server):
    first = execute(campaign, llm_judge, limit=2, swap=True)
    assert first.status == JudgeRun.Status.FINISHED
    llm_server.reset()

    # Every verdict is done: only the four guess calls are left, and the budget holds none of them.
    run = execute(campaign, llm_judge, limit=2, swap=True, guess=True, budget_usd=Decimal("0.0001"))

    assert run.status == JudgeRun.Status.BUDGET, run.message
    assert llm_server.requests == [] and llm_server.answered == []
    assert not JudgeCall.objects.filter(run=run).exists()
    assert JudgeUnit.objects.filter(question=JudgeUnit.Question.GUESS, status=JudgeUnit.Status.PENDING).count() == 4


def test_it_spends_within_a_budget_that_holds_one_guess(campaign, llm_judge, llm_server):
    execute(campaign, llm_judge, limit=1, swap=True)
    llm_server.reset()
    plan = run_plan(campaign=campaign, judge=llm_judge, limit=1, swap=True, guess=True)
    worst = {CallSettings.of(llm_judge, "").worst_case(plan.request(u)) for u in plan.pending()}
    assert len(plan.pending()) == 2 and len(worst) == 1  # the two orders of one pair: the same worst case
    # Room for one guess's worst case: once it is spent, the second one's no longer fits.
    budget = (worst.pop() + Decimal("0.000001")).quantize(Decimal("0.000001"))  # at or above it, as the budget is stored
    run = execute(campaign, llm_judge, limit=1, swap=True, guess=True, concurrency=1, budget_usd=budget)

    assert run.status == JudgeRun.Status.BUDGET, run.message
    assert llm_server.guess_requests == 1 and 0 < run.cost_usd <= run.budget_usd
    assert JudgeCall.objects.filter(run=run, status=JudgeCall.Status.COMPLETED).count() == 1
    assert JudgeUnit.objects.filter(question=JudgeUnit.Question.GUESS, status=JudgeUnit.Status.DONE).count() == 1


def test_it_answers_a_guess_from_the_cache_of_the_same_endpoint(campaign, llm_judge, llm_server):
    execute(campaign, llm_judge, limit=1, swap=True, guess=True)
    twin, _ = judge_create(
        name="fake-gpt-again", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV, input_price="2.50",
        output_price="10", max_tokens=4000,
    )  # fmt: skip
    llm_server.reset()

    run = execute(campaign, twin, limit=1, swap=True, guess=True)

    assert run.status == JudgeRun.Status.FINISHED
    assert llm_server.requests == [] and run.cost_usd == 0
    guesses = JudgeUnit.objects.filter(judge=twin, question=JudgeUnit.Question.GUESS)
    assert guesses.count() == 2 and all(u.guess for u in guesses)
    assert all(c.from_cache for c in JudgeCall.objects.filter(unit__in=guesses))


def test_it_estimates_the_guess_calls_in_a_dry_run(campaign, llm_judge):
    without = run_estimate(campaign=campaign, judge=llm_judge, limit=2, swap=True)
    with_guess = run_estimate(campaign=campaign, judge=llm_judge, limit=2, swap=True, guess=True)

    assert (with_guess.requests - without.requests, with_guess.units_total - without.units_total) == (4, 4)
    assert with_guess.cost_usd > without.cost_usd


def test_it_retries_an_unreadable_guess_and_bills_it(campaign, llm_judge, llm_server):
    answers = ["perhaps"]
    llm_server.guess_policy = lambda message: answers.pop() if answers else "second"

    run = execute(campaign, llm_judge, limit=1, swap=True, guess=True, concurrency=1)

    assert run.status == JudgeRun.Status.FINISHED, run.message
    unit = JudgeUnit.objects.get(question=JudgeUnit.Question.GUESS, a_first=True)
    calls = list(unit.calls.order_by("attempt"))
    assert [c.valid for c in calls] == [False, True] and all(c.cost_usd > 0 for c in calls)
    assert "not one of first, second, unknown" in calls[0].error
    assert unit.guess == ("b" if unit.a_first else "a")


def test_it_refuses_the_guess_for_a_baseline_and_without_a_reference(campaign, llm_judge):
    from django.core.exceptions import ValidationError

    baseline, _ = judge_create(name="longer", kind="length")
    with pytest.raises(ValidationError, match="only an LLM judge can be asked the guess question"):
        judge_run_create(campaign=campaign, judge=baseline, guess=True)
    campaign.reference_system = None
    campaign.save(update_fields=["reference_system"])
    with pytest.raises(ValidationError, match="no reference system"):
        judge_run_create(campaign=campaign, judge=llm_judge, guess=True)
    assert not JudgeRun.objects.exists()


def test_it_asks_the_guess_through_the_batch_api_too(campaign, llm_judge, llm_server, settings):
    settings.JUDGE_BATCH_POLL_SECONDS = 0.01
    llm_server.guess_policy = lambda message: "unknown"

    run = execute(campaign, llm_judge, limit=2, swap=True, guess=True, batch=True)

    assert run.status == JudgeRun.Status.FINISHED, run.message
    assert llm_server.requests == [] and len(llm_server.batch_submissions) == 1
    assert llm_server.guess_requests == 4 and len(llm_server.batch_submissions[0]["custom_ids"]) == 16
    guesses = JudgeUnit.objects.filter(run=run, question=JudgeUnit.Question.GUESS)
    assert [u.guess for u in guesses] == ["unknown"] * 4
    assert all(c.batch_id and c.cost_usd > 0 for c in JudgeCall.objects.filter(unit__in=guesses))


def test_it_runs_the_guess_from_the_command_line(campaign, llm_judge, llm_server):
    from tests.helpers import run

    dry = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--limit", "2", "--swap", "--guess", "--dry-run")
    assert dry.code == 0, dry.err
    assert "fake-gpt: 16 of 16 units to judge, 16 requests" in dry.out and llm_server.requests == []

    result = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--limit", "2", "--swap", "--guess")

    assert result.code == 0, result.err
    assert "16/16 units done" in result.out and llm_server.guess_requests == 4
    assert JudgeRun.objects.get().guess


def test_it_leaves_the_guess_out_for_a_baseline_named_with_an_llm_judge(campaign, llm_judge, llm_server):
    from tests.helpers import run

    judge_create(name="longer", kind="length")

    result = run("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--judge", "longer", "--limit", "1", "--guess")

    assert result.code == 0, result.err
    assert dict(JudgeRun.objects.values_list("judge__name", "guess")) == {"fake-gpt": True, "longer": False}
    assert not JudgeUnit.objects.filter(judge__name="longer", question=JudgeUnit.Question.GUESS).exists()


def test_it_starts_a_guessing_run_from_the_web_form(client, campaign, rachel, llm_judge, llm_server):
    from django.urls import reverse

    client.force_login(rachel)
    page = client.get(reverse("judge-campaign", args=[campaign.pk]))
    assert page.status_code == 200 and 'name="guess"' in page.content.decode()

    response = client.post(reverse("judge-run-start", args=[campaign.pk]), {"judge": llm_judge.pk, "concurrency": "2", "guess": "on"})

    assert response.status_code == 302
    assert JudgeRun.objects.get().guess
    assert "guess question" in client.get(reverse("judge-campaign", args=[campaign.pk])).content.decode()


def test_it_exports_the_guess_calls_in_the_calls_file(campaign, llm_judge, llm_server):
    from interchange.export import call_rows

    execute(campaign, llm_judge, limit=1, swap=True, guess=True)

    rows = call_rows(campaign)
    guesses = [r for r in rows if r["question"] == "guess"]
    assert len(guesses) == 2 and all(r["category"] == "" and r["criterion"] == "" for r in guesses)
    assert {r["question"] for r in rows} == {"verdicts", "guess"}
    assert sum(Decimal(r["cost_usd"]) for r in rows) == JudgeRun.objects.get().cost_usd


def test_it_keeps_asking_the_guess_when_an_interrupted_run_is_resumed(campaign, llm_judge, llm_server):
    from judges.recovery import judge_run_resume

    run = judge_run_create(campaign=campaign, judge=llm_judge, limit=1, guess=True)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.INTERRUPTED)
    run.refresh_from_db()

    resumed = judge_run_resume(run=run)

    assert resumed.pk != run.pk and resumed.guess


def test_it_sends_the_same_verdict_requests_with_and_without_the_guess(campaign, llm_judge, llm_server):
    from judges.models import CachedResponse

    execute(campaign, llm_judge, limit=2, swap=True)
    without = sorted(json.dumps(r, sort_keys=True) for r in llm_server.requests)
    JudgeUnit.objects.all().delete()
    CachedResponse.objects.all().delete()
    llm_server.reset()

    execute(campaign, llm_judge, limit=2, swap=True, guess=True)

    asked = guess_requests(llm_server)
    verdicts = sorted(json.dumps(r, sort_keys=True) for r in llm_server.requests if r not in asked)
    assert len(asked) == 4 and verdicts == without
