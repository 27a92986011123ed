"""A judge's unit records the order it showed the item's slots in (issue 38, first step): "a" for a
reading, "ab" where `a_first`, "ba" where not; the database checks that `order` and `a_first` agree.
Back: the column is dropped."""

from django.db import migrations, models


def orders_fill(apps, schema_editor):
    JudgeUnit = apps.get_model("judges", "JudgeUnit")
    JudgeUnit.objects.filter(reading__isnull=False).update(order="a")
    JudgeUnit.objects.filter(reading__isnull=True, a_first=True).update(order="ab")
    JudgeUnit.objects.filter(reading__isnull=True, a_first=False).update(order="ba")


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0034_items_and_orders"),
        ("judges", "0013_step_questions"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgeunit",
            name="order",
            field=models.CharField(
                default="",
                help_text="The item's slots in the order shown (protocols.order): 'a' for a reading, else 'ab' when a_first, 'ba' when not.",
                max_length=6,
            ),
            preserve_default=False,
        ),
        migrations.RunPython(orders_fill, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="judgeunit",
            constraint=models.CheckConstraint(
                condition=models.Q(reading__isnull=False, a_first=True, order="a")
                | models.Q(reading__isnull=True, a_first=True, order="ab")
                | models.Q(reading__isnull=True, a_first=False, order="ba"),
                name="judgeunit_order_agrees",
            ),
        ),
    ]
