"""The job that imports an uploaded chat history (memories.tasks.chat_import_run)."""

from __future__ import annotations

import logging
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from memories.capture import ingest, uploads
from memories.models import ChatImport, ChatImportStatus
from samsite.core.errors import DomainError
from samsite.core.jobs import enqueue_on_commit

logger = logging.getLogger(__name__)

# A large export takes minutes (about 1,000 conversations a minute with embedding, docs/capture.md).
IMPORT_TASK_TIMEOUT = 3600


def enqueue(chat_import: ChatImport, path: Path) -> None:
    enqueue_on_commit("memories.tasks.chat_import_run", import_id=chat_import.pk, path=str(path),
                      task_name=f"chat import {chat_import.pk}", group="chat-import",
                      timeout=IMPORT_TASK_TIMEOUT)


def run(import_id: str, path: str) -> ChatImport | None:
    """Import the upload once (a job delivered twice finds it running or done), then delete it."""
    with transaction.atomic():
        queued = ChatImport.objects.select_for_update(of=("self",)).select_related("space", "created_by")
        chat_import = queued.filter(pk=import_id, status=ChatImportStatus.QUEUED).first()
        if chat_import is None:
            return None
        chat_import.status = ChatImportStatus.RUNNING
        chat_import.save(update_fields=["status"])
    try:
        if chat_import.created_by is None:
            raise DomainError("The user who uploaded the history is gone.")
        report = ingest.chat_import(actor=chat_import.created_by, space_slug=chat_import.space.slug,
                                    source=chat_import.source, path=Path(path))
        chat_import.report, chat_import.status = report.as_dict(), ChatImportStatus.DONE
    except DomainError as exc:
        chat_import.status, chat_import.error = ChatImportStatus.FAILED, exc.message[:500]
    except Exception as exc:
        logger.exception("chat import %s failed", import_id)
        chat_import.status, chat_import.error = ChatImportStatus.FAILED, f"{type(exc).__name__}"[:500]
    finally:
        uploads.discard(import_id)
    chat_import.finished_at = timezone.now()
    chat_import.save(update_fields=["status", "report", "error", "finished_at"])
    return chat_import
