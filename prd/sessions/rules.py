"""What a coding session's events mean: the memory cards they compile into, and what later
events say about cards already made (pure; docs/sessions.md, "Memory cards").

Events are the record of what happened; cards are the few claims worth carrying into the
next session, each citing the events it rests on. The rules are explicit and extractive:

| events                                                   | card         |
|----------------------------------------------------------|--------------|
| `decision`                                               | decision     |
| a test that failed, then passed                          | gotcha       |
| a command that failed, then succeeded                    | gotcha       |
| a command that succeeded twice or more                   | procedure    |
| `handoff`, `summary`                                     | task_state   |

Validation reads the events after a card's evidence: a procedure's command failing again
fails the card, succeeding again checks it; a change to the file a card is scoped to makes
it stale; a newer task state of the same session makes the older one stale. A card also
goes stale when it was last checked longer ago than its type's TTL (`effective_status`).
Each planned card has a unique `key`, so compiling a session again forms nothing twice.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

CARD_TYPES = ("decision", "project_fact", "procedure", "gotcha", "task_state", "glossary")
MEMORY_TYPE = {
    "decision": "semantic",
    "project_fact": "semantic",
    "procedure": "procedural",
    "gotcha": "procedural",
    "task_state": "episodic",
    "glossary": "semantic",
}
# How long a card stays valid without a new check (seed 004 leaves the defaults open).
TTL_DAYS = {
    "decision": 90,
    "project_fact": 60,
    "procedure": 30,
    "gotcha": 90,
    "task_state": 7,
    "glossary": 365,
}
# Statuses a deterministic pack leaves out unless asked for them.
EXCLUDED_FROM_PACKS = frozenset({"failed", "stale"})

FAILING_TESTS = frozenset({"failed", "error"})
CLAIM_MAX = 300
BODY_MAX = 2000
EVIDENCE_BETWEEN_MAX = 5
# Commands that put work somewhere others see it: what a handoff calls "shipped".
SHIPPING = re.compile(
    r"^(git (commit|push|merge|tag)|gh (pr (create|merge)|release)|npm publish|yarn publish|"
    r"twine upload|cargo publish|docker push|kubectl apply|helm (install|upgrade)|"
    r"make (deploy|release|publish))\b"
)


@dataclass(frozen=True)
class Event:
    """One stored session event, unsealed, as the rules read it."""

    id: str  # SAM's id (sev_…)
    event_id: str  # the client's id, cited in handoffs
    session_id: str
    sequence: int
    event_type: str
    ts: datetime
    text: str = ""
    role: str = ""
    source: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    entities: tuple[str, ...] = ()
    task_refs: tuple[str, ...] = ()

    @property
    def command(self) -> str:
        return normalize_command(str(self.data.get("command") or self.text))

    @property
    def exit_code(self) -> int | None:
        code = self.data.get("exit_code")
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    @property
    def test_name(self) -> str:
        return str(self.data.get("name") or "tests")

    @property
    def path(self) -> str:
        return str(self.data.get("path") or (self.entities[0] if self.entities else ""))


@dataclass(frozen=True)
class PlannedCard:
    key: str
    card_type: str
    claim: str
    body: str
    evidence: tuple[Event, ...]
    command: str = ""
    scope_path: str = ""

    @property
    def evidence_until(self) -> datetime:
        return max(e.ts for e in self.evidence)


@dataclass(frozen=True)
class CardFacts:
    """What validation needs to know of a stored card."""

    id: str
    card_type: str
    session_id: str | None
    evidence_until: datetime
    command: str = ""
    scope_path: str = ""


@dataclass(frozen=True)
class Verdict:
    card_id: str
    status: str
    validator: str
    event: Event | None
    note: str


def normalize_command(command: str) -> str:
    return " ".join(command.split())[:200]


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def digest(value: str) -> str:
    """A short stable key part for a command or test name (never shown, never a secret)."""
    return hashlib.sha256(value.encode()).hexdigest()[:16]


def command_failed(event: Event) -> bool:
    return event.event_type == "command_run" and event.exit_code not in (None, 0)


def command_succeeded(event: Event) -> bool:
    return event.event_type == "command_run" and event.exit_code == 0


def test_status(event: Event) -> str:
    return str(event.data.get("status", "")) if event.event_type == "test_result" else ""


def shipped(event: Event) -> bool:
    return (command_succeeded(event) and bool(SHIPPING.match(event.command))) or bool(
        event.data.get("shipped") is True
    )


def _files_between(events: Sequence[Event], start: int, end: int) -> list[Event]:
    return [e for e in events if start < e.sequence < end and e.event_type == "file_change"]


def _fix_card(kind: str, subject: str, failure: Event, fix: Event, events: Sequence[Event]) -> PlannedCard:
    between = _files_between(events, failure.sequence, fix.sequence)
    paths = sorted({e.path for e in between if e.path})
    reason = first_line(failure.text) or (f"exit {failure.exit_code}" if failure.exit_code else "failed")
    changed = f" after changes to {', '.join(paths[:5])}" if paths else ""
    label = "Test" if kind == "test" else "Command"
    claim = clip(f"{label} `{subject}` failed ({reason}); it passed again{changed}.", CLAIM_MAX)
    body = clip(f"{claim} Failure: {failure.text}", BODY_MAX)
    return PlannedCard(
        key=f"session:{failure.session_id}:fix:{failure.id}",
        card_type="gotcha",
        claim=claim,
        body=body,
        evidence=(failure, *between[:EVIDENCE_BETWEEN_MAX], fix),
        command=subject if kind == "command" else "",
    )


def plan_cards(events: Sequence[Event]) -> list[PlannedCard]:
    """The cards a session's events (in sequence order) compile into. Deterministic."""
    planned: list[PlannedCard] = []
    open_tests: dict[str, Event] = {}
    open_commands: dict[str, Event] = {}
    successes: dict[str, list[Event]] = {}
    for event in events:
        kind = event.event_type
        if kind == "decision":
            decision = str(event.data.get("decision") or event.text)
            reason = str(event.data.get("reason") or "")
            claim = clip(decision, CLAIM_MAX)
            body = clip(f"{decision} Because: {reason}" if reason else decision, BODY_MAX)
            planned.append(
                PlannedCard(
                    key=f"session:{event.session_id}:decision:{event.id}",
                    card_type="decision",
                    claim=claim,
                    body=body,
                    evidence=(event,),
                )
            )
        elif kind in ("handoff", "summary") and event.text.strip():
            steps = [str(s) for s in event.data.get("next_steps", []) if isinstance(s, str)]
            body = event.text + ("\nNext: " + "; ".join(steps) if steps else "")
            planned.append(
                PlannedCard(
                    key=f"session:{event.session_id}:task_state:{event.id}",
                    card_type="task_state",
                    claim=clip(event.text, CLAIM_MAX),
                    body=clip(body, BODY_MAX),
                    evidence=(event,),
                )
            )
        elif kind == "test_result":
            status = test_status(event)
            if status in FAILING_TESTS:
                open_tests.setdefault(event.test_name, event)
            elif status == "passed" and event.test_name in open_tests:
                failure = open_tests.pop(event.test_name)
                planned.append(_fix_card("test", event.test_name, failure, event, events))
        elif kind == "command_run" and event.command:
            if command_failed(event):
                open_commands.setdefault(event.command, event)
            elif command_succeeded(event):
                if event.command in open_commands:
                    failure = open_commands.pop(event.command)
                    planned.append(_fix_card("command", event.command, failure, event, events))
                runs = successes.setdefault(event.command, [])
                runs.append(event)
                if len(runs) == 2:
                    planned.append(_procedure(event.command, runs))
    return planned


