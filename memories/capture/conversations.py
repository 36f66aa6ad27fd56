"""A finished conversation posted by a client: captured like an imported one, answered with
what SAM remembered (docs/capture.md, "Conversations").

`conversation_capture` is the one service behind `POST /api/v1/conversations/` and the MCP
tool `capture_conversation`. Up to SAM_CONVERSATION_INLINE_MESSAGES messages are captured in
the request; a longer conversation is stored for a job, like an upload
(memories.capture.conversations_jobs), and answered 202. Either way a `ChatImport` of source
"api" records it: its id is what `GET /api/v1/conversations/{id}/` answers about, with the
outcome the write checks settle after embedding (memories.capture.conversations_outcome).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.actor import Actor
from core.errors import DomainError, NotFound
from core.models import Space
from governance import access, policy, privacy
from governance.modes import WriteOutcome
from memories.capture import conversations_jobs, conversations_outcome, ingest
from memories.capture.conversation import Conversation, Message, ToolCall, ToolResult, clipped
from memories.models import ChatImport, ChatImportStatus

SOURCE = "api"


class TooLarge(DomainError):
    """The conversation, or one of its messages, is larger than SAM takes in one request."""

    status_code = 413
    code = "too_large"


@dataclass(frozen=True)
class PostedConversation:
    """A conversation as the client posted it (shape checked by the API's serializer)."""

    space: str
    messages: list[dict[str, Any]]
    conversation_id: str = ""
    title: str = ""


def conversation_capture(*, actor: Actor, posted: PostedConversation) -> dict[str, Any]:
    """Capture `posted` into its space and answer what was remembered.

    Raises NotFound (a space the caller cannot see), Forbidden (one they only read),
    ModeRefusesWrites (paused or off: nothing kept), TooLarge (a message over
    SAM_CONVERSATION_MAX_MESSAGE_CHARS, more than SAM_CONVERSATION_MAX_MESSAGES messages).
    In incognito the answer says what would have been kept and nothing is (`kept: false`).
    The space's `capture_sources` does not gate this source: a client posting a conversation
    writes on purpose, as POST /api/v1/memories/ does.
    """
    space = access.access_space(actor, slug=posted.space, action="write")
    outcome = policy.write_outcome(actor, space)  # 409 when paused or off
    _check_size(posted.messages)
    conversation = to_conversation(posted, key=conversation_key(posted, actor))
    if outcome is WriteOutcome.DISCARD:
        return _incognito(actor, space, conversation, posted)
    if len(posted.messages) > int(settings.SAM_CONVERSATION_INLINE_MESSAGES):
        return _queue(actor, space, conversation, posted)
    with transaction.atomic():
        report = ingest.ChatImportReport(source=SOURCE, space=space.slug)
        captured = ingest.capture(actor=actor, space=space, conversation=conversation, report=report,
                                  keep=True)
        record = ChatImport.objects.create(
            space=space, source=SOURCE, status=ChatImportStatus.DONE, file_name=_label(posted),
            size_bytes=_size(posted.messages), created_by=access.user_or_none(actor),
            report=conversations_outcome.stored_report(report, captured, conversation,
                                                      conversation_id=posted.conversation_id),
            finished_at=timezone.now())
        conversations_jobs.audit(actor, space, report)
    return conversations_outcome.answer(actor=actor, record=record,
                                        texts=_rejected_texts(space, captured))


def conversation_get(*, actor: Actor, capture_id: str) -> dict[str, Any]:
    """A posted conversation's outcome now: for who posted it (or the space's owners), while
    they still read its space; anyone else gets NotFound."""
    visible = access.restrict(ChatImport.objects.select_related("space"), actor)
    record = visible.filter(pk=capture_id, source=SOURCE).first()
    mine = record is not None and record.created_by_id == getattr(actor, "pk", None)
    if record is None or not (mine or access.can(actor, "manage", record.space)):
        raise NotFound(f"No conversation '{capture_id}'.")
    return conversations_outcome.answer(actor=actor, record=record)


def conversation_key(posted: PostedConversation, actor: Actor) -> str:
    """The conversation's name for its watermark: whose it is and the client's id, or, without
    one, a hash of what was said (the same conversation posted again is then found unchanged; a
    grown one is new to SAM: send `conversation_id` to have only its new messages read). Two
    users, or two agents, that both call a conversation "chat-1" each keep their own."""
    who = f"{type(actor).__name__}:{getattr(actor, 'pk', '')}"
    if posted.conversation_id:
        return f"{who}:{posted.conversation_id}"
    return f"{who}:sha256:" + to_conversation(posted, key="").fingerprint()[:32]


def to_conversation(posted: PostedConversation, *, key: str) -> Conversation:
    return Conversation(source=SOURCE, key=key, origin="", title=posted.title,
                        messages=[to_message(m) for m in posted.messages])


def to_message(raw: dict[str, Any]) -> Message:
    at = raw.get("time")
    return Message(
        role=raw["role"], text=str(raw.get("content") or "").strip(),
        at=at if isinstance(at, datetime) else None, id=str(raw.get("id") or ""),
        tool_calls=[ToolCall(id=str(c.get("id") or ""), name=str(c.get("name") or ""),
                             input=dict(c.get("input") or {})) for c in raw.get("tool_calls") or []],
        # A tool's output is kept as the readers keep it: its head and tail.
        tool_results=[ToolResult(call_id=str(r.get("call_id") or ""),
                                 text=clipped(str(r.get("content") or "")), is_error=bool(r.get("is_error")))
                      for r in raw.get("tool_results") or []],
    )


def _check_size(messages: list[dict[str, Any]]) -> None:
    most = int(settings.SAM_CONVERSATION_MAX_MESSAGES)
    longest = int(settings.SAM_CONVERSATION_MAX_MESSAGE_CHARS)
    if len(messages) > most:
        raise TooLarge(f"A conversation may carry at most {most} messages per request: post it in parts "
                       "with the same conversation_id (each part is read from where the last one ended).",
                       fields={"messages": [f"At most {most} messages."]})
    fields = {f"messages[{index}].content": [f"At most {longest} characters."]
              for index, message in enumerate(messages) if len(message.get("content") or "") > longest}
    # A tool call's input counts too: it is read for the commands and edits it holds.
    fields |= {f"messages[{index}].tool_calls": [f"At most {longest} characters of input."]
               for index, message in enumerate(messages)
               if len(json.dumps([c.get("input") for c in message.get("tool_calls") or []],
                                 default=str)) > longest}
    if fields:
        raise TooLarge(f"A message may hold at most {longest} characters.", fields=fields)


def _size(messages: list[dict[str, Any]]) -> int:
    return sum(len((m.get("content") or "").encode()) for m in messages)


def _label(posted: PostedConversation) -> str:
    # What the admin's list of imports shows: a count, never the client's words.
    return f"conversation of {len(posted.messages)} messages"


def _rejected_texts(space: Space, captured: ingest.Captured) -> conversations_outcome.Texts:
    texts = conversations_outcome.Texts()
    for index, outcome in enumerate(captured.outcomes):
        if outcome.status == ingest.REJECTED:
            values = {"title": outcome.candidate.title, "quote": outcome.candidate.evidence}
            # Shown as SAM would have stored it: what redaction removes is not echoed back.
            privacy.redact_fields(values, fields=["title", "quote"], allowlist=space.redaction_allowlist)
            texts.by_item[index] = {"title": str(values["title"])[:200], "quote": str(values["quote"])}
    return texts


def _incognito(actor: Actor, space: Space, conversation: Conversation,
               posted: PostedConversation) -> dict[str, Any]:
    """Incognito: read and extract as usual, keep nothing (no memory, watermark or record)."""
    report = ingest.ChatImportReport(source=SOURCE, space=space.slug)
    captured = ingest.capture(actor=actor, space=space, conversation=conversation, report=report, keep=False)
    return conversations_outcome.incognito_answer(
        space=space, posted_id=posted.conversation_id, would_keep=report.memories_discarded,
        messages=len(conversation.messages),
        messages_read=conversations_outcome.messages_read(conversation, captured))


def _queue(actor: Actor, space: Space, conversation: Conversation,
           posted: PostedConversation) -> dict[str, Any]:
    """A long conversation: stored for a job (deleted when it ends), answered 202."""
    record = ChatImport(space=space, source=SOURCE, file_name=_label(posted),
                        size_bytes=_size(posted.messages), created_by=access.user_or_none(actor),
                        report={"conversation_id": posted.conversation_id or None,
                                "messages": len(posted.messages)})
    conversations_jobs.store(record.pk, conversation)
    record.save()
    conversations_jobs.enqueue(record)
    return conversations_outcome.answer(actor=actor, record=record)
