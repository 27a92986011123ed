"""An imported vote on a step may come without a time (the file gave none): StepVote.saved_at may be empty."""

from django.db import migrations, models
from django.db.models.functions import Coalesce, Now


def times_back(apps, schema_editor):
    # Back to a required time: a vote without one takes its assignment's submission (else claim) time.
    StepVote = apps.get_model("annotate", "StepVote")
    Assignment = apps.get_model("annotate", "Assignment")
    times = Assignment.objects.filter(pk=models.OuterRef("assignment_id")).values(time=Coalesce("submitted_at", "claimed_at", Now()))
    StepVote.objects.filter(saved_at__isnull=True).update(saved_at=models.Subquery(times[:1]))


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0032_step_votes"),
    ]

    operations = [
        migrations.AlterField(
            model_name="stepvote",
            name="saved_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(migrations.RunPython.noop, times_back),
    ]
