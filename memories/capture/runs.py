"""An import's run (an upload's or a long posted conversation's): claimed once, finished once,
and failed by the janitor when its job died (docs/capture.md, "Imports that stop half-way").

A job can be delivered twice: the ORM broker hands a job out again once the cluster's `retry`
has passed without an acknowledgement (a worker killed mid-job never acknowledges; a job
longer than `retry` is handed out while it still runs). So a run starts only by claiming its
queued row under a row lock; a second delivery finds it running or ended and returns. A job
that dies (SIGKILL, out of memory, a host restart) never ends its run: `reap` fails imports
running longer than any job may, so no import stays `running` with its upload on disk.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.errors import DomainError
from memories.capture import uploads
from memories.capture.models import ChatImport, ChatImportStatus

logger = logging.getLogger(__name__)

# The timeout both import jobs are enqueued with: a large export takes minutes (about 1,000
# conversations a minute with embedding, docs/capture.md). The worker's guard kills a job
# past it.
JOB_TIMEOUT_SECONDS = 3600
# Past the timeout, time for the guard to kill the job and for its own failure to be written.
STUCK_MARGIN_SECONDS = 300
# A posted conversation (memories.capture.conversations.SOURCE) is posted again, not uploaded.
POSTED_SOURCE = "api"


def stuck_after() -> timedelta:
    """How long an import may run before it is taken for dead: its job's timeout (or the
    cluster's, should that be longer) plus a margin."""
    cluster_timeout = int(settings.Q_CLUSTER.get("timeout") or 0)
    return timedelta(seconds=max(JOB_TIMEOUT_SECONDS, cluster_timeout) + STUCK_MARGIN_SECONDS)


def claim(import_id: str) -> ChatImport | None:
    """Mark the queued import running, with its start time; None when it is not queued
    (another delivery of the job has it, or it ended, or it is gone)."""
    with transaction.atomic():
        queued = ChatImport.objects.select_for_update(of=("self",)).select_related("space", "created_by")
        chat_import = queued.filter(pk=import_id, status=ChatImportStatus.QUEUED).first()
        if chat_import is None:
            return None
        chat_import.status, chat_import.started_at = ChatImportStatus.RUNNING, timezone.now()
        chat_import.save(update_fields=["status", "started_at"])
    return chat_import


def finish(chat_import: ChatImport, *, status: str, report: dict[str, Any] | None = None,
           error: str = "") -> bool:
    """End the run: its status, report (kept as it was when None) and error. False, writing
    nothing, when the run is no longer running: the janitor failed it first, and its
    verdict stands (it has removed the upload; the user was told to run it again)."""
    with transaction.atomic():
        current = ChatImport.objects.select_for_update().filter(pk=chat_import.pk).first()
        if current is None or current.status != ChatImportStatus.RUNNING:
            logger.warning("import %s ended after it was failed as stuck; its outcome is not kept",
                           chat_import.pk)
            if current is not None:  # the caller sees the verdict that stands
                chat_import.status, chat_import.error = current.status, current.error
            return False
        chat_import.status, chat_import.error = status, error[:500]
        if report is not None:
            chat_import.report = report
        chat_import.finished_at = timezone.now()
        chat_import.save(update_fields=["status", "report", "error", "finished_at"])
    return True


def run(import_id: str, work: Callable[[ChatImport], dict[str, Any]]) -> ChatImport | None:
    """Claim the import, do `work` (which returns the report), end it, delete its upload
    whatever the outcome. None when it was not queued (a job delivered twice)."""
    chat_import = claim(import_id)
    if chat_import is None:
        return None
    try:
        status, report, error = ChatImportStatus.DONE, work(chat_import), ""
    except DomainError as exc:
        status, report, error = ChatImportStatus.FAILED, None, exc.message
    except Exception as exc:
        logger.exception("import %s failed", import_id)
        status, report, error = ChatImportStatus.FAILED, None, type(exc).__name__
    except BaseException:
        # django-q2's timeout is a SystemExit raised in the job: record why, then let the
        # worker go down as the cluster expects.
        finish(chat_import, status=ChatImportStatus.FAILED,
               error=f"The import was stopped after {JOB_TIMEOUT_SECONDS} s, its job's timeout.")
        raise
    finally:
        uploads.discard(import_id)
    finish(chat_import, status=status, report=report, error=error)
    return chat_import


def stuck_message(source: str) -> str:
    again = "Post the conversation again" if source == POSTED_SOURCE else "Upload the history again"
    return (f"The import's job stopped before it finished (its worker was killed or timed out). "
            f"{again}: what was already imported is skipped.")


def reap(*, now: datetime | None = None, dry_run: bool = False) -> list[str]:
    """Fail the imports running longer than `stuck_after()`, say why, and delete their
    uploads (after the commit). Returns their ids, oldest first.

    Rows locked by a run that is ending right now are skipped: the next pass sees them
    ended. An import from before start times were kept is judged by its creation time.
    """
    cutoff = (now or timezone.now()) - stuck_after()
    with transaction.atomic():
        stuck = list(
            ChatImport.objects.select_for_update(skip_locked=True)
            .filter(status=ChatImportStatus.RUNNING)
            .alias(began=Coalesce("started_at", "created_at")).filter(began__lt=cutoff)
            .order_by("began", "pk")
        )
        if dry_run:
            return [chat_import.pk for chat_import in stuck]
        ended = timezone.now()
        for chat_import in stuck:
            chat_import.status, chat_import.finished_at = ChatImportStatus.FAILED, ended
            chat_import.error = stuck_message(chat_import.source)[:500]
            chat_import.save(update_fields=["status", "error", "finished_at"])
            # Files only once the verdict is committed: a rollback leaves both as they were.
            transaction.on_commit(functools.partial(uploads.discard, chat_import.pk))
    if stuck:
        logger.warning("failed %d import(s) whose job stopped: %s", len(stuck),
                       ", ".join(chat_import.pk for chat_import in stuck))
    return [chat_import.pk for chat_import in stuck]
