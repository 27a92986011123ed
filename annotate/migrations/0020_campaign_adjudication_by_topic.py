from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0019_reclean_articles_source_blocks"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="adjudication_by_topic",
            field=models.BooleanField(
                default=False,
                help_text="Split adjudication by topic: a topic's pairs go to different adjudicators, so each meets a topic once.",
            ),
        ),
    ]
