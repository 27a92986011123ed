"""Which environment variable a judge may read as its API key, and which hosts it may send it to.

The key is sent as a bearer token to the judge's base URL, so a judge naming SECRET_KEY or
DATABASE_URL would hand this server's own secrets to whatever URL a staff user typed.
"""

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from judges.models import Judge, JudgeRun
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.conftest import REPO
from tests.helpers import run

pytestmark = pytest.mark.django_db

RULE = "ending in _API_KEY"
SERVER_SECRET = "django-signing-key-never-to-be-sent-3b1f"
API_SECRET = "sk-test-secrets-8e21"
REFUSED = [
    "SECRET_KEY",
    "DATABASE_URL",
    "PATH",
    "openai_api_key",  # lowercase
    "OPENAI_KEY",  # does not end in _API_KEY
    "OPENAI_API_KEY_OLD",
    "_API_KEY",
    "sk-proj-abc123",  # a pasted key
]


def create(api_key_env: str, base_url: str, name: str = "judge-x"):
    return judge_create(name=name, model="fake-judge", base_url=base_url, api_key_env=api_key_env)


@pytest.mark.parametrize("name", REFUSED)
def test_it_refuses_a_variable_not_named_for_an_api_key_in_the_service(llm_server, name):
    with pytest.raises(ValidationError) as refused:
        create(name, llm_server.base_url)

    [message] = refused.value.messages
    assert RULE in message and "JUDGE_API_KEY_ENVS" in message
    assert "sk-proj-abc123" not in message  # a pasted key is never repeated back
    assert not Judge.objects.exists()


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "PATH", "openai_api_key", "OPENAI_KEY"])
def test_it_refuses_it_in_the_web_form_with_422(client, susan, llm_server, name):
    client.force_login(susan)  # only a superuser types a key variable at all
    form = {
        "name": "web-judge",
        "kind": "llm",
        "model": "fake-judge",
        "base_url": llm_server.base_url,
        "api_key_env": name,
        "input_price": "0",
        "output_price": "0",
        "temperature": "0",
        "max_tokens": "100",
    }

    response = client.post(reverse("judge-list"), form)

    assert response.status_code == 422
    assert RULE in response.content.decode() and "JUDGE_API_KEY_ENVS" in response.content.decode()
    assert not Judge.objects.exists()


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "PATH", "openai_api_key", "OPENAI_KEY"])
def test_it_refuses_it_in_add_judge(llm_server, name):
    result = run("add_judge", "cli-judge", "--model", "fake-judge", "--base-url", llm_server.base_url, "--api-key-env", name)

    assert result.code == 1
    assert "CommandError" in result.err and RULE in result.err
    assert not Judge.objects.exists()


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "DEEPSEEK_API_KEY", "MY_LAB_2_API_KEY"])
def test_it_accepts_names_ending_in_api_key(llm_server, name):
    judge, created = create(name, llm_server.base_url)

    assert created and judge.api_key_env == name


def test_it_accepts_a_name_from_the_allow_list_only(llm_server, settings):
    args = ("add_judge", "lab", "--model", "fake-judge", "--base-url", llm_server.base_url, "--api-key-env", "LAB_TOKEN")
    assert run(*args).code == 1

    settings.JUDGE_API_KEY_ENVS = ["LAB_TOKEN"]
    result = run(*args)

    assert result.code == 0, result.err
    assert Judge.objects.get(name="lab").api_key_env == "LAB_TOKEN"


