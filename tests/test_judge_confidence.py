"""Confidence for every verdict (issue 24, item 2): token probabilities through the loopback server
and the real openai client, samples:N counted as calls, and the confidence column of imported rows."""

import hashlib
import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judges.models import JudgeCall, JudgeRun, JudgeVerdict
from judges.services import judge_create, judge_run_create, judge_run_execute

pytestmark = pytest.mark.django_db
KEY_ENV = "FAKE_JUDGE_API_KEY"


def make_judge(llm_server, monkeypatch, name="fake-conf", **options):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    judge, _ = judge_create(
        name=name, model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV,
        input_price="2.50", output_price="10", **options,
    )  # fmt: skip
    return judge


def test_it_stores_the_answers_probability_from_logprobs(campaign, llm_server, monkeypatch):
    judge = make_judge(llm_server, monkeypatch, confidence="logprobs")
    # The fake model's probability depends on the criterion: a hand-made table, not the server's default.
    llm_server.confidence = lambda key, message: 0.6 + 0.3 * (int(hashlib.sha256(key.encode()).hexdigest(), 16) % 2)
    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=2, concurrency=2))
    assert run.status == JudgeRun.Status.FINISHED, run.message
    assert all(r.get("logprobs") is True and r.get("top_logprobs") == 5 for r in llm_server.requests)
    verdicts = JudgeVerdict.objects.filter(unit__judge=judge).select_related("criterion")
    assert verdicts.count() == 2 * 39
    for v in verdicts:
        expected = 0.6 + 0.3 * (int(hashlib.sha256(v.criterion.key.encode()).hexdigest(), 16) % 2)
        assert v.confidence == pytest.approx(expected)


def test_it_leaves_confidence_empty_without_the_option(campaign, llm_server, monkeypatch):
    judge = make_judge(llm_server, monkeypatch)
    judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=1))
    assert "logprobs" not in llm_server.requests[0]
    assert set(JudgeVerdict.objects.filter(unit__judge=judge).values_list("confidence", flat=True)) == {None}


def test_it_counts_every_sample_as_a_billed_call(campaign, llm_server, monkeypatch):
    judge = make_judge(llm_server, monkeypatch, confidence="samples:3", temperature=1.0)
    seen: dict = {}

    def two_to_one(key, message):  # per key and prompt: "1", "1", then "2"
        n = seen[key, message] = seen.get((key, message), 0) + 1
        return "2" if n % 3 == 0 else "1"

    llm_server.policy = two_to_one
    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=2, swap=True, concurrency=1))
    assert run.status == JudgeRun.Status.FINISHED, run.message
    units = 2 * 2 * 3  # pairs x orders x categories
    assert run.units_done == units
    assert len(llm_server.requests) == run.calls == JudgeCall.objects.filter(run=run).count() == 3 * units
    billed = sum(c.cost_usd for c in JudgeCall.objects.filter(run=run))
    assert run.cost_usd == billed and billed > 0
    for v in JudgeVerdict.objects.filter(unit__judge=judge).select_related("unit"):
        assert v.samples == "1,1,2"
        assert v.confidence == pytest.approx(2 / 3)
        assert v.winner == ("a" if v.unit.a_first else "b")


def test_it_refuses_a_bad_confidence_option(db):
    with pytest.raises(CommandError, match="samples:N"):
        call_command("add_judge", "x", "--kind", "length", "--confidence", "samples:1", stdout=io.StringIO())
    with pytest.raises(CommandError, match="Only an LLM judge"):
        call_command("add_judge", "y", "--kind", "length", "--confidence", "logprobs", stdout=io.StringIO())
