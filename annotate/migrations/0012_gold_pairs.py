"""Known-answer (gold) pairs: the hidden systems holding degraded copies, the GoldPair record of a
pair's degradation and expected winners, and the campaign's gold options."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotate", "0011_campaign_alt_epsilon"), migrations.swappable_dependency(settings.AUTH_USER_MODEL)]

    operations = [
        migrations.AddField(
            model_name="system",
            name="is_gold",
            field=models.BooleanField(
                default=False,
                help_text="Holds the known-answer copies make_gold degrades from reference articles: never offered as a system.",
            ),
        ),
        migrations.AddField(
            model_name="campaign",
            name="gold_rate",
            field=models.FloatField(
                default=0.0, help_text="Share of claims that silently give a known-answer (gold) pair, when one is left (0: none)."
            ),
        ),
        migrations.AddField(
            model_name="campaign",
            name="gold_pause_below",
            field=models.FloatField(
                blank=True,
                null=True,
                help_text="Pause an annotator's new claims when their gold accuracy is clearly below this (empty: never).",
            ),
        ),
        migrations.AddField(
            model_name="campaign",
            name="gold_pause_after",
            field=models.PositiveSmallIntegerField(
                default=5, help_text="Gold pairs an annotator must have submitted before the pause rule applies."
            ),
        ),
        migrations.AddConstraint(
            model_name="campaign",
            constraint=models.CheckConstraint(condition=models.Q(gold_rate__gte=0, gold_rate__lte=1), name="campaign_gold_rate_share"),
        ),
        migrations.CreateModel(
            name="GoldPair",
            fields=[
                (
                    "pair",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="gold",
                        serialize=False,
                        to="annotate.pair",
                    ),
                ),
                ("degradation", models.CharField(max_length=40)),
                ("expected", models.JSONField(help_text="{criterion key: side that must win}")),
                ("change", models.CharField(blank=True, help_text="What the degradation did, in words.", max_length=300)),
                ("seed", models.BigIntegerField(default=0)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={"ordering": ["pair"]},
        ),
        migrations.CreateModel(
            name="GoldPauseLift",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("lifted_at", models.DateTimeField()),
                (
                    "annotator",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL),
                ),
                ("campaign", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotate.campaign")),
                (
                    "lifted_by",
                    models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to=settings.AUTH_USER_MODEL),
                ),
            ],
            options={"ordering": ["lifted_at", "id"]},
        ),
    ]
