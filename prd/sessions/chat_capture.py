"""A session's chat turns, captured as its conversation (docs/capture.md, "Conversations").

When a batch of events that holds `chat_turn` events commits, a job reads the session's chat
turns as one conversation and sends it through the same pipeline as a chat-history import
or a posted conversation (memories.capture.ingest.capture): the same extractors, redaction,
write checks and memory modes, into the session's space. The session's watermark (an
`ImportedConversation` of source "session", keyed on the session) makes it incremental:
the extractors read only the exchanges that are new since the last capture.

Who said a turn: its `role` when the agent gave one (`user`, `assistant`, `tool`; `system`
turns are left out), otherwise its `source`: `agent` is the assistant, any other source
(`chat` by default) the person. The memories are written as the user who logged the newest
turn, with their rights at the time the job runs.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from core.errors import DomainError
from governance import access, policy
from governance.modes import WriteOutcome
from memories.capture import conversations_jobs, ingest
from memories.capture.conversation import Conversation, Message, Role
from prd.services.common import enqueue
from prd.sessions.models import AgentSession, EventSource, SessionEvent

logger = logging.getLogger(__name__)

JOB = "prd.sessions.chat_capture.session_chat_capture"
SOURCE = "session"
CHAT_TURN = "chat_turn"
ROLES: frozenset[str] = frozenset({"user", "assistant", "tool"})


def after_logged(session: AgentSession, new: list[SessionEvent]) -> None:
    """Queue the capture once the append commits, when its batch holds chat turns (an
    incognito append rolls back, and nothing is queued)."""
    if settings.SAM_SESSION_CHAT_CAPTURE and any(e.event_type == CHAT_TURN for e in new):
        enqueue(JOB, session_id=session.id)


def role_of(event: SessionEvent) -> Role | None:
    """Who said a chat turn, as a conversation's role; None for a turn left out (system)."""
    if event.role in ROLES:
        return event.role  # type: ignore[return-value]
    if event.role:
        return None
    return "assistant" if event.source == EventSource.AGENT else "user"


def session_chat_capture(*, session_id: str, **kwargs: Any) -> ingest.ChatImportReport | None:
    """The job: capture what is new in the session's chat turns. Safe to run twice: two jobs of
    one session (two appends in quick succession) take turns, and each reads the turns once it
    holds the lock, so the second finds the first's watermark and reads only what came after.
    Appends to the session are not held up."""
    session = AgentSession.objects.select_related("space", "created_by").filter(pk=session_id).first()
    if session is None:
        logger.info("session %s is gone: no chat capture", session_id)
        return None
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"session-chat:{session.id}"])
        return _capture(session)


def _capture(session: AgentSession) -> ingest.ChatImportReport | None:
    turns = list(session.events.filter(event_type=CHAT_TURN).select_related("created_by")
                 .order_by("sequence"))
    messages = [Message(role=role, text=turn.text, at=turn.ts, id=turn.event_id)
                for turn in turns if (role := role_of(turn)) is not None and turn.text.strip()]
    actor = next((t.created_by for t in reversed(turns) if t.created_by is not None), session.created_by)
    if not messages or actor is None:
        return None
    space = session.space
    try:
        access.access_space(actor, slug=space.slug, action="write")
    except DomainError:
        logger.info("chat capture of session %s skipped: its author may no longer write there", session.id)
        return None
    if policy.policy(actor, space).write is not WriteOutcome.STORE:
        # Paused or off now (or incognito for this user): nothing kept, the watermark stays
        # where it was, and the next append after a resume reads from there.
        return None
    conversation = Conversation(source=SOURCE, key=session.id, origin="", title=session.title,
                                messages=messages)
    report = ingest.ChatImportReport(source=SOURCE, space=space.slug)
    ingest.capture(actor=actor, space=space, conversation=conversation, report=report, keep=True)
    if report.memories_created or report.memories_reinforced or report.rejected:
        conversations_jobs.audit(actor, space, report)
    return report
