"""Coding sessions and their events: start or resume a session, append a batch of events
(docs/sessions.md, "Events").

Appends to one session serialise on its row lock, which orders the sequence numbers (the
mechanism, shared with the PRD executions' log, is prd.event_log). Each append that commits
enqueues the card compilation job (prd.sessions.cards) when none is pending for the session,
so a busy session makes one job, not one per event.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from ulid import ULID

from core.actor import Actor
from core.errors import Conflict, Forbidden
from governance import access, policy
from governance.audit.services import audit_record
from governance.crypto.datakeys import keyed_digest
from memories.normalize import clean_content, clean_line
from prd import event_log, limits
from prd.models import (
    AgentSession,
    EventRole,
    EventSource,
    SessionEvent,
    SessionEventType,
)
from prd.services.common import (
    collecting_redactions,
    enqueue,
    invalid,
    redact,
    writable,
)
from prd.sessions import chat_capture
from prd.sessions import rules as session_rules

COMPILE_JOB = "prd.tasks.session_compile_cards"
DEFAULT_SOURCE = {
    "chat_turn": EventSource.CHAT,
    "voice_transcript": EventSource.CHAT,
    "command_intent": EventSource.CHAT,
    "command_run": EventSource.TERMINAL,
    "action_run": EventSource.TERMINAL,
    "file_change": EventSource.FILES,
    "test_result": EventSource.TESTS,
    "decision": EventSource.AGENT,
    "handoff": EventSource.AGENT,
    "summary": EventSource.AGENT,
}
# Event types whose text is what they are: they may not be blank.
TEXT_REQUIRED = frozenset({"chat_turn", "voice_transcript", "command_intent", "handoff", "summary"})
FILE_CHANGES = ("added", "modified", "deleted", "renamed")
TEST_STATUSES = ("passed", "failed", "error", "skipped")
ROLES = ("", *EventRole.values)
# How far ahead of the server's clock an event's time may be (clocks drift; days do not).
FUTURE_SLACK = timedelta(hours=24)
LIST_KEYS = ("next_steps", "open_questions")
LIST_ITEMS_MAX = 50
LIST_ITEM_MAX = 1000


# --- sessions -------------------------------------------------------------------------


@dataclass
class SessionStart:
    session: AgentSession
    created: bool
    redaction_report: list[dict[str, Any]] = field(default_factory=list)


def session_start(
    *, actor: Actor, space: str, key: str | None = None, title: str = "", agent_id: str = ""
) -> SessionStart:
    """Start a session in `space`, or resume the one with the client's `key` there."""
    target = access.access_space(actor, slug=space, action="write")
    with collecting_redactions() as report:
        cleaned_title = redact(clean_line(title), path="title")
        if len(cleaned_title) > limits.TITLE_MAX:
            raise invalid("title", f"Must be at most {limits.TITLE_MAX} characters.")
    session_key = clean_line(key) if key else None
    for attempt in (1, 2):
        try:
            with transaction.atomic():
                outcome = writable(actor, target)
                found = (
                    AgentSession.objects.filter(space=target, key=session_key).first()
                    if session_key
                    else None
                )
                if found is not None:
                    return SessionStart(found, created=False, redaction_report=report)
                session = AgentSession.objects.create(
                    space=target,
                    key=session_key,
                    title=cleaned_title,
                    agent_id=clean_line(agent_id),
                    created_by=access.user_or_none(actor),
                )
                audit_record(
                    "create",
                    actor=actor,
                    space=target,
                    target=session,
                    after={"key": session_key, "agent_id": session.agent_id},
                )
                policy.keep_or_discard(outcome)
                return SessionStart(session, created=True, redaction_report=report)
        except IntegrityError:
            if attempt == 2:  # the same key created by a concurrent start: resume it
                raise
    raise AssertionError("unreachable")


def ensure_writable(*, actor: Actor, session: AgentSession) -> None:
    """Raise unless `actor` may write in the session's space now (role and memory mode)."""
    if not access.can(actor, "write", session.space, session):
        raise Forbidden(f"You may not write session '{session.id}'.")
    writable(actor, session.space)


# --- events ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EventInput:
    event_type: str
    text: str = ""
    event_id: str | None = None
    ts: datetime | None = None
    source: str | None = None
    role: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    topic_tags: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    task_refs: tuple[str, ...] = ()
    artifacts: tuple[dict[str, Any], ...] = ()
    importance: float = 0.5
    confidence: float = 1.0
    agent_id: str = ""


