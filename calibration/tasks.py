"""Background work of calibration, run by `manage.py db_worker` (make serve runs one).

Imported at the first call of a hook that names it (settings.HOOKS) and by the task worker: what the tasks need (the
report, its views, the sampler) is imported when a task or receiver runs, not here.
"""

from datetime import timedelta

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.tasks import task
from django.utils import timezone

from annotate.models import Campaign

# After human submissions, at most one warm-up of the report is queued per campaign in this many
# seconds, and it runs at the end of them: a burst of submissions costs one computation, which sees them all.
WARM_DEBOUNCE = 60


@task
def report_warm_task(campaign_id: int) -> str:
    """Computes the campaign's default report, charts and dashboard into the shared cache, so that
    the first person to open its dashboard (or ask the API, or run calibration_report with the
    defaults) finds them ready. Queued by `import_labels` once its labels are stored, after a judge run
    (`report_warm_after_run`) and after human submissions (`report_warm_after_submission`); nothing is
    computed twice (the cache's locks), and a campaign whose data changed again meanwhile is computed
    for its new data. Returns "ready", "busy" (a web process computes it now) or "failed"."""
    from calibration.views import dashboard_warm

    campaign = Campaign.objects.select_related("criterion_set", "reference_system").filter(pk=campaign_id).first()
    if campaign is None:
        return "gone"
    return dashboard_warm(campaign)


@task
def active_sample_task(campaign_id: int) -> str:
    """Runs the active sampler (`calibration.sampling.sample_pairs`) on a campaign whose burn-in is done,
    so that its active pairs reach the human queue without staff running `sample_pairs`. Queued after a
    submission (`sample_when_due`). Idempotent and safe to run twice at once: the sampler takes the
    campaign's row as its lock and writes an admission only for a pair without one (written once)."""
    from calibration.sampling import sample_pairs, sampler_due

    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return "gone"
    if not sampler_due(campaign=campaign):
        return "nothing to draw"
    try:
        run = sample_pairs(campaign=campaign)
    except ValidationError as exc:  # the budget is spent: staff must raise it, nothing is drawn
        return " ".join(exc.messages)
    return f"{run.active} active admissions written, {run.admitted} admitted; {run.waiting} pairs wait"


def sample_when_due(*, pair_id: int, **kwargs) -> None:
    """Hook ``after_submit`` (settings.HOOKS): queues the sampler for the task worker when
    the submission leaves it something to draw (one query for a campaign that samples uniformly)."""
    from calibration.sampling import sampler_due

    campaign = Campaign.objects.filter(items=pair_id, sampling="active").first()
    if campaign is not None and sampler_due(campaign=campaign):
        active_sample_task.enqueue(campaign.pk)


def report_warm_after_submission(*, pair_id: int, **kwargs) -> None:
    """Hook ``after_submit`` (settings.HOOKS): queues `report_warm_task` to run
    `WARM_DEBOUNCE` seconds later, unless one is queued for the campaign already (a cache entry
    added atomically marks it): the dashboard after new labels opens up to date, not on an earlier report."""
    campaign_id = Campaign.objects.filter(items=pair_id).values_list("pk", flat=True).first()
    if campaign_id is None:
        return
    key = f"calibration:warm-queued:{campaign_id}"
    # Read first: on SQLite (IMMEDIATE transactions) an add takes the write lock even when the entry is
    # there, so that every submission would wait for the others' claims; a read takes none.
    if cache.get(key) is None and cache.add(key, 1, WARM_DEBOUNCE):
        report_warm_task.using(run_after=timezone.now() + timedelta(seconds=WARM_DEBOUNCE)).enqueue(campaign_id)


def report_warm_after_run(*, run, verdicts: int, **kwargs) -> None:
    """Hook ``after_run`` (settings.HOOKS): queues `report_warm_task` for a judge run that stored verdicts: the dashboard after a run opens at once, as after an import."""
    if verdicts:
        report_warm_task.enqueue(run.campaign_id)
