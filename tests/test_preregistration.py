"""Pre-registration holds: a plan cannot be frozen once any kind of answer exists (typed or imported),
and a report re-checks the stored plan against its hash ("plan altered")."""

import pytest

from annotate.models import Campaign, Criterion, Label
from annotate.services.answers import overall_save, value_save
from annotate.services.claims import assignment_claim_next
from calibration.models import StudyPlan
from calibration.plan.study import PlanRefused, plan_record, plan_section, study_plan_freeze
from calibration.report.build import build_report
from calibration.report.formats import render_md
from tests.helpers import run
from tests.reading_campaigns import ONE_ARTICLE, mixed_campaign, rubric
from tests.test_import_one_article import mixed_rows, write_csv

pytestmark = pytest.mark.django_db


def _freeze(campaign, user):
    return study_plan_freeze(campaign=campaign, user=user, record=plan_record(campaign, planned_pairs=2, statistics=["par"]))


def test_it_refuses_to_freeze_after_a_one_article_answer(catalogue, alice, rachel):
    campaign = mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), topics=1)
    reading = assignment_claim_next(campaign=campaign, user=alice)
    criterion = Criterion.objects.get(criterion_set=campaign.criterion_set, key="rt_style")
    value_save(assignment=reading, criterion=criterion, user=alice, value="4", rationale="Clear prose.")
    with pytest.raises(PlanRefused, match="has answers already"):
        _freeze(campaign, rachel)
    assert not StudyPlan.objects.exists()


def test_it_refuses_to_freeze_after_an_overall_answer_alone(campaign, alice, rachel):
    campaign.ask_overall = True
    campaign.save(update_fields=["ask_overall"])
    assignment = assignment_claim_next(campaign=campaign, user=alice)
    overall_save(assignment=assignment, user=alice, value="1")
    with pytest.raises(PlanRefused, match="has answers already"):
        _freeze(campaign, rachel)


def test_it_refuses_to_freeze_after_imported_one_article_answers(rachel, tmp_path):
    assert run("create_campaign", "--name", "arena", "--labels-only", "--allow-tie").code == 0
    readings_only = [row for row in mixed_rows() if row.get("response")]  # no pairwise row: one-article answers alone
    result = run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "in.csv", readings_only)))
    assert result.code == 0, result.err
    campaign = Campaign.objects.get(name="arena")
    assert not Label.objects.filter(assignment__pair__campaign=campaign).exists()
    with pytest.raises(PlanRefused, match="has answers already"):
        _freeze(campaign, rachel)


def test_it_says_plan_altered_when_the_stored_plan_no_longer_matches_its_hash(campaign, rachel):
    plan = _freeze(campaign, rachel)
    assert plan_section(campaign, {"n_pairs": 2})["altered"] is False
    StudyPlan.objects.filter(pk=plan.pk).update(record={**plan.record, "planned_pairs": 99})
    section = plan_section(campaign, {"n_pairs": 2})
    assert section["altered"] is True
    assert section["deviations"][0]["kind"] == "plan_altered"
    assert "plan altered" in render_md(build_report(campaign))
