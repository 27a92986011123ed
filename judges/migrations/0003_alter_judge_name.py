from django.db import migrations, models

import annotate.models


class Migration(migrations.Migration):
    """Judge names follow `vocabulary.NAME_RULE`, which allows dots (`gpt-3.5-turbo`): a SlugField refused them."""

    dependencies = [("judges", "0002_judgeverdict_rationale")]

    operations = [
        migrations.AlterField(
            model_name="judge",
            name="name",
            field=models.CharField(max_length=100, unique=True, validators=[annotate.models.validate_name]),
        ),
    ]
