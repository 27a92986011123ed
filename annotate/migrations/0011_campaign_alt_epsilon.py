"""The alt-test's epsilon and the reason recorded with it, stored on the campaign (issue 24)."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0010_overall_by_side"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="alt_epsilon",
            field=models.FloatField(
                blank=True,
                help_text="The alt-test's epsilon, in (0, 1): how much the annotators may beat the judge by (empty: not chosen yet).",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="campaign",
            name="alt_epsilon_reason",
            field=models.TextField(blank=True, help_text="Why this epsilon (the annotators' expertise); required with it."),
        ),
        migrations.AddConstraint(
            model_name="campaign",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("alt_epsilon__isnull", True), models.Q(("alt_epsilon__gt", 0), ("alt_epsilon__lt", 1)), _connector="OR"
                ),
                name="campaign_alt_epsilon_open_unit",
            ),
        ),
    ]
