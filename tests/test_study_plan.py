"""Freezing a campaign's study plan (page and command), the report's `plan` section, and `--format methods`."""

import html
import json

import pytest
from django.urls import reverse

from annotate.models import Criterion
from annotate.services.alt_epsilon import campaign_set_alt_epsilon
from annotate.services.answers import label_save, position_from_winner
from annotate.services.claims import assignment_claim_next
from calibration.models import StudyPlan
from calibration.plan import check as plan_check
from calibration.plan.study import plan_record, prompt_sha256, study_plan_freeze
from calibration.report.build import build_report
from calibration.report.formats import render_html, render_md
from calibration.report.methods import render_methods
from judges.models import Judge
from tests.calibration_builders import assert_contract, hand_dataset
from tests.helpers import run

pytestmark = pytest.mark.django_db


def _freeze_url(campaign):
    return reverse("calibration-study-plan", args=[campaign.pk])


def test_it_freezes_the_plan_from_the_campaign_page(client, rachel, campaign):
    client.force_login(rachel)
    page = client.get(reverse("campaign-detail", args=[campaign.pk]))
    assert page.status_code == 200 and b'id="freeze-plan"' in page.content
    response = client.post(
        _freeze_url(campaign), {"planned_pairs": "8", "statistics": ["par", "alt-test"], "alpha": "0.15", "delta": "0.1"}
    )
    assert response.status_code == 302 and response["Location"] == _freeze_url(campaign)
    plan = StudyPlan.objects.get(campaign=campaign)
    assert plan.frozen_by == rachel and plan.sha256 == plan_check.record_sha256(plan.record)
    record = plan.record
    assert record["planned_pairs"] == 8 and record["statistics"] == ["par", "alt-test"]
    assert (record["alpha"], record["delta"]) == (0.15, 0.1)
    assert record["rubric"]["key"] == campaign.criterion_set.key and record["rubric"]["n_criteria"] == 39
    assert record["design"]["pairs"] == 8 and record["design"]["overlap"] == 2 and record["epsilon"] == {"value": None, "reason": None}
    shown = client.get(_freeze_url(campaign))
    assert shown.status_code == 200 and plan.sha256.encode() in shown.content
    assert plan_check.canonical_json(record).encode() in shown.content.replace(b"&quot;", b'"')


def test_it_refuses_to_freeze_twice(client, rachel, campaign):
    client.force_login(rachel)
    assert client.post(_freeze_url(campaign), {"planned_pairs": "8"}).status_code == 302
    first = StudyPlan.objects.get(campaign=campaign).sha256
    again = client.post(_freeze_url(campaign), {"planned_pairs": "20"})
    assert again.status_code == 409 and "already has a frozen study plan" in again.content.decode()
    assert StudyPlan.objects.get(campaign=campaign).sha256 == first
    result = run("freeze_plan", "--campaign", campaign.name, "--planned-pairs", "4")
    assert result.code == 1 and "a frozen plan cannot change" in result.err


def test_it_refuses_to_freeze_after_the_first_label(client, rachel, alice, campaign):
    assignment = assignment_claim_next(campaign=campaign, user=alice)
    assert assignment is not None
    client.force_login(rachel)
    assert client.post(_freeze_url(campaign), {"planned_pairs": "8"}).status_code == 302  # a claim is not a label
    StudyPlan.objects.all().delete()
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).first()
    label_save(assignment=assignment, criterion=criterion, user=alice, position=position_from_winner(assignment, "a"), rationale="Plainer.")
    response = client.post(_freeze_url(campaign), {"planned_pairs": "8"})
    assert response.status_code == 409 and "before the first answer" in response.content.decode()
    result = run("freeze_plan", "--campaign", campaign.name, "--planned-pairs", "8")
    assert result.code == 1 and "has answers already" in result.err and not StudyPlan.objects.exists()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"planned_pairs": ""}, "planned pairs must be a whole number"),
        ({"planned_pairs": "0"}, "planned pairs must be a whole number"),
        ({"planned_pairs": "8", "statistics": ["bleu"]}, "unknown statistic 'bleu'"),
        ({"planned_pairs": "8", "alpha": "1.5"}, "alpha must be between 0 and 1"),
        ({"planned_pairs": "8", "delta": "x"}, "delta must be a number"),
    ],
)
def test_it_answers_bad_input_with_400(client, rachel, campaign, data, message):
    client.force_login(rachel)
    response = client.post(_freeze_url(campaign), data)
    # The whole page again, the reason above the form (HTML-escaped).
    assert response.status_code == 400 and message in html.unescape(response.content.decode())
    assert not StudyPlan.objects.exists()


