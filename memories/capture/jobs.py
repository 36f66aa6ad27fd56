"""Uploaded chat histories: queued as an import, then imported by a job (memories.tasks.chat_import_run)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from core.actor import Actor
from core.errors import DomainError, InvalidInput
from core.jobs import enqueue_on_commit
from governance import access
from memories.capture import ingest, runs, uploads
from memories.models import ChatImport


def chat_import_create(*, actor: Actor, space_slug: str, source: str, upload: UploadedFile) -> ChatImport:
    """Queue an uploaded history for import into the space: who may import what comes first
    (404, 403, 409, 400 for a source SAM cannot read), then the size (400); the upload is
    stored, unpacked when a zip, and its job enqueued once the import is committed."""
    space = access.access_space(actor, slug=space_slug, action="write")
    ingest.check_allowed(actor=actor, space=space, source=source)
    size, limit = upload.size or 0, int(settings.SAM_CHAT_IMPORT_MAX_BYTES)
    if size > limit:
        raise InvalidInput("The history is too large.", fields={"file": [f"Must be at most {limit} bytes."]})
    chat_import = ChatImport(space=space, source=source, file_name=(upload.name or "")[:255],
                             size_bytes=size, created_by=access.user_or_none(actor))
    uploads.store(chat_import.pk, upload)
    chat_import.save()
    enqueue(chat_import)
    return chat_import


def enqueue(chat_import: ChatImport) -> None:
    # The id only: the upload's path (and name) would be kept in plaintext in the task table.
    enqueue_on_commit("memories.tasks.chat_import_run", import_id=chat_import.pk,
                      task_name=f"chat import {chat_import.pk}", group="chat-import",
                      timeout=runs.JOB_TIMEOUT_SECONDS)


def run(import_id: str, path: str | None = None) -> ChatImport | None:
    """Import the upload once (a job delivered twice finds it running or ended), then delete it."""
    def work(chat_import: ChatImport) -> dict:
        if chat_import.created_by is None:
            raise DomainError("The user who uploaded the history is gone.")
        return ingest.chat_import(actor=chat_import.created_by, space_slug=chat_import.space.slug,
                                  source=chat_import.source,
                                  path=Path(path) if path else uploads.located(import_id),
                                  import_id=chat_import.pk).as_dict()

    return runs.run(import_id, work)
