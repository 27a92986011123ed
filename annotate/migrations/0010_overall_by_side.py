"""The overall answer is stored by side ("a"/"b"), as labels and verdicts are, instead of by position ("1"/"2").

The data step restates every assignment's overall answer, and the old and new values of its
audit trail ("overall" changes), with the assignment's `a_first`: position "1" is side "a" when A
was shown first, else "b". "tie", "both_bad" and "" stay. The reverse step restates them back.
"""

from django.db import migrations, models

# (stored value before, a_first) -> stored value after; the reverse swaps the pairs.
BY_SIDE = {("1", True): "a", ("1", False): "b", ("2", True): "b", ("2", False): "a"}


def _restate(apps, mapping) -> None:
    # The values before and after never overlap ("1"/"2" against "a"/"b"): no row is restated twice.
    Assignment = apps.get_model("annotate", "Assignment")
    LabelChange = apps.get_model("annotate", "LabelChange")
    for (before, a_first), after in mapping.items():
        Assignment.objects.filter(overall=before, a_first=a_first).update(overall=after)
        changes = LabelChange.objects.filter(field="overall", assignment__a_first=a_first)
        changes.filter(old_value=before).update(old_value=after)
        changes.filter(new_value=before).update(new_value=after)


def by_side(apps, schema_editor) -> None:
    _restate(apps, BY_SIDE)


def by_position(apps, schema_editor) -> None:
    _restate(apps, {(side, a_first): position for (position, a_first), side in BY_SIDE.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0009_campaign_protocol"),
    ]

    operations = [
        migrations.AlterField(
            model_name="assignment",
            name="overall",
            field=models.CharField(
                blank=True,
                choices=[("a", "Article A"), ("b", "Article B"), ("tie", "Tie"), ("both_bad", "Both bad")],
                max_length=20,
            ),
        ),
        migrations.RunPython(by_side, by_position),
    ]
