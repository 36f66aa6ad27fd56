"""Word statistics that follow the writes.

The lexical signal weighs a query's words by how rare they are in the space (BM25's idf),
from counts in LexemeStat. Counted only by the half-hourly job, a fresh import was ranked
as if every word were equally rare, and its results moved when the job fired. Now a write
marks its space's counts stale once its memories are settled (memories.settle) and queues a
recount; writes landing while one is queued or running mark the space stale again, which
queues the next one. So an import of many batches is recounted once or twice, soon after
it ends, and the recount swaps the counts in one transaction.

A recount reads the whole space (about 0.8 s of database time at 100,000 memories). Writes
trickling into a large space would start one after the other back to back, and under load
they took a third of a two-core machine. So a space is recounted at most once per
PACE_SECONDS_PER_MEMORY × its size (at once below a thousand memories, every 100 s at
100,000, never more than PACE_MAX_SECONDS apart): a few new memories barely move the word
rarities of a large space.
"""

from __future__ import annotations

from django.db import connection

from core.jobs import enqueue, schedule_retry
from memories.models import Memory
from retrieval.models import SpaceTextStats

STATS = SpaceTextStats._meta.db_table
PACE_SECONDS_PER_MEMORY = 0.001
PACE_MAX_SECONDS = 300.0
PACE_FROM_MEMORIES = 1000  # smaller spaces are recounted at once (a few milliseconds each)


def after_write(memory_ids: list[str]) -> None:
    """memories.settle: mark the spaces of settled memories stale; queue a recount for each
    space that was not stale already."""
    space_ids = sorted(set(Memory.objects.filter(pk__in=memory_ids).values_list("space_id", flat=True)))
    if not space_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {STATS} (space_id, documents, average_length, stale, refreshed_at) "
            "SELECT id, 0, 0, true, now() FROM unnest(%s::bigint[]) AS id "
            f"ON CONFLICT (space_id) DO UPDATE SET stale = true WHERE NOT {STATS}.stale "
            # clock_timestamp, not now(): now() is when this transaction began, which can be
            # before a count committed since (and its age would come out negative).
            f"RETURNING space_id, {STATS}.documents, "
            f"extract(epoch FROM clock_timestamp() - {STATS}.refreshed_at)",
            [space_ids],
        )
        waits = {space_id: recount_wait(documents, age) for space_id, documents, age in cursor.fetchall()}
    now = sorted(space_id for space_id, wait in waits.items() if wait <= 0)
    if now:
        enqueue("retrieval.tasks.lexeme_stats_refresh", space_ids=now,
                   task_name=f"word statistics of {len(now)} spaces", group="lexeme_stats")
    for space_id, wait in sorted(waits.items()):
        if wait > 0:
            # Stale until then: writes meanwhile find it stale and queue nothing more.
            schedule_retry("retrieval.tasks.lexeme_stats_refresh",
                           name=f"word statistics of space {space_id}",
                           kwargs={"space_ids": [space_id]}, delay_seconds=wait)


def recount_wait(documents: int, seconds_since_count: float) -> float:
    """Seconds until a space of `documents` memories counted that long ago may be recounted."""
    if documents < PACE_FROM_MEMORIES:
        return 0.0
    pace = min(PACE_MAX_SECONDS, documents * PACE_SECONDS_PER_MEMORY)
    # A count stamped later than this clock reads (another host's clock) counts as just made.
    return pace - max(0.0, float(seconds_since_count))

