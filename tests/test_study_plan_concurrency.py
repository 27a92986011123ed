"""Two staff freezing one campaign's study plan at once, with real threads: exactly one plan is stored."""

import threading

import pytest
from django.db import connections

from calibration.models import StudyPlan
from calibration.plan.study import PlanRefused, plan_record, study_plan_freeze

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_stores_exactly_one_plan_when_two_staff_freeze_at_once(campaign, rachel, susan):
    records = {
        rachel.pk: plan_record(campaign, planned_pairs=8, statistics=["par"]),
        susan.pk: plan_record(campaign, planned_pairs=20, statistics=["par", "kappa"]),
    }
    for _ in range(3):  # the race is lost differently from one run to another
        StudyPlan.objects.all().delete()
        barrier = threading.Barrier(2)
        stored, refused, other = [], [], []

        def freeze(user):
            try:
                barrier.wait()
                stored.append(study_plan_freeze(campaign=campaign, user=user, record=records[user.pk]))
            except PlanRefused as exc:
                refused.append(str(exc))
            except Exception as exc:  # anything else is a failure, not a refusal
                other.append(exc)
            finally:
                connections.close_all()

        threads = [threading.Thread(target=freeze, args=(u,)) for u in (rachel, susan)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert other == [] and len(stored) == 1 and len(refused) == 1
        assert "already has a frozen study plan" in refused[0]
        (plan,) = StudyPlan.objects.filter(campaign=campaign)
        assert plan.pk == stored[0].pk and plan.record == records[plan.frozen_by_id]
