"""Testing a judge's connection before a run (judges/check.py): one minimal call through the real
client to the loopback server, and each kind of problem (URL, authentication, model, schema) in words."""

import socket

import pytest
from django.urls import reverse

from judges.check import CHECK_MAX_TOKENS, judge_check
from judges.models import Judge
from judges.services import judge_build, judge_create
from tests.helpers import run

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"
SECRET = "sk-test-check-3e7b"
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)


def judge(base_url, **options):
    return judge_build(name="checked", model=options.pop("model", "fake-judge"), base_url=base_url, api_key_env=KEY_ENV, **options)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_it_says_a_working_judge_works_after_one_small_call(key, llm_server):
    result = judge_check(judge=judge(llm_server.base_url, input_price="2", output_price="8"))

    assert result.ok and result.problem == ""
    assert result.message.startswith(f"Connected: {llm_server.base_url} took the key in ${KEY_ENV} and the JSON schema")
    assert "the model 'fake-judge' answered in" in result.message and "$0.000" in result.message
    [request] = llm_server.requests
    assert request["max_tokens"] == CHECK_MAX_TOKENS and request["response_format"]["type"] == "json_schema"
    assert llm_server.authorizations == [f"Bearer {SECRET}"]


def test_it_names_an_unknown_cost_for_a_judge_without_prices(key, llm_server):
    result = judge_check(judge=judge(llm_server.base_url))

    assert result.ok and "cost unknown: the judge has no prices" in result.message


def test_it_names_the_url_when_nothing_listens(key):
    port = free_port()

    result = judge_check(judge=judge(f"http://127.0.0.1:{port}/v1"))

    assert (result.ok, result.problem) == (False, "url")
    assert result.message.startswith(f"URL: nothing answers at 127.0.0.1:{port}") and "refused" in result.message


def test_it_names_the_url_when_it_is_no_chat_completions_endpoint(key, llm_server):
    result = judge_check(judge=judge(llm_server.base_url.removesuffix("/v1")))

    assert (result.ok, result.problem) == (False, "url")
    assert "/chat/completions is not a chat-completions endpoint" in result.message and "usually ends in /v1" in result.message


def test_it_names_the_url_the_outbound_policy_refuses(key, llm_server, settings):
    settings.JUDGE_ALLOW_ADDRESSES = []
    settings.JUDGE_BASE_URL_HOSTS = ["*"]
    result = judge_check(
        judge=Judge(name="x", kind="llm", model="m", base_url=llm_server.base_url.replace("127.0.0.1", "127.1"), api_key_env=KEY_ENV)
    )

    assert (result.ok, result.problem) == (False, "url")
    assert "is not reachable from this server: refused by the outbound policy" in result.message and "loopback" in result.message
    assert llm_server.requests == []


def test_it_names_a_refused_key_without_repeating_it(key, llm_server):
    llm_server.accepted_keys = {"sk-some-other-key"}

    result = judge_check(judge=judge(llm_server.base_url))

    assert (result.ok, result.problem) == (False, "authentication")
    assert result.message.startswith(f"Authentication: the endpoint refused the key in ${KEY_ENV} (HTTP 401")
    assert SECRET not in result.message


def test_it_names_a_key_variable_that_is_not_set_and_sends_nothing(llm_server, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)

    result = judge_check(judge=judge(llm_server.base_url))

    assert (result.ok, result.problem) == (
        False,
        "authentication",
    ) and f"{KEY_ENV} that should hold the API key is not set" in result.message
    assert llm_server.requests == []


def test_it_names_a_model_the_endpoint_does_not_serve(key, llm_server):
    llm_server.models = {"fake-judge"}

    result = judge_check(judge=judge(llm_server.base_url, model="gpt-9-preview"))

    assert (result.ok, result.problem) == (False, "model")
    assert result.message.startswith("Model: the endpoint does not serve the model 'gpt-9-preview'")


def test_it_names_a_refused_schema_and_says_what_to_do(key, llm_server):
    llm_server.refuse_schema = True

    refused = judge_check(judge=judge(llm_server.base_url))
    plain = judge_check(judge=judge(llm_server.base_url, structured_output=False))

    assert (refused.ok, refused.problem) == (False, "schema") and "--no-structured-output" in refused.message
    assert plain.ok