@dataclass
class _Clean:
    """One event as it will be stored (redacted), and whether its time was sent."""

    event_id: str
    event_type: str
    source: str
    role: str
    ts: datetime
    ts_sent: bool
    text: str
    data: dict[str, Any]
    refs: dict[str, Any]
    topic_tags: list[str]
    importance: float
    confidence: float
    agent_id: str

    def canonical(self, *, with_ts: bool = True) -> str:
        body = {
            "event_type": self.event_type,
            "source": self.source,
            "role": self.role,
            "text": self.text,
            "data": self.data,
            "refs": self.refs,
            "topic_tags": self.topic_tags,
            "importance": self.importance,
            "confidence": self.confidence,
        }
        if with_ts:
            body["ts"] = self.ts.isoformat()
        return json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)


@dataclass
class AppendedEvents:
    session: AgentSession
    # (event, created): created is False for an event_id sent before (a replay).
    events: list[tuple[SessionEvent, bool]]
    redaction_report: list[dict[str, Any]] = field(default_factory=list)

    @property
    def created(self) -> int:
        return sum(1 for _, created in self.events if created)


def _strings(values: Any, path: str, *, max_items: int, max_length: int) -> list[str]:
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
        raise invalid(path, "Must be a list of strings.")
    if len(values) > max_items:
        raise invalid(path, f"Allows at most {max_items} items.")
    cleaned = [clean_line(v) for v in values]
    for index, value in enumerate(cleaned):
        if len(value) > max_length:
            raise invalid(f"{path}[{index}]", f"Must be at most {max_length} characters.")
    return [v for v in cleaned if v]


def _clean_data(event_type: str, data: dict[str, Any], text: str, path: str) -> dict[str, Any]:
    """Type-specific fields checked and normalised (docs/sessions.md, "Events")."""
    data = dict(data)
    if event_type == "command_run":
        command = data.get("command", text.splitlines()[0] if text.strip() else "")
        if not isinstance(command, str) or not command.strip():
            raise invalid(f"{path}.data.command", "A command_run needs the command (data.command or text).")
        data["command"] = session_rules.normalize_command(command)
        code = data.get("exit_code")
        if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
            raise invalid(f"{path}.data.exit_code", "Must be an integer or null.")
    elif event_type == "file_change":
        file_path = data.get("path")
        if not isinstance(file_path, str) or not file_path.strip():
            raise invalid(f"{path}.data.path", "A file_change needs the file's path.")
        data["path"] = clean_line(file_path)[:1000]
        change = data.setdefault("change", "modified")
        if change not in FILE_CHANGES:
            raise invalid(f"{path}.data.change", f"Must be one of {', '.join(FILE_CHANGES)}.")
    elif event_type == "test_result":
        if data.get("status") not in TEST_STATUSES:
            raise invalid(f"{path}.data.status", f"Must be one of {', '.join(TEST_STATUSES)}.")
        name = data.setdefault("name", "tests")
        if not isinstance(name, str) or not name.strip() or len(name) > 500:
            raise invalid(f"{path}.data.name", "Must be a test or suite name of at most 500 characters.")
    elif event_type == "decision":
        decision = data.get("decision", text)
        if not isinstance(decision, str) or not decision.strip():
            raise invalid(f"{path}.text", "A decision needs its text (text or data.decision).")
    for key in LIST_KEYS:
        if key in data:
            data[key] = _strings(
                data[key], f"{path}.data.{key}", max_items=LIST_ITEMS_MAX, max_length=LIST_ITEM_MAX
            )
    return data


