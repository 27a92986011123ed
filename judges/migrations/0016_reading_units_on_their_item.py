"""A judge's unit of a reading names its item in `pair`, as a unit of a pair does (issue 38): one
column for the item of every unit, and `reading` goes. A unit of a reading is told by its order, "a".
Back: the units of reading items move to `reading` again, `pair` empty."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import F

# The constraints that name the unit's reading, dropped with it and added back.
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


def units_to_their_item(apps, schema_editor):
    JudgeUnit = apps.get_model("judges", "JudgeUnit")
    JudgeUnit.objects.filter(reading__isnull=False).update(pair_id=F("reading_id"), reading_id=None)
    _checks_now(schema_editor)


def units_back_to_reading(apps, schema_editor):
    JudgeUnit = apps.get_model("judges", "JudgeUnit")
    JudgeUnit.objects.filter(order="a").update(reading_id=F("pair_id"), pair_id=None)
    _checks_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("judges", "0015_readings_are_items"),
        ("annotate", "0038_answers_are_labels"),
    ]

    operations = [
        *(migrations.RemoveConstraint(model_name="judgeunit", name=constraint.name) for constraint in CONSTRAINTS),
        migrations.RunPython(units_to_their_item, units_back_to_reading),
        migrations.RemoveField(model_name="judgeunit", name="reading"),
        migrations.AlterField(
            model_name="judgeunit",
            name="pair",
            field=models.ForeignKey(
                help_text="The item: a pair or a reading.",
                on_delete=django.db.models.deletion.CASCADE,
                related_name="judge_units",
                to="annotate.item",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgeunit",
            constraint=models.CheckConstraint(
                condition=models.Q(a_first=True, order__in=("ab", "a")) | models.Q(a_first=False, order="ba"),
                name="judgeunit_order_agrees",
            ),
        ),
    ]
