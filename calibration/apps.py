from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = "Calibration"

    def ready(self) -> None:
        # The gold pause rule needs the metrics, which annotate may not import: it is registered here.
        from annotate.services import claims
        from annotate.signals import assignment_submitted
        from calibration.gold import gold_pause_reason
        from calibration.tasks import report_warm_after_run, sample_when_due
        from judges.signals import run_finished

        if gold_pause_reason not in claims.CLAIM_GATES:
            claims.CLAIM_GATES.append(gold_pause_reason)
        # Likewise the active sampler, re-run after the burn-in once submissions leave it something to draw.
        assignment_submitted.connect(sample_when_due, dispatch_uid="calibration-sample-when-due")
        # After a judge run, the report is computed ahead by the task worker; judges may not import calibration.
        run_finished.connect(report_warm_after_run, dispatch_uid="calibration.report_warm_after_run")
