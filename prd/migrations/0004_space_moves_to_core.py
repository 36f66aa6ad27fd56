"""Space moves to core, in the state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0001_initial'),
        ('prd', '0003_seal_titles'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='prdexecution',
                    name='space',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='prd_executions', to='core.space'),
                ),
                migrations.AlterField(
                    model_name='thinkingchain',
                    name='space',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='thinking_chains', to='core.space'),
                ),
            ],
        ),
    ]
