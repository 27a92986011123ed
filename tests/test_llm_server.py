"""tests.llm_server: the fake chat-completions server, driven by the real openai client."""

import json
import math
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import openai
import pytest

from judges.protocol import CriterionSpec, InvalidResponse, build_request, parse_verdicts
from tests.llm_server import FakeLLM, criterion_keys

CRITERIA = [CriterionSpec("nu_1", "Gives each view its due weight."), CriterionSpec("nu_2", "Avoids loaded words.")]
KEYS = ("nu_1", "nu_2")


def make_request(article_1="Lake Baikal is a rift lake.\n\n- born: never\n- depth: 1,642 m", allow_tie=False):
    return build_request(
        topic="Lake Baikal",
        article_1=article_1,
        article_2="The deepest lake lies in Siberia.",
        category="Neutral",
        category_description="Fair to every view.",
        criteria=CRITERIA,
        allow_tie=allow_tie,
        structured=True,
    )


def client_for(server, timeout=5.0):
    return openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=timeout)


def ask(server, request=None, timeout=5.0):
    request = request or make_request()
    return client_for(server, timeout).chat.completions.create(
        model="fake-judge",
        messages=request.messages,
        response_format=request.response_format,
        temperature=0,
        max_tokens=500,
    )


def test_it_answers_the_asked_criteria(llm_server):
    completion = ask(llm_server)
    content = completion.choices[0].message.content
    verdicts = parse_verdicts(content, criteria=KEYS, allow_tie=False)
    assert list(verdicts) == list(KEYS)
    assert all(winner in ("1", "2") for winner, _ in verdicts.values())
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "fake-judge"


def test_it_ignores_list_items_inside_the_articles(llm_server):
    user = make_request().messages[1]["content"]
    assert "- born: never" in user
    assert criterion_keys(user) == list(KEYS)


def test_it_reports_usage(llm_server):
    llm_server.cached_tokens = 64
    request = make_request()
    completion = ask(llm_server, request)
    characters = sum(len(m["content"]) for m in request.messages)
    usage = completion.usage
    assert usage.prompt_tokens == math.ceil(characters / 4)
    assert usage.completion_tokens == math.ceil(len(completion.choices[0].message.content) / 4)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens_details.cached_tokens == 64


def test_it_records_every_request_body(llm_server):
    request = make_request()
    ask(llm_server, request)
    assert len(llm_server.requests) == 1
    body = llm_server.requests[0]
    assert body["model"] == "fake-judge"
    assert body["messages"] == request.messages
    assert body["response_format"] == request.response_format


def test_the_default_policy_is_deterministic_and_depends_on_the_pair(llm_server):
    first = ask(llm_server).choices[0].message.content
    assert ask(llm_server).choices[0].message.content == first
    answers = {
        json.dumps(parse_verdicts(ask(llm_server, make_request(article_1=f"Article number {n}.")).choices[0].message.content, criteria=KEYS, allow_tie=False))
        for n in range(12)
    }
    assert len(answers) > 1


def test_a_policy_decides_the_winners(llm_server):
    llm_server.policy = lambda key, user_message: "tie" if key == "nu_2" else "2"
    verdicts = parse_verdicts(ask(llm_server, make_request(allow_tie=True)).choices[0].message.content, criteria=KEYS, allow_tie=True)
    assert {key: winner for key, (winner, _) in verdicts.items()} == {"nu_1": "2", "nu_2": "tie"}


def test_it_lists_models(llm_server):
    models = client_for(llm_server).models.list()
    assert [model.id for model in models.data] == ["fake-judge"]


def test_an_unknown_route_is_404(llm_server):
    with pytest.raises(openai.NotFoundError):
        client_for(llm_server).completions.create(model="fake-judge", prompt="hi")


# ------------------------------------------------------------------ faults


def test_a_500_fault_is_an_internal_server_error(llm_server):
    llm_server.script("500")
    with pytest.raises(openai.InternalServerError) as caught:
        ask(llm_server)
    assert caught.value.status_code == 500


def test_a_429_fault_is_a_rate_limit_with_retry_after(llm_server):
    llm_server.script(("429", 7))
    with pytest.raises(openai.RateLimitError) as caught:
        ask(llm_server)
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"


def test_a_timeout_fault_times_the_client_out(llm_server):
    llm_server.script("timeout")  # held 5 s: without the client's timeout this would be a 200
    with pytest.raises(openai.APITimeoutError):
        ask(llm_server, timeout=0.3)


@pytest.mark.parametrize(
    "fault, message",
    [
        ("truncated", "truncated"),
        ("wrong_count", "no verdict: nu_2"),
        ("bad_winner", "winner '3'"),
        ("not_json", "no JSON"),
    ],
)
def test_content_faults_are_billed_but_unreadable(llm_server, fault, message):
    llm_server.script(fault)
    completion = ask(llm_server)
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
    with pytest.raises(InvalidResponse, match=message):
        parse_verdicts(completion.choices[0].message.content, criteria=KEYS, allow_tie=False)


def test_a_no_choices_fault_is_a_billed_200_without_a_completion(llm_server):
    llm_server.script("no_choices")
    client = openai.OpenAI(base_url=llm_server.base_url, api_key="test", max_retries=0)
    body = json.loads(client.post("/chat/completions", body={"model": "m", "messages": [{"role": "user", "content": "Hi"}]}, cast_to=bytes))
    assert "choices" not in body and body["error"]["message"] and body["usage"]["prompt_tokens"] > 0


