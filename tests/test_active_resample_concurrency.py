"""Several triggers of the active sampler at once, with real threads, on SQLite or PostgreSQL: each pair
gets one admission, written by one of them; the others write nothing and fail nowhere (issue 27)."""

import pytest

from annotate.models import PairAdmission
from calibration.sampling import MIN_FIT, sample_pairs, sampler_due
from calibration.tasks import active_sample_task
from tests.test_active_resample import burnt_in, label_next
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)
WRITTEN = "4 active admissions written, 4 admitted; 0 pairs wait"


def admissions(campaign):
    return sorted(PairAdmission.objects.filter(pair__campaign=campaign).values_list("pair_id", "probability", "draw", "phase"))


@pytest.mark.parametrize("threads", [2, 6])
def test_it_admits_each_pair_once_when_triggers_race(alice, threads):
    campaign = burnt_in([alice])
    for _ in range(MIN_FIT):
        label_next(campaign, alice)
    assert sampler_due(campaign=campaign)
    results, errors = fire([lambda: active_sample_task.call(campaign.pk) for _ in range(threads)])
    assert not errors, errors
    # One trigger drew the 4 active pairs; the others found nothing to draw (before or after taking the lock).
    assert results.count(WRITTEN) == 1, results
    assert set(results) - {WRITTEN} <= {"nothing to draw", "0 active admissions written, 0 admitted; 0 pairs wait"}
    rows = admissions(campaign)
    assert len(rows) == len({r[0] for r in rows}) == 12
    assert [r[3] for r in rows].count("active") == 4
    # Both entry points at once again: nothing new, nothing redrawn.
    _, errors = fire([lambda: active_sample_task.call(campaign.pk), lambda: sample_pairs(campaign=campaign)])
    assert not errors and admissions(campaign) == rows
