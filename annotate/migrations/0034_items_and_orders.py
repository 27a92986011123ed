"""Items (issue 38, first step): a pair's articles also as its slots, and the order shown as a permutation.

`ItemArticle` holds each pair's `article_a` in slot 0 and `article_b` in slot 1; `Pair.kind` is "pair";
`Assignment.order` and `Adjudication.order` are "ab" where `a_first` and "ba" where not, and the database
checks that the two agree. Back: the new table and columns are dropped; nothing else changed.
"""

import django.db.models.deletion
from django.db import migrations, models

BATCH = 5000


def orders_fill(apps, model_name):
    model = apps.get_model("annotate", model_name)
    model.objects.filter(a_first=True).update(order="ab")
    model.objects.filter(a_first=False).update(order="ba")


def slots_and_orders(apps, schema_editor):
    Pair = apps.get_model("annotate", "Pair")
    ItemArticle = apps.get_model("annotate", "ItemArticle")
    rows = []
    for pair_id, a, b in Pair.objects.order_by("id").values_list("id", "article_a_id", "article_b_id").iterator(chunk_size=BATCH):
        rows += [ItemArticle(item_id=pair_id, slot=0, article_id=a), ItemArticle(item_id=pair_id, slot=1, article_id=b)]
        if len(rows) >= BATCH:
            ItemArticle.objects.bulk_create(rows)
            rows = []
    ItemArticle.objects.bulk_create(rows)
    orders_fill(apps, "Assignment")
    orders_fill(apps, "Adjudication")


def order_agrees(name):
    return models.CheckConstraint(condition=models.Q(a_first=True, order="ab") | models.Q(a_first=False, order="ba"), name=name)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0033_step_vote_time_optional"),
    ]

    operations = [
        migrations.AddField(
            model_name="pair",
            name="kind",
            field=models.CharField(choices=[("pair", "Two articles, compared")], db_default="pair", default="pair", max_length=10),
        ),
        migrations.CreateModel(
            name="ItemArticle",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("slot", models.PositiveSmallIntegerField()),
                ("article", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="annotate.article")),
                ("item", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="slots", to="annotate.pair")),
            ],
            options={
                "ordering": ["item", "slot"],
                "constraints": [
                    models.UniqueConstraint(fields=("item", "slot"), name="itemarticle_unique_slot"),
                    models.UniqueConstraint(fields=("item", "article"), name="itemarticle_unique_article"),
                    models.CheckConstraint(condition=models.Q(slot__lt=6), name="itemarticle_slot_in_range"),
                ],
            },
        ),
        migrations.AddField(
            model_name="assignment",
            name="order",
            field=models.CharField(
                default="", help_text="The slots in the order shown (protocols.order): 'ab' when a_first, else 'ba'.", max_length=6
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="adjudication",
            name="order",
            field=models.CharField(default="", help_text="The slots in the order shown (protocols.order).", max_length=6),
            preserve_default=False,
        ),
        migrations.RunPython(slots_and_orders, migrations.RunPython.noop),
        migrations.AddConstraint(model_name="assignment", constraint=order_agrees("assignment_order_agrees")),
        migrations.AddConstraint(model_name="adjudication", constraint=order_agrees("adjudication_order_agrees")),
    ]
