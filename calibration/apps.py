from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = "Calibration"

    def ready(self) -> None:
        # The gold pause rule needs the metrics, which annotate may not import: it is registered here.
        from annotate.services import claims
        from calibration.gold import gold_pause_reason

        if gold_pause_reason not in claims.CLAIM_GATES:
            claims.CLAIM_GATES.append(gold_pause_reason)
        # After a judge run, the report is computed ahead by the task worker; judges may not import calibration.
        from calibration.tasks import report_warm_after_run
        from judges.signals import run_finished

        run_finished.connect(report_warm_after_run, dispatch_uid="calibration.report_warm_after_run")
