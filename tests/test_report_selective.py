"""The report's `selective` section (issue 24, item 3: "the report shows the cascade's composition and
cost against the all-human cost"): the same figures as `calibrate_selective --format json`, from the
options or the frozen study plan, in Markdown, HTML and the methods paragraph; and the cascade panel
served from the shared cache on its second load."""

import io
import json

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from calibration import cache as report_cache
from calibration.plan.study import plan_record, study_plan_freeze
from calibration.report.selective import NOT_REQUESTED
from calibration.selectors import calibration_stamp
from judges.models import JudgeVerdict
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.calibration_builders import label_pairs

pytestmark = pytest.mark.django_db
EXTRA = ("requested", "source", "judges_asked", "composition")


def make_labelled(campaign, alice, llm_server, monkeypatch, *, plan: dict | None = None):
    """A logprobs judge, sure (0.97) except on criteria ending in 3 (0.55), where alice disagrees
    with it; with `plan`, a study plan (alpha, delta) frozen before the first label."""
    monkeypatch.setenv("FAKE_JUDGE_API_KEY", "sk-test")
    judge, _ = judge_create(
        name="lp", model="fake-judge", base_url=llm_server.base_url, api_key_env="FAKE_JUDGE_API_KEY", confidence="logprobs"
    )
    llm_server.confidence = lambda key, message: 0.55 if key.endswith("3") else 0.97
    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, concurrency=2))
    assert run.status == "finished", run.message
    if plan is not None:
        record = plan_record(campaign, planned_pairs=campaign.pairs.count(), statistics=["par", "kappa", "selective"], **plan)
        study_plan_freeze(campaign=campaign, user=None, record=record)
    flip = {"a": "b", "b": "a", "tie": "a"}
    winners: dict = {}
    for v in JudgeVerdict.objects.filter(unit__judge=judge).select_related("unit__pair", "criterion"):
        winners.setdefault(v.unit.pair, {})[v.criterion.key] = flip[v.winner] if v.criterion.key.endswith("3") else v.winner
    label_pairs(campaign, alice, winners)
    return campaign


@pytest.fixture
def labelled(campaign, alice, llm_server, monkeypatch):
    return make_labelled(campaign, alice, llm_server, monkeypatch)


def report(campaign, *args, fmt="json"):
    out = io.StringIO()
    call_command(
        "calibration_report", "--campaign", campaign.name, "--rounds", "0", "--format", fmt, *args, stdout=out, stderr=io.StringIO()
    )
    return json.loads(out.getvalue()) if fmt == "json" else out.getvalue()


def selective_json(campaign, *args):
    out = io.StringIO()
    call_command(
        "calibrate_selective", "--campaign", campaign.name, "--judges", "lp", "--rounds", "0", "--format", "json", *args, stdout=out
    )
    return json.loads(out.getvalue())


def test_it_equals_calibrate_selectives_json_with_the_composition(labelled):
    section = report(labelled, "--alpha", "0.15", "--delta", "0.1", "--cascade", "lp", "--human-cost", "0.4")["selective"]
    expected = selective_json(labelled, "--alpha", "0.15", "--delta", "0.1", "--human-cost", "0.4")

    assert {k: v for k, v in section.items() if k not in EXTRA} == expected
    assert section["requested"] is True and section["source"] == "options" and section["judges_asked"] == ["lp"]
    (stage,) = expected["stages"]
    assert section["composition"] == [
        {"by": "lp", "n": stage["n_accepted"], "share": stage["n_accepted"] / expected["n_calibration"]},
        {"by": "humans", "n": expected["n_to_humans"], "share": expected["human_share"]},
    ]
    assert 0 < stage["n_accepted"] < expected["n_calibration"]


def test_it_says_not_requested_without_alpha_delta_or_plan(labelled):
    full = report(labelled)
    assert full["selective"] == {"requested": False, "note": NOT_REQUESTED}
    assert NOT_REQUESTED == "not requested (give --alpha and --delta, or freeze a study plan with them)"
    assert "Selective judging: not requested (give --alpha and --delta, or freeze a study plan with them)." in report(labelled, fmt="md")
    assert "Selective judging" not in report(labelled, fmt="methods")


