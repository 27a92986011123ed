from django.apps import AppConfig
from django.core import checks


class AnnotateConfig(AppConfig):
    name = "annotate"
    verbose_name = "Articles and annotation"

    def ready(self) -> None:
        checks.register(hooks_check)


def hooks_check(app_configs, **kwargs) -> list[checks.Error]:
    """settings.HOOKS names known hooks and functions that import (common/hooks.py)."""
    from common.hooks import hooks_problems

    return [checks.Error(problem, id="annotate.E001") for problem in hooks_problems()]
