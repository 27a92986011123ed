"""Reading assignments become assignments (issue 38): each reading assignment is copied into the
assignment table, on its reading item, with `a_first` set and the order "a" (its one article shown
alone); its answers and its audit rows (`LabelChange.assignment`) point at the copy, and the reading
assignment table goes. `ReadingAssignment` is then a proxy of `Assignment` whose manager gives the
work on readings only, as `Assignment.objects` gives the work on pairs.

Back: the reading assignment table is made again, each assignment of a reading item copied into it
(a new id), its answers and audit rows pointed back, and the copies deleted. An assignment of a
reading is found by its item and annotator, which are unique for readings.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

BATCH = 5000
TIMES = ("status", "claimed_at", "first_opened_at", "last_activity_at", "submitted_at")


def _checks_now(schema_editor) -> None:
    """PostgreSQL defers foreign key checks to the end of the transaction, and refuses to alter a table
    with checks still pending: run them now, before the next operation alters the tables."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def _update(model, column: str, moves: dict[int, list[int]], **also) -> None:
    for target, ids in moves.items():
        for start in range(0, len(ids), BATCH):
            model.objects.filter(pk__in=ids[start : start + BATCH]).update(**{column: target}, **also)


def _moves(pairs, new_id: dict[int, int]) -> dict[int, list[int]]:
    moves: dict[int, list[int]] = {}
    for pk, old in pairs:
        moves.setdefault(new_id[old], []).append(pk)
    return moves


def reading_assignments_copy(apps, schema_editor):
    ReadingAssignment = apps.get_model("annotate", "ReadingAssignment")
    Assignment = apps.get_model("annotate", "Assignment")
    Answer = apps.get_model("annotate", "Answer")
    LabelChange = apps.get_model("annotate", "LabelChange")
    rows = list(ReadingAssignment.objects.order_by("id").values("id", "reading_id", "annotator_id", *TIMES))
    for start in range(0, len(rows), BATCH):
        Assignment.objects.bulk_create(
            [
                Assignment(
                    pair_id=row["reading_id"], annotator_id=row["annotator_id"], a_first=True, order="a", **{f: row[f] for f in TIMES}
                )
                for row in rows[start : start + BATCH]
            ]
        )
    copies = {
        (item_id, annotator_id): pk
        for pk, item_id, annotator_id in Assignment.objects.filter(pair__kind="reading").values_list("id", "pair_id", "annotator_id")
    }
    new_id = {row["id"]: copies[row["reading_id"], row["annotator_id"]] for row in rows}
    _update(Answer, "work_id", _moves(Answer.objects.values_list("id", "assignment_id"), new_id))
    changes = LabelChange.objects.filter(reading_assignment__isnull=False).values_list("id", "reading_assignment_id")
    _update(LabelChange, "assignment_id", _moves(changes, new_id), reading_assignment_id=None)
    _checks_now(schema_editor)


def reading_assignments_back(apps, schema_editor):
    ReadingAssignment = apps.get_model("annotate", "ReadingAssignment")
    Assignment = apps.get_model("annotate", "Assignment")
    Answer = apps.get_model("annotate", "Answer")
    LabelChange = apps.get_model("annotate", "LabelChange")
    copies = Assignment.objects.filter(pair__kind="reading")
    rows = list(copies.order_by("id").values("id", "pair_id", "annotator_id", *TIMES))
    ReadingAssignment.objects.bulk_create(
        [ReadingAssignment(reading_id=row["pair_id"], annotator_id=row["annotator_id"], **{f: row[f] for f in TIMES}) for row in rows],
        batch_size=BATCH,
    )
    backs = {
        (item_id, annotator_id): pk
        for pk, item_id, annotator_id in ReadingAssignment.objects.values_list("id", "reading_id", "annotator_id")
    }
    old_id = {row["id"]: backs[row["pair_id"], row["annotator_id"]] for row in rows}
    _update(Answer, "assignment_id", _moves(Answer.objects.values_list("id", "work_id"), old_id), work_id=None)
    changes = LabelChange.objects.filter(assignment__pair__kind="reading").values_list("id", "assignment_id")
    _update(LabelChange, "reading_assignment_id", _moves(changes, old_id), assignment_id=None)
    copies.delete()
    _checks_now(schema_editor)


def _order_agrees(*, alone: bool) -> models.CheckConstraint:
    first = models.Q(a_first=True, order__in=("ab", "a")) if alone else models.Q(a_first=True, order="ab")
    return models.CheckConstraint(condition=first | models.Q(a_first=False, order="ba"), name="assignment_order_agrees")


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0036_reading_table_dropped"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="assignment", name="assignment_order_agrees"),
        migrations.AddConstraint(model_name="assignment", constraint=_order_agrees(alone=True)),
        # An answer moves to its copy: a new column filled, the old one dropped, the new renamed.
        migrations.AddField(
            model_name="answer",
            name="work",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotate.assignment"),
        ),
        migrations.AlterField(
            model_name="answer",
            name="assignment",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="answers", to="annotate.readingassignment"
            ),
        ),
        migrations.RunPython(reading_assignments_copy, reading_assignments_back),
        migrations.RemoveConstraint(model_name="answer", name="answer_one_per_criterion"),
        migrations.RemoveField(model_name="answer", name="assignment"),
        migrations.RenameField(model_name="answer", old_name="work", new_name="assignment"),
        migrations.AlterField(
            model_name="answer",
            name="assignment",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="answers", to="annotate.assignment"),
        ),
        migrations.AddConstraint(
            model_name="answer",
            constraint=models.UniqueConstraint(fields=("assignment", "criterion"), name="answer_one_per_criterion"),
        ),
        migrations.RemoveConstraint(model_name="labelchange", name="labelchange_of_one_work"),
        migrations.RemoveField(model_name="labelchange", name="reading_assignment"),
        migrations.AddConstraint(
            model_name="labelchange",
            constraint=models.CheckConstraint(
                condition=models.Q(assignment__isnull=False, adjudication__isnull=True)
                | models.Q(assignment__isnull=True, adjudication__isnull=False),
                name="labelchange_of_one_work",
            ),
        ),
        migrations.DeleteModel(name="ReadingAssignment"),
        migrations.CreateModel(
            name="ReadingAssignment",
            fields=[],
            options={"ordering": ["claimed_at", "id"], "proxy": True, "indexes": [], "constraints": []},
            bases=("annotate.assignment",),
        ),
    ]
