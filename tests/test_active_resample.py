"""The active sampler re-run by the task worker after the burn-in (issue 27): once every admitted
burn-in pair is submitted, a submission queues `calibration.tasks.active_sample_task`, which draws the
active pairs; staff no longer have to run `sample_pairs` for an active campaign to go on."""

import pytest
from django_tasks_db.models import DBTaskResult

from annotate.models import Campaign, Pair, PairAdmission
from annotate.services.claims import assignment_claim_next
from calibration.sampling import MIN_FIT, sample_pairs, sampler_due
from calibration.tasks import active_sample_task
from tests.calibration_builders import by_criterion, hand_campaign, label_pairs, order_flipping_judge
from tests.test_judge_pages import work_off_the_queue

TOPICS = tuple(f"Topic {i}" for i in range(6))  # 6 topics x 2 pairs: 12 pairs
TASK = "calibration.tasks.active_sample_task"


def burnt_in(annotators):
    """12 pairs, a judge on all of them (sure on half, flipping with the order on the others), the first
    MIN_FIT pairs drawn as the burn-in at rate 1 (budget 12 of 12), nothing labelled yet."""
    campaign = hand_campaign(annotators, topics=TOPICS)
    Campaign.objects.filter(pk=campaign.pk).update(sampling="active", sampling_burn_in=MIN_FIT, sampling_budget=12)
    campaign.refresh_from_db()
    pairs = list(Pair.objects.filter(campaign=campaign).order_by("order", "id"))
    order_flipping_judge(campaign, pairs)
    sample_pairs(campaign=campaign, seed=5)
    assert PairAdmission.objects.filter(pair__campaign=campaign, phase="burn-in", admitted=True).count() == MIN_FIT
    return campaign


def label_next(campaign, user):
    """Claims the next pair and labels it through the services (the submission sends the signal);
    label_pairs's own claim finds the one in progress."""
    pair = assignment_claim_next(campaign=campaign, user=user).pair
    return label_pairs(campaign, user, {pair: by_criterion("a", "b", "a")})[0]


def queued():
    return DBTaskResult.objects.filter(task_path=TASK).count()


@pytest.mark.django_db(transaction=True)  # the worker works in its own transactions; submissions commit as on the site
def test_it_draws_the_active_pairs_once_the_burn_in_is_submitted(alice):
    campaign = burnt_in([alice])
    for _ in range(MIN_FIT - 1):
        label_next(campaign, alice)
    # A burn-in pair is still unlabelled: nothing is queued, and nothing else is handed out.
    assert queued() == 0 and not sampler_due(campaign=campaign)
    label_next(campaign, alice)
    assert queued() == 1 and sampler_due(campaign=campaign)
    assert assignment_claim_next(campaign=campaign, user=alice) is None  # until the worker runs
    work_off_the_queue()
    task = DBTaskResult.objects.get(task_path=TASK)
    assert task.status == "SUCCESSFUL", task.exception_class_path
    assert task.return_value == "4 active admissions written, 4 admitted; 0 pairs wait"
    active = PairAdmission.objects.filter(pair__campaign=campaign, phase="active")
    # What is left of the budget (12 - 8 = 4) over the 4 later pairs: each is certain.
    assert active.count() == 4 and sum(active.values_list("probability", flat=True)) == pytest.approx(4.0)
    claimed = assignment_claim_next(campaign=campaign, user=alice)
    assert claimed is not None and claimed.pair_id in set(active.values_list("pair_id", flat=True))
    # Nothing left to draw: later submissions queue nothing, and a task run anyway writes nothing.
    before = sorted(PairAdmission.objects.filter(pair__campaign=campaign).values_list("pair_id", "probability", "draw"))
    label_pairs(campaign, alice, {claimed.pair: by_criterion("a", "a", "a")})
    assert queued() == 1 and not sampler_due(campaign=campaign)
    assert active_sample_task.call(campaign.pk) == "nothing to draw"
    assert sorted(PairAdmission.objects.filter(pair__campaign=campaign).values_list("pair_id", "probability", "draw")) == before


@pytest.mark.django_db
def test_it_waits_for_the_burn_in_pairs_in_progress_and_for_staff_to_draw_the_burn_in(alice, bob, django_capture_on_commit_callbacks):
    campaign = hand_campaign([alice, bob], topics=TOPICS)
    Campaign.objects.filter(pk=campaign.pk).update(sampling="active", sampling_burn_in=MIN_FIT, sampling_budget=12)
    campaign.refresh_from_db()
    assert not sampler_due(campaign=campaign)  # no burn-in drawn yet: staff start it with sample_pairs
    campaign.delete()
    campaign = burnt_in([alice, bob])
    held = assignment_claim_next(campaign=campaign, user=bob)
    for _ in range(MIN_FIT):
        with django_capture_on_commit_callbacks(execute=True):
            label_next(campaign, alice)
    # Every burn-in pair has alice's submission but bob holds one in progress: not yet.
    assert not sampler_due(campaign=campaign) and queued() == 0
    with django_capture_on_commit_callbacks(execute=True):
        label_pairs(campaign, bob, {held.pair: by_criterion("b", "b", "b")})
    assert sampler_due(campaign=campaign) and queued() == 1


@pytest.mark.django_db
def test_it_queues_nothing_for_a_campaign_that_samples_uniformly(alice, django_capture_on_commit_callbacks):
    campaign = hand_campaign([alice], topics=TOPICS)
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            label_next(campaign, alice)
        assert callbacks  # the submission sent the signal; the receiver queued nothing
    assert queued() == 0 and not sampler_due(campaign=campaign)
