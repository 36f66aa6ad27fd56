"""Space moves to core, and the per-memory grants come here from governance, in the
state only: every table keeps its name and no row is copied."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('core', '0001_initial'),
        ('governance', '0006_space_and_memory_grants_move'),
        ('memories', '0006_seal_more_free_text'),
        ('prd', '0004_space_moves_to_core'),
        ('retrieval', '0004_space_moves_to_core'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='memory',
                    name='space',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memories', to='core.space'),
                ),
                migrations.CreateModel(
                    name='MemoryGroupGrant',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('content_object', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='group_grants', to='memories.memory')),
                        ('group', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='auth.group')),
                        ('permission', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='auth.permission')),
                    ],
                    options={
                        'db_table': 'governance_memorygroupgrant',
                        'abstract': False,
                        'unique_together': {('group', 'permission', 'content_object')},
                    },
                ),
                migrations.CreateModel(
                    name='MemoryUserGrant',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('content_object', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='user_grants', to='memories.memory')),
                        ('permission', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='auth.permission')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'governance_memoryusergrant',
                        'abstract': False,
                        'unique_together': {('user', 'permission', 'content_object')},
                    },
                ),
                migrations.DeleteModel(
                    name='Space',
                ),
            ],
        ),
    ]
