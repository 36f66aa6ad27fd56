"""The mechanism of the prd app's append-only event logs: a PRD execution's events
(prd.services.executions) and a coding session's (prd.sessions.events).

Each log keeps its own rules: what an event is, when a retry sends the same event, what an
append changes on the log's parent (the execution, the session) and which job follows it.
What they share is here:

- a logged row is written once (`AppendOnly`);
- an append holds its parent's row lock (`lock_parent`) until its transaction ends, which
  serialises the appends to one log;
- so the new events can be numbered on from the parent's `event_count` (`number`);
- a key the client chose (a PRD event's idempotency key, a session event's event_id) makes a
  retry safe: sent again with the same content it answers with the stored event and writes
  nothing, with other content it is a 409 (`replay`).

Each log asks the memory mode under the lock, and an incognito append rolls back once it
has its answer (governance.policy.keep_or_discard), like any write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from django.db import models

from core.actor import Actor
from core.errors import Conflict
from governance import access

M = TypeVar("M", bound=models.Model)
E = TypeVar("E")


class AppendOnlyError(RuntimeError):
    """Raised when code tries to change or delete a row of an append-only log."""


class AppendOnly(models.Model):
    """Rows that are written once. Saving an existing row or deleting one raises.

    Deleting a whole execution or session still removes its log (a cascade, not a row
    delete); the admin offers no change or delete for these rows. The database backs this
    up: a trigger refuses any UPDATE of a column but the sealed ones, which key rotation
    re-seals (prd/migrations/0002_append_only_log_triggers.py for PRD events and decisions,
    0005_sessions_and_cards.py for session events).
    """

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError(f"{type(self).__name__} rows are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise AppendOnlyError(f"{type(self).__name__} rows are append-only.")


class LogParent(Protocol):
    """What a log's parent row holds of its log: how many events it has."""

    event_count: int


class LogEvent(Protocol):
    """What every logged event has: its place in the log (1, 2, 3...)."""

    sequence: int


def locked(model: type[M]) -> models.QuerySet[M]:
    """`model`'s rows, each locked FOR NO KEY UPDATE (the row alone, not its space) when read,
    with its space. NO KEY: prd.services' docstring says why."""
    return model._default_manager.select_for_update(no_key=True, of=("self",)).select_related("space")


def lock_parent(model: type[M], actor: Actor, *, pk: str, label: str) -> M:
    """The parent row `pk` of a log, locked until the transaction ends, once the gateway lets
    `actor` write it. Raises NotFound (404) for a row the actor cannot see ("No {label} 'pk'.")
    and Forbidden (403) for one it may only read."""
    return access.access_object(locked(model), actor, pk=pk, action="write", label=label)


def number(parent: LogParent, events: Sequence[LogEvent]) -> None:
    """Number `events`, new to the parent's log, on from its last event, in order; the parent's
    `event_count` follows (the caller saves it with the other fields its append moves).

    Precondition: the parent was locked (`lock_parent`) in this transaction, so no other
    append can take the same numbers before this one commits.
    """
    for sequence, event in enumerate(events, start=parent.event_count + 1):
        event.sequence = sequence
    parent.event_count += len(events)


def replay(stored: E, *, same: bool, conflict: Conflict) -> E:
    """The answer to a key sent again: the event stored under it when the retry sent the same
    content (`same`), else `conflict` (409), since a key names one event only."""
    if not same:
        raise conflict
    return stored
