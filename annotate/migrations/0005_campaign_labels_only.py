from django.db import migrations, models


class Migration(migrations.Migration):
    """Labels-only campaigns: verdicts imported without the articles' texts, never offered to annotators."""

    dependencies = [("annotate", "0004_alter_system_key")]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="labels_only",
            field=models.BooleanField(
                default=False,
                help_text="Imported verdicts without article texts (labels only): never offered to annotators.",
            ),
        ),
    ]
