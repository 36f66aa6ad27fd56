"""Space moves to core, in the state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0001_initial'),
        ('retrieval', '0003_cache_generation'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='lexemestat',
                    name='space',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='core.space'),
                ),
                migrations.AlterField(
                    model_name='spacetextstats',
                    name='space',
                    field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='core.space'),
                ),
            ],
        ),
    ]
