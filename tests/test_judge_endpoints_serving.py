"""What a judge does with what its endpoint serves (issue 36), against the loopback server through the
real openai client: retries that tell the model what was wrong, the run that says when retries
repeated themselves, the response cache keyed on the endpoint (and the migration that keys old rows),
the concurrency warning from the server's slots, and --check's report of the served model."""

import importlib

import pytest
from django.apps import apps
from django.urls import reverse

from judges.check import judge_check
from judges.models import CachedResponse, JudgeCall, JudgeRun
from judges.selectors import run_estimate
from judges.services import judge_build, judge_create, judge_run_create, judge_run_execute
from judges.serving import endpoint_defaults
from judges.wire import cache_endpoint
from tests.helpers import run as run_command
from tests.llm_server import FakeLLM

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"


def make_judge(base_url, monkeypatch, name="fake-gpt", **options):
    monkeypatch.setenv(KEY_ENV, "sk-test-serving")
    judge, _ = judge_create(
        name=name, model="fake-judge", base_url=base_url, api_key_env=KEY_ENV, input_price="2.50", output_price="10", **options
    )
    return judge


def execute(campaign, judge, **options):
    options.setdefault("concurrency", 1)
    return judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, **options))


def test_it_retries_an_unreadable_answer_with_the_answer_and_the_reason_in_the_conversation(campaign, llm_server, monkeypatch):
    judge = make_judge(llm_server.base_url, monkeypatch)
    llm_server.script("wrong_count")  # the first answer leaves out its last criterion

    run = execute(campaign, judge, limit=1)

    assert run.status == JudgeRun.Status.FINISHED and run.units_done == 3, run.message
    first, retry = llm_server.requests[0], llm_server.requests[1]
    bad = JudgeCall.objects.get(run=run, valid=False)
    assert retry["messages"][:2] == first["messages"]
    assert retry["messages"][2] == {"role": "assistant", "content": bad.raw_response}
    told = retry["messages"][3]
    assert told["role"] == "user" and told["content"].startswith(f"Your answer could not be used: {bad.error}.")
    assert "1 of 21 criteria have no verdict: ww_" in told["content"] and "ww_cc_1, ww_cc_2" in told["content"]
    assert JudgeCall.objects.get(unit=bad.unit, attempt=2).valid
    assert (run.retries, run.retries_repeated, run.message) == (1, 0, "")


def test_it_says_when_the_retries_returned_the_same_answer(campaign, llm_server, monkeypatch):
    judge = make_judge(llm_server.base_url, monkeypatch)
    llm_server.script("bad_winner", "bad_winner", "bad_winner")  # the same answer, three times

    run = execute(campaign, judge, limit=1)

    assert (run.units_done, run.errors, run.calls) == (2, 1, 5)
    contents = list(JudgeCall.objects.filter(run=run, valid=False).order_by("attempt").values_list("raw_response", flat=True))
    assert len(contents) == 3 and len(set(contents)) == 1
    assert (run.retries, run.retries_repeated) == (2, 2)
    assert "2 of the 2 retries after an unreadable answer returned the same answer as the attempt before" in run.message


def test_it_answers_from_the_cache_only_the_endpoint_its_answers_came_from(campaign, llm_server, monkeypatch):
    first = make_judge(llm_server.base_url, monkeypatch, name="first")
    assert execute(campaign, first, limit=1).calls == 3
    with FakeLLM() as elsewhere:
        # The same model name and requests at another server: a local server answers any name.
        other = make_judge(elsewhere.base_url, monkeypatch, name="other")
        assert run_estimate(campaign=campaign, judge=other, limit=1).cached == 0
        run = execute(campaign, other, limit=1)
        assert (run.calls, len(elsewhere.requests)) == (3, 3)
        assert not JudgeCall.objects.filter(run=run, from_cache=True).exists()
    twin = make_judge(llm_server.base_url + "/", monkeypatch, name="twin")  # the first's endpoint, written with a slash
    assert run_estimate(campaign=campaign, judge=twin, limit=1).cached == 3
    before = len(llm_server.requests)
    run = execute(campaign, twin, limit=1)
    assert JudgeCall.objects.filter(run=run, from_cache=True).count() == 3 and len(llm_server.requests) == before
    assert set(CachedResponse.objects.values_list("endpoint", flat=True)) == {
        cache_endpoint(llm_server.base_url),
        cache_endpoint(elsewhere.base_url),
    }


