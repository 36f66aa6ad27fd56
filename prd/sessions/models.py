"""Coding sessions: an agent's append-only event log, the memory cards compiled from it and
the checks of each card (docs/sessions.md).

Every storage-bound text here is written by prd.sessions.services only, so redaction and
encryption hook into one place. A card is a memory (recall, packs, curation, versions and
redaction apply as to any memory); MemoryCard holds what makes it a card: its type, the
events it rests on and whether it still holds.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from ulid import ULID

from core.models import Space
from governance.crypto.fields import SealedJSONField, SealedTextField
from memories.models import Memory
from prd import limits
from prd.event_log import AppendOnly


def new_session_id() -> str:
    return f"ses_{ULID()}"


def new_session_event_id() -> str:
    return f"sev_{ULID()}"


def new_card_id() -> str:
    return f"card_{ULID()}"


class SessionEventType(models.TextChoices):
    """Seed 004's event taxonomy (docs/sessions.md, "Events")."""

    CHAT_TURN = "chat_turn"
    VOICE_TRANSCRIPT = "voice_transcript"
    COMMAND_INTENT = "command_intent"
    COMMAND_RUN = "command_run"
    FILE_CHANGE = "file_change"
    TEST_RESULT = "test_result"
    DECISION = "decision"
    HANDOFF = "handoff"
    SUMMARY = "summary"
    ACTION_RUN = "action_run"


class EventSource(models.TextChoices):
    """Where an event came from; a pack's `source_mix` counts these."""

    CHAT = "chat"
    TERMINAL = "terminal"
    GIT = "git"
    FILES = "files"
    TESTS = "tests"
    DOCS = "docs"
    IMPORT = "import"
    AGENT = "agent"


