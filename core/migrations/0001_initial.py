"""Space moves from memories to core, the bottom layer, in the state only: its table
keeps its name (memories_space) and no row is copied. The content type follows it, so the
object permissions held on spaces (django-guardian) stay attached."""

import django.contrib.postgres.fields
import core.sealing
from django.db import migrations, models


def move_space_content_type(apps, schema_editor):
    """Rename memories.space to core.space, keeping its id, permissions and grants."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    old = ContentType.objects.filter(app_label="memories", model="space").first()
    if old is None:
        return  # a new database: the content type is created for core after migrating
    ContentType.objects.filter(app_label="core", model="space").delete()
    old.app_label = "core"
    old.save(update_fields=["app_label"])


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Space',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('slug', models.SlugField(max_length=80, unique=True)),
                        ('name', models.CharField(max_length=200)),
                        ('kind', models.CharField(choices=[('global', 'Global'), ('project', 'Project'), ('agent', 'Agent'), ('user', 'User')], default='project', max_length=16)),
                        ('description', core.sealing.SealedTextField(blank=True, default='', null=True)),
                        ('mode', models.CharField(choices=[('assist', 'assist: capture and recall'), ('capture_only', 'capture only: store, never recall'), ('paused', 'paused: the store is read-only until resumed'), ('incognito', 'incognito: answer, but write nothing durable'), ('off', 'off: no capture, no recall')], default='assist', max_length=16)),
                        ('retention_days', models.PositiveSmallIntegerField(blank=True, choices=[(7, '7 days'), (30, '30 days'), (90, '90 days')], help_text='Empty keeps memories forever.', null=True)),
                        ('redaction_allowlist', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=200), blank=True, default=list, size=None)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'memories_space',
                        'ordering': ['slug'],
                        'permissions': (('space_read', 'Read memories and recall'), ('space_write', 'Add memories and edit own'), ('space_edit_any', 'Edit any memory'), ('space_curate', 'Archive, restore, delete, merge and restrict memories'), ('space_audit', 'Read the audit timeline'), ('space_manage', 'Manage members, roles, restricted tags, mode and retention')),
                        'base_manager_name': 'objects',
                        'constraints': [models.CheckConstraint(condition=models.Q(('kind__in', ['global', 'project', 'agent', 'user'])), name='space_kind_valid')],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_space_content_type, migrations.RunPython.noop),
    ]
