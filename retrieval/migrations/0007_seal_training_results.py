"""Seal training runs' results (ranks, ids and failure reasons that may quote the memory)
under the memory's space key. Running it again changes nothing (sealed columns are
skipped). Reversible while the data keys exist.
"""

import core.sealing
from django.db import migrations


def seal(apps, schema_editor):
    from governance.crypto.migration import seal_columns

    # Rows are rewritten, then tables altered, in one transaction: fire the deferred
    # foreign-key checks at once, or Postgres refuses the ALTER (pending trigger events).
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    seal_columns(schema_editor, table="retrieval_trainingrun", space_sql="m.space_id",
                 join="JOIN memories_memory m ON m.id = t.memory_id", columns={"results": "json"})


def unseal(apps, schema_editor):
    from governance.crypto.migration import open_columns

    # Rows are rewritten, then tables altered, in one transaction: fire the deferred
    # foreign-key checks at once, or Postgres refuses the ALTER (pending trigger events).
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    open_columns(schema_editor, table="retrieval_trainingrun", columns={"results": "jsonb"})


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0003_data_keys'),
        ('retrieval', '0006_fresh_word_statistics'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='trainingrun',
                    name='results',
                    field=core.sealing.SealedJSONField(default=list),
                ),
            ],
            database_operations=[migrations.RunPython(seal, unseal)],
        ),
    ]
