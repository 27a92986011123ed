from django.db import migrations


class Migration(migrations.Migration):
    """A judge's explanation is its rationale, as a human's is (the label export already called it so)."""

    dependencies = [("judges", "0001_initial")]

    operations = [migrations.RenameField(model_name="judgeverdict", old_name="reason", new_name="rationale")]
