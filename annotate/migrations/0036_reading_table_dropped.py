"""The reading table goes (issue 38, second step): its rows are items of kind reading since 0035,
and `Reading` is now a proxy of `Item` with a manager of readings only.

Back: the table is made again and filled from the reading items, each with a new id; judges 0015
and annotate 0035 then find each reading again by its campaign and article."""

from django.db import migrations


def _checks_now(schema_editor) -> None:
    """PostgreSQL defers foreign key checks to the end of the transaction, and refuses to alter a table
    with checks still pending: run them now, before the next operation alters the tables."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def readings_refill(apps, schema_editor):
    Reading = apps.get_model("annotate", "Reading")
    Item = apps.get_model("annotate", "Item")
    rows = Item.objects.filter(kind="reading").order_by("id").values_list("campaign_id", "topic_id", "article_a_id", "order")
    Reading.objects.bulk_create([Reading(campaign_id=c, topic_id=t, article_id=a, order=o) for c, t, a, o in rows], batch_size=5000)
    _checks_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0035_readings_are_items"),
        ("judges", "0015_readings_are_items"),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, readings_refill),
        migrations.DeleteModel(name="Reading"),
        migrations.CreateModel(
            name="Reading",
            fields=[],
            options={"ordering": ["order", "id"], "proxy": True, "indexes": [], "constraints": []},
            bases=("annotate.item",),
        ),
    ]
