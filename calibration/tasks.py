"""Background work of calibration, run by `manage.py db_worker` (make serve runs one)."""

from django.tasks import task

from annotate.models import Campaign
from calibration.views import dashboard_warm


@task
def report_warm_task(campaign_id: int) -> str:
    """Computes the campaign's default report, charts and dashboard into the shared cache, so that
    the first person to open its dashboard (or ask the API, or run calibration_report with the
    defaults) finds them ready. Queued by `import_labels` once its labels are stored, and after a judge run (`report_warm_after_run`); nothing is computed twice (the
    cache's lock), and a campaign whose data changed again meanwhile is computed for its new data."""
    campaign = Campaign.objects.select_related("criterion_set", "reference_system").filter(pk=campaign_id).first()
    if campaign is None:
        return "gone"
    dashboard_warm(campaign)
    return "ready"


def report_warm_after_run(sender, run, verdicts: int, **kwargs) -> None:
    """Queues `report_warm_task` for a judge run that stored verdicts (`judges.signals.run_finished`,
    connected in `CalibrationConfig.ready`): the dashboard after a run opens at once, as after an import."""
    if verdicts:
        report_warm_task.enqueue(run.campaign_id)