def test_it_keys_old_cache_rows_in_the_migration_on_the_endpoint_of_the_call_that_stored_them(campaign, llm_server, monkeypatch):
    judge = make_judge(llm_server.base_url, monkeypatch)
    execute(campaign, judge, limit=1)
    stored = dict(CachedResponse.objects.values_list("request_hash", "endpoint"))
    CachedResponse.objects.update(endpoint="")  # as rows were before the endpoint was kept
    CachedResponse.objects.create(request_hash="f" * 64, model="fake-judge", content="{}")  # no call explains it
    migration = importlib.import_module("judges.migrations.0010_cachedresponse_endpoint")

    migration.fill_endpoints(apps, None)

    assert dict(CachedResponse.objects.exclude(request_hash="f" * 64).values_list("request_hash", "endpoint")) == stored
    assert set(stored.values()) == {cache_endpoint(llm_server.base_url)}
    assert CachedResponse.objects.get(request_hash="f" * 64).endpoint == ""  # served to no judge


def test_it_warns_before_a_run_whose_concurrency_exceeds_the_servers_slots(campaign, llm_server, monkeypatch):
    make_judge(llm_server.base_url, monkeypatch)
    llm_server.slots = 2

    result = run_command("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--limit", "1", "--concurrency", "3")

    assert result.code == 0, result.err
    assert (
        "fake-gpt: warning: Concurrency 3 exceeds the 2 request(s) the server at " + llm_server.base_url + " serves at once"
    ) in result.err
    assert "Use a concurrency of 2 (run_judges --concurrency 2)" in result.err
    within = run_command("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--limit", "2", "--concurrency", "2")
    assert within.code == 0 and "warning" not in within.err
    llm_server.slots = None  # a hosted endpoint says nothing of its slots: nothing is claimed
    unknown = run_command("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--limit", "3", "--concurrency", "8")
    assert unknown.code == 0 and "warning" not in unknown.err


def test_it_defaults_a_local_endpoint_to_one_request_at_a_time_and_a_longer_timeout(campaign, llm_server, monkeypatch):
    judge = make_judge(llm_server.base_url, monkeypatch)
    assert judge.timeout_seconds == endpoint_defaults(llm_server.base_url).timeout_seconds == 600
    hosted = judge_build(name="hosted", model="gpt-4.1-mini", base_url="https://api.openai.com/v1", api_key_env="OPENAI_API_KEY")
    assert hosted.timeout_seconds == 120
    llm_server.latency = 0.05

    result = run_command("run_judges", "--campaign", "Pilot", "--judge", "fake-gpt", "--limit", "2")

    assert result.code == 0, result.err
    assert JudgeRun.objects.get().concurrency == 1 and llm_server.max_in_flight == 1


def test_it_reports_the_served_model_on_check_and_warns_when_the_judge_names_another(llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-serving")
    llm_server.slots = 1
    named = dict(base_url=llm_server.base_url, api_key_env=KEY_ENV)

    served = judge_check(judge=judge_build(name="right", model="fake-judge", **named))
    other = judge_check(judge=judge_build(name="wrong", model="gpt-4o", **named))

    assert served.ok and "The endpoint serves 'fake-judge'." in served.message and "Warning" not in served.message
    assert "It serves 1 request(s) at once (its slots): run with --concurrency 1 or less." in served.message
    assert other.ok  # the server answered: the connection works, but not with the model named
    assert "Warning: the endpoint serves 'fake-judge', not 'gpt-4o'" in other.message


def test_it_warns_on_the_judges_page_when_a_queued_run_exceeds_the_servers_slots(client, campaign, rachel, llm_server, monkeypatch):
    judge = make_judge(llm_server.base_url, monkeypatch)
    llm_server.slots = 1
    client.force_login(rachel)

    over = client.post(reverse("judge-run-start", args=[campaign.pk]), {"judge": judge.pk, "concurrency": "4", "limit": "1"}, follow=True)
    within = client.post(reverse("judge-run-start", args=[campaign.pk]), {"judge": judge.pk, "concurrency": "1", "limit": "1"}, follow=True)

    shown = [str(m) for m in over.context["messages"]]
    assert any("Concurrency 4 exceeds the 1 request(s) the server at" in m and "Use a concurrency of 1" in m for m in shown)
    assert not any("exceeds" in str(m) for m in within.context["messages"])
    assert JudgeRun.objects.count() == 2  # warned, not refused: the run is queued


def test_it_shows_the_latest_runs_verdicts_with_their_confidence_on_the_judges_page(client, campaign, rachel, llm_server, monkeypatch):
    judge = make_judge(llm_server.base_url, monkeypatch, confidence="logprobs")
    llm_server.confidence = lambda key, message: 0.75 if key.endswith("1") else 0.9
    execute(campaign, judge, limit=1)
    client.force_login(rachel)

    page = client.get(reverse("judge-campaign", args=[campaign.pk])).content.decode()

    section = page[page.index('id="latest-verdicts"') :]
    assert f"Latest verdicts: run #{JudgeRun.objects.get().pk} of fake-gpt" in section
    assert section.count("<tr>") == 1 + 39 and "0.75" in section and "0.90" in section and "Fake reason for ww_cc_1." in section