def test_it_refuses_to_start_when_settings_allow_this_servers_own_secrets():
    env = {**os.environ, "SECRET_KEY": "x", "DEBUG": "0", "JUDGE_API_KEY_ENVS": "LAB_TOKEN,SECRET_KEY"}

    done = subprocess.run([sys.executable, "-c", "import config.settings"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)

    assert done.returncode != 0
    assert "JUDGE_API_KEY_ENVS must not name SECRET_KEY or DATABASE_URL" in done.stderr


# --- at run time: judges stored before the rules ------------------------------------------


def stored_judge(api_key_env: str, base_url: str) -> Judge:
    """A row as an older version (or the admin) could have stored it, past today's checks."""
    return Judge.objects.create(name="old-judge", kind=Judge.Kind.LLM, model="fake-judge", base_url=base_url, api_key_env=api_key_env)


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL"])
def test_it_never_reads_a_stored_bad_variable_when_a_run_starts(campaign, llm_server, monkeypatch, name):
    monkeypatch.setenv(name, SERVER_SECRET)
    judge = stored_judge(name, llm_server.base_url)

    result = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=1))

    assert result.status == JudgeRun.Status.FAILED
    assert "Not run, nothing was sent" in result.message and RULE in result.message
    assert llm_server.requests == [] and llm_server.authorizations == []
    assert SERVER_SECRET not in result.message


def test_it_sends_a_well_named_key_as_before(campaign, llm_server, monkeypatch):
    # The counterpart of the refusals above: the same path does send a key the rules allow.
    monkeypatch.setenv("FAKE_JUDGE_API_KEY", API_SECRET)
    judge = stored_judge("FAKE_JUDGE_API_KEY", llm_server.base_url)

    result = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=1))

    assert result.status == JudgeRun.Status.FINISHED, result.message
    assert set(llm_server.authorizations) == {f"Bearer {API_SECRET}"}


def test_it_reports_the_refusal_through_run_judges(campaign, llm_server, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", SERVER_SECRET)
    stored_judge("SECRET_KEY", llm_server.base_url)

    result = run("run_judges", "--campaign", campaign.name, "--judge", "old-judge", "--limit", "1")

    assert result.code == 1
    assert RULE in result.out and SERVER_SECRET not in result.out + result.err
    assert llm_server.authorizations == []


# --- base URL hosts -----------------------------------------------------------------------


def test_it_allows_any_host_only_with_a_star(llm_server, settings):
    settings.JUDGE_BASE_URL_HOSTS = []
    with pytest.raises(ValidationError, match="is not one of JUDGE_BASE_URL_HOSTS"):
        create("OPENAI_API_KEY", "https://api.example.org/v1")

    settings.JUDGE_BASE_URL_HOSTS = ["*"]

    assert create("OPENAI_API_KEY", "https://api.example.org/v1")[1]


def test_it_refuses_a_host_outside_the_list(llm_server, settings):
    settings.JUDGE_BASE_URL_HOSTS = ["localhost", "api.openai.com"]
    assert llm_server.base_url.startswith("http://127.0.0.1:")

    with pytest.raises(ValidationError) as refused:
        create("OPENAI_API_KEY", llm_server.base_url)

    assert refused.value.messages == ["The base URL's host '127.0.0.1' is not one of JUDGE_BASE_URL_HOSTS (api.openai.com, localhost)."]
    assert not Judge.objects.exists()
    client_result = run("add_judge", "cli", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "OPENAI_API_KEY")
    assert client_result.code == 1 and "JUDGE_BASE_URL_HOSTS" in client_result.err


def test_it_accepts_a_listed_host(llm_server, settings):
    settings.JUDGE_BASE_URL_HOSTS = ["localhost", "127.0.0.1"]

    assert create("OPENAI_API_KEY", llm_server.base_url)[1]
    assert create("OPENAI_API_KEY", llm_server.base_url.replace("127.0.0.1", "LocalHost"), name="judge-y")[1]


def test_it_refuses_at_run_time_a_host_taken_off_the_list(campaign, llm_server, monkeypatch, settings):
    monkeypatch.setenv("FAKE_JUDGE_API_KEY", API_SECRET)
    judge, _ = create("FAKE_JUDGE_API_KEY", llm_server.base_url)
    settings.JUDGE_BASE_URL_HOSTS = ["localhost"]

    result = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=1))

    assert result.status == JudgeRun.Status.FAILED
    assert "Not run, nothing was sent" in result.message and "'127.0.0.1' is not one of JUDGE_BASE_URL_HOSTS" in result.message
    assert llm_server.requests == [] and llm_server.authorizations == []
