from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0020_campaign_adjudication_by_topic"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="gold_accept_separable",
            field=models.BooleanField(
                default=False,
                help_text="Let a kind of gold pair that its text sets apart from the other pairs drive the pause rule (default: it does not).",
            ),
        ),
    ]
