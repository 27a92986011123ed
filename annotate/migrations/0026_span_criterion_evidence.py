import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0025_pair_flags_and_void"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="evidence_required",
            field=models.CharField(
                choices=[
                    ("none", "Not required"),
                    ("every", "On every criterion"),
                    ("winners", "On every criterion whose winner is not a tie"),
                ],
                default="none",
                help_text="Which answers need at least one passage marked as their evidence.",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="span",
            name="criterion",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="annotate.criterion"
            ),
        ),
    ]
