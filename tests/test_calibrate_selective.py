"""`calibrate_selective` (issue 24, item 3): the same figures as calibration.metrics.selective called
directly on the same data, the guarantee in words, and one-line errors."""

import hashlib
import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate.models import Label
from calibration.metrics.selective import CascadeJudge, cascade_calibrate
from judges.models import JudgeVerdict
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.calibration_builders import label_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def labelled(campaign, alice, llm_server, monkeypatch):
    """A logprobs judge, sure (0.97) on most criteria and unsure (0.55) on those ending in 3, where
    alice, who labels every pair, disagrees with it."""
    monkeypatch.setenv("FAKE_JUDGE_API_KEY", "sk-test")
    judge, _ = judge_create(
        name="lp", model="fake-judge", base_url=llm_server.base_url, api_key_env="FAKE_JUDGE_API_KEY", confidence="logprobs"
    )
    llm_server.confidence = lambda key, message: 0.55 if key.endswith("3") else 0.97
    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, concurrency=2))
    assert run.status == "finished", run.message
    flip = {"a": "b", "b": "a", "tie": "a"}
    winners: dict = {}
    for v in JudgeVerdict.objects.filter(unit__judge=judge).select_related("unit__pair", "criterion"):
        winners.setdefault(v.unit.pair, {})[v.criterion.key] = flip[v.winner] if v.criterion.key.endswith("3") else v.winner
    label_pairs(campaign, alice, winners)
    return campaign


def run(*args):
    out = io.StringIO()
    call_command("calibrate_selective", *args, stdout=out)
    return out.getvalue()


def test_it_equals_the_metrics_called_directly(labelled):
    out = json.loads(
        run("--campaign", labelled.name, "--judges", "lp", "--alpha", "0.15", "--delta", "0.1", "--format", "json", "--rounds", "0")
    )
    rows = JudgeVerdict.objects.filter(unit__judge__name="lp").values_list(
        "unit__pair_id", "criterion__key", "winner", "confidence", "unit__a_first"
    )
    items = sorted((p, k, w, c, af) for p, k, w, c, af in rows)
    held = np.array([hashlib.sha256(f"selective:{p}".encode()).digest()[0] % 2 == 1 for p, *_ in items])
    conf = np.array([c for *_, c, _ in items])
    human = {(a.assignment.pair_id, a.criterion.key): a.winner for a in Label.objects.select_related("assignment", "criterion")}
    agree = np.array([w == human[p, k] for p, k, w, _, _ in items])
    pair = np.array([p for p, *_ in items])
    direct = cascade_calibrate(
        [CascadeJudge("lp", conf[~held], agree[~held], 0.0)], alpha=0.15, delta=0.1, human_cost_per_item=0.0, pair=pair[~held], rounds=0
    )
    stage = out["stages"][0]
    assert out["n_items"] == len(items) and out["n_calibration"] == int((~held).sum())
    assert stage["threshold"] == direct.stages[0].selective.threshold and stage["threshold"] is not None
    assert stage["n_accepted"] == direct.stages[0].n_accepted
    assert stage["agreement"]["value"] == direct.stages[0].selective.agreement.value
    assert out["n_to_humans"] == direct.n_to_humans
    assert stage["holdout"]["n"] == int(held.sum()) and stage["cost_per_accepted"] is None


def test_it_states_the_guarantee_in_words(labelled):
    text = run("--campaign", labelled.name, "--judges", "lp", "--alpha", "0.15", "--delta", "0.1", "--rounds", "0")
    assert "with probability ≥ 1 − δ = 0.9, agreement with the humans on accepted items is ≥ 1 − α = 0.85" in text
    assert "With probability at least 90%, lp agrees with the humans on at least 85% of the items it accepts" in text
    assert "held out" in text and "beside 1 − α = 0.85" in text
    assert "Cost: unknown" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (("--alpha", "1.5", "--delta", "0.1"), "alpha must be a number between 0 and 1"),
        (("--alpha", "0.1", "--delta", "zero"), "delta must be a number between 0 and 1"),
        (("--alpha", "0.1", "--delta", "0.1", "--judges", "nobody"), "no judge named 'nobody'"),
    ],
)
def test_it_refuses_bad_values_in_one_line(labelled, args, message):
    base = ["--campaign", labelled.name] + ([] if "--judges" in args else ["--judges", "lp"])
    with pytest.raises(CommandError, match=message) as caught:
        run(*base, *args)
    assert "\n" not in str(caught.value)


def test_it_refuses_a_judge_without_confidences(labelled, llm_server):
    judge, _ = judge_create(name="plain", model="fake-judge", base_url=llm_server.base_url, api_key_env="FAKE_JUDGE_API_KEY")
    judge_run_execute(run=judge_run_create(campaign=labelled, judge=judge, limit=2))
    with pytest.raises(CommandError, match="judge 'plain' has no confidences"):
        run("--campaign", labelled.name, "--judges", "lp,plain", "--alpha", "0.15", "--delta", "0.1")
