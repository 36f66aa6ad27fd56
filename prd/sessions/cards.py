"""Memory cards: compiled from a session's events (rules in prd.sessions.rules), stated by
agents and people, and checked (docs/sessions.md, "Memory cards").

Cards are memories, formed through memories.services as SYSTEM by a job, like PRD
formation; MemoryCard rows hold their type, evidence and validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest
from django.utils import timezone
from ulid import ULID

from core.actor import Actor
from governance import access, policy
from governance.access import SYSTEM
from governance.audit.services import audit_record
from memories import services as memory_services
from memories.normalize import clean_content, clean_line
from prd import formation, limits
from prd.models import (
    AgentSession,
    CardStatus,
    CardValidation,
    MemoryCard,
    SessionEvent,
)
from prd.services.common import (
    advisory_lock,
    collecting_redactions,
    invalid,
    redact,
    writable,
)
from prd.services.memory_formation import FormationOutcome, Gate, form, formation_gate
from prd.sessions import rules as session_rules

# --- cards ----------------------------------------------------------------------------


def rule_event(event: SessionEvent) -> session_rules.Event:
    refs = event.refs or {}
    return session_rules.Event(
        id=event.id,
        event_id=event.event_id,
        session_id=event.session_id,
        sequence=event.sequence,
        event_type=event.event_type,
        ts=event.ts,
        text=event.text,
        role=event.role,
        source=event.source,
        data=event.data or {},
        entities=tuple(refs.get("entities", ())),
        task_refs=tuple(refs.get("task_refs", ())),
    )


def _memory_item(
    space_slug: str,
    card_type: str,
    claim: str,
    body: str,
    *,
    source_ref: str,
    occurred_at: datetime,
    tags: tuple[str, ...] = (),
) -> dict[str, Any]:
    return {
        "space": space_slug,
        "title": formation.memory_title(claim),
        "content": formation.memory_content(body or claim),
        "memory_type": session_rules.MEMORY_TYPE[card_type],
        "kind": card_type,
        "tags": formation.memory_tags("card", card_type, *tags),
        "reliability": "inferred",
        "source": {"type": "derived", "ref": source_ref, "uri": None},
        "occurred_at": occurred_at,
        "metadata": {"card": {"card_type": card_type}},
    }


class CardLinks:
    """Formation's link store for cards: each planned card becomes a MemoryCard row with its
    evidence, whether or not its memory was kept."""

    def __init__(self, space_id: int, session_id: str | None, cards: dict[str, session_rules.PlannedCard]):
        self.space_id = space_id
        self.session_id = session_id
        self.cards = cards

    def existing(self, keys: list[str]) -> set[str]:
        return set(MemoryCard.objects.filter(key__in=keys).values_list("key", flat=True))

    def newest_memory(self, plan: formation.Planned) -> str | None:
        if self.session_id is None:
            return None
        return (MemoryCard.objects.filter(session_id=self.session_id).exclude(memory=None).order_by("-id")
                .values_list("memory_id", flat=True).first())

    def write(self, links: list[tuple[formation.Planned, str | None, str]]) -> list[Any]:
        rows = []
        now = timezone.now()
        for plan, memory_id, error in links:
            card = self.cards[plan.key]
            rows.append(
                MemoryCard(
                    key=plan.key,
                    space_id=self.space_id,
                    session_id=self.session_id,
                    memory_id=memory_id,
                    card_type=card.card_type,
                    scope_path=card.scope_path,
                    command=card.command,
                    evidence_until=card.evidence_until,
                    checked_at=now,
                    ttl_days=session_rules.TTL_DAYS[card.card_type],
                    error=error[:500],
                )
            )
        created = MemoryCard.objects.bulk_create(rows)
        through = MemoryCard.evidence.through
        through.objects.bulk_create(
            [
                through(memorycard_id=row.id, sessionevent_id=event.id)
                for row in created
                for event in self.cards[row.key].evidence
            ]
        )
        return created


@dataclass
class CompileOutcome:
    formed: int = 0
    skipped: int = 0
    deferred: bool = False
    validations: int = 0


def session_cards_compile(*, session_id: str) -> CompileOutcome:
    """Compile the session's events into cards and check the space's cards against them.

    Safe to run twice: cards are keyed, and a check already recorded for the same card,
    event and status is not recorded again. Keeps going until it has caught up with
    events appended while it ran.
    """
    total = CompileOutcome()
    while True:
        with transaction.atomic():
            advisory_lock(f"session-cards:{session_id}")
            session = AgentSession.objects.select_related("space").filter(pk=session_id).first()
            if session is None:
                return total
            watermark = session.event_count
            events = [
                rule_event(e) for e in session.events.filter(sequence__lte=watermark).order_by("sequence")
            ]
            planned = session_rules.plan_cards(events)
            cards = {p.key: p for p in planned}
            plans = [
                formation.Planned(
                    key=p.key,
                    rule=p.card_type,
                    item=_memory_item(
                        session.space.slug,
                        p.card_type,
                        p.claim,
                        p.body,
                        source_ref=f"session:{session.id}",
                        occurred_at=p.evidence_until,
                    ),
                )
                for p in planned
            ]
            gate = formation_gate(session.space)
            outcome: FormationOutcome = form(
                plans, gate=gate, links=CardLinks(session.space_id, session.id, cards)
            )
            total.formed += len(outcome.formed)
            total.skipped += outcome.skipped
            if outcome.deferred or gate is Gate.DEFER:
                total.deferred = True
                return total
            total.validations += _validate_space_cards(session.space_id, events)
        with transaction.atomic():
            rows = AgentSession.objects.filter(pk=session_id)
            rows.update(cards_through=Greatest(F("cards_through"), Value(watermark)))
            if rows.values_list("event_count", flat=True).get() <= watermark:
                return total


def _validate_space_cards(space_id: int, events: list[session_rules.Event]) -> int:
    if not events:
        return 0
    newest = max(e.ts for e in events)
    candidates = list(
        MemoryCard.objects.filter(space_id=space_id, evidence_until__lt=newest).exclude(
            status=CardStatus.FAILED
        )
    )
    facts = [
        session_rules.CardFacts(
            id=c.id,
            card_type=c.card_type,
            session_id=c.session_id,
            evidence_until=c.evidence_until,
            command=c.command,
            scope_path=c.scope_path,
        )
        for c in candidates
    ]
    # Task states of the same session compete even when older than these events.
    facts += [
        session_rules.CardFacts(
            id=c.id, card_type=c.card_type, session_id=c.session_id, evidence_until=c.evidence_until
        )
        for c in MemoryCard.objects.filter(
            space_id=space_id,
            card_type="task_state",
            session_id__in={e.session_id for e in events},
            evidence_until__gte=newest,
        )
    ]
    written = 0
    by_id = {c.id: c for c in MemoryCard.objects.select_related("space").filter(pk__in=[f.id for f in facts])}
    for verdict in session_rules.validate(facts, events):
        card = by_id[verdict.card_id]
        event_pk = verdict.event.id if verdict.event else None
        if (
            card.status == verdict.status
            and CardValidation.objects.filter(card=card, status=verdict.status, event_id=event_pk).exists()
        ):
            continue
        _record_check(
            card,
            status=verdict.status,
            validator=verdict.validator,
            note=verdict.note,
            event_pk=event_pk,
            actor=SYSTEM,
            checked_at=verdict.event.ts if verdict.event else timezone.now(),
        )
        written += 1
    return written


def _record_check(
    card: MemoryCard,
    *,
    status: str,
    validator: str,
    note: str,
    event_pk: str | None,
    actor: Actor,
    checked_at: datetime,
) -> CardValidation:
    check = CardValidation.objects.create(
        card=card,
        status=status,
        validator=validator,
        note=note,
        event_id=event_pk,
        created_by=access.user_or_none(actor),
        checked_at=checked_at,
    )
    before = card.status
    card.status, card.validator, card.checked_at = status, validator, checked_at
    card.save(update_fields=["status", "validator", "checked_at", "updated_at"])
    audit_record(
        "edit",
        actor=actor,
        space=card.space,
        target=card,
        before={"status": before},
        after={"status": status, "validator": validator},
    )
    return check


def card_validate(
    *, actor: Actor, card_id: str, status: str, validator: str = "", note: str = "", event: str | None = None
) -> MemoryCard:
    """Record a check of a card by the caller: pass, failed or stale, with a note and the
    session event that shows it (an event of the card's space)."""
    if status not in (CardStatus.PASS, CardStatus.FAILED, CardStatus.STALE):
        raise invalid("status", "Must be one of pass, failed, stale.")
    with collecting_redactions():
        cleaned_note = redact(clean_content(note or ""), path="note")
    if len(cleaned_note) > limits.VALIDATION_NOTE_MAX:
        raise invalid("note", f"Must be at most {limits.VALIDATION_NOTE_MAX} characters.")
    with transaction.atomic():
        queryset = MemoryCard.objects.select_for_update(of=("self",)).select_related("space")
        card = access.access_object(queryset, actor, pk=card_id, action="write", label="card")
        outcome = writable(actor, card.space)
        event_row = None
        if event:
            event_row = (
                SessionEvent.objects.filter(session__space_id=card.space_id)
                .filter(event_id=event)
                .order_by("-ts")
                .first()
                or SessionEvent.objects.filter(session__space_id=card.space_id, pk=event).first()
            )
            if event_row is None:
                raise invalid("event", f"No session event '{event}' in this card's space.")
        who = clean_line(validator) or f"user:{getattr(access.user_or_none(actor), 'username', 'token')}"
        _record_check(
            card,
            status=status,
            validator=who[:100],
            note=cleaned_note,
            event_pk=event_row.id if event_row else None,
            actor=actor,
            checked_at=timezone.now(),
        )
        policy.keep_or_discard(outcome)
    return card


@dataclass(frozen=True)
class CardInput:
    space: str
    card_type: str
    claim: str
    body: str = ""
    session: str | None = None
    evidence: tuple[str, ...] = ()
    scope_path: str = ""
    scope_branch: str = ""
    ttl_days: int | None = None


def card_create(*, actor: Actor, data: CardInput) -> MemoryCard:
    """A card an agent or a person states, citing the session events it rests on.

    The card's memory is written with the caller's rights (memories.services), so roles,
    modes and redaction apply as to any memory.
    """
    if data.card_type not in session_rules.CARD_TYPES:
        raise invalid("card_type", f"Must be one of {', '.join(session_rules.CARD_TYPES)}.")
    space = access.access_space(actor, slug=data.space, action="write")
    with collecting_redactions():
        claim = redact(clean_line(data.claim), path="claim")
        body = redact(clean_content(data.body or ""), path="body")
        scope_path = redact(clean_line(data.scope_path or ""), path="scope.path")
    if not limits.CLAIM[0] <= len(claim) <= limits.CLAIM[1]:
        raise invalid("claim", f"Must be 1 to {limits.CLAIM[1]} characters.")
    if len(body) > limits.CARD_BODY_MAX:
        raise invalid("body", f"Must be at most {limits.CARD_BODY_MAX} characters.")
    with transaction.atomic():
        session = None
        if data.session:
            session = AgentSession.objects.filter(space=space, pk=data.session).first()
            if session is None:
                raise invalid("session", f"No session '{data.session}' in space '{space.slug}'.")
        events = list(
            SessionEvent.objects.filter(session__space=space)
            .filter(**({"session": session} if session else {}))
            .filter(event_id__in=list(data.evidence))
        )
        found = {e.event_id for e in events}
        missing = [e for e in data.evidence if e not in found]
        if missing:
            raise invalid(
                "evidence",
                f"No session event {', '.join(missing[:5])} in this space"
                + (" and session." if session else "."),
            )
        until = max((e.ts for e in events), default=timezone.now())
        # A card is its own record (evidence, checks): never folded into another memory.
        written = memory_services.memory_create(
            actor=actor,
            check_duplicates=False,
            data=_memory_item(
                space.slug,
                data.card_type,
                claim,
                body,
                source_ref=f"session:{session.id}" if session else "card",
                occurred_at=until,
            ),
        )
        now = timezone.now()
        card = MemoryCard.objects.create(
            key=f"card:{ULID()}",
            space=space,
            session=session,
            memory=written.instance if written.persisted else None,
            card_type=data.card_type,
            scope_path=scope_path,
            scope_branch=clean_line(data.scope_branch or "")[: limits.BRANCH_MAX],
            evidence_until=until,
            checked_at=now,
            ttl_days=data.ttl_days if data.ttl_days is not None else session_rules.TTL_DAYS[data.card_type],
        )
        card.evidence.set(events)
        audit_record(
            "create",
            actor=actor,
            space=space,
            target=card,
            after={"card_type": card.card_type, "evidence": sorted(found)},
        )
    return card


def cards_ttl_check(*, dry_run: bool = False) -> int:
    """Record as stale every card whose last check is older than its TTL (packs already
    treat them so; this makes the status the API, the admin and filters show agree).
    Returns how many cards went stale."""
    now = timezone.now()
    aging = MemoryCard.objects.select_related("space").filter(
        status__in=[CardStatus.PASS, CardStatus.UNCHECKED], ttl_days__gt=0)
    stale = [c for c in aging.iterator() if session_rules.effective_status(
        c.status, checked_at=c.checked_at, ttl_days=c.ttl_days, at=now) == CardStatus.STALE]
    if not dry_run:
        for card in stale:
            with transaction.atomic():
                _record_check(card, status=CardStatus.STALE, validator="sam.rules.ttl",
                              note=f"last checked more than {card.ttl_days} days ago", event_pk=None,
                              actor=SYSTEM, checked_at=now)
    return len(stale)
