"""Imports still queued long after they were created: their job is enqueued again
(docs/capture.md, "Imports that stop half-way").

An import's job is enqueued once the import is committed (core.jobs.enqueue_on_commit). A
process that dies between that commit and the enqueue, or a broker that refused the job,
leaves an import `queued` that no worker will ever claim, its upload kept on disk. The
janitor's pass (memories.tasks.chat_imports_reap) enqueues the job of every import queued
for longer than QUEUED_GRACE again. That is safe whether or not the first job exists: a run
starts only by claiming its queued import (memories.capture.runs.claim), so of two
deliveries one imports and the other returns at once. Behind a long queue this costs one
such empty delivery per pass, never a second import.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from memories.capture import conversations_jobs, jobs, runs
from memories.capture.models import ChatImport, ChatImportStatus

# Longer than an idle cluster takes to pick a job up (the ORM broker polls every few seconds),
# so an import is not enqueued twice on a quiet system.
QUEUED_GRACE = timedelta(minutes=15)


def requeue_waiting(*, now: datetime | None = None, dry_run: bool = False) -> list[str]:
    """Enqueue again the job of every import queued for longer than QUEUED_GRACE; their ids,
    oldest first."""
    cutoff = (now or timezone.now()) - QUEUED_GRACE
    waiting = list(ChatImport.objects.filter(status=ChatImportStatus.QUEUED, created_at__lt=cutoff)
                   .order_by("created_at", "pk"))
    if not dry_run:
        for chat_import in waiting:
            if chat_import.source == runs.POSTED_SOURCE:
                conversations_jobs.enqueue(chat_import)
            else:
                jobs.enqueue(chat_import)
    return [chat_import.pk for chat_import in waiting]
