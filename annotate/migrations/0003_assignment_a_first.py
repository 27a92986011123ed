from django.db import migrations


class Migration(migrations.Migration):
    """One name for "article A is shown first" across the apps (judges.JudgeUnit uses it too)."""

    dependencies = [("annotate", "0002_campaign_membership_and_repeats")]

    operations = [migrations.RenameField(model_name="assignment", old_name="a_on_left", new_name="a_first")]
