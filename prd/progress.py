"""Progress of a PRD execution as a fold over its events (pure; no database).

Progress is never written directly: every append runs `apply` on the stored fold state
under the execution's row lock, and `replay` rebuilds the same state from the event log
(the property tests hold the two to each other). The rules, per requirement:

- requirement_started:   not_started -> in_progress
- requirement_completed: in_progress -> completed (fixes the requirement's open failures)
- blocker_hit:           not_started | in_progress | blocked -> blocked (a completed one: conflict)
- blocker_resolved:      closes one open blocker (the one named, else the oldest on that
                         requirement); with none left, the requirement returns to the
                         state it had before its first blocker
- rollback:              completed | in_progress -> in_progress; blocked stays blocked
                         (never started: conflict)
- test_failed, error_encountered: open a failure streak (no state change)
- test_passed:           closes the open failure streak of its requirement
- decision_made, revision, review_feedback, agent_handoff: no state change

An event without a requirement id acts on the execution as a whole: its blockers and
failures are tracked under the empty key and change no requirement's state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

NOT_STARTED = "not_started"
IN_PROGRESS = "in_progress"
BLOCKED = "blocked"
COMPLETED = "completed"
STATES = (COMPLETED, IN_PROGRESS, BLOCKED, NOT_STARTED)

NEEDS_REQUIREMENT = frozenset({"requirement_started", "requirement_completed"})


class TransitionRefused(Exception):
    """The event does not fit the current state. `conflict` is a 409, otherwise a 400."""

    def __init__(self, message: str, *, field: str = "type", conflict: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.conflict = conflict


@dataclass(frozen=True)
class EventFacts:
    """What the fold needs of an event: no text, so it is cheap to load for a replay."""

    id: str
    type: str
    requirement_id: str = ""
    resolves: str | None = None  # a blocker named explicitly by blocker_resolved


@dataclass
class Outcome:
    """What applying one event did: the requirement it acted on and what it closed."""

    requirement_id: str
    resolves: str | None = None


def natural_key(requirement: str) -> tuple:
    """Sort R2 before R10: digit runs compare as numbers (odd positions of the split)."""
    parts = re.split(r"(\d+)", requirement)
    return tuple(int(p) if i % 2 else p.lower() for i, p in enumerate(parts))


@dataclass
class Fold:
    """The full state behind `progress`; round-trips through JSON (`to_json`/`from_json`).

    `status` holds the requirements some event named; `declared` the PRD's own list. The
    progress view is declared ones (in PRD order) then the others (natural order), so it
    depends only on the declared list and the events, never on when each was declared.
    """

    status: dict[str, str] = field(default_factory=dict)
    prior: dict[str, str] = field(default_factory=dict)
    declared: list[str] = field(default_factory=list)
    open_blockers: list[tuple[str, str]] = field(default_factory=list)  # (event id, requirement)
    open_failures: dict[str, str] = field(default_factory=dict)  # requirement -> first failure id

    # --- JSON -------------------------------------------------------------------------
    # Pairs and triples rather than objects: jsonb does not keep key order.

    def to_json(self) -> dict[str, Any]:
        return {
            "requirements": [[r, s, self.prior.get(r)] for r, s in self.status.items()],
            "declared": list(self.declared),
            "open_blockers": [list(b) for b in self.open_blockers],
            "open_failures": [[r, e] for r, e in self.open_failures.items()],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Fold:
        fold = cls()
        if not data:
            return fold
        for requirement, state, prior in data.get("requirements", []):
            fold.status[requirement] = state
            if prior:
                fold.prior[requirement] = prior
        fold.declared = list(data.get("declared", []))
        fold.open_blockers = [(e, r) for e, r in data.get("open_blockers", [])]
        fold.open_failures = {r: e for r, e in data.get("open_failures", [])}
        return fold

    # --- views ------------------------------------------------------------------------

    def requirements(self) -> list[str]:
        declared = set(self.declared)
        others = sorted((r for r in self.status if r not in declared), key=natural_key)
        return [*self.declared, *others]

    def progress(self) -> dict[str, list[str]]:
        """The progress shape: requirement ids per state (docs/prd.md, "Events and progress")."""
        lists: dict[str, list[str]] = {state: [] for state in STATES}
        for requirement in self.requirements():
            lists[self.state_of(requirement)].append(requirement)
        return lists

    def state_of(self, requirement: str) -> str:
        return self.status.get(requirement, NOT_STARTED)

    def open_blocker_ids(self) -> list[str]:
        return [event_id for event_id, _ in self.open_blockers]

    # --- changes ----------------------------------------------------------------------

    def declare(self, requirement_ids: Iterable[str]) -> None:
        """Make `requirement_ids` the PRD's list (a start, or a resume with a changed PRD).

        A requirement dropped from the PRD stays in progress if any event named it.
        """
        self.declared = list(dict.fromkeys(requirement_ids))

    def _know(self, requirement: str) -> None:
        if requirement and requirement not in self.status:
            self.status[requirement] = NOT_STARTED

    def apply(self, event: EventFacts) -> Outcome:
        """Apply one event, or raise TransitionRefused and leave the fold untouched."""
        requirement = event.requirement_id
        if event.type in NEEDS_REQUIREMENT and not requirement:
            raise TransitionRefused(f"A {event.type} event needs a requirement_id.",
                                    field="requirement_id", conflict=False)
        handler = getattr(self, f"_on_{event.type}", None)
        current = self.state_of(requirement) if requirement else None
        outcome = handler(event, current) if handler else Outcome(requirement_id=requirement)
        if requirement:
            self._know(requirement)
        return outcome

    def _on_requirement_started(self, event: EventFacts, current: str | None) -> Outcome:
        requirement = event.requirement_id
        if current != NOT_STARTED:
            hint = {
                IN_PROGRESS: "it is already in progress",
                BLOCKED: "it is blocked; resolve its blockers first",
                COMPLETED: "it is completed; append a rollback to reopen it",
            }[current or NOT_STARTED]
            raise TransitionRefused(f"Requirement '{requirement}' cannot start: {hint}.")
        self._know(requirement)
        self.status[requirement] = IN_PROGRESS
        return Outcome(requirement_id=requirement)

    def _on_requirement_completed(self, event: EventFacts, current: str | None) -> Outcome:
        requirement = event.requirement_id
        if current != IN_PROGRESS:
            hint = {
                NOT_STARTED: "it was never started (append requirement_started first)",
                BLOCKED: "it is blocked; resolve its blockers first",
                COMPLETED: "it is already completed",
            }[current or NOT_STARTED]
            raise TransitionRefused(f"Requirement '{requirement}' cannot complete: {hint}.")
        self.status[requirement] = COMPLETED
        return Outcome(requirement_id=requirement, resolves=self.open_failures.pop(requirement, None))

    def _on_blocker_hit(self, event: EventFacts, current: str | None) -> Outcome:
        requirement = event.requirement_id
        if current == COMPLETED:
            raise TransitionRefused(
                f"Requirement '{requirement}' is completed and cannot be blocked; "
                "append a rollback to reopen it first."
            )
        if requirement:
            self._know(requirement)
            if current != BLOCKED:
                self.prior[requirement] = current or NOT_STARTED
                self.status[requirement] = BLOCKED
        self.open_blockers.append((event.id, requirement))
        return Outcome(requirement_id=requirement)

    def _on_blocker_resolved(self, event: EventFacts, current: str | None) -> Outcome:
        if event.resolves:
            match = next((b for b in self.open_blockers if b[0] == event.resolves), None)
            if match is None:
                raise TransitionRefused(f"Blocker '{event.resolves}' is not open.", field="resolves")
            if event.requirement_id and match[1] != event.requirement_id:
                raise TransitionRefused(
                    f"Blocker '{event.resolves}' is on requirement '{match[1] or '(none)'}', "
                    f"not '{event.requirement_id}'.", field="requirement_id", conflict=False,
                )
        else:
            match = next((b for b in self.open_blockers if b[1] == event.requirement_id), None)
            if match is None:
                where = f"requirement '{event.requirement_id}'" if event.requirement_id else "the execution"
                raise TransitionRefused(f"There is no open blocker on {where}.")
        self.open_blockers.remove(match)
        requirement = match[1]
        if requirement and not any(r == requirement for _, r in self.open_blockers):
            self.status[requirement] = self.prior.pop(requirement, NOT_STARTED)
        return Outcome(requirement_id=requirement, resolves=match[0])

    def _on_rollback(self, event: EventFacts, current: str | None) -> Outcome:
        requirement = event.requirement_id
        started = current not in (NOT_STARTED, None) and not (
            current == BLOCKED and self.prior.get(requirement) == NOT_STARTED
        )
        if requirement and not started:
            raise TransitionRefused(f"Requirement '{requirement}' was never started; nothing to roll back.")
        if current == COMPLETED:
            self.status[requirement] = IN_PROGRESS
        return Outcome(requirement_id=requirement)

    def _on_test_failed(self, event: EventFacts, current: str | None) -> Outcome:
        self.open_failures.setdefault(event.requirement_id, event.id)
        return Outcome(requirement_id=event.requirement_id)

    _on_error_encountered = _on_test_failed

    def _on_test_passed(self, event: EventFacts, current: str | None) -> Outcome:
        return Outcome(requirement_id=event.requirement_id,
                       resolves=self.open_failures.pop(event.requirement_id, None))


def replay(events: Iterable[EventFacts], *, declared: Iterable[str] = ()) -> Fold:
    """The fold of a whole log, as stored events give it (refused events are never stored)."""
    fold = Fold()
    fold.declare(declared)
    for event in events:
        fold.apply(event)
    return fold
