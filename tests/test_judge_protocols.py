"""A judge's checklist, rating and count requests through the real openai client and the loopback
server (tests/llm_server.py): valid replies become verdicts; an answer out of the scale, "maybe",
a negative count or a missing answer leaves the unit in error with the reason, never an answer."""

import queue
import threading
from decimal import Decimal

import openai
import pytest

import protocols
from judges.transport import CallSettings, Job, Ledger, PlainJson, work_loop
from protocols.base import CriterionSpec

RESPONSES = {
    "checklist": {"type": "checklist", "allow_na": True},
    "rating": {"type": "rating", "points": [{"value": v, "label": f"level {v}"} for v in range(1, 6)]},
    "count": {"type": "count", "score": [{"at_most": 0, "score": 5}, {"score": 1}]},
}


def request_for(name: str):
    response, problems = protocols.criterion_response(RESPONSES[name])
    assert problems == []
    criteria = [CriterionSpec("c_1", "The first question.", response), CriterionSpec("c_2", "The second question.", response)]
    return protocols.get(name).build_request(
        topic="Tides",
        article="The tide rises twice a day.",
        category="Presentation",
        category_description="",
        criteria=criteria,
        structured=True,
    )


def ask(server, name: str):
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=5)
    settings = CallSettings(model="fake-judge", temperature=0.0, max_tokens=500, max_attempts=2, input_price=None,
                            cached_input_price=None, output_price=None, secret="test")  # fmt: skip
    ready, answers = queue.Queue(), queue.Queue()
    ready.put(Job(plan=None, unit_id=1, request=request_for(name), reserved=Decimal(0)))
    ready.put(None)
    work_loop(ready, answers, threading.Event(), client, settings, Ledger(None), PlainJson())
    job, outcome = answers.get_nowait()
    return outcome


@pytest.mark.parametrize("name", ["checklist", "rating", "count"])
def test_it_reads_a_valid_reply_of_each_protocol(llm_server, name):
    outcome = ask(llm_server, name)
    assert outcome.error == ""
    assert set(outcome.verdicts) == {"c_1", "c_2"}
    allowed = {"checklist": {"yes", "no", "na"}, "rating": {"1", "2", "3", "4", "5"}, "count": {"0", "1", "2", "3"}}[name]
    assert {answer for answer, _ in outcome.verdicts.values()} <= allowed
    assert llm_server.requests[-1]["response_format"]["json_schema"]["name"] == name


@pytest.mark.parametrize(
    "name, answer, answers",
    [
        ("checklist", "yes", {"c_1": ("yes", "Fake reason for c_1."), "c_2": ("yes", "Fake reason for c_2.")}),
        ("rating", 5, {"c_1": ("5", "Fake reason for c_1."), "c_2": ("5", "Fake reason for c_2.")}),
        ("count", "12", {"c_1": ("12", "Fake reason for c_1."), "c_2": ("12", "Fake reason for c_2.")}),
    ],
)
def test_it_stores_what_the_judge_answered(llm_server, name, answer, answers):
    llm_server.one_article_policy = lambda key, message: answer
    assert ask(llm_server, name).verdicts == answers


@pytest.mark.parametrize(
    "name, answer, reason",
    [
        ("checklist", "maybe", "c_1: answer 'maybe' is not one of yes, no, na"),
        ("rating", 6, "c_1: answer 6 is not a point of the scale 1-5"),
        ("rating", 3.5, "c_1: answer 3.5 is not a point of the scale 1-5"),
        ("rating", "good", "c_1: answer 'good' is not a point of the scale 1-5"),
        ("count", -1, "c_1: answer -1 is not a count from 0 to 100000"),
        ("count", None, "c_1: no answer given"),
        ("checklist", None, "c_1: no answer given"),
    ],
)
def test_it_leaves_the_unit_in_error_with_the_reason_never_an_answer(llm_server, name, answer, reason):
    llm_server.one_article_policy = lambda key, message: answer
    outcome = ask(llm_server, name)
    assert outcome.verdicts is None
    assert outcome.error == f"unreadable answer after 2 attempt(s): {reason}"
    assert [attempt.valid for attempt in outcome.attempts] == [False, False]