def _clean_event(raw: EventInput, index: int, now: datetime) -> _Clean:
    path = f"events[{index}]"
    if raw.event_type not in SessionEventType.values:
        raise invalid(f"{path}.event_type", f"Must be one of {', '.join(SessionEventType.values)}.")
    text = clean_content(raw.text or "")
    if raw.event_type in TEXT_REQUIRED and not text:
        raise invalid(f"{path}.text", "This field may not be blank.")
    if len(text) > limits.EVENT_TEXT_MAX:
        raise invalid(f"{path}.text", f"Must be at most {limits.EVENT_TEXT_MAX} characters.")
    if not isinstance(raw.data, dict):
        raise invalid(f"{path}.data", "Must be a JSON object.")
    data = _clean_data(raw.event_type, raw.data, text, path)
    refs: dict[str, Any] = {}
    for name, values in (("entities", raw.entities), ("task_refs", raw.task_refs)):
        if values:
            refs[name] = _strings(list(values), f"{path}.{name}", max_items=limits.REFS_MAX, max_length=1000)
    if raw.artifacts:
        if len(raw.artifacts) > limits.REFS_MAX:
            raise invalid(f"{path}.artifacts", f"Allows at most {limits.REFS_MAX} items.")
        refs["artifacts"] = [
            {"kind": clean_line(str(a.get("kind", ""))), "ref": clean_line(str(a.get("ref", "")))}
            for a in raw.artifacts
        ]
    for name, value in (("data", data), ("refs", refs)):
        if len(json.dumps(value, default=str)) > limits.EVENT_DATA_BYTES_MAX:
            raise invalid(f"{path}.{name}", f"Must be at most {limits.EVENT_DATA_BYTES_MAX} bytes as JSON.")
    ts = raw.ts or now
    if ts > now + FUTURE_SLACK:
        raise invalid(f"{path}.ts", "Is more than a day in the future.")
    role = raw.role or ""
    if role not in ROLES:
        raise invalid(f"{path}.role", f"Must be one of {', '.join(r for r in ROLES if r)}.")
    source = raw.source or DEFAULT_SOURCE[raw.event_type]
    if source not in EventSource.values:
        raise invalid(f"{path}.source", f"Must be one of {', '.join(EventSource.values)}.")
    event_id = clean_line(raw.event_id) if raw.event_id else f"evt_{ULID()}"
    if not event_id or len(event_id) > limits.EVENT_ID_MAX:
        raise invalid(f"{path}.event_id", f"Must be 1 to {limits.EVENT_ID_MAX} characters.")
    tags = _strings(
        list(raw.topic_tags),
        f"{path}.topic_tags",
        max_items=limits.TOPIC_TAGS_MAX,
        max_length=limits.TOPIC_TAG_MAX,
    )
    return _Clean(
        event_id=event_id,
        event_type=raw.event_type,
        source=source,
        role=role,
        ts=ts,
        ts_sent=raw.ts is not None,
        # What is stored is redacted first: the text, the typed fields and the references.
        text=redact(text, path=f"{path}.text"),
        data=redact(data, path=f"{path}.data"),
        refs=redact(refs, path=f"{path}.refs"),
        topic_tags=sorted({t.lower() for t in tags}),
        importance=float(raw.importance),
        confidence=float(raw.confidence),
        agent_id=clean_line(raw.agent_id or "")[: limits.AGENT_ID_MAX],
    )


def _stored_clean(event: SessionEvent) -> _Clean:
    return _Clean(
        event_id=event.event_id,
        event_type=event.event_type,
        source=event.source,
        role=event.role,
        ts=event.ts,
        ts_sent=True,
        text=event.text,
        data=event.data,
        refs=event.refs,
        topic_tags=list(event.topic_tags),
        importance=event.importance,
        confidence=event.confidence,
        agent_id=event.agent_id,
    )


def events_append(*, actor: Actor, session_id: str, events: list[EventInput]) -> AppendedEvents:
    """Append a batch of events, all or none. Idempotent by event_id.

    An event_id the session has already logged replays the stored event when its content is
    the same (its time is compared only when the retry sends one), and is a Conflict (409)
    when it differs. Raises InvalidInput (400) naming `events[i].field`, NotFound (404) for a
    session the caller cannot see, ModeRefusesWrites (409) when the space's mode refuses.
    """
    if not events:
        raise invalid("events", "Send at least one event.")
    if len(events) > limits.EVENTS_PER_BATCH_MAX:
        raise invalid("events", f"Allows at most {limits.EVENTS_PER_BATCH_MAX} events per call.")
    now = timezone.now()
    with collecting_redactions() as report:
        cleaned = [_clean_event(raw, index, now) for index, raw in enumerate(events)]
    first_of = _first_of_each_id(cleaned)
    with transaction.atomic():
        session = event_log.lock_parent(AgentSession, actor, pk=session_id, label="session")
        outcome = writable(actor, session.space)
        answer, new = _replays_and_rows(session, cleaned, first_of, report=report, actor=actor)
        if new:
            _log(session, new, actor=actor)
        policy.keep_or_discard(outcome)
    return AppendedEvents(session=session, events=answer, redaction_report=report)


