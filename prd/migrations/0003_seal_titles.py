"""Seal PRD execution titles, the last free text of the PRD app stored in plaintext.

Reversible while the data keys exist: reversing opens every title back into a plaintext
column (an execution whose space's key was destroyed cannot be reversed).
"""

import governance.crypto.fields
from django.db import migrations


def seal(apps, schema_editor):
    from governance.crypto.migration import seal_columns

    # Rows are rewritten, then tables altered, in one transaction: fire the deferred
    # foreign-key checks at once, or Postgres refuses the ALTER (pending trigger events).
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    seal_columns(schema_editor, table="prd_prdexecution", space_sql="t.space_id",
                 columns={"title": "text"})


def unseal(apps, schema_editor):
    from governance.crypto.migration import open_columns

    # Rows are rewritten, then tables altered, in one transaction: fire the deferred
    # foreign-key checks at once, or Postgres refuses the ALTER (pending trigger events).
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    open_columns(schema_editor, table="prd_prdexecution", columns={"title": "varchar(300)"})


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0003_data_keys'),
        ('prd', '0002_append_only_log_triggers'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='prdexecution',
                    name='title',
                    field=governance.crypto.fields.SealedTextField(blank=True, default=''),
                ),
            ],
            database_operations=[migrations.RunPython(seal, unseal)],
        ),
    ]