def test_it_checks_before_add_judge_saves(key, llm_server):
    llm_server.accepted_keys = {"sk-some-other-key"}
    args = ("add_judge", "checked", "--model", "fake-judge", "--base-url", llm_server.base_url, "--api-key-env", KEY_ENV, "--check")

    refused = run(*args)
    llm_server.accepted_keys = None
    saved = run(*args)

    assert refused.code == 1 and "Connection test failed; the judge was not saved. Authentication:" in refused.err
    assert saved.code == 0 and saved.out.startswith("Connected:") and "Judge 'checked' added" in saved.out
    assert list(Judge.objects.values_list("name", flat=True)) == ["checked"]


def test_it_tests_a_saved_judge_from_the_judges_page(client, rachel, alice, key, llm_server):
    saved, _ = judge_create(name="saved", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV)
    url = reverse("judge-test", args=[saved.pk])
    assert client.post(url).status_code == 302 and llm_server.requests == []  # anonymous: to the login page
    client.force_login(alice)
    assert client.post(url).status_code == 403 and llm_server.requests == []
    client.force_login(rachel)

    listing = client.get(reverse("judge-list")).content.decode()
    fragment = client.post(url, **HTMX)
    page = client.post(url, follow=True)

    assert f'hx-post="{url}"' in listing and "Test connection</button>" in listing
    assert fragment.status_code == 200 and '<p class="ok" role="status">Connected:' in fragment.content.decode()
    assert "<html" not in fragment.content.decode()
    assert page.status_code == 200 and "saved: Connected:" in page.content.decode()
    assert len(llm_server.requests) == 2


def test_it_tests_the_typed_judge_without_saving_it(client, susan, key, llm_server):
    client.force_login(susan)
    fields = {"name": "typed", "kind": "llm", "model": "fake-judge", "base_url": llm_server.base_url, "api_key_env": KEY_ENV,
              "temperature": "0", "max_tokens": "100", "test": "1"}  # fmt: skip

    works = client.post(reverse("judge-list"), fields)
    llm_server.models = {"another-model"}
    fails = client.post(reverse("judge-list"), fields)

    assert works.status_code == 200 and "Connected:" in works.content.decode()
    assert fails.status_code == 422 and "Model: the endpoint does not serve the model" in fails.content.decode()
    assert not Judge.objects.exists()


# --- base URLs that cannot make a request (issue 35) -----------------------------------------

CONTROL = "http://127.0.0.1:9/v1\x07"


@pytest.mark.parametrize("base_url", [CONTROL, "http://127.0.0.1:9/v\n1", "http://127.0.0.1:9/ v1", "http://127.0.0.1:9/v1\u200b"])
def test_it_refuses_to_save_a_base_url_with_an_unprintable_character(susan, base_url):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refused:
        judge_create(name="bell", model="m", base_url=base_url, api_key_env=KEY_ENV, by=susan)

    assert "unprintable character (U+" in " ".join(refused.value.messages)
    assert not Judge.objects.filter(name="bell").exists()


def test_it_answers_test_connection_in_words_for_a_stored_url_with_a_control_character(client, susan, key):
    stored = Judge.objects.create(name="bell", kind="llm", model="m", base_url=CONTROL, api_key_env=KEY_ENV)  # saved before the rule
    client.force_login(susan)

    response = client.post(reverse("judge-test", args=[stored.pk]), **HTMX)

    assert response.status_code == 200
    assert "Nothing was sent" in response.content.decode() and "U+0007" in response.content.decode()


def test_it_prints_no_traceback_from_add_judge_check_for_a_control_character(key):
    result = run("add_judge", "bell", "--model", "m", "--base-url", CONTROL, "--api-key-env", KEY_ENV, "--check")

    assert "Traceback" not in result.err and "U+0007" in result.out + result.err
    assert not Judge.objects.filter(name="bell").exists()


def test_it_reports_a_client_that_cannot_be_built_in_words(key, settings):
    settings.JUDGE_BASE_URL_HOSTS = ["*"]

    result = judge_check(judge=judge("http://[::1/v1"))  # an unclosed IPv6 bracket: no URL library takes it

    assert (result.ok, result.problem) in ((False, "settings"), (False, "url"))
    assert "Nothing was sent" in result.message or "no request could be made" in result.message
