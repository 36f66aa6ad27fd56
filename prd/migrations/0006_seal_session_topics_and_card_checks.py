"""Seal session events' topic tags and memory cards' branch scopes and validators, under each
row's space key. Running it again changes nothing (sealed columns are skipped). Reversible
while the data keys exist.
"""

import core.sealing
from django.db import migrations


def seal(apps, schema_editor):
    from governance.crypto.migration import seal_columns

    # Rows are rewritten, then tables altered, in one transaction: fire the deferred
    # foreign-key checks at once, or Postgres refuses the ALTER (pending trigger events).
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    # Session events are append-only (a trigger refuses updates): let this rewrite through.
    schema_editor.execute("ALTER TABLE prd_sessionevent DISABLE TRIGGER USER")
    seal_columns(schema_editor, table="prd_sessionevent", space_sql="s.space_id",
                 join="JOIN prd_agentsession s ON s.id = t.session_id", columns={"topic_tags": "json"})
    schema_editor.execute("ALTER TABLE prd_sessionevent ENABLE TRIGGER USER")
    seal_columns(schema_editor, table="prd_memorycard", space_sql="t.space_id",
                 columns={"scope_branch": "text", "validator": "text"})
    seal_columns(schema_editor, table="prd_cardvalidation", space_sql="c.space_id",
                 join="JOIN prd_memorycard c ON c.id = t.card_id", columns={"validator": "text"})


def unseal(apps, schema_editor):
    from governance.crypto.migration import open_columns

    # Rows are rewritten, then tables altered, in one transaction: fire the deferred
    # foreign-key checks at once, or Postgres refuses the ALTER (pending trigger events).
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    schema_editor.execute("ALTER TABLE prd_sessionevent DISABLE TRIGGER USER")
    open_columns(schema_editor, table="prd_sessionevent", columns={"topic_tags": "jsonb"})
    # Back to an array (ALTER ... USING takes no subquery, an UPDATE does).
    for sql in ("ALTER TABLE prd_sessionevent ADD COLUMN topic_tags__array varchar(64)[]",
                "UPDATE prd_sessionevent SET topic_tags__array = "
                "ARRAY(SELECT jsonb_array_elements_text(topic_tags))",
                "ALTER TABLE prd_sessionevent DROP COLUMN topic_tags",
                "ALTER TABLE prd_sessionevent RENAME COLUMN topic_tags__array TO topic_tags",
                "ALTER TABLE prd_sessionevent ALTER COLUMN topic_tags SET NOT NULL"):
        schema_editor.execute(sql)
    schema_editor.execute("ALTER TABLE prd_sessionevent ENABLE TRIGGER USER")
    open_columns(schema_editor, table="prd_memorycard",
                 columns={"scope_branch": "varchar(200)", "validator": "varchar(100)"})
    open_columns(schema_editor, table="prd_cardvalidation", columns={"validator": "varchar(100)"})


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0003_data_keys'),
        ('prd', '0005_sessions_and_cards'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='cardvalidation',
                    name='validator',
                    field=core.sealing.SealedTextField(),
                ),
                migrations.AlterField(
                    model_name='memorycard',
                    name='scope_branch',
                    field=core.sealing.SealedTextField(blank=True, default=''),
                ),
                migrations.AlterField(
                    model_name='memorycard',
                    name='validator',
                    field=core.sealing.SealedTextField(blank=True, default=''),
                ),
                migrations.AlterField(
                    model_name='sessionevent',
                    name='topic_tags',
                    field=core.sealing.SealedJSONField(blank=True, default=list),
                ),
            ],
            database_operations=[migrations.RunPython(seal, unseal)],
        ),
        # Key rotation re-seals every sealed column, topic tags now among them: the
        # append-only trigger lets exactly those change.
        migrations.RunSQL(
            "DROP TRIGGER IF EXISTS session_event_append_only ON prd_sessionevent; "
            "CREATE TRIGGER session_event_append_only BEFORE UPDATE ON prd_sessionevent "
            "FOR EACH ROW EXECUTE FUNCTION prd_log_refuse_update('text', 'data', 'refs', 'topic_tags');",
            reverse_sql="DROP TRIGGER IF EXISTS session_event_append_only ON prd_sessionevent; "
            "CREATE TRIGGER session_event_append_only BEFORE UPDATE ON prd_sessionevent "
            "FOR EACH ROW EXECUTE FUNCTION prd_log_refuse_update('text', 'data', 'refs');",
        ),
    ]
