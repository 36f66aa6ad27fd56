"""Space moves to core and the per-memory grants to memories, in the state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0001_initial'),
        ('governance', '0005_idempotency_keys'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='apitoken',
                    name='spaces',
                    field=models.ManyToManyField(blank=True, related_name='+', to='core.space'),
                ),
                migrations.AlterField(
                    model_name='datakey',
                    name='space',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='data_keys', to='core.space'),
                ),
                migrations.AlterField(
                    model_name='restrictedtag',
                    name='space',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='restricted_tags', to='core.space'),
                ),
                migrations.AlterField(
                    model_name='spacemembership',
                    name='space',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='core.space'),
                ),
                migrations.DeleteModel(
                    name='MemoryGroupGrant',
                ),
                migrations.DeleteModel(
                    name='MemoryUserGrant',
                ),
            ],
        ),
    ]
