"""The database cache's table (settings.CACHE_TABLE), made where `migrate` runs: `make demo`,
`make serve`, the tests and any server. It is made whatever the cache setting, so that a site can
move between Redis and the database cache without another command."""

from django.conf import settings
from django.core.management.commands.createcachetable import Command as CreateCacheTable
from django.db import migrations


def table_create(apps, schema_editor):
    # Does nothing when the table exists (a site that ran `createcachetable` itself).
    command = CreateCacheTable()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, settings.CACHE_TABLE, dry_run=False)


def table_drop(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(settings.CACHE_TABLE)}")


class Migration(migrations.Migration):
    dependencies = []

    operations = [migrations.RunPython(table_create, table_drop)]
