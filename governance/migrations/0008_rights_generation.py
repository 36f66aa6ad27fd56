"""The rights generation: one row moved by triggers on every table rights are read from."""

from django.conf import settings
from django.db import migrations, models

# The value comes from a sequence of its own (not owned by the table, so truncating the
# table does not restart it): a value is never given twice, even when the change that drew
# it rolled back. The row is written with ON CONFLICT so that a truncated table (a test
# database being flushed) gets its row back at the next change.
FUNCTION = """
CREATE SEQUENCE governance_rights_generation_seq;
CREATE FUNCTION governance_move_rights_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO governance_rightsgeneration (id, value)
    VALUES (1, nextval('governance_rights_generation_seq'))
    ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value;
    RETURN NULL;
END $$;
INSERT INTO governance_rightsgeneration (id, value) VALUES (1, nextval('governance_rights_generation_seq'));
"""

# Every table access.rights() reads, with the statements that move the generation; not the
# user's and the token's own rows, which are read afresh with each request's token.
# Memberships are kept in step with guardian's rows; a space's own settings (its mode, its
# name) are read afresh by every request, so only a space created or deleted counts.
EVERY_WRITE = "INSERT OR UPDATE OR DELETE OR TRUNCATE"
TABLES = {
    "guardian_userobjectpermission": EVERY_WRITE,
    "guardian_groupobjectpermission": EVERY_WRITE,
    "auth_user_groups": EVERY_WRITE,
    "governance_apitoken_spaces": EVERY_WRITE,
    "governance_restrictedtag": EVERY_WRITE,
    "governance_spacemembership": EVERY_WRITE,
    "memories_space": "INSERT OR DELETE OR TRUNCATE",
}


def _trigger_sql(table: str, events: str) -> str:
    return (f"CREATE TRIGGER {table}_moves_rights AFTER {events}"
            f" ON {table} FOR EACH STATEMENT EXECUTE FUNCTION governance_move_rights_generation();")


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('core', '0005_user_note_rules'),
        ('governance', '0007_apitoken_scopes'),
        ('guardian', '0003_remove_groupobjectpermission_guardian_gr_content_ae6aec_idx_and_more'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='RightsGeneration',
            fields=[
                ('id', models.PositiveSmallIntegerField(default=1, primary_key=True, serialize=False)),
                ('value', models.BigIntegerField()),
            ],
            options={
                'constraints': [models.CheckConstraint(condition=models.Q(('id', 1)),
                                                       name='rightsgeneration_one_row')],
            },
        ),
        migrations.RunSQL(
            FUNCTION + "\n".join(_trigger_sql(table, events) for table, events in TABLES.items()),
            reverse_sql="\n".join(f"DROP TRIGGER {table}_moves_rights ON {table};" for table in TABLES)
            + "\nDROP FUNCTION governance_move_rights_generation();"
            + "\nDROP SEQUENCE governance_rights_generation_seq;",
        ),
    ]