def _first_of_each_id(cleaned: list[_Clean]) -> dict[str, int]:
    """Where each event_id first appears in the batch. An id sent twice in one batch is the
    same event, which must come with the same content both times (400 otherwise)."""
    first_of: dict[str, int] = {}
    for index, event in enumerate(cleaned):
        first = first_of.setdefault(event.event_id, index)
        if first != index and cleaned[first].canonical() != event.canonical():
            raise invalid(
                f"events[{index}].event_id",
                f"Sent twice in this batch with different content (first at events[{first}]).",
            )
    return first_of


def _replays_and_rows(
    session: AgentSession,
    cleaned: list[_Clean],
    first_of: dict[str, int],
    *,
    report: list[dict[str, Any]],
    actor: Actor,
) -> tuple[list[tuple[SessionEvent, bool]], list[SessionEvent]]:
    """The answer for each event of the batch, (event, created), and the rows still to log: an
    event_id logged before replays the stored event, and a repeat within the batch answers
    with the event its first sending made."""
    stored = {e.event_id: e for e in session.events.filter(event_id__in=list(first_of))}
    answer: list[tuple[SessionEvent, bool]] = []
    new: list[SessionEvent] = []
    for index, event in enumerate(cleaned):
        if event.event_id in stored:
            old = stored[event.event_id]
            same = _stored_clean(old).canonical(with_ts=event.ts_sent) == event.canonical(
                with_ts=event.ts_sent
            )
            conflict = Conflict(
                f"Event '{event.event_id}' was logged before with different content.",
                fields={f"events[{index}].event_id": ["Logged before with different content."]},
            )
            answer.append((event_log.replay(old, same=same, conflict=conflict), False))
            continue
        if first_of[event.event_id] != index:
            answer.append((answer[first_of[event.event_id]][0], False))
            continue
        # What redaction removed from this event, kept with it (never the removed text).
        redactions = [r for r in report if r.get("path", "").startswith(f"events[{index}].")]
        row = _row(session, event, redactions=redactions, actor=actor)
        new.append(row)
        answer.append((row, True))
    return answer, new


def _row(
    session: AgentSession, event: _Clean, *, redactions: list[dict[str, Any]], actor: Actor
) -> SessionEvent:
    """The row to log for a cleaned event; event_log.number gives it its place in the log."""
    return SessionEvent(
        session=session,
        event_id=event.event_id,
        event_type=event.event_type,
        source=event.source,
        role=event.role,
        ts=event.ts,
        text=event.text,
        data=event.data,
        refs=event.refs,
        topic_tags=event.topic_tags,
        importance=event.importance,
        confidence=event.confidence,
        agent_id=event.agent_id or session.agent_id,
        hash=keyed_digest(session.space_id, event.canonical()),
        redactions=redactions,
        created_by=access.user_or_none(actor),
    )


def _log(session: AgentSession, new: list[SessionEvent], *, actor: Actor) -> None:
    """Log the new rows after the session's last event and move the session on: its count and
    time span, the audit record of the batch, and the card compilation job."""
    # A compilation job is pending while cards lag the log; a running one catches up with what
    # is logged meanwhile, so only an append to an up-to-date session enqueues one.
    pending_before = session.event_count > session.cards_through
    event_log.number(session, new)
    SessionEvent.objects.bulk_create(new)
    times = [e.ts for e in new]
    session.first_event_at = min([*times, *([session.first_event_at] if session.first_event_at else [])])
    session.last_event_at = max([*times, *([session.last_event_at] if session.last_event_at else [])])
    session.save(update_fields=["event_count", "first_event_at", "last_event_at", "updated_at"])
    audit_record(
        "create",
        actor=actor,
        space=session.space,
        target=session,
        after={
            "events": len(new),
            "types": dict(sorted(Counter(e.event_type for e in new).items())),
            "through": session.event_count,
        },
    )
    if not pending_before:
        enqueue(COMPILE_JOB, session_id=session.id)
    # What the person and the agent said becomes memories of the space, like a chat import.
    chat_capture.after_logged(session, new)
