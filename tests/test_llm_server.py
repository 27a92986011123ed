"""tests.llm_server: the fake chat-completions server, driven by the real openai client."""

import json
import math
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import openai
import pytest

from protocols.base import CriterionSpec, InvalidResponse
from protocols.pairwise import build_request, parse_verdicts
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
        json.dumps(
            parse_verdicts(
                ask(llm_server, make_request(article_1=f"Article number {n}.")).choices[0].message.content, criteria=KEYS, allow_tie=False
            )
        )
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


# --- the Batch API -------------------------------------------------------------------------


def batch_of(server, requests, metadata=None):
    """Uploads a JSONL file of chat requests (custom_id line-<n>) and makes a batch of it."""
    client = client_for(server)
    lines = [
        {
            "custom_id": f"line-{n}",
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": {"model": "fake-judge", "messages": r.messages, "response_format": r.response_format, "max_tokens": 500},
        }
        for n, r in enumerate(requests)
    ]
    upload = client.files.create(file=("requests.jsonl", "".join(json.dumps(line) + "\n" for line in lines).encode()), purpose="batch")
    return client, client.batches.create(
        input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h", metadata=metadata
    )


def lines_of(client, file_id):
    return [json.loads(line) for line in client.files.content(file_id).text.splitlines()]


def test_it_answers_a_batch_as_it_answers_requests(llm_server):
    requests = [make_request(), make_request(article_1="Baikal holds a fifth of the fresh water.")]
    synchronous = [ask(llm_server, r).choices[0].message.content for r in requests]

    client, batch = batch_of(llm_server, requests, metadata={"run": "7"})

    assert (batch.status, batch.request_counts.total, batch.metadata) == ("validating", 2, {"run": "7"})
    assert client.batches.retrieve(batch.id).status == "in_progress"  # the first retrieve
    done = client.batches.retrieve(batch.id)  # the second, with batch_polls = 1
    assert (done.status, done.request_counts.completed, done.request_counts.failed, done.error_file_id) == ("completed", 2, 0, None)
    output = lines_of(client, done.output_file_id)
    assert [line["custom_id"] for line in output] == ["line-0", "line-1"]
    assert all(line["response"]["status_code"] == 200 and line["error"] is None for line in output)
    assert [line["response"]["body"]["choices"][0]["message"]["content"] for line in output] == synchronous  # the same verdicts
    billed = [a for a in llm_server.answered if a.get("batch")]
    assert [(a["client_request_id"], a["id"]) for a in billed] == [(line["custom_id"], line["response"]["body"]["id"]) for line in output]
    assert billed[0]["request_id"] == output[0]["response"]["request_id"]
    assert llm_server.batch_submissions == [{"id": batch.id, "metadata": {"run": "7"}, "custom_ids": ["line-0", "line-1"]}]
    assert len(llm_server.batch_requests) == 2 and len(llm_server.requests) == 2  # the batch lines are no chat requests


def test_it_writes_failed_lines_to_the_error_file(llm_server):
    llm_server.script("500", "not_json", ("429", 1))

    client, batch = batch_of(llm_server, [make_request()] * 4)
    llm_server.batch_polls = 0
    done = client.batches.retrieve(batch.id)

    assert (done.status, done.request_counts.completed, done.request_counts.failed) == ("completed", 2, 2)
    errors = lines_of(client, done.error_file_id)
    assert [(e["custom_id"], e["response"]["status_code"]) for e in errors] == [("line-0", 500), ("line-2", 429)]
    assert errors[0]["response"]["body"]["error"]["message"] == "the fake server failed on purpose"
    output = lines_of(client, done.output_file_id)
    with pytest.raises(InvalidResponse):
        parse_verdicts(output[0]["response"]["body"]["choices"][0]["message"]["content"], criteria=KEYS, allow_tie=False)
    assert len([a for a in llm_server.answered if a.get("batch")]) == 2  # failed lines are not billed


def test_it_refuses_a_schema_in_a_batch_line_when_told(llm_server):
    llm_server.refuse_schema = True
    llm_server.batch_polls = 0

    client, batch = batch_of(llm_server, [make_request()])
    done = client.batches.retrieve(batch.id)

    error = lines_of(client, done.error_file_id)[0]
    assert error["response"]["status_code"] == 400 and "json_schema" in error["response"]["body"]["error"]["message"]


def test_it_holds_expires_and_cancels_batches(llm_server):
    llm_server.hold_batches = True
    client, held = batch_of(llm_server, [make_request()] * 3)
    assert [client.batches.retrieve(held.id).status for _ in range(4)] == ["in_progress"] * 4
    llm_server.hold_batches = False
    llm_server.expire_batches = 1

    expired = client.batches.retrieve(held.id)

    assert (expired.status, expired.request_counts.completed, expired.request_counts.failed) == ("expired", 1, 0)
    lines = lines_of(client, expired.error_file_id)
    assert [(line["custom_id"], line["response"], line["error"]["code"]) for line in lines] == [
        ("line-1", None, "batch_expired"),
        ("line-2", None, "batch_expired"),
    ]
    _, cancelled = batch_of(llm_server, [make_request()])
    assert client.batches.cancel(cancelled.id).status == "cancelling"
    gone = client.batches.retrieve(cancelled.id)
    assert (gone.status, gone.output_file_id, gone.error_file_id) == ("cancelled", None, None)


def test_it_lists_batches_newest_first_page_by_page(llm_server):
    made = [batch_of(llm_server, [make_request()], metadata={"n": str(n)})[1].id for n in range(3)]
    client = client_for(llm_server)

    first_page = client.batches.list(limit=2)
    listed = list(client.batches.list(limit=2))  # the client follows has_more / after

    assert [b.id for b in first_page.data] == made[:0:-1] and first_page.has_more
    assert [b.id for b in listed] == made[::-1] and [b.metadata["n"] for b in listed] == ["2", "1", "0"]


def test_it_refuses_what_the_batch_api_refuses(llm_server):
    client = client_for(llm_server)

    with pytest.raises(openai.BadRequestError):
        client.batches.create(input_file_id="file-nowhere", endpoint="/v1/chat/completions", completion_window="24h")
    with pytest.raises(openai.NotFoundError):
        client.batches.retrieve("batch_nowhere")
    with pytest.raises(openai.NotFoundError):
        client.files.content("file-nowhere")
    with pytest.raises(openai.BadRequestError):
        client.files.create(file=("requests.jsonl", b"{}\n"), purpose="fine-tune")
    llm_server.reset()
    assert llm_server.batch_submissions == [] and list(client.batches.list()) == []
