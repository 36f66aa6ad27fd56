"""django-q2 entry points for memories: load by id, one service call, safe to run twice."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone

from memories import services
from memories.models import EmbeddingStatus, Memory

logger = logging.getLogger(__name__)


def memory_embed(*, memory_ids: list[str], attempt: int = 1) -> dict:
    outcome = services.memories_embed(memory_ids=memory_ids, attempt=attempt)
    return {
        "embedded": len(outcome.embedded), "skipped": len(outcome.skipped),
        "retry_scheduled": len(outcome.retry_scheduled), "failed": len(outcome.failed),
    }


def memory_embed_pending(*, older_than_seconds: int = 300) -> dict:
    """Sweep up pending memories whose job was lost (worker down, queue purged)."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    ids = list(
        Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING, updated_at__lt=cutoff)
        .order_by("updated_at").values_list("id", flat=True)[:1000]
    )
    if not ids:
        return {"embedded": 0}
    logger.info("embedding %d pending memories left behind", len(ids))
    return memory_embed(memory_ids=ids)
