from django.apps import AppConfig


def gold_pause_gate(*, campaign, user) -> str | None:
    """The gold pause rule (`calibration.gold.gold_pause_reason`) as a claim gate. The rule needs the
    metrics (numpy, scipy): imported at the first claim it applies to, not when any command starts."""
    if campaign.gold_pause_below is None:
        return None
    from calibration.gold import gold_pause_reason

    return gold_pause_reason(campaign=campaign, user=user)


def study_plan_guard(*, campaign, changes) -> str | None:
    """The frozen plan's refusal of a settings change (`calibration.study_plan.settings_guard`), imported when used."""
    from calibration.study_plan import settings_guard

    return settings_guard(campaign=campaign, changes=changes)


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = "Calibration"

    def ready(self) -> None:
        # Only light modules here: every manage.py command runs this (calibration.tasks imports
        # the report, its views and the sampler when a task or receiver runs).
        from annotate.services import claims
        from annotate.signals import assignment_submitted
        from calibration.tasks import report_warm_after_run, report_warm_after_submission, sample_when_due
        from judges.signals import run_finished

        # The gold pause rule needs the metrics, which annotate may not import: it is registered here.
        if gold_pause_gate not in claims.CLAIM_GATES:
            claims.CLAIM_GATES.append(gold_pause_gate)
        # A frozen study plan refuses the settings changes that would alter it.
        from annotate.services.campaign_settings import SETTINGS_GUARDS

        if study_plan_guard not in SETTINGS_GUARDS:
            SETTINGS_GUARDS.append(study_plan_guard)
        # Likewise the active sampler, re-run after the burn-in once submissions leave it something to draw.
        assignment_submitted.connect(sample_when_due, dispatch_uid="calibration-sample-when-due")
        # After human submissions, the report is computed ahead, at most once a minute per campaign.
        assignment_submitted.connect(report_warm_after_submission, dispatch_uid="calibration-report-warm-after-submission")
        # After a judge run, the report is computed ahead by the task worker; judges may not import calibration.
        run_finished.connect(report_warm_after_run, dispatch_uid="calibration.report_warm_after_run")
