"""Permission-aware reads of coding sessions, their events, handoffs and cards, and what a
context pack shows of them (docs/sessions.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db.models import QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.actor import Actor
from core.errors import NotFound
from governance import access
from governance.defuse import defuse_json
from memories.models import Memory
from prd import limits
from prd.models import AgentSession, CardStatus, ExecutionStatus, MemoryCard, PRDExecution, SessionEvent
from prd.sessions import handoff
from prd.sessions import rules as session_rules
from prd.sessions.cards import rule_event
from retrieval.packs import PackContext

SECTION_ENTRIES = 5
CHANGED_FILES = 15
# Sessions whose changed files and open questions a pack shows, newest first, per pack.
PACK_SESSIONS = 3
HANDOFF_CACHE_SECONDS = 300


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def session_list(*, actor: Actor, spaces: list[str]) -> QuerySet[AgentSession]:
    queryset = access.restrict(AgentSession.objects.select_related("space"), actor)
    if spaces:
        queryset = queryset.filter(space__slug__in=spaces)
    return queryset.order_by("-updated_at", "id")


def session_get(*, actor: Actor, session_id: str) -> AgentSession:
    return access.access_object(
        AgentSession.objects.select_related("space"), actor, pk=session_id, label="session"
    )


def event_list(
    *, actor: Actor, session_id: str, event_type: str | None = None, after_sequence: int | None = None
) -> QuerySet[SessionEvent]:
    """A session's log, oldest first."""
    session = session_get(actor=actor, session_id=session_id)
    queryset = session.events.select_related("session__space", "created_by")
    if event_type:
        queryset = queryset.filter(event_type=event_type)
    if after_sequence is not None:
        queryset = queryset.filter(sequence__gt=after_sequence)
    return queryset.order_by("sequence")


@dataclass
class Handoff:
    json: dict[str, Any]
    markdown: str


def handoff_of(session: AgentSession) -> Handoff:
    """The compiled handoff of `session`, kept per event count (a new event changes the key).

    What the events stored is defused before the next session's model reads it
    (governance.defuse): the JSON says what was neutralised (`defused`), the Markdown carries
    the legend when anything was. "v2" in the key: handoffs cached before defusing are not
    served again.
    """
    key = f"sam:handoff:v2:{session.pk}:{session.event_count}:{session.updated_at.isoformat()}"
    kept = cache.get(key)
    if kept is not None:
        return Handoff(**kept)
    # The newest events when a session is longer than a handoff reads.
    rows = list(session.events.order_by("-sequence")[: limits.HANDOFF_EVENTS_MAX])[::-1]
    info = {
        "id": session.id,
        "key": session.key,
        "space": session.space.slug,
        "agent_id": session.agent_id,
        "title": session.title,
    }
    compiled, defused = defuse_json(handoff.compile_handoff(info, [rule_event(e) for e in rows]))
    compiled["defused"] = defused
    result = Handoff(json=compiled, markdown=handoff.render_markdown(compiled))
    cache.set(key, {"json": result.json, "markdown": result.markdown}, timeout=HANDOFF_CACHE_SECONDS)
    return result


def session_handoff(*, actor: Actor, session_id: str) -> Handoff:
    return handoff_of(session_get(actor=actor, session_id=session_id))


def latest_handoff(*, actor: Actor, space: str) -> Handoff:
    """The handoff of the space's session with the newest event: what the next session reads."""
    target = access.access_space(actor, slug=space)
    session = (
        AgentSession.objects.select_related("space")
        .filter(space=target, event_count__gt=0)
        .order_by("-last_event_at", "-id")
        .first()
    )
    if session is None:
        raise NotFound(f"No session with events in space '{space}'.")
    return handoff_of(session)


# --- cards ----------------------------------------------------------------------------


def effective_status(card: MemoryCard, at: datetime) -> str:
    return session_rules.effective_status(
        card.status, checked_at=card.checked_at, ttl_days=card.ttl_days, at=at
    )


