"""What a management command's option names, found or refused in one line."""

from django.core.management.base import CommandError
from django.db.models import Model, QuerySet


def named[M: Model](rows: QuerySet[M], name: str, *, create_with: str = "") -> M:
    """The row of `rows` whose `name` is `name`, or a CommandError naming what is missing.

    `create_with` names the command that creates such a row, for the message's hint:
    "No campaign named 'pilot'. Create it first with create_campaign."
    """
    row = rows.filter(name=name).first()
    if row is None:
        hint = f" Create it first with {create_with}." if create_with else ""
        raise CommandError(f"No {rows.model._meta.verbose_name} named '{name}'.{hint}")
    return row
