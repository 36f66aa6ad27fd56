# The database itself refuses to change or remove audit events, whoever asks: the ORM,
# the admin, a psql session. Only a role allowed to disable triggers (the table's owner
# or a superuser) can get past this, and the hash chain is what catches that.
#
# TRUNCATE is refused too, unless the database carries the opt-out setting
# sam.audit_allow_truncate = on. Only the test database sets it (tests/conftest.py),
# because the test framework empties tables between transactional tests with TRUNCATE.

from django.db import migrations

FORWARD = """
CREATE FUNCTION audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_auditevent is append-only: % refused', TG_OP
        USING HINT = 'Audit events are never changed or removed; see docs/audit.md.';
END
$$;

CREATE FUNCTION audit_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('sam.audit_allow_truncate', true), '') = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'audit_auditevent is append-only: TRUNCATE refused'
        USING HINT = 'Only a test database may set sam.audit_allow_truncate = on.';
END
$$;

CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit_auditevent
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit_auditevent
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit_auditevent
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_truncate();
"""

REVERSE = """
DROP TRIGGER IF EXISTS audit_no_truncate ON audit_auditevent;
DROP TRIGGER IF EXISTS audit_no_delete ON audit_auditevent;
DROP TRIGGER IF EXISTS audit_no_update ON audit_auditevent;
DROP FUNCTION IF EXISTS audit_refuse_truncate();
DROP FUNCTION IF EXISTS audit_refuse_change();
"""


class Migration(migrations.Migration):

    dependencies = [
        ("audit", "0001_initial"),
    ]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE),
    ]