def card_list(
    *,
    actor: Actor,
    spaces: list[str],
    session: str | None = None,
    card_type: str | None = None,
    status: str | None = None,
) -> QuerySet[MemoryCard]:
    """Cards in the spaces the caller reads. `status` filters on the stored status; the
    answer also states each card's effective one (TTL applied)."""
    queryset = access.restrict(MemoryCard.objects.select_related("space", "memory", "session"), actor)
    if spaces:
        queryset = queryset.filter(space__slug__in=spaces)
    if session:
        queryset = queryset.filter(session_id=session)
    if card_type:
        queryset = queryset.filter(card_type=card_type)
    if status:
        queryset = queryset.filter(status=status)
    visible = access.restrict(Memory.objects.all(), actor).values("pk")
    return queryset.filter(memory__in=visible).prefetch_related("evidence").order_by("-evidence_until", "id")


def card_get(*, actor: Actor, card_id: str) -> MemoryCard:
    card = access.access_object(
        MemoryCard.objects.select_related("space", "memory", "session"), actor, pk=card_id, label="card"
    )
    if (
        card.memory_id is None
        or not access.restrict(Memory.objects.filter(pk=card.memory_id), actor).exists()
    ):
        raise NotFound(f"No card '{card_id}'.")
    return card


# --- what a context pack shows --------------------------------------------------------


def _card_entry(card: MemoryCard, at: datetime) -> dict[str, Any]:
    return {"card": card.id, "card_type": card.card_type, "status": effective_status(card, at)}


def pack_context(
    actor: Actor, spaces: list[str], memory_ids: list[str], as_of: datetime | None
) -> PackContext:
    """Active tasks, recent decisions, changed files and open questions of the spaces a
    recall read, and the validation status of the recalled memories that are cards."""
    at = as_of or timezone.now()
    context = PackContext()
    for card in MemoryCard.objects.filter(memory_id__in=memory_ids):
        context.cards[str(card.memory_id)] = _card_entry(card, at)
    space_ids = list(access.spaces_visible(actor).filter(slug__in=spaces).values_list("id", flat=True))
    if not space_ids:
        return context
    context.active_tasks = _active_tasks(actor, space_ids, at)
    context.recent_decisions = _recent_decisions(actor, space_ids, at)
    sessions = list(
        access.restrict(AgentSession.objects.select_related("space"), actor)
        .filter(space_id__in=space_ids, event_count__gt=0, first_event_at__lte=at)
        .order_by("-last_event_at", "-id")[:PACK_SESSIONS]
    )
    context.changed_files = _changed_files(sessions, at)
    context.open_questions = _open_questions(sessions, at)
    return context


def _active_tasks(actor: Actor, space_ids: list[int], at: datetime) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    executions = (
        access.restrict(PRDExecution.objects.select_related("space"), actor)
        .filter(
            space_id__in=space_ids,
            created_at__lte=at,
            status__in=[ExecutionStatus.IN_PROGRESS, ExecutionStatus.BLOCKED],
        )
        .order_by("-updated_at", "id")[:SECTION_ENTRIES]
    )
    for execution in executions:
        doing = execution.progress.get("in_progress", [])[:3]
        name = execution.title or execution.prd_ref
        entries.append(
            {
                "kind": "prd_execution",
                "id": execution.id,
                "title": name,
                "status": execution.status,
                "in_progress": doing,
                "space": execution.space.slug,
                "source": "prd",
                "at": _iso(execution.updated_at),
                "markdown": f"- PRD {name}: {execution.status}"
                + (f" (in progress: {', '.join(doing)})" if doing else "")
                + f" `{execution.id}`",
            }
        )
    visible = access.restrict(Memory.objects.all(), actor).filter(archived=False).values("pk")
    cards = (
        MemoryCard.objects.select_related("memory", "space")
        .filter(space_id__in=space_ids, card_type="task_state", memory__in=visible, evidence_until__lte=at)
        .exclude(status__in=[CardStatus.FAILED, CardStatus.STALE])
        .order_by("-evidence_until", "id")
    )
    for card in cards[: SECTION_ENTRIES * 2]:
        status = effective_status(card, at)
        if status in session_rules.EXCLUDED_FROM_PACKS or card.memory is None:
            continue
        entries.append(
            {
                "kind": "card",
                "id": card.id,
                "memory_id": card.memory_id,
                "title": card.memory.title,
                "status": status,
                "session": card.session_id,
                "space": card.space.slug,
                "source": "agent",
                "at": _iso(card.evidence_until),
                "markdown": f"- {card.memory.title} (task state, `{card.memory_id}`)",
            }
        )
        if len(entries) >= SECTION_ENTRIES * 2:
            break
    return entries


