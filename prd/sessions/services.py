"""Coding sessions, one import for callers (views, tasks, the admin, MCP): events in
prd.sessions.events, cards in prd.sessions.cards (docs/sessions.md)."""

from prd.sessions.cards import (
    CardInput,
    CardLinks,
    CompileOutcome,
    card_create,
    card_validate,
    rule_event,
    session_cards_compile,
)
from prd.sessions.events import (
    AppendedEvents,
    EventInput,
    SessionStart,
    ensure_writable,
    events_append,
    session_start,
)

__all__ = [
    "AppendedEvents", "CardInput", "CardLinks", "CompileOutcome", "EventInput", "SessionStart",
    "card_create", "card_validate", "ensure_writable", "events_append", "rule_event", "session_cards_compile",
    "session_start",
]
