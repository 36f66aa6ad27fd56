"""Seal the last free text of spaces and memories: a space's description, a memory's
source reference and URI and its context window.

Reversible while the data keys exist: reversing opens every value back into plaintext
columns (a space or memory whose key was destroyed cannot be reversed). Tags that SAM
suggested from content before this migration stay as they are: nothing records which
tags were suggested, so they cannot be told from tags a person gave.
"""

import governance.crypto.fields
import memories.models
from django.db import migrations

MEMORY_COLUMNS = {"source_ref": "text", "source_uri": "text", "context_window": "json"}
MEMORY_PLAIN_TYPES = {"source_ref": "varchar(200)", "source_uri": "varchar(500)", "context_window": "jsonb"}


def seal(apps, schema_editor):
    from governance.crypto.migration import seal_columns

    # Rows are rewritten, then tables altered, in one transaction: fire the deferred
    # foreign-key checks at once, or Postgres refuses the ALTER (pending trigger events).
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    # A space's description is sealed under the space's own key.
    seal_columns(schema_editor, table="memories_space", space_sql="t.id",
                 columns={"description": "text"}, nullable=("description",))
    seal_columns(schema_editor, table="memories_memory", space_sql="t.space_id",
                 columns=MEMORY_COLUMNS, nullable=("source_uri",))


def unseal(apps, schema_editor):
    from governance.crypto.migration import open_columns

    # Rows are rewritten, then tables altered, in one transaction: fire the deferred
    # foreign-key checks at once, or Postgres refuses the ALTER (pending trigger events).
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    open_columns(schema_editor, table="memories_space", columns={"description": "text"})
    open_columns(schema_editor, table="memories_memory", columns=MEMORY_PLAIN_TYPES,
                 nullable=("source_uri",))


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0003_data_keys'),
        ('memories', '0005_gin_indexes_without_pending_list'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='memory',
                    name='context_window',
                    field=governance.crypto.fields.SealedJSONField(default=memories.models.default_context_window),
                ),
                migrations.AlterField(
                    model_name='memory',
                    name='source_ref',
                    field=governance.crypto.fields.SealedTextField(default='api'),
                ),
                migrations.AlterField(
                    model_name='memory',
                    name='source_uri',
                    field=governance.crypto.fields.SealedTextField(blank=True, null=True),
                ),
                migrations.AlterField(
                    model_name='space',
                    name='description',
                    field=governance.crypto.fields.SealedTextField(blank=True, default='', null=True),
                ),
            ],
            database_operations=[migrations.RunPython(seal, unseal)],
        ),
        # Loading a space leaves the sealed description out (memories.models.SpaceManager).
        migrations.AlterModelOptions(
            name='space',
            options={'base_manager_name': 'objects', 'ordering': ['slug'], 'permissions': (
                ('space_read', 'Read memories and recall'), ('space_write', 'Add memories and edit own'),
                ('space_edit_any', 'Edit any memory'),
                ('space_curate', 'Archive, restore, delete, merge and restrict memories'),
                ('space_audit', 'Read the audit timeline'),
                ('space_manage', 'Manage members, roles, restricted tags, mode and retention'))},
        ),
    ]
