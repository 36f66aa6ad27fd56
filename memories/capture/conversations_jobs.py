"""Long posted conversations: stored for a job like an upload, captured by it, then deleted.

The messages wait under var/imports/<id>/ (memories.capture.uploads' folder): the raw text is
personal data, so the file is removed when the job ends, whatever its outcome; only what was
extracted (redacted, sealed memories) and the record's ids and counts stay.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.db import transaction

from core.actor import Actor
from core.errors import DomainError
from core.jobs import enqueue_on_commit
from core.models import Space
from governance import access, policy
from governance.audit.services import audit_record
from governance.modes import WriteOutcome
from memories.capture import conversations_outcome, ingest, runs, uploads
from memories.capture.conversation import Conversation, Message, ToolCall, ToolResult, timestamp
from memories.models import ChatImport

JOB = "memories.capture.conversations_jobs.conversation_capture_run"
FILE_NAME = "conversation.json"


def store(import_id: str, conversation: Conversation) -> Path:
    """Write the conversation where its job will read it; returns the file."""
    folder = uploads.folder(import_id)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE_NAME
    path.write_text(json.dumps(asdict(conversation), default=str), encoding="utf-8")
    return path


def load(path: Path) -> Conversation:
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    messages = [Message(role=m["role"], text=m["text"], at=timestamp(m["at"]), id=m["id"],
                        tool_calls=[ToolCall(**c) for c in m["tool_calls"]],
                        tool_results=[ToolResult(**r) for r in m["tool_results"]])
                for m in raw["messages"]]
    return Conversation(source=raw["source"], key=raw["key"], origin=raw["origin"], title=raw["title"],
                        messages=messages, profile=raw["profile"])


def enqueue(record: ChatImport) -> None:
    # The id only: a path under var/ can name the server's home folder, and job arguments
    # are kept in plaintext in the task table.
    enqueue_on_commit(JOB, import_id=record.pk, task_name=f"conversation {record.pk}",
                      group="chat-import", timeout=runs.JOB_TIMEOUT_SECONDS)


def conversation_capture_run(*, import_id: str, path: str | None = None, **kwargs: Any) -> None:
    """The job: capture the stored conversation once (a job delivered twice finds it running
    or done), then delete the file."""
    run(import_id, path)


def run(import_id: str, path: str | None = None) -> ChatImport | None:
    """`path` is accepted from jobs queued before they carried the import's id only."""
    stored = Path(path) if path else uploads.folder(import_id) / FILE_NAME
    return runs.run(import_id, lambda record: _capture(record, load(stored)))


def audit(actor: Actor, space: Space, report: ingest.ChatImportReport) -> None:
    """One audit record per captured conversation, as an import's: counts, never text."""
    audit_record("import", actor=actor, space=space,
                 after={"source": report.source, "conversations": report.conversations_seen,
                        "created": report.memories_created, "reinforced": report.memories_reinforced,
                        "errors": len(report.errors), "dry_run": False},
                 note=f"conversation ({report.source})")


def _capture(record: ChatImport, conversation: Conversation) -> dict[str, Any]:
    """Who posted it may still write to the space (checked again: rights and modes change
    while a job waits); a paused space fails the job, an incognito one keeps nothing."""
    if record.created_by is None:
        raise DomainError("The user who posted the conversation is gone.")
    actor = record.created_by
    space = access.access_space(actor, slug=record.space.slug, action="write")
    keep = policy.write_outcome(actor, space) is WriteOutcome.STORE
    report = ingest.ChatImportReport(source=record.source, space=space.slug)
    conversation_id = (record.report or {}).get("conversation_id") or ""
    with transaction.atomic():
        captured = ingest.capture(actor=actor, space=space, conversation=conversation, report=report,
                                  keep=keep)
        if keep:
            audit(actor, space, report)
    stored = conversations_outcome.stored_report(report, captured, conversation,
                                                 conversation_id=conversation_id)
    if not keep:
        # Incognito when the job ran: counted, not kept; the record says so and names no memory.
        stored.update(kept=False, items=[], would_keep=report.memories_discarded)
    return stored
