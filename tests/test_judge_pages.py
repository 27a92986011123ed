"""The researchers' judge pages: listing and adding judges, starting, following and stopping runs."""

import io
import signal

import pytest
from django.core.management import call_command
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from judges.models import Judge, JudgeRun
from judges.services import judge_create, judge_run_create

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def fake_judge(llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-pages-0c1d")
    return judge_create(
        name="fake-gpt", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV, input_price="0", output_price="10"
    )[0]


def test_it_lists_judges_and_campaigns(client, campaign, rachel, fake_judge, django_assert_max_num_queries):
    judge_create(name="longer", kind="length")
    client.force_login(rachel)

    with django_assert_max_num_queries(6):
        response = client.get(reverse("judge-list"))

    page = response.content.decode()
    assert response.status_code == 200
    assert "fake-gpt" in page and "longer" in page and f"<code>{KEY_ENV}</code>" in page
    assert reverse("judge-campaign", args=[campaign.pk]) in page


def test_it_counts_each_campaigns_pairs_and_runs(client, campaign, catalogue, alice, rachel, fake_judge):
    from annotate.models import Assignment
    from annotate.services.campaigns import campaign_create
    from annotate.services.claims import assignment_claim_next

    other = campaign_create(name="Quiet", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], overlap=1, annotators=[alice])
    judge_run_create(campaign=campaign, judge=fake_judge)
    judge_run_create(campaign=campaign, judge=judge_create(name="longer", kind="length")[0])
    # Claimed and submitted assignments must not multiply the runs (nor the pairs).
    Assignment.objects.filter(pk=assignment_claim_next(campaign=campaign, user=alice).pk).update(status=Assignment.Status.SUBMITTED)
    client.force_login(rachel)

    page = client.get(reverse("judge-list")).content.decode()

    assert f'{campaign.name}</a></td><td>{campaign.criterion_set}</td><td class="num">8</td><td class="num">2</td>' in page
    assert f'{other.name}</a></td><td>{other.criterion_set}</td><td class="num">4</td><td class="num">0</td>' in page


def test_it_adds_a_judge_from_the_form(client, susan, llm_server):
    client.force_login(susan)  # a superuser: she gives the base URL and the key variable herself
    form = {
        "name": "web-judge",
        "kind": "llm",
        "model": "fake-judge",
        "base_url": llm_server.base_url,
        "api_key_env": "WEB_JUDGE_API_KEY",
        "input_price": "0.4",
        "output_price": "1.6",
        "temperature": "0",
        "max_tokens": "3000",
        "structured_output": "on",
    }

    response = client.post(reverse("judge-list"), form, follow=True)

    assert response.status_code == 200 and "Judge &#x27;web-judge&#x27; added." in response.content.decode()
    judge = Judge.objects.get(name="web-judge")
    assert (judge.api_key_env, str(judge.output_price), judge.max_tokens, judge.mode) == ("WEB_JUDGE_API_KEY", "1.600000", 3000, "category")

    again = client.post(reverse("judge-list"), {**form, "api_key_env": "sk-proj-abc"})
    assert again.status_code == 422
    assert "never the key itself" in again.content.decode() and "already exists" in again.content.decode()
    assert "sk-proj-abc" not in again.content.decode().split("<form")[0]


def test_it_shows_runs_and_polls_only_while_one_is_active(client, campaign, rachel, fake_judge, django_assert_max_num_queries):
    finished = judge_run_create(campaign=campaign, judge=fake_judge)
    JudgeRun.objects.filter(pk=finished.pk).update(status=JudgeRun.Status.FINISHED, units_total=24, units_done=24, cost_usd="0.01234567")
    client.force_login(rachel)
    url = reverse("judge-campaign", args=[campaign.pk])

    page = client.get(url).content.decode()
    assert "Judges on Pilot" in page and "24 / 24" in page and "0.01234567" in page
    assert 'hx-trigger="every 2s"' not in page and "Stop</button>" not in page

    judge_run_create(campaign=campaign, judge=fake_judge)
    page = client.get(url).content.decode()
    assert 'hx-trigger="every 2s"' in page and "Stop</button>" in page
    assert '<meta http-equiv="refresh"' in page  # without JavaScript the page reloads itself

    # session, user, runs (with their unanswered calls), the runs' batches, units per judge, campaign
    with django_assert_max_num_queries(6):
        fragment = client.get(url, **HTMX)
    html = fragment.content.decode()
    assert fragment.status_code == 200
    assert html.lstrip().startswith('<section id="runs"') and "<html" not in html and "Start a run" not in html


