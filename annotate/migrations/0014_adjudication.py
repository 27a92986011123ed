"""Adjudication: the adjudicators of a campaign, the items put before them, and the source of every audited change."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def sources_backfill(apps, schema_editor):
    """Marks as imported what can be told to come from import_labels; the rest stays "page".

    Imported rows are those of a labels-only campaign, and those an import wrote with a new assignment:
    import_labels records its creation as a status change from "" to submitted (the page never does),
    and every change of that import carries the same time. Changes a later re-import made to an
    existing assignment, and answers sent through the API, cannot be told from the page's: they stay "page".
    """
    LabelChange = apps.get_model("annotate", "LabelChange")
    LabelChange.objects.filter(assignment__pair__campaign__labels_only=True).update(source="import")
    created = LabelChange.objects.filter(field="status", old_value="", new_value="submitted").values_list("assignment_id", "changed_at")
    for assignment_id, changed_at in list(created):
        LabelChange.objects.filter(assignment_id=assignment_id, changed_at=changed_at).update(source="import")


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0013_criterion_response"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="adjudicators",
            field=models.ManyToManyField(
                blank=True,
                help_text="Who records final answers where annotators disagree; never annotators of the campaign.",
                related_name="adjudicated_campaigns",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="labelchange",
            name="source",
            field=models.CharField(
                choices=[
                    ("page", "The annotation page"),
                    ("api", "The JSON API"),
                    ("import", "A labels file (import_labels)"),
                    ("adjudicated", "An adjudicator's final answer"),
                ],
                default="page",
                max_length=12,
            ),
        ),
        migrations.RunPython(sources_backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="labelchange",
            name="assignment",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="changes", to="annotate.assignment"
            ),
        ),
        migrations.CreateModel(
            name="Adjudication",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[("split", "Some chose A, others B"), ("tie-vs-win", "Some chose a tie, others a winner")], max_length=20
                    ),
                ),
                ("a_first", models.BooleanField()),
                ("opened_at", models.DateTimeField()),
                ("winner", models.CharField(blank=True, choices=[("a", "Article A"), ("b", "Article B"), ("tie", "Tie")], max_length=3)),
                ("reason", models.TextField(blank=True)),
                ("decided_at", models.DateTimeField(blank=True, null=True)),
                (
                    "campaign",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="adjudications", to="annotate.campaign"),
                ),
                ("criterion", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="annotate.criterion")),
                (
                    "decided_by",
                    models.ForeignKey(
                        blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                (
                    "opened_by",
                    models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to=settings.AUTH_USER_MODEL),
                ),
                ("pair", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="adjudications", to="annotate.pair")),
            ],
            options={
                "ordering": ["pair", "criterion__order"],
            },
        ),
        migrations.AddField(
            model_name="labelchange",
            name="adjudication",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="changes", to="annotate.adjudication"
            ),
        ),
        migrations.AddConstraint(
            model_name="labelchange",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("adjudication__isnull", True), ("assignment__isnull", False)),
                    models.Q(("adjudication__isnull", False), ("assignment__isnull", True)),
                    _connector="OR",
                ),
                name="labelchange_of_work_or_adjudication",
            ),
        ),
        migrations.AddConstraint(
            model_name="adjudication",
            constraint=models.UniqueConstraint(fields=("pair", "criterion"), name="adjudication_one_per_item"),
        ),
        migrations.AddConstraint(
            model_name="adjudication",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("decided_by__isnull", True), ("winner", "")),
                    models.Q(models.Q(("winner", ""), _negated=True), ("decided_by__isnull", False)),
                    _connector="OR",
                ),
                name="adjudication_decided_with_adjudicator",
            ),
        ),
    ]