def test_it_takes_alpha_and_delta_from_the_frozen_study_plan(campaign, alice, llm_server, monkeypatch):
    make_labelled(campaign, alice, llm_server, monkeypatch, plan={"alpha": 0.2, "delta": 0.05})

    full = report(campaign)

    section = full["selective"]
    assert section["source"] == "plan" and (section["alpha"], section["delta"]) == (0.2, 0.05)
    assert {k: v for k, v in section.items() if k not in EXTRA} == selective_json(campaign, "--alpha", "0.2", "--delta", "0.05")
    assert [d for d in full["plan"]["deviations"] if d["kind"] in ("statistic_not_planned", "selective_changed")] == []
    # Other values given to the report are a deviation from the plan.
    changed = report(campaign, "--alpha", "0.3", "--delta", "0.05")
    assert changed["selective"]["alpha"] == 0.3 and changed["selective"]["source"] == "options"
    assert [(d["kind"], d["planned"], d["now"]) for d in changed["plan"]["deviations"] if d["kind"] == "selective_changed"] == [
        ("selective_changed", 0.2, 0.3)
    ]


def test_it_shows_the_cascade_in_markdown_html_and_methods(labelled):
    args = ("--alpha", "0.15", "--delta", "0.1", "--human-cost", "0.4")
    section = report(labelled, *args)["selective"]
    stage = section["stages"][0]
    md, html, methods = (report(labelled, *args, fmt=fmt) for fmt in ("md", "html", "methods"))

    for page in (md, html):
        assert "Selective judging: the cascade and its cost" in page
        assert f"{stage['threshold']:.4g}" in page and "cost unknown" in page
    assert section["guarantee_words"] in md
    assert f"| 1 | lp | {stage['threshold']:.4g} | {stage['n_accepted']:,} of {stage['n_reaching']:,} |" in md
    assert f" | humans | — | {section['n_to_humans']:,} | {section['human_share']:.1%} |" in md
    assert section["guarantee_words"] in methods and f"λ̂ = {stage['threshold']:.4g}" in methods
    assert f"beside 1 − α = {section['target']:g}" in methods


@pytest.mark.parametrize(
    "args, message",
    [
        (("--alpha", "2", "--delta", "0.1"), "alpha must be a number between 0 and 1"),
        (("--alpha", "0.1", "--delta", "x"), "delta must be a number between 0 and 1"),
        (
            (
                "--alpha",
                "0.1",
            ),
            "give both --alpha and --delta",
        ),
        (("--cascade", "lp"), "--cascade and --human-cost go with --alpha and --delta"),
        (("--alpha", "0.1", "--delta", "0.1", "--cascade", "nobody"), "no judge named 'nobody'"),
        (("--alpha", "0.1", "--delta", "0.1", "--human-cost", "-1"), "the human cost per item must be"),
    ],
)
def test_it_refuses_bad_values_in_one_line(labelled, args, message):
    with pytest.raises(CommandError, match=message) as caught:
        report(labelled, *args)
    assert "\n" not in str(caught.value)


def test_it_keys_the_cache_by_the_options(labelled):
    first = report(labelled, "--alpha", "0.15", "--delta", "0.1")["selective"]
    second = report(labelled, "--alpha", "0.4", "--delta", "0.2")["selective"]
    assert (first["alpha"], first["delta"]) == (0.15, 0.1) and (second["alpha"], second["delta"]) == (0.4, 0.2)
    assert first["guarantee_words"] != second["guarantee_words"]


def test_it_serves_the_cascade_panel_from_the_cache_on_the_second_load(client, rachel, labelled):
    client.force_login(rachel)
    query = {"judges": "lp", "alpha": "0.15", "delta": "0.1", "human_cost": ""}
    url = reverse("calibration-cascade", args=[labelled.pk])
    assert client.get(url, query).status_code == 200
    params = {"judges": ["lp"], "alpha": "0.15", "delta": "0.1", "human_cost": "", "rounds": 1000}
    parts = (labelled.pk, labelled.reference_system_id, labelled.neutral_emphasis, "cascade", sorted(params.items()))
    key = report_cache.cache_key((*parts, calibration_stamp(campaign=labelled)))
    entry = cache.get(key)
    assert entry is not None and entry["stages"][0]["judge"] == "lp"
    entry["stages"][0]["guarantee"] = "Read from the shared cache, not computed again."
    cache.set(key, entry)

    again = client.get(url, query)

    assert "Read from the shared cache, not computed again." in again.content.decode()