def _procedure(command: str, runs: list[Event]) -> PlannedCard:
    first = runs[0]
    what = first_line(first.text) if first.text and normalize_command(first.text) != command else ""
    claim = clip(f"Run `{command}`" + (f": {what}" if what else " (it succeeds in this project)."), CLAIM_MAX)
    return PlannedCard(
        key=f"session:{first.session_id}:procedure:{digest(command)}",
        card_type="procedure",
        claim=claim,
        body=clip(claim, BODY_MAX),
        evidence=tuple(runs),
        command=command,
    )


def validate(cards: Iterable[CardFacts], events: Sequence[Event]) -> list[Verdict]:
    """What the events say about each card: the newest verdict per card, if any.

    Only events after a card's newest evidence count. Events are in time order (the
    caller merges sessions by `ts`, then sequence).
    """
    verdicts: list[Verdict] = []
    newest_task_state: dict[str, datetime] = {}
    cards = list(cards)
    for card in cards:
        if card.card_type == "task_state" and card.session_id:
            newest_task_state[card.session_id] = max(
                card.evidence_until, newest_task_state.get(card.session_id, card.evidence_until)
            )
    for card in cards:
        verdict = None
        for event in events:
            if event.ts <= card.evidence_until:
                continue
            if (
                card.card_type == "procedure"
                and card.command
                and event.event_type == "command_run"
                and event.command == card.command
                and event.exit_code is not None
            ):
                if event.exit_code == 0:
                    verdict = Verdict(
                        card.id,
                        "pass",
                        "sam.rules.command_rerun",
                        event,
                        f"`{card.command}` succeeded again.",
                    )
                else:
                    verdict = Verdict(
                        card.id,
                        "failed",
                        "sam.rules.command_rerun",
                        event,
                        f"`{card.command}` failed (exit {event.exit_code}).",
                    )
            if card.scope_path and event.event_type == "file_change" and event.path == card.scope_path:
                verdict = Verdict(
                    card.id,
                    "stale",
                    "sam.rules.file_changed",
                    event,
                    f"{card.scope_path} changed after this card was made.",
                )
        if (
            card.card_type == "task_state"
            and card.session_id
            and newest_task_state[card.session_id] > card.evidence_until
        ):
            verdict = Verdict(
                card.id,
                "stale",
                "sam.rules.newer_task_state",
                None,
                "A newer task state of the same session replaces it.",
            )
        if verdict is not None:
            verdicts.append(verdict)
    return verdicts


def effective_status(status: str, *, checked_at: datetime, ttl_days: int, at: datetime) -> str:
    """The status a card has at `at`: stale once its last check is older than its TTL."""
    if status in ("pass", "unchecked") and ttl_days > 0 and at - checked_at > timedelta(days=ttl_days):
        return "stale"
    return status
