"""Answers about one article become labels (issue 38): the label table gains `value`, each reading's
answer is copied into it (its value, rationale and times; no winner), and the answer table goes.
`Answer` is then a proxy of `Label` whose manager gives the answers on readings only, as
`Label.objects` gives the verdicts on pairs.

Back: the answer table is made again, each label of a reading's assignment copied into it (a new
id) and deleted, and `value` goes. An answer is found by its assignment and criterion, unique both ways.
"""

from django.db import migrations, models

BATCH = 5000
FIELDS = ("assignment_id", "criterion_id", "value", "rationale", "created_at", "saved_at")


def _checks_now(schema_editor) -> None:
    """PostgreSQL defers foreign key checks to the end of the transaction, and refuses to alter a table
    with checks still pending: run them now, before the next operation alters the tables."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def answers_copy(apps, schema_editor):
    Answer = apps.get_model("annotate", "Answer")
    Label = apps.get_model("annotate", "Label")
    rows = Answer.objects.order_by("id").values_list(*FIELDS)
    Label.objects.bulk_create(
        [Label(winner="", cannot_judge=False, acceptable=[], **dict(zip(FIELDS, row))) for row in rows], batch_size=BATCH
    )
    _checks_now(schema_editor)


def answers_back(apps, schema_editor):
    Answer = apps.get_model("annotate", "Answer")
    Label = apps.get_model("annotate", "Label")
    readings = Label.objects.filter(assignment__pair__kind="reading")
    rows = readings.order_by("id").values_list(*FIELDS)
    Answer.objects.bulk_create([Answer(**dict(zip(FIELDS, row))) for row in rows], batch_size=BATCH)
    readings.delete()
    _checks_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [("annotate", "0037_reading_assignments_are_assignments")]

    operations = [
        migrations.AddField(
            model_name="label",
            name="value",
            field=models.TextField(blank=True, db_default="", default=""),
        ),
        migrations.RunPython(answers_copy, answers_back),
        migrations.DeleteModel(name="Answer"),
        migrations.CreateModel(
            name="Answer",
            fields=[],
            options={"proxy": True, "indexes": [], "constraints": []},
            bases=("annotate.label",),
        ),
    ]
