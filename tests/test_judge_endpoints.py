"""Who sets a judge's base URL and key variable: a superuser (or a command on the server) may type
them; other staff choose among the endpoints configured on the server (JUDGE_ENDPOINTS)."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from judges.models import Judge, JudgeRun
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.helpers import run

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"
SECRET = "sk-test-endpoints-5d2a"


@pytest.fixture
def loopback_endpoint(llm_server, settings, monkeypatch):
    """The tests' loopback server, configured on the server as the endpoint 'loopback'."""
    monkeypatch.setenv(KEY_ENV, SECRET)
    settings.JUDGE_ENDPOINTS = [
        {"name": "openai", "base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"},
        {"name": "loopback", "base_url": llm_server.base_url, "api_key_env": KEY_ENV},
    ]
    return settings.JUDGE_ENDPOINTS[1]


def form(**fields):
    return {
        "name": "web-judge",
        "kind": "llm",
        "model": "fake-judge",
        "input_price": "1",
        "output_price": "2",
        "temperature": "0",
        "max_tokens": "100",
        **fields,
    }


def test_it_refuses_a_staff_users_own_base_url_and_key_variable(client, rachel, llm_server, monkeypatch):
    """The break: rachel pointed a judge at her own listener with OPENAI_API_KEY; the server sent her the key."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-servers-own-key-77aa")
    with pytest.raises(ValidationError) as refused:
        judge_create(name="mine", model="m", base_url=llm_server.base_url, api_key_env="OPENAI_API_KEY", by=rachel)

    assert "Only a superuser sets a judge's base URL and API key variable" in refused.value.messages[0]
    assert "JUDGE_ENDPOINTS" in refused.value.messages[0]
    assert not Judge.objects.exists()
    assert llm_server.authorizations == []


def test_it_offers_staff_the_configured_endpoints_and_no_url_field(client, rachel, loopback_endpoint):
    client.force_login(rachel)

    page = client.get(reverse("judge-list")).content.decode()

    assert 'name="endpoint"' in page and 'value="loopback"' in page and 'value="openai"' in page
    assert 'name="base_url"' not in page and 'name="api_key_env"' not in page
    assert "Only a superuser gives a judge a base URL" in page


def test_it_ignores_a_base_url_a_staff_user_posts_anyway(client, rachel, loopback_endpoint):
    client.force_login(rachel)

    response = client.post(reverse("judge-list"), form(base_url="http://127.0.0.1:9/v1", api_key_env="OPENAI_API_KEY"))

    assert response.status_code == 422
    assert "Choose one of the endpoints configured on the server" in response.content.decode()
    assert not Judge.objects.exists()


def test_it_lets_staff_add_and_run_a_judge_on_a_configured_endpoint(client, rachel, campaign, loopback_endpoint, llm_server):
    client.force_login(rachel)

    response = client.post(reverse("judge-list"), form(endpoint="loopback"))

    assert response.status_code == 302
    judge = Judge.objects.get(name="web-judge")
    assert (judge.base_url, judge.api_key_env) == (loopback_endpoint["base_url"], KEY_ENV)
    done = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=1))
    assert done.status == JudgeRun.Status.FINISHED and set(llm_server.authorizations) == {f"Bearer {SECRET}"}


def test_it_refuses_an_endpoint_that_is_not_configured(rachel, loopback_endpoint):
    with pytest.raises(ValidationError, match="No endpoint named 'elsewhere' is configured"):
        judge_create(name="x", model="m", endpoint="elsewhere", by=rachel)


def test_it_lets_a_superuser_type_a_base_url_and_a_key_variable(client, susan, llm_server):
    client.force_login(susan)

    page = client.get(reverse("judge-list")).content.decode()
    response = client.post(reverse("judge-list"), form(base_url=llm_server.base_url, api_key_env=KEY_ENV))

    assert 'name="base_url"' in page and 'name="api_key_env"' in page
    assert response.status_code == 302
    assert Judge.objects.get(name="web-judge").base_url == llm_server.base_url


def test_it_still_holds_a_superuser_to_the_host_list(susan, settings):
    settings.JUDGE_BASE_URL_HOSTS = ["api.openai.com"]

    with pytest.raises(ValidationError, match="is not one of JUDGE_BASE_URL_HOSTS"):
        judge_create(name="x", model="m", base_url="https://collector.example.net/v1", api_key_env="OPENAI_API_KEY", by=susan)


def test_it_lets_commands_on_the_server_type_them_and_choose_endpoints(llm_server, loopback_endpoint):
    typed = run("add_judge", "typed", "--model", "fake-judge", "--base-url", llm_server.base_url, "--api-key-env", KEY_ENV)
    chosen = run("add_judge", "chosen", "--model", "fake-judge", "--endpoint", "loopback")

    assert typed.code == 0 and chosen.code == 0, typed.err + chosen.err
    assert Judge.objects.get(name="chosen").api_key_env == KEY_ENV


def test_it_keeps_base_urls_and_key_variables_read_only_in_the_admin_for_staff(client, rachel, susan, llm_server):
    from django.contrib.auth.models import Permission

    judge, _ = judge_create(name="admin-judge", model="m", base_url=llm_server.base_url, api_key_env=KEY_ENV)
    rachel.user_permissions.add(*Permission.objects.filter(codename__in=["change_judge", "view_judge"]))
    url = reverse("admin:judges_judge_change", args=[judge.pk])
    client.force_login(rachel)

    page = client.get(url).content.decode()
    client.post(url, {"name": "admin-judge", "kind": "llm", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "OPENAI_API_KEY",
                      "temperature": "0", "max_tokens": "10", "mode": "category", "timeout_seconds": "10", "max_attempts": "1"})  # fmt: skip

    assert 'name="base_url"' not in page and 'name="api_key_env"' not in page
    judge.refresh_from_db()
    assert (judge.base_url, judge.api_key_env) == (llm_server.base_url, KEY_ENV)
    client.force_login(susan)
    assert 'name="base_url"' in client.get(url).content.decode()


def test_it_turns_the_host_list_and_the_outbound_policy_on_by_default():
    """Without any setting (as `make serve` starts): only the configured endpoints' hosts, no internal address."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    unset = {"JUDGE_BASE_URL_HOSTS", "JUDGE_ALLOW_ADDRESSES", "JUDGE_ENDPOINTS"}
    env = {**{k: v for k, v in os.environ.items() if k not in unset}, "SECRET_KEY": "x", "DEBUG": "0"}
    show = (
        "from config import settings as s; print(s.JUDGE_BASE_URL_HOSTS, s.JUDGE_ALLOW_ADDRESSES, [e['name'] for e in s.JUDGE_ENDPOINTS])"
    )

    done = subprocess.run([sys.executable, "-c", show], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['api.openai.com'] [] ['openai']"
