"""Memory grants move the rights generation (governance migration 0008) when they change."""

from django.db import migrations

TABLES = ["governance_memoryusergrant", "governance_memorygroupgrant"]


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0008_rights_generation'),
        ('memories', '0019_seal_categories_and_chat_imports'),
    ]

    operations = [
        migrations.RunSQL(
            "\n".join(f"CREATE TRIGGER {table}_moves_rights AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE"
                      f" ON {table} FOR EACH STATEMENT EXECUTE FUNCTION governance_move_rights_generation();"
                      for table in TABLES),
            reverse_sql="\n".join(f"DROP TRIGGER {table}_moves_rights ON {table};" for table in TABLES),
        ),
    ]
