from django.db import migrations, models

import annotate.models


class Migration(migrations.Migration):
    """System keys follow `vocabulary.NAME_RULE`, which allows dots (`pythia-6.9b`): a SlugField refused them."""

    dependencies = [("annotate", "0003_assignment_a_first")]

    operations = [
        migrations.AlterField(
            model_name="system",
            name="key",
            field=models.CharField(max_length=100, unique=True, validators=[annotate.models.validate_name]),
        ),
    ]
