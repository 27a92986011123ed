"""Readings become items (issue 38, second step): the pair table is renamed the item table, and every
reading is copied into it as an item of kind "reading" (its article in `article_a` and in slot 0,
`article_b` empty). A reading assignment then points at its item. Pair ids are kept; a reading's item
gets a new id, found again by its campaign and article, which are unique among readings.

Back: the reading assignments point at the readings again (0036 gives the reading table back, with
new ids, before this runs backwards) and the reading items are deleted.
"""

import django.db.models.deletion
from django.db import migrations, models

BATCH = 5000


def _checks_now(schema_editor) -> None:
    """PostgreSQL defers foreign key checks to the end of the transaction, and refuses to alter a table
    with checks still pending: run them now, before the next operation alters the tables."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def _reading_items(apps) -> dict[tuple[int, int], int]:
    Item = apps.get_model("annotate", "Item")
    rows = Item.objects.filter(kind="reading").values_list("campaign_id", "article_a_id", "id")
    return {(campaign_id, article_id): item_id for campaign_id, article_id, item_id in rows}


def readings_copy(apps, schema_editor):
    """Every reading as an item of kind reading, with its one slot."""
    Reading = apps.get_model("annotate", "Reading")
    Item = apps.get_model("annotate", "Item")
    ItemArticle = apps.get_model("annotate", "ItemArticle")
    readings = list(Reading.objects.order_by("id").values_list("campaign_id", "topic_id", "article_id", "order"))
    for start in range(0, len(readings), BATCH):
        Item.objects.bulk_create(
            [
                Item(kind="reading", campaign_id=campaign_id, topic_id=topic_id, article_a_id=article_id, order=order)
                for campaign_id, topic_id, article_id, order in readings[start : start + BATCH]
            ]
        )
    items = _reading_items(apps)
    slots = [ItemArticle(item_id=item_id, slot=0, article_id=article_id) for (_, article_id), item_id in items.items()]
    ItemArticle.objects.bulk_create(slots, batch_size=BATCH)
    _checks_now(schema_editor)


def reading_items_delete(apps, schema_editor):
    Item = apps.get_model("annotate", "Item")
    ItemArticle = apps.get_model("annotate", "ItemArticle")
    ItemArticle.objects.filter(item__kind="reading").delete()
    Item.objects.filter(kind="reading").delete()
    _checks_now(schema_editor)


def _update(model, column: str, moves: dict[int, list[int]]) -> None:
    for target, ids in moves.items():
        for start in range(0, len(ids), BATCH):
            model.objects.filter(pk__in=ids[start : start + BATCH]).update(**{column: target})


def assignments_to_items(apps, schema_editor):
    Reading = apps.get_model("annotate", "Reading")
    ReadingAssignment = apps.get_model("annotate", "ReadingAssignment")
    keys = {pk: (campaign_id, article_id) for pk, campaign_id, article_id in Reading.objects.values_list("id", "campaign_id", "article_id")}
    items = _reading_items(apps)
    moves: dict[int, list[int]] = {}
    for pk, reading_id in ReadingAssignment.objects.values_list("id", "reading_id"):
        moves.setdefault(items[keys[reading_id]], []).append(pk)
    _update(ReadingAssignment, "item_id", moves)
    _checks_now(schema_editor)


def assignments_to_readings(apps, schema_editor):
    Reading = apps.get_model("annotate", "Reading")
    Item = apps.get_model("annotate", "Item")
    ReadingAssignment = apps.get_model("annotate", "ReadingAssignment")
    readings = {
        (campaign_id, article_id): pk for pk, campaign_id, article_id in Reading.objects.values_list("id", "campaign_id", "article_id")
    }
    keys = {
        pk: (campaign_id, article_id)
        for pk, campaign_id, article_id in Item.objects.filter(kind="reading").values_list("id", "campaign_id", "article_a_id")
    }
    moves: dict[int, list[int]] = {}
    for pk, item_id in ReadingAssignment.objects.values_list("id", "item_id"):
        moves.setdefault(readings[keys[item_id]], []).append(pk)
    _update(ReadingAssignment, "reading_id", moves)
    _checks_now(schema_editor)


class Migration(migrations.Migration):
    # After judges 0014, so that a migration of judges' units never runs with the table under the other name.
    dependencies = [
        ("annotate", "0034_items_and_orders"),
        ("judges", "0014_items_and_orders"),
    ]

    operations = [
        migrations.RenameModel("Pair", "Item"),
        migrations.AlterField(
            model_name="item",
            name="campaign",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="items", to="annotate.campaign"),
        ),
        migrations.AlterField(
            model_name="item",
            name="kind",
            field=models.CharField(
                choices=[("pair", "Two articles, compared"), ("reading", "One article, read alone")],
                db_default="pair",
                default="pair",
                max_length=10,
            ),
        ),
        migrations.AlterField(
            model_name="item",
            name="article_b",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="annotate.article"
            ),
        ),
        migrations.AddConstraint(
            model_name="item",
            constraint=models.UniqueConstraint(
                condition=models.Q(kind="reading"), fields=("campaign", "article_a"), name="item_reading_unique_article"
            ),
        ),
        migrations.AddConstraint(
            model_name="item",
            constraint=models.CheckConstraint(
                condition=models.Q(kind="pair", article_b__isnull=False) | models.Q(kind="reading", article_b__isnull=True),
                name="item_kind_articles",
            ),
        ),
        migrations.CreateModel(
            name="Pair",
            fields=[],
            options={"ordering": ["campaign", "order", "id"], "proxy": True, "indexes": [], "constraints": []},
            bases=("annotate.item",),
        ),
        migrations.RunPython(readings_copy, reading_items_delete),
        # A reading assignment moves to its item: a new column filled, the old one dropped, the new renamed.
        migrations.AddField(
            model_name="readingassignment",
            name="item",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotate.item"),
        ),
        migrations.AlterField(
            model_name="readingassignment",
            name="reading",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="assignments", to="annotate.reading"
            ),
        ),
        migrations.RunPython(assignments_to_items, assignments_to_readings),
        migrations.RemoveConstraint(model_name="readingassignment", name="readingassignment_one_per_annotator"),
        migrations.RemoveIndex(model_name="readingassignment", name="annotate_re_reading_f961fc_idx"),
        migrations.RemoveField(model_name="readingassignment", name="reading"),
        migrations.RenameField(model_name="readingassignment", old_name="item", new_name="reading"),
        migrations.AlterField(
            model_name="readingassignment",
            name="reading",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="reading_assignments", to="annotate.item"),
        ),
        migrations.AddConstraint(
            model_name="readingassignment",
            constraint=models.UniqueConstraint(fields=("reading", "annotator"), name="readingassignment_one_per_annotator"),
        ),
        migrations.AddIndex(
            model_name="readingassignment",
            index=models.Index(fields=["reading", "status"], name="annotate_re_reading_f961fc_idx"),
        ),
    ]
