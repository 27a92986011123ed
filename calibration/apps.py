from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    """Calibration connects nothing at start-up: what annotate and judges run of it is listed in
    settings.HOOKS (common/hooks.py)."""

    name = "calibration"
    verbose_name = "Calibration"