def _recent_decisions(actor: Actor, space_ids: list[int], at: datetime) -> list[dict[str, Any]]:
    # When it was decided: the time a memory states (occurred_at), else when it was stored.
    memories = (
        access.restrict(Memory.objects.select_related("space"), actor)
        .filter(space_id__in=space_ids, kind="decision", archived=False)
        .alias(decided=Coalesce("occurred_at", "created_at"))
        .filter(decided__lte=at)
        .order_by("-decided", "id")[: SECTION_ENTRIES * 2]
    )
    found = list(memories)
    cards = {c.memory_id: c for c in MemoryCard.objects.filter(memory_id__in=[m.id for m in found])}
    entries = []
    for memory in found:
        card = cards.get(memory.id)
        status = effective_status(card, at) if card else None
        if status in session_rules.EXCLUDED_FROM_PACKS:
            continue
        entries.append(
            {
                "id": memory.id,
                "decision": memory.title,
                "summary": memory.summary,
                "space": memory.space.slug,
                "card": card.id if card else None,
                "source": memory.source_type,
                "at": _iso(memory.occurred_at or memory.created_at),
                "markdown": f"- {memory.title}: {memory.summary} (`{memory.id}`)",
            }
        )
        if len(entries) >= SECTION_ENTRIES:
            break
    return entries


# The Markdown lines cite briefly (SAM's ids cost ~20 tokens each); the JSON entries carry
# the session and event of each line.
def _changed_files(sessions: list[AgentSession], at: datetime) -> list[dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    events = SessionEvent.objects.filter(session__in=sessions, event_type="file_change", ts__lte=at).order_by(
        "-ts", "-sequence"
    )
    for event in events[:500]:
        path = str((event.data or {}).get("path", ""))
        if not path:
            continue
        entry = files.get(path)
        if entry is None:
            files[path] = {
                "path": path,
                "change": event.data.get("change", "modified"),
                "changes": 1,
                "session": event.session_id,
                "event": event.event_id,
                "source": "files",
                "at": _iso(event.ts),
            }
        else:
            entry["changes"] += 1
    ranked = sorted(files.values(), key=lambda f: (f["at"], f["path"]), reverse=True)[:CHANGED_FILES]
    for entry in ranked:
        entry["markdown"] = f"- `{entry['path']}` {entry['change']} ({entry['changes']}×)"
    return ranked


def _open_questions(sessions: list[AgentSession], at: datetime) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    events = SessionEvent.objects.filter(
        session__in=sessions, ts__lte=at, event_type__in=["handoff", "summary", "chat_turn", "decision"]
    ).order_by("-ts", "-sequence")
    for event in events[:200]:
        for question in (event.data or {}).get("open_questions", []):
            if question in seen:
                continue
            seen.add(question)
            entries.append(
                {
                    "type": "session_question",
                    "question": question,
                    "session": event.session_id,
                    "events": [event.event_id],
                    "source": "agent",
                    "at": _iso(event.ts),
                    "markdown": f"- {question} [{event.event_id}]",
                }
            )
            if len(entries) >= SECTION_ENTRIES:
                return entries
    return entries
