"""A study plan's freeze racing the first answer, with real threads, on SQLite or PostgreSQL: the plan
is either refused (the answer came first) or frozen before every answer, never after one."""

import pytest

from annotate.models import Answer, Criterion, Label
from annotate.services.answers import label_save, position_from_winner, value_save
from annotate.services.claims import assignment_claim_next
from calibration.models import StudyPlan
from calibration.plan.study import PlanRefused, plan_record, study_plan_freeze
from tests.reading_campaigns import ONE_ARTICLE, mixed_campaign, rubric
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 6


def _race(campaign, staff, save, answers):
    """Runs ROUNDS races of `save` (the first answer) against a freeze; returns how each round ended."""
    record = plan_record(campaign, planned_pairs=2, statistics=["par"])
    outcomes = []
    for _ in range(ROUNDS):
        StudyPlan.objects.all().delete()
        answers.all().delete()
        results, errors = fire([save, lambda: study_plan_freeze(campaign=campaign, user=staff, record=record)])
        assert all(isinstance(e, PlanRefused) for e in errors), errors
        plan = StudyPlan.objects.filter(campaign=campaign).first()
        saved = answers.get()
        if plan is None:
            outcomes.append("refused")
            assert "has answers already" in str(errors[0])
        else:
            # Frozen: it must have landed before the answer's save, whose time is read under the lock.
            assert plan.frozen_at <= saved.saved_at, f"plan frozen at {plan.frozen_at}, after an answer saved at {saved.saved_at}"
            outcomes.append("frozen first")
    return outcomes


def test_it_never_freezes_a_plan_after_the_first_label(campaign, alice, rachel):
    assignment = assignment_claim_next(campaign=campaign, user=alice)
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").first()
    position = position_from_winner(assignment, "a")

    def save():
        return label_save(assignment=assignment, criterion=criterion, user=alice, position=position, rationale="Plainer prose.")

    outcomes = _race(campaign, rachel, save, Label.objects.filter(assignment=assignment))
    assert len(outcomes) == ROUNDS


def test_it_never_freezes_a_plan_after_the_first_one_article_answer(catalogue, alice, rachel):
    campaign = mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), topics=1)
    reading = assignment_claim_next(campaign=campaign, user=alice)
    criterion = Criterion.objects.get(criterion_set=campaign.criterion_set, key="rt_style")

    def save():
        return value_save(assignment=reading, criterion=criterion, user=alice, value="4", rationale="Clear prose.")

    outcomes = _race(campaign, rachel, save, Answer.objects.filter(assignment=reading))
    assert len(outcomes) == ROUNDS
