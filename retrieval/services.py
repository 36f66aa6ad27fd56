"""Recall side effects: access counters and the recall event (seed 001, seed 000 §E)."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from governance import access, privacy
from memories.models import MemoryStats, Space
from retrieval.models import RecallEvent
from retrieval.pipeline import RecallResult

# Seed 001: a recalled memory's confidence is raised to at least this.
ACCESS_CONFIDENCE_FLOOR = 0.8


@transaction.atomic
def recall_record(*, actor, result: RecallResult, active_task: str = "") -> RecallEvent | None:
    """Count the access of every returned memory and store why each was recalled.

    Runs after the answer is built. The counters live in MemoryStats, a narrow table,
    so this update never touches the memory rows or their vector index.
    """
    if not result.track:
        # A memory mode (capture_only, paused, incognito) forbids leaving traces.
        return None
    ids = [item.id for item in result.items]
    if ids:
        MemoryStats.objects.filter(memory_id__in=ids).update(
            access_count=F("access_count") + 1,
            last_accessed_at=timezone.now(),
            confidence=Greatest(F("confidence"), ACCESS_CONFIDENCE_FLOOR),
        )
    # What was asked is stored text like any other: redacted first.
    kept = {"query_text": result.query_text, "active_task": active_task}
    redaction_report = privacy.redact_fields(kept, fields=kept)
    event = RecallEvent.objects.create(
        actor=access.user_or_none(actor),
        spaces=result.spaces,
        query_text=kept["query_text"],
        active_task=kept["active_task"],
        profile=result.profile.name,
        memory_ids=ids,
        items=[{"id": item.id, "score": round(item.score, 4), "signals": item.signals.as_dict(),
                "rationale": item.rationale} for item in result.items],
        fail_safe=result.fail_safe,
        cached=result.cached,
        duration_ms=result.timings_ms.get("total", result.timings_ms.get("cache", 0.0)),
    )
    event.redaction_report = redaction_report
    _audit_recall(actor, result, event)
    return event


def _audit_recall(actor, result: RecallResult, event: RecallEvent) -> None:
    """One audit row per space the answer drew from; the query itself stays in the event."""
    from governance.audit.services import audit_record

    by_space: dict[str, list[str]] = {}
    for item in result.items:
        by_space.setdefault(item.row["space_slug"], []).append(item.id)
    spaces = {s.slug: s for s in Space.objects.filter(slug__in=result.spaces)}
    for slug in result.spaces:
        audit_record("recall", actor=actor, space=spaces.get(slug), target=event,
                     after={"memory_ids": by_space.get(slug, []), "fail_safe": result.fail_safe})
