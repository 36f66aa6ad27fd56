"""Word statistics that follow the writes.

The lexical signal weighs a query's words by how rare they are in the space (BM25's idf),
from counts in LexemeStat. Counted only by the half-hourly job, a fresh import was ranked
as if every word were equally rare, and its results moved when the job fired. Now a write
marks its space's counts stale once its memories are settled (memories.hooks) and queues a
recount; writes landing while one is queued or running mark the space stale again, which
queues the next one. So an import of many batches is recounted once or twice, soon after
it ends, and the recount swaps the counts in one transaction.
"""

from __future__ import annotations

from django.db import connection
from django_q.tasks import async_task

from memories.models import Memory
from retrieval.models import SpaceTextStats

STATS = SpaceTextStats._meta.db_table


def after_write(memory_ids: list[str]) -> None:
    """memories.hooks: mark the spaces of settled memories stale; queue a recount for each
    space that was not stale already."""
    space_ids = sorted(set(Memory.objects.filter(pk__in=memory_ids).values_list("space_id", flat=True)))
    if not space_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {STATS} (space_id, documents, average_length, stale, refreshed_at) "
            "SELECT id, 0, 0, true, now() FROM unnest(%s::bigint[]) AS id "
            f"ON CONFLICT (space_id) DO UPDATE SET stale = true WHERE NOT {STATS}.stale "
            "RETURNING space_id",
            [space_ids],
        )
        flipped = sorted(row[0] for row in cursor.fetchall())
    if flipped:
        async_task("retrieval.tasks.lexeme_stats_refresh", space_ids=flipped,
                   task_name=f"word statistics of {len(flipped)} spaces", group="lexeme_stats")

