"""Tokens say whether they work in every space; per-memory grants get real foreign keys.

- `ApiToken.all_spaces`: true for existing tokens that name no space (they always meant
  "all of the user's spaces"), false for scoped ones, so a scoped token whose spaces are
  all deleted sees nothing instead of everything.
- Per-memory grants (memories.view_memory) move from guardian's generic tables into
  MemoryUserGrant and MemoryGroupGrant, whose foreign keys delete them with the memory.
  Generic grants on memories that no longer exist are dropped, not carried over: they
  would otherwise pass to a new memory created with the same id.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def scope_existing_tokens(apps, schema_editor):
    ApiToken = apps.get_model("governance", "ApiToken")
    ApiToken.objects.filter(spaces__isnull=True).update(all_spaces=True)


def move_memory_grants(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Memory = apps.get_model("memories", "Memory")
    memory_type = ContentType.objects.filter(app_label="memories", model="memory").first()
    if memory_type is None:
        return
    for generic_name, direct_name, who in (
        ("UserObjectPermission", "MemoryUserGrant", "user_id"),
        ("GroupObjectPermission", "MemoryGroupGrant", "group_id"),
    ):
        generic = apps.get_model("guardian", generic_name).objects.filter(content_type=memory_type)
        existing = set(Memory.objects.filter(pk__in=generic.values("object_pk"))
                       .values_list("pk", flat=True))
        apps.get_model("governance", direct_name).objects.bulk_create(
            [apps.get_model("governance", direct_name)(
                content_object_id=row.object_pk, permission_id=row.permission_id,
                **{who: getattr(row, who)})
             for row in generic if row.object_pk in existing],
            ignore_conflicts=True,
        )
        generic.delete()


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('governance', '0003_data_keys'),
        ('memories', '0004_seal_free_text'),
        ('guardian', '0003_remove_groupobjectpermission_guardian_gr_content_ae6aec_idx_and_more'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='apitoken',
            name='all_spaces',
            field=models.BooleanField(default=False, help_text='Works in every space of its user; else only in `spaces`.'),
        ),
        migrations.RunPython(scope_existing_tokens, migrations.RunPython.noop),
        migrations.CreateModel(
            name='MemoryGroupGrant',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('content_object', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='group_grants', to='memories.memory')),
                ('group', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='auth.group')),
                ('permission', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='auth.permission')),
            ],
            options={
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
                'abstract': False,
                'unique_together': {('user', 'permission', 'content_object')},
            },
        ),
        migrations.RunPython(move_memory_grants, migrations.RunPython.noop),
    ]
