"""The same text written again: found at write time, it reinforces the memory stored.

docs/lifecycle.md, "On write". A repeat counts like a confirmation (+0.02 confidence, up to
0.95), and the memory's stats remember how often and when it was repeated.
"""

from __future__ import annotations

from django.db import connection
from django.utils import timezone

from core.actor import Actor
from core.models import Space
from governance import access
from governance.audit.services import AuditRecord, audit_record_many
from governance.crypto import keyed_digest
from memories.lifecycle import decay
from memories.models import Memory, MemoryStats

STEP = 0.02
CEILING = 0.95


def repeats(rows: list[tuple[int, Space, str]], *, actor: Actor) -> dict[int, Memory | int]:
    """Rows (index, space, content) whose text is stored already: index -> the memory it
    repeats, or the index of an earlier row of the same batch with the same text.

    Only an active memory the actor may read counts: a repeat of one hidden from them (a
    restricted tag above their role) is stored as a new row, so the answer never shows
    them a memory they could not read, nor tells them it exists. The lookup runs on the
    partial index of active memories by (space, content hash).
    """
    if not rows:
        return {}
    digests = {index: keyed_digest(space.pk, content) for index, space, content in rows}
    stored: dict[tuple[int, str], Memory] = {}
    candidates = access.restrict(
        Memory.objects.filter(archived=False, space_id__in={space.pk for _, space, _ in rows},
                              content_hash__in=set(digests.values())),
        actor,
    ).select_related("space", "stats").order_by("created_at", "id")
    for memory in candidates:
        stored.setdefault((memory.space_id, memory.content_hash), memory)
    found: dict[int, Memory | int] = {}
    first_in_batch: dict[tuple[int, str], int] = {}
    for index, space, _ in rows:
        key = (space.pk, digests[index])
        if key in stored:
            found[index] = stored[key]
        elif key in first_in_batch:
            found[index] = first_in_batch[key]
        else:
            first_in_batch[key] = index
    return found


def reinforce(memory: Memory, *, actor: Actor) -> MemoryStats:
    """+0.02 confidence on today's (decayed) value, up to 0.95; counted and audited."""
    return reinforce_many([memory], actor=actor)[0]


def reinforce_many(memories: list[Memory], *, actor: Actor) -> list[MemoryStats]:
    """Reinforce each of `memories` in order (a memory listed twice is reinforced twice);
    returns each entry's stats row (one row for a memory listed twice).

    The same counts, confidences and audit events as one `reinforce` call per entry, in
    one locking read (rows locked in pk order), one update and one audit append.
    """
    if not memories:
        return []
    locked = {stats.memory_id: stats for stats in MemoryStats.objects.select_for_update()
              .filter(memory_id__in={m.pk for m in memories}).order_by("memory_id")}
    if len(locked) != len({m.pk for m in memories}):
        raise MemoryStats.DoesNotExist("A reinforced memory has no stats row.")
    steps, records = [], []
    for memory in memories:
        stats = locked[memory.pk]
        before = stats.confidence
        current = decayed_now(memory, stats)
        stats.confidence = round(raised(current), 6)
        stats.reinforced_count += 1
        stats.decayed_at = stats.last_reinforced_at = timezone.now()
        Memory.stats.related.set_cached_value(memory, stats)
        steps.append(stats)
        records.append(AuditRecord(
            "edit", actor=actor, space=memory.space, target=memory,
            before={"confidence": round(before, 4)},
            after={"confidence": stats.confidence, "reinforced_count": stats.reinforced_count},
            note="reinforced: the same text was written again"))
    _store(list(locked.values()))
    audit_record_many(records)
    return steps


def _store(rows: list[MemoryStats]) -> None:
    """Write the reinforced counters of `rows` in one statement (arrays, not a CASE per row,
    which Django's bulk_update builds at a cost that grows with the rows)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {MemoryStats._meta.db_table} AS s SET confidence = v.confidence, "
            "reinforced_count = v.reinforced_count, decayed_at = v.decayed_at, "
            "last_reinforced_at = v.last_reinforced_at "
            "FROM unnest(%s::varchar[], %s::float8[], %s::integer[], %s::timestamptz[], %s::timestamptz[]) "
            "AS v(memory_id, confidence, reinforced_count, decayed_at, last_reinforced_at) "
            "WHERE s.memory_id = v.memory_id",
            [[r.memory_id for r in rows], [r.confidence for r in rows], [r.reinforced_count for r in rows],
             [r.decayed_at for r in rows], [r.last_reinforced_at for r in rows]],
        )


def raised(confidence: float) -> float:
    """A reinforced confidence: +STEP up to CEILING; one already above the ceiling stays."""
    return max(confidence, min(CEILING, confidence + STEP))


def decayed_now(memory: Memory, stats: MemoryStats) -> float:
    """The stored confidence brought up to now (what tonight's decay pass would write)."""
    return decay.current(
        stats.confidence, since=stats.decayed_at or memory.updated_at, now=timezone.now(),
        memory_type=memory.memory_type, decay_policy=memory.decay_policy, importance=memory.importance,
        usage_count=stats.usage_count, last_accessed_at=stats.last_accessed_at,
        reliability=memory.reliability, priority=memory.priority,
    )
