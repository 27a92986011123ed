from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0012_gold_pairs"),
    ]

    operations = [
        migrations.AddField(
            model_name="criterion",
            name="response",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="What an answer to this criterion is (protocols.criterion_response): {} for the campaign's pairwise verdict.",
            ),
        ),
    ]
