"""A base for manage.py commands that skip Django's system checks."""

from django.core.management.base import BaseCommand


class UncheckedCommand(BaseCommand):
    """A command that runs without Django's system checks. The checks import every view and URL
    module, 0.8-1.5 s of a short command's 2 s on a 2-core machine; `manage.py check`, `make serve`
    and CI run them."""

    requires_system_checks = []
