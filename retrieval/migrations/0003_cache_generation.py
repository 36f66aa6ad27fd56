"""Per-space recall generations, raised by the database in the transaction that changes a memory.

A deferred constraint trigger on memories_memory fires at commit time, once per changed
row; the first row of each space in a transaction raises that space's generation and
records it in a transaction-local setting, so the rest of that transaction's rows cost
one lookup each. Deferred, so the generation row is locked only for the instant before
commit: a transaction that locks it early and then waits for the audit chain lock (or a
memory row) held by another writer could otherwise deadlock with it.
"""

from django.db import migrations, models

BUMP = """
CREATE FUNCTION sam_recall_generation_bump() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed bigint;
BEGIN
    FOR changed IN
        SELECT DISTINCT s FROM unnest(ARRAY[
            CASE WHEN TG_OP <> 'INSERT' THEN OLD.space_id END,
            CASE WHEN TG_OP <> 'DELETE' THEN NEW.space_id END]) AS s
        WHERE s IS NOT NULL ORDER BY s
    LOOP
        IF current_setting('sam.recall_bumped_' || changed, true) IS DISTINCT FROM 'on' THEN
            INSERT INTO retrieval_recallgeneration (space_id, generation) VALUES (changed, 1)
            ON CONFLICT (space_id)
            DO UPDATE SET generation = retrieval_recallgeneration.generation + 1;
            PERFORM set_config('sam.recall_bumped_' || changed, 'on', true);
        END IF;
    END LOOP;
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER sam_recall_generation
AFTER INSERT OR UPDATE OR DELETE ON memories_memory
DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION sam_recall_generation_bump();
"""

DROP = """
DROP TRIGGER IF EXISTS sam_recall_generation ON memories_memory;
DROP FUNCTION IF EXISTS sam_recall_generation_bump();
"""


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0005_gin_indexes_without_pending_list"),
        ("retrieval", "0002_seal_recall_events"),
    ]

    operations = [
        migrations.CreateModel(
            name="RecallGeneration",
            fields=[
                ("space_id", models.BigIntegerField(primary_key=True, serialize=False)),
                ("generation", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunSQL(BUMP, DROP),
    ]
