"""Every stored row, read straight from the database, to check that a migration and its reverse keep them.

`rows(tables)` reads each table whole, every column, in a stable order; `tables_now()` lists the project's
tables in the schema the database is at; `migrate_to(targets)` moves the schema (None: the latest).
A step of issue 38's item model is checked by taking a full database back to the schema before it,
reading every row, migrating forward and back, and comparing.
"""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

APPS = ("annotate", "judges", "calibration", "auth")


def migrate_to(targets: list[tuple[str, str]] | None) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(targets if targets is not None else executor.loader.graph.leaf_nodes())
    executor.loader.build_graph()


def tables_now() -> list[str]:
    with connection.cursor():
        return sorted(name for name in connection.introspection.table_names() if name.split("_", 1)[0] in APPS)


def columns(table: str) -> list[str]:
    with connection.cursor() as cursor:
        return [c.name for c in connection.introspection.get_table_description(cursor, table)]


def rows(tables: list[str], only: dict[str, list[str]] | None = None) -> dict[str, list[tuple]]:
    """Each table's rows as tuples of its columns (those of `only[table]` when given), sorted."""
    out = {}
    with connection.cursor() as cursor:
        for table in tables:
            names = (only or {}).get(table) or columns(table)
            quoted = ", ".join(connection.ops.quote_name(n) for n in names)
            cursor.execute(f"SELECT {quoted} FROM {connection.ops.quote_name(table)}")
            out[table] = sorted(cursor.fetchall(), key=repr)
    return out
