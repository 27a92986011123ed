"""A judge's unit of a reading points at the reading's item (issue 38, second step; annotate 0035
copied every reading into the item table). The item is found by the reading's campaign and article.
Back: the unit points at the reading again (annotate 0036 gives the reading table back first)."""

import django.db.models.deletion
from django.db import migrations, models

BATCH = 5000

# The constraints that name the unit's reading, dropped while the column is replaced and added back.
CONSTRAINTS = [
    models.UniqueConstraint(
        condition=models.Q(criterion__isnull=True, reading__isnull=False),
        fields=("judge", "reading", "category"),
        name="judgeunit_unique_reading_category",
    ),
    models.UniqueConstraint(
        condition=models.Q(criterion__isnull=False, reading__isnull=False),
        fields=("judge", "reading", "criterion"),
        name="judgeunit_unique_reading_criterion",
    ),
    models.CheckConstraint(
        condition=models.Q(pair__isnull=False, reading__isnull=True) | models.Q(pair__isnull=True, reading__isnull=False),
        name="judgeunit_of_pair_or_reading",
    ),
    models.CheckConstraint(
        condition=models.Q(reading__isnull=False, a_first=True, order="a")
        | models.Q(reading__isnull=True, a_first=True, order="ab")
        | models.Q(reading__isnull=True, a_first=False, order="ba"),
        name="judgeunit_order_agrees",
    ),
]


def _checks_now(schema_editor) -> None:
    """PostgreSQL defers foreign key checks to the end of the transaction, and refuses to alter a table
    with checks still pending: run them now, before the next operation alters the tables."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def _moves(pairs, target_of) -> dict[int, list[int]]:
    moves: dict[int, list[int]] = {}
    for pk, source in pairs:
        if source is not None:
            moves.setdefault(target_of[source], []).append(pk)
    return moves


def _update(model, column: str, moves: dict[int, list[int]]) -> None:
    for target, ids in moves.items():
        for start in range(0, len(ids), BATCH):
            model.objects.filter(pk__in=ids[start : start + BATCH]).update(**{column: target})


def _keys(apps):
    Reading = apps.get_model("annotate", "Reading")
    Item = apps.get_model("annotate", "Item")
    readings = {pk: (c, a) for pk, c, a in Reading.objects.values_list("id", "campaign_id", "article_id")}
    items = {(c, a): pk for pk, c, a in Item.objects.filter(kind="reading").values_list("id", "campaign_id", "article_a_id")}
    return readings, items


def units_to_items(apps, schema_editor):
    JudgeUnit = apps.get_model("judges", "JudgeUnit")
    readings, items = _keys(apps)
    target = {pk: items[key] for pk, key in readings.items()}
    _update(JudgeUnit, "item_id", _moves(JudgeUnit.objects.values_list("id", "reading_id"), target))
    _checks_now(schema_editor)


def units_to_readings(apps, schema_editor):
    JudgeUnit = apps.get_model("judges", "JudgeUnit")
    readings, items = _keys(apps)
    target = {items[key]: pk for pk, key in readings.items()}
    _update(JudgeUnit, "reading_id", _moves(JudgeUnit.objects.values_list("id", "item_id"), target))
    _checks_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0035_readings_are_items"),
        ("judges", "0014_items_and_orders"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgeunit",
            name="item",
            field=models.ForeignKey(
                null=True, blank=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotate.item"
            ),
        ),
        # The constraints go first, so that going back adds them only once the readings are filled in.
        *[migrations.RemoveConstraint(model_name="judgeunit", name=c.name) for c in CONSTRAINTS],
        migrations.RunPython(units_to_items, units_to_readings),
        migrations.RemoveField(model_name="judgeunit", name="reading"),
        migrations.RenameField(model_name="judgeunit", old_name="item", new_name="reading"),
        migrations.AlterField(
            model_name="judgeunit",
            name="reading",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="reading_judge_units", to="annotate.item"
            ),
        ),
        *[migrations.AddConstraint(model_name="judgeunit", constraint=c) for c in CONSTRAINTS],
    ]
