"""Seal categories' display names, descriptions and keywords, and chat imports' file names,
reports and errors, under each row's space key.

Existing reports and errors lose their server paths on the way (memories.capture.report_paths)
and file names their folders. Running it again changes nothing (sealed columns are skipped).
Reversible while the data keys exist.
"""

import core.sealing
from django.db import migrations


def seal(apps, schema_editor):
    from pathlib import PurePosixPath

    from governance.crypto.migration import seal_columns
    from memories.capture import report_paths, uploads

    # Rows are rewritten, then tables altered, in one transaction: fire the deferred
    # foreign-key checks at once, or Postgres refuses the ALTER (pending trigger events).
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    seal_columns(schema_editor, table="memories_category", space_sql="t.space_id",
                 columns={"display_name": "text", "description": "text", "keywords": "json"})
    seal_columns(schema_editor, table="memories_chatimport", space_sql="t.space_id",
                 columns={"file_name": "text", "report": "json", "error": "text"},
                 clean={"file_name": lambda pk, name: PurePosixPath(name.replace("\\", "/")).name,
                        "report": lambda pk, report: report_paths.strip(report, upload=uploads.folder(pk)),
                        "error": lambda pk, error: report_paths.strip_text(error, upload=uploads.folder(pk))})


def unseal(apps, schema_editor):
    from governance.crypto.migration import open_columns

    # Rows are rewritten, then tables altered, in one transaction: fire the deferred
    # foreign-key checks at once, or Postgres refuses the ALTER (pending trigger events).
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    open_columns(schema_editor, table="memories_category",
                 columns={"display_name": "varchar(80)", "description": "varchar(300)"})
    open_columns(schema_editor, table="memories_category", columns={"keywords": "jsonb"})
    # Back to an array (ALTER ... USING takes no subquery, an UPDATE does).
    for sql in ("ALTER TABLE memories_category ADD COLUMN keywords__array varchar(40)[]",
                "UPDATE memories_category SET keywords__array = ARRAY(SELECT jsonb_array_elements_text(keywords))",
                "ALTER TABLE memories_category DROP COLUMN keywords",
                "ALTER TABLE memories_category RENAME COLUMN keywords__array TO keywords",
                "ALTER TABLE memories_category ALTER COLUMN keywords SET NOT NULL"):
        schema_editor.execute(sql)
    open_columns(schema_editor, table="memories_chatimport",
                 columns={"file_name": "varchar(255)", "report": "jsonb", "error": "varchar(500)"})


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0003_data_keys'),
        ('memories', '0018_chat_import_started_at'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='category',
                    name='description',
                    field=core.sealing.SealedTextField(blank=True, default=''),
                ),
                migrations.AlterField(
                    model_name='category',
                    name='display_name',
                    field=core.sealing.SealedTextField(),
                ),
                migrations.AlterField(
                    model_name='category',
                    name='keywords',
                    field=core.sealing.SealedJSONField(blank=True, default=list),
                ),
                migrations.AlterField(
                    model_name='chatimport',
                    name='error',
                    field=core.sealing.SealedTextField(blank=True, default=''),
                ),
                migrations.AlterField(
                    model_name='chatimport',
                    name='file_name',
                    field=core.sealing.SealedTextField(),
                ),
                migrations.AlterField(
                    model_name='chatimport',
                    name='report',
                    field=core.sealing.SealedJSONField(blank=True, default=dict),
                ),
            ],
            database_operations=[migrations.RunPython(seal, unseal)],
        ),
    ]