class EventRole(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class CardType(models.TextChoices):
    DECISION = "decision"
    PROJECT_FACT = "project_fact"
    PROCEDURE = "procedure"
    GOTCHA = "gotcha"
    TASK_STATE = "task_state"
    GLOSSARY = "glossary"


class CardStatus(models.TextChoices):
    UNCHECKED = "unchecked"
    PASS = "pass"
    FAILED = "failed"
    STALE = "stale"


class AgentSession(models.Model):
    """One working session of an agent (or a person) in one space.

    `key` is the client's own id for the session (unique per space), so an agent that
    restarts resumes the same session. `cards_through` is the sequence of the newest event
    whose cards are compiled; compilation runs in a job until it reaches `event_count`.
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_session_id, editable=False)
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="agent_sessions")
    key = models.CharField(max_length=limits.SESSION_KEY_MAX, null=True, blank=True)
    title = SealedTextField(blank=True, default="")
    agent_id = models.CharField(max_length=limits.AGENT_ID_MAX, blank=True, default="")
    event_count = models.PositiveIntegerField(default=0)
    cards_through = models.PositiveIntegerField(default=0)
    first_event_at = models.DateTimeField(null=True, blank=True)
    last_event_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "agent session"
        ordering = ["-updated_at", "id"]
        indexes = [
            models.Index(fields=["space", "-last_event_at"], name="session_space_recent"),
            models.Index(fields=["id"], name="session_cards_pending",
                         condition=Q(event_count__gt=F("cards_through"))),
        ]
        constraints = [
            models.UniqueConstraint(fields=["space", "key"], name="session_key_unique",
                                    condition=Q(key__isnull=False)),
        ]

    def __str__(self) -> str:
        return self.key or self.id

    def sealing_space_id(self) -> int:
        return self.space_id


class SessionEvent(AppendOnly):
    """One event of a session, in seed 004's envelope. Append-only; `sequence` orders it.

    `event_id` is the client's id (unique per session): sending it again replays the
    stored event. `hash` is a keyed hash of the stored envelope (HMAC under the space's
    key), so equal events can be found without a dump revealing guesses about their text.
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_session_event_id, editable=False)
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="events")
    sequence = models.PositiveIntegerField()
    event_id = models.CharField(max_length=limits.EVENT_ID_MAX)
    event_type = models.CharField(max_length=24, choices=SessionEventType.choices)
    source = models.CharField(max_length=16, choices=EventSource.choices)
    role = models.CharField(max_length=16, blank=True, default="")
    ts = models.DateTimeField()
    text = SealedTextField(blank=True, default="")
    # Type-specific fields ({command, exit_code}, {path, change}, {name, status}, ...).
    data = SealedJSONField(default=dict, blank=True)
    # entities, task_refs, artifacts: file paths and ids are as telling as text.
    refs = SealedJSONField(default=dict, blank=True)
    # Sealed: read in Python (handoffs, packs), never in SQL, and a topic can name anything.
    topic_tags = SealedJSONField(default=list, blank=True)
    importance = models.FloatField(default=0.5)
    confidence = models.FloatField(default=1.0)
    hash = models.CharField(max_length=64)
    # What redaction removed before storage: [{path, kind, count}], no removed text.
    redactions = models.JSONField(default=list, blank=True)
    agent_id = models.CharField(max_length=limits.AGENT_ID_MAX, blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "session event"
        ordering = ["session", "sequence"]
        indexes = [
            models.Index(fields=["session", "event_type", "sequence"], name="session_event_type"),
            models.Index(fields=["session", "ts"], name="session_event_time"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["session", "sequence"], name="session_event_sequence_unique"),
            models.UniqueConstraint(fields=["session", "event_id"], name="session_event_id_unique"),
            models.CheckConstraint(condition=Q(event_type__in=SessionEventType.values),
                                   name="session_event_type_valid"),
            models.CheckConstraint(condition=Q(sequence__gte=1), name="session_event_sequence_positive"),
            models.CheckConstraint(condition=Q(importance__gte=0, importance__lte=1),
                                   name="session_event_importance_range"),
            models.CheckConstraint(condition=Q(confidence__gte=0, confidence__lte=1),
                                   name="session_event_confidence_range"),
        ]

    def __str__(self) -> str:
        return f"#{self.sequence} {self.event_type}"

    def sealing_space_id(self) -> int:
        return self.session.space_id


class MemoryCard(models.Model):
    """What makes a memory a card: its type, its evidence and whether it still holds.

    `key` is unique ("session:ses_…:decision:sev_…" for compiled cards, "card:card_…" for
    cards an agent states), so compiling again forms nothing twice. A curator may delete the
    memory; the card stays (memory null), so compilation does not bring it back.
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_card_id, editable=False)
    key = models.CharField(max_length=200, unique=True)
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="memory_cards")
    session = models.ForeignKey(AgentSession, null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="cards")
    memory = models.OneToOneField(Memory, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="card")
    card_type = models.CharField(max_length=16, choices=CardType.choices)
    evidence = models.ManyToManyField(SessionEvent, blank=True, related_name="cards")
    # Evidence beyond events: [{kind: "file"|"commit"|"url", ref}]. Sealed (paths tell).
    references = SealedJSONField(default=list, blank=True)
    scope_path = SealedTextField(blank=True, default="")
    scope_branch = SealedTextField(blank=True, default="")
    command = SealedTextField(blank=True, default="")
    evidence_until = models.DateTimeField()
    status = models.CharField(max_length=12, choices=CardStatus.choices, default=CardStatus.UNCHECKED)
    checked_at = models.DateTimeField()
    # Who checked: a rule of SAM's, a user, or any name a client gives. Sealed (never in SQL).
    validator = SealedTextField(blank=True, default="")
    ttl_days = models.PositiveIntegerField()
    error = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "memory card"
        ordering = ["-evidence_until", "id"]
        indexes = [
            models.Index(fields=["space", "card_type", "-evidence_until"], name="card_space_type"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(card_type__in=CardType.values), name="card_type_valid"),
            models.CheckConstraint(condition=Q(status__in=CardStatus.values), name="card_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.card_type} card {self.id}"

    def sealing_space_id(self) -> int:
        return self.space_id


class CardValidation(models.Model):
    """One check of a card, by a rule of SAM's or by whoever called the API. Append-only in
    practice: the card's status is the newest check's."""

    card = models.ForeignKey(MemoryCard, on_delete=models.CASCADE, related_name="validations")
    status = models.CharField(max_length=12, choices=CardStatus.choices)
    validator = SealedTextField()
    note = SealedTextField(blank=True, default="")
    event = models.ForeignKey(SessionEvent, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="validations")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    checked_at = models.DateTimeField()

    class Meta:
        verbose_name = "card validation"
        ordering = ["card", "-checked_at", "-id"]

    def __str__(self) -> str:
        # Not the validator: it is sealed, and Django's admin log stores str() in plaintext.
        return f"{self.status} check of card {self.card_id}"

    def sealing_space_id(self) -> int:
        return self.card.space_id
