"""Recall side effects: access counters and the recall event (seed 001, seed 000 §E)."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from governance import access
from memories.models import MemoryStats
from retrieval.models import RecallEvent
from retrieval.pipeline import RecallResult

# Seed 001: a recalled memory's confidence is raised to at least this.
ACCESS_CONFIDENCE_FLOOR = 0.8


@transaction.atomic
def recall_record(*, actor, result: RecallResult, active_task: str = "") -> RecallEvent:
    """Count the access of every returned memory and store why each was recalled.

    Runs after the answer is built. The counters live in MemoryStats, a narrow table,
    so this update never touches the memory rows or their vector index.
    """
    ids = [item.id for item in result.items]
    if ids:
        MemoryStats.objects.filter(memory_id__in=ids).update(
            access_count=F("access_count") + 1,
            last_accessed_at=timezone.now(),
            confidence=Greatest(F("confidence"), ACCESS_CONFIDENCE_FLOOR),
        )
    return RecallEvent.objects.create(
        actor=access.user_or_none(actor),
        spaces=result.spaces,
        query_text=result.query_text,
        active_task=active_task,
        profile=result.profile.name,
        memory_ids=ids,
        items=[{"id": item.id, "score": round(item.score, 4), "signals": item.signals.as_dict(),
                "rationale": item.rationale} for item in result.items],
        fail_safe=result.fail_safe,
        cached=result.cached,
        duration_ms=result.timings_ms.get("total", result.timings_ms.get("cache", 0.0)),
    )
