# PRD events and decisions are an append-only log: the models refuse save() on an existing
# row, and the database refuses an UPDATE that changes any column but the sealed ones,
# whoever asks (a queryset .update(), the admin, a psql session).
#
# The sealed columns stay writable because key rotation (governance.crypto.rotation,
# `manage.py sam_keys`) re-seals them under a new data key: the envelope changes, the value
# does not. The trigger cannot tell a re-seal from a rewrite (both are ciphertext); what it
# guarantees is that an event's place, type, requirement, links and time never change, so
# progress, learnings and formation (which read only those) always fold the same log.
#
# DELETE stays allowed: an execution's log goes with it when its space is deleted or
# forgotten, or when retention removes finished work (governance.retention), as cascades.
#
# A later migration that must backfill a column of these tables drops the trigger first
# and creates it again after.

from django.db import migrations

FORWARD = """
CREATE FUNCTION prd_log_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- TG_ARGV: the sealed columns key rotation may re-seal; every other column is fixed.
    IF (to_jsonb(NEW) - TG_ARGV) IS DISTINCT FROM (to_jsonb(OLD) - TG_ARGV) THEN
        RAISE EXCEPTION '% is append-only: UPDATE refused', TG_TABLE_NAME
            USING HINT = 'PRD events and decisions never change; only key rotation re-seals '
                         'their sealed columns. See docs/prd.md.';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER prd_event_append_only BEFORE UPDATE ON prd_prdevent
    FOR EACH ROW EXECUTE FUNCTION prd_log_refuse_update('summary', 'detail');
CREATE TRIGGER prd_decision_append_only BEFORE UPDATE ON prd_prddecision
    FOR EACH ROW EXECUTE FUNCTION prd_log_refuse_update('decision', 'reason', 'alternatives');
"""

REVERSE = """
DROP TRIGGER IF EXISTS prd_decision_append_only ON prd_prddecision;
DROP TRIGGER IF EXISTS prd_event_append_only ON prd_prdevent;
DROP FUNCTION IF EXISTS prd_log_refuse_update();
"""


class Migration(migrations.Migration):

    dependencies = [
        ("prd", "0001_initial"),
    ]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE),
    ]