def test_faults_are_consumed_in_order_then_answers_are_normal(llm_server):
    llm_server.script("500", ("429", 1), "not_json")
    with pytest.raises(openai.InternalServerError):
        ask(llm_server)
    with pytest.raises(openai.RateLimitError):
        ask(llm_server)
    with pytest.raises(InvalidResponse):
        parse_verdicts(ask(llm_server).choices[0].message.content, criteria=KEYS, allow_tie=False)
    parse_verdicts(ask(llm_server).choices[0].message.content, criteria=KEYS, allow_tie=False)
    assert len(llm_server.requests) == 4


def test_an_unknown_fault_is_refused(llm_server):
    with pytest.raises(ValueError, match="unknown fault"):
        llm_server.script("503")


def test_reset_forgets_requests_faults_and_settings(llm_server):
    llm_server.script("500", "500")
    llm_server.cached_tokens = 10
    llm_server.policy = lambda key, message: "3"
    with pytest.raises(openai.InternalServerError):
        ask(llm_server)
    llm_server.reset()
    assert llm_server.requests == [] and llm_server.cached_tokens == 0
    completion = ask(llm_server)
    parse_verdicts(completion.choices[0].message.content, criteria=KEYS, allow_tie=False)
    assert completion.usage.prompt_tokens_details.cached_tokens == 0
    assert len(llm_server.requests) == 1


# ------------------------------------------------------------------ concurrency


def test_it_serves_concurrent_requests_in_parallel():
    with FakeLLM(latency=0.5) as server:
        client = client_for(server)
        request = make_request()

        def one(_):
            return client.chat.completions.create(model="fake-judge", messages=request.messages, response_format=request.response_format)

        with ThreadPoolExecutor(max_workers=32) as pool:
            completions = list(pool.map(one, range(32)))
    assert len(completions) == 32 and len(server.requests) == 32
    # A server answering one at a time would hold 1; how many of the 32 client threads are out
    # at the same moment depends on how fast the machine starts them, hence not exactly 32.
    assert 16 <= server.max_in_flight <= 32


def test_it_sends_retry_after_as_an_http_date(llm_server):
    from email.utils import parsedate_to_datetime

    llm_server.script(("429", 30, "date"))
    with pytest.raises(openai.RateLimitError) as caught:
        ask(llm_server)
    ahead = parsedate_to_datetime(caught.value.response.headers["retry-after"]) - datetime.now(UTC)
    assert 28 <= ahead.total_seconds() <= 30


def test_it_counts_requests_in_flight_and_forgets_them_on_reset(llm_server):
    ask(llm_server)
    ask(llm_server)
    assert (llm_server.max_in_flight, len(llm_server.arrivals)) == (1, 2)
    # the handler lowers the count just after the client has its answer: wait for that, not for a time
    for _ in range(200):
        if llm_server.in_flight == 0:
            break
        time.sleep(0.01)
    assert llm_server.in_flight == 0
    llm_server.reset()
    assert (llm_server.max_in_flight, llm_server.arrivals) == (0, [])


def test_a_stopped_server_refuses_connections():
    with FakeLLM() as server:
        base_url = server.base_url
    with pytest.raises(openai.APIConnectionError):
        openai.OpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=1).models.list()


def test_it_logs_what_it_would_bill_with_the_ids_a_provider_gives(llm_server):
    llm_server.script("500", "not_json")
    request = make_request()
    client = client_for(llm_server)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="fake-judge", messages=request.messages, max_tokens=50)
    raw = client.chat.completions.with_raw_response.create(
        model="fake-judge", messages=request.messages, max_tokens=50, extra_headers={"X-Client-Request-Id": "ours-2"}
    )
    completion = raw.parse()
    number = completion.id.removeprefix("chatcmpl-fake-")
    assert raw.headers["x-request-id"] == f"req-fake-{number}"
    third = ask(llm_server)
    # the 500 is not billed; the unreadable 200 is, like any completion
    assert [a["id"] for a in llm_server.answered] == [completion.id, third.id]
    first = llm_server.answered[0]
    assert first["request_id"] == f"req-fake-{number}" and first["client_request_id"] == "ours-2"
    assert first["prompt_tokens"] == completion.usage.prompt_tokens and first["completion_tokens"] == completion.usage.completion_tokens
    assert llm_server.client_request_ids == ["", "ours-2", ""]
    llm_server.reset()
    assert llm_server.answered == [] and llm_server.client_request_ids == []


def test_it_answers_429_past_its_rate_limit(llm_server):
    llm_server.rate_limit = (3, 60.0)
    for _ in range(3):
        ask(llm_server)
    with pytest.raises(openai.RateLimitError) as caught:
        ask(llm_server)
    assert caught.value.status_code == 429 and 55 <= int(caught.value.response.headers["retry-after"]) <= 60
    assert llm_server.rate_limited == 1 and len(llm_server.answered) == 3
    llm_server.rate_limit = (2, 0.3)  # a short window frees its slots again
    llm_server._accepted.clear()
    ask(llm_server)
    ask(llm_server)
    with pytest.raises(openai.RateLimitError):
        ask(llm_server)
    time.sleep(0.35)
    ask(llm_server)
    assert llm_server.rate_limited == 2
    llm_server.reset()
    assert llm_server.rate_limit is None and llm_server.rate_limited == 0
