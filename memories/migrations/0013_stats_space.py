"""Memory stats carry their memory's space, so recall's recent channel reads one space's
recently recalled memories through an index instead of every space's."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("core", "0004_chat_imports"),
        ("memories", "0012_passages"),
    ]

    operations = [
        migrations.AddField(
            model_name="memorystats",
            name="space",
            field=models.ForeignKey(db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="+", to="core.space"),
        ),
        # A narrow side table: one pass, heap-only updates.
        migrations.RunSQL(
            "UPDATE memories_memorystats s SET space_id = m.space_id FROM memories_memory m "
            "WHERE m.id = s.memory_id",
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name="memorystats",
            name="space",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="+", to="core.space"),
        ),
        migrations.AddIndex(
            model_name="memorystats",
            index=models.Index(condition=models.Q(("last_accessed_at__isnull", False)),
                               fields=["space", "-last_accessed_at", "memory"], name="memorystats_space_recent"),
        ),
    ]