def test_it_queues_a_run_and_a_worker_runs_it(client, campaign, rachel, fake_judge, llm_server, transactional_db):
    client.force_login(rachel)

    response = client.post(
        reverse("judge-run-start", args=[campaign.pk]), {"judge": fake_judge.pk, "concurrency": "4", "limit": "2", "seed": "3"}
    )

    assert response.status_code == 302 and response.url == reverse("judge-campaign", args=[campaign.pk])
    run = JudgeRun.objects.get()
    assert (run.status, run.limit, run.seed, run.concurrency) == (JudgeRun.Status.QUEUED, 2, 3, 4)
    task = DBTaskResult.objects.get()
    assert str(task.id) == run.task_id and task.task_path == "judges.tasks.judge_run_task"
    assert llm_server.requests == []  # nothing ran inside the request

    work_off_the_queue()

    run.refresh_from_db()
    assert (run.status, run.units_done, run.units_total) == (JudgeRun.Status.FINISHED, 6, 6)
    assert len(llm_server.requests) == 6
    task.refresh_from_db()
    assert task.status == "SUCCESSFUL"


def test_it_stops_a_queued_run_before_a_worker_starts_it(client, campaign, rachel, fake_judge, llm_server, transactional_db):
    client.force_login(rachel)
    client.post(reverse("judge-run-start", args=[campaign.pk]), {"judge": fake_judge.pk, "concurrency": "2"})
    run = JudgeRun.objects.get()

    response = client.post(reverse("judge-run-stop", args=[run.pk]), **HTMX)

    assert response.status_code == 200 and '<section id="runs"' in response.content.decode()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.STOPPED
    work_off_the_queue()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.STOPPED and run.units_done == 0 and llm_server.requests == []


def test_it_asks_a_running_run_to_stop(client, campaign, rachel, fake_judge):
    run = judge_run_create(campaign=campaign, judge=fake_judge)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
    client.force_login(rachel)

    response = client.post(reverse("judge-run-stop", args=[run.pk]))

    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.STOPPING


def test_it_explains_a_refused_run(client, campaign, rachel, fake_judge):
    client.force_login(rachel)

    response = client.post(reverse("judge-run-start", args=[campaign.pk]), {"judge": fake_judge.pk, "concurrency": "500"})

    assert response.status_code == 422
    assert "Ensure this value is less than or equal to 64" in response.content.decode()
    assert not JudgeRun.objects.exists()


def work_off_the_queue() -> None:
    """Runs the database worker in this process until the queue is empty."""
    saved = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT)}
    try:
        call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--interval", "0", stdout=io.StringIO())
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)


def test_it_shows_judges_runs_and_calls_in_the_admin(client, campaign, fake_judge, django_user_model):
    run = judge_run_create(campaign=campaign, judge=fake_judge)
    admin = django_user_model.objects.create_superuser("root", password="root-password")
    client.force_login(admin)

    for model in ("judge", "judgerun", "judgeunit", "judgecall", "judgeverdict", "cachedresponse"):
        assert client.get(reverse(f"admin:judges_{model}_changelist")).status_code == 200, model
    page = client.get(reverse("admin:judges_judgerun_change", args=[run.pk])).content.decode()
    assert 'name="status"' in page and 'name="cost_usd"' not in page  # counters are read-only


@pytest.mark.parametrize(
    "given, stored, message",
    [("samples:3", "samples:3", None), ("", "none", None), ("samples:1", None, "samples:N with N from 2 to 20, got &#x27;samples:1&#x27;")],
)
def test_it_takes_the_confidence_option_from_the_form_as_add_judge_does(client, susan, llm_server, given, stored, message):
    client.force_login(susan)
    form = {
        "name": "sure-judge", "kind": "llm", "model": "fake-judge", "base_url": llm_server.base_url, "api_key_env": "WEB_JUDGE_API_KEY",
        "temperature": "1", "max_tokens": "3000", "confidence": given,
    }  # fmt: skip

    response = client.post(reverse("judge-list"), form)

    if message is None:
        assert response.status_code == 302
        assert Judge.objects.get(name="sure-judge").confidence == stored
    else:
        assert response.status_code == 422 and message in response.content.decode()
        assert not Judge.objects.filter(name="sure-judge").exists()
    page = client.get(reverse("judge-list")).content.decode()
    assert 'name="confidence"' in page


def test_it_changes_a_judges_confidence_with_update(client, susan, llm_server):
    client.force_login(susan)
    form = {"name": "sure-judge", "kind": "llm", "model": "fake-judge", "base_url": llm_server.base_url, "api_key_env": "WEB_JUDGE_API_KEY",
            "temperature": "0", "max_tokens": "3000", "confidence": "none"}  # fmt: skip
    client.post(reverse("judge-list"), form)

    response = client.post(reverse("judge-list"), {**form, "confidence": "logprobs", "update": "on"})

    assert response.status_code == 302 and Judge.objects.get(name="sure-judge").confidence == "logprobs"