def test_it_freezes_from_the_command_line(rachel, campaign):
    Judge.objects.create(name="gpt", model="gpt-x", temperature=0.3, max_tokens=512, confidence="logprobs")
    result = run(
        "freeze_plan", "--campaign", campaign.name, "--planned-pairs", "8", "--statistics", "par,kappa,selective",
        "--alpha", "0.2", "--delta", "0.05", "--judges", "gpt", "--by", "rachel",
    )  # fmt: skip
    assert result.code == 0, result.err
    plan = StudyPlan.objects.get(campaign=campaign)
    assert f"SHA-256 {plan.sha256}" in result.out and plan.frozen_by == rachel
    (judge,) = plan.record["judges"]
    assert judge["model"] == "gpt-x" and (judge["temperature"], judge["max_tokens"], judge["confidence"]) == (0.3, 512, "logprobs")
    assert judge["prompt_sha256"] == prompt_sha256(Judge.objects.get(name="gpt"), campaign.allow_tie) and len(judge["prompt_sha256"]) == 64
    assert plan.record["statistics"] == ["par", "kappa", "selective"]
    assert run("freeze_plan", "--campaign", "nope", "--planned-pairs", "8").code == 1


def test_it_hashes_the_judges_prompt_template(campaign):
    judge = Judge.objects.create(name="gpt", model="gpt-x")
    plain = prompt_sha256(judge, False)
    assert prompt_sha256(judge, False) == plain and prompt_sha256(judge, True) != plain
    judge.structured_output = False
    assert prompt_sha256(judge, False) != plain
    assert prompt_sha256(Judge(name="len", kind=Judge.Kind.LENGTH), False) is None


def _frozen_hand_dataset(alice, bob, rachel, **plan):
    def freeze(campaign):
        record = plan_record(campaign, planned_pairs=plan.get("planned_pairs", 2), statistics=plan.get("statistics", ["par", "kappa"]))
        study_plan_freeze(campaign=campaign, user=rachel, record=record)

    return hand_dataset(alice, bob, before_labels=freeze)


def test_it_lists_every_deviation_in_the_report(alice, bob, rachel):
    campaign = _frozen_hand_dataset(alice, bob, rachel, planned_pairs=3)
    campaign_set_alt_epsilon(campaign=campaign, epsilon=0.15, reason="skilled annotators")
    report = build_report(campaign, rounds=0)
    assert_contract(report)
    plan = report["plan"]
    assert plan["frozen"] and plan["sha256"] == StudyPlan.objects.get().sha256 and plan["frozen_by"] == "rachel"
    kinds = [(d["kind"], d["planned"], d["now"]) for d in plan["deviations"]]
    assert kinds == [
        ("judge_added", None, "cheap"),
        ("judge_added", None, "sharp"),
        ("epsilon_changed", None, 0.15),
        ("n_differs", 3, 2),
        ("statistic_not_planned", None, "alt-test"),
    ]
    md = render_md(report)
    assert "## Deviations from the study plan" in md and "judge cheap was not in the plan" in md and plan["sha256"] in md
    assert "alt-test ε: planned none, now 0.15" in render_html(report, svgs={})


def test_it_says_no_plan_was_frozen(calibration_campaign):
    report = build_report(calibration_campaign, rounds=0)
    assert report["plan"]["frozen"] is False and report["plan"]["deviations"] == []
    assert "No plan frozen" in render_md(report)
    assert "not pre-registered" in render_methods(report)


def test_it_shows_the_deviations_on_the_dashboard(client, rachel, alice, bob):
    campaign = _frozen_hand_dataset(alice, bob, rachel, planned_pairs=2)
    client.force_login(rachel)
    page = client.get(reverse("calibration-dashboard", args=[campaign.pk])).content.decode()
    assert 'id="study-plan"' in page and "judge sharp was not in the plan" in page
    assert "alt-test ε" not in page.split('id="study-plan"')[1].split("</section>")[0]
    campaign_set_alt_epsilon(campaign=campaign, epsilon=0.2, reason="experts")
    page = client.get(reverse("calibration-dashboard", args=[campaign.pk])).content.decode()
    assert "alt-test ε: planned none, now 0.2" in page


def test_it_writes_the_methods_with_the_figures_of_the_report(alice, bob, rachel, tmp_path):
    campaign = _frozen_hand_dataset(alice, bob, rachel, planned_pairs=2, statistics=["par", "kappa", "alt-test"])
    campaign_set_alt_epsilon(campaign=campaign, epsilon=0.2, reason="experts")
    out = tmp_path / "report.json"
    assert run("calibration_report", "--campaign", campaign.name, "--rounds", "200", "--out", str(out)).code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    result = run("calibration_report", "--campaign", campaign.name, "--rounds", "200", "--format", "methods")
    assert result.code == 0, result.err
    text = result.out
    assert text.startswith("## Methods\n") and "| Rater | PAR (95% CI) |" in text
    humans = report["humans"]
    assert f"{humans['par_leave_one_out']:.3f}" in text and f"n = {humans['par_leave_one_out_n']:,}" in text
    assert f"{humans['n_labels']:,} human labels from {humans['n_annotators']} annotators" in text
    for judge in report["judges"]:
        line = f"{judge['name']} {judge['par']:.3f} ("
        assert line in text, line
        assert f"n = {judge['n_labels']:,}, {judge['par_n_pairs']:,} pairs" in text
    for name, figures in report["alt_test"]["judges"].items():
        pooled = figures["pooled"]
        assert f"{name}: " in text
        if pooled["ran"]:
            assert f"ω = {pooled['omega']:.3f}" in text
        else:
            assert f"{name}: not run ({pooled['reason']})" in text
    assert report["plan"]["sha256"] in text and "judge cheap was not in the plan" in text
