"""Many new rows at once, without a model instance each: what `bulk_create` does for rows that need
no defaults filled and no ids back, at a fraction of its cost.

At hundreds of thousands of rows (an import of a crowd's labels, its audit trail, imported judge
verdicts), building a model instance per row and compiling each value took most of the time.
Here the values go straight to `executemany`, times adapted for the database as the ORM adapts
them. The caller holds the transaction and gives complete rows (every NOT NULL column).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection


def rows_insert(model, fields: Sequence[str], rows: Sequence[tuple]) -> None:
    """INSERTs `rows`, each the values of `fields` in that order (foreign keys by id), into `model`'s table."""
    if not rows:
        return
    meta = model._meta
    columns = [meta.get_field(name) for name in fields]
    times = {i for i, field in enumerate(columns) if field.get_internal_type() == "DateTimeField"}
    if times:
        adapt, adapted = connection.ops.adapt_datetimefield_value, {}

        def value(i: int, v):
            if i not in times or v is None:
                return v
            # Many rows share a time (an import's `now`): adapt each once.
            if v not in adapted:
                adapted[v] = adapt(v)
            return adapted[v]

        rows = [tuple(value(i, v) for i, v in enumerate(row)) for row in rows]
    # A JSON value (a label's set of acceptable verdicts) goes as the database's JSON type wants it.
    jsons = [i for i, field in enumerate(columns) if field.get_internal_type() == "JSONField"]
    if jsons:
        rows = [tuple(columns[i].get_db_prep_save(v, connection) if i in jsons else v for i, v in enumerate(row)) for row in rows]
    quote = connection.ops.quote_name
    sql = f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in columns)}) VALUES ({', '.join(['%s'] * len(columns))})"
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)
