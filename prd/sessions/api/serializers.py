"""Shapes of the sessions and cards API (docs/sessions.md). Shape only; rules live in
prd.sessions.services."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework import serializers

from core.api.fields import (
    BoundedJSONObjectField,
    JSONInputSerializer,
    QueryParamsSerializer,
    RFC3339DateTimeField,
)
from core.api.parsers import MAX_JSON_DEPTH
from prd import limits
from prd.models import (
    AgentSession,
    CardStatus,
    CardType,
    EventRole,
    EventSource,
    MemoryCard,
    SessionEvent,
    SessionEventType,
)
from prd.sessions import rules as session_rules


def _text(max_length: int, **kwargs: Any) -> serializers.CharField:
    return serializers.CharField(required=False, allow_blank=True, max_length=max_length, **kwargs)


def _strings(max_items: int, max_length: int, help_text: str) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=max_length, allow_blank=False),
        required=False,
        default=list,
        max_length=max_items,
        help_text=help_text,
    )


# --- sessions -------------------------------------------------------------------------


class SessionStartInputSerializer(JSONInputSerializer):
    space = serializers.SlugField(max_length=80)
    key = serializers.CharField(
        required=False,
        allow_null=True,
        max_length=limits.SESSION_KEY_MAX,
        help_text="Your own id for the session (unique in the space): starting "
        "again with the same key resumes it",
    )
    title = _text(limits.TITLE_MAX, default="")
    agent_id = _text(limits.AGENT_ID_MAX, default="")


class SessionListQuerySerializer(QueryParamsSerializer):
    space = serializers.CharField(required=False, help_text="Comma-separated space slugs")


class SessionOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    key = serializers.CharField(allow_null=True)
    space = serializers.CharField(source="space.slug")
    title = serializers.CharField()
    agent_id = serializers.CharField()
    event_count = serializers.IntegerField()
    cards_pending = serializers.SerializerMethodField(help_text="Events not yet compiled into cards")
    first_event_at = serializers.DateTimeField(allow_null=True)
    last_event_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()

    def get_cards_pending(self, session: AgentSession) -> int:
        return max(0, session.event_count - session.cards_through)


class SessionStartOutputSerializer(serializers.Serializer):
    session = SessionOutputSerializer()
    created = serializers.BooleanField()
    redaction_report = serializers.ListField(child=serializers.DictField())


# --- events ---------------------------------------------------------------------------


class ArtifactSerializer(JSONInputSerializer):
    kind = serializers.CharField(max_length=40, help_text="file, commit, url, ...")
    ref = serializers.CharField(max_length=1000)


class SessionEventInputSerializer(JSONInputSerializer):
    event_id = serializers.CharField(
        required=False,
        allow_null=True,
        max_length=limits.EVENT_ID_MAX,
        help_text="Your id for the event (unique in the session). Sending it again returns the stored "
        "event; without it a retry logs the event twice.",
    )
    event_type = serializers.ChoiceField(choices=SessionEventType.choices)
    ts = RFC3339DateTimeField(required=False, allow_null=True, help_text="When it happened (default: now)")
    # The envelope names these fields `source` and `data`; DRF's metaclass moves declared fields off the
    # class, so they do not shadow Field.source or Serializer.data (the stubs cannot tell).
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=EventSource.choices,
        required=False,
        allow_null=True,
        help_text="Default by type: chat, terminal, files, tests or agent",
    )
    role = serializers.ChoiceField(
        choices=EventRole.choices, required=False, allow_blank=True, default=""
    )
    text = _text(
        limits.EVENT_TEXT_MAX,
        default="",
        trim_whitespace=False,
        help_text="The turn, the command's output, the decision... Redacted before storage.",
    )
    data = BoundedJSONObjectField(  # type: ignore[assignment]
        required=False,
        default=dict,
        max_bytes=limits.EVENT_DATA_BYTES_MAX,
        help_text="By type: command_run {command, exit_code}; file_change {path, change}; test_result "
        "{name, status}; decision {decision, reason, alternatives}; handoff {next_steps, "
        f"open_questions}}. At most {limits.EVENT_DATA_BYTES_MAX} bytes and {MAX_JSON_DEPTH} levels.",
    )
    topic_tags = _strings(limits.TOPIC_TAGS_MAX, limits.TOPIC_TAG_MAX, "Topics, e.g. 'auth', 'ci'")
    entities = _strings(limits.REFS_MAX, 1000, "Files, modules, libraries the event is about")
    task_refs = _strings(limits.REFS_MAX, 200, "Issues or tasks, e.g. 'MP-229'")
    artifacts = ArtifactSerializer(
        many=True,
        required=False,
        default=list,  # type: ignore[call-arg]
        max_length=limits.REFS_MAX,
    )
    importance = serializers.FloatField(required=False, default=0.5, min_value=0, max_value=1)
    confidence = serializers.FloatField(required=False, default=1.0, min_value=0, max_value=1)
    agent_id = _text(limits.AGENT_ID_MAX, default="")


class SessionEventsInputSerializer(JSONInputSerializer):
    events = SessionEventInputSerializer(
        many=True,  # type: ignore[call-arg]
        min_length=1,
        max_length=limits.EVENTS_PER_BATCH_MAX,
    )


class SessionEventListQuerySerializer(QueryParamsSerializer):
    event_type = serializers.ChoiceField(choices=SessionEventType.choices, required=False)
    after_sequence = serializers.IntegerField(required=False, min_value=0)


class SessionEventOutputSerializer(serializers.Serializer):
    """Seed 004's envelope, with where SAM keeps it."""

    id = serializers.CharField(help_text="SAM's id (sev_…)")
    event_id = serializers.CharField()
    session_id = serializers.CharField()
    project_id = serializers.CharField(source="session.space.slug", help_text="The space")
    sequence = serializers.IntegerField()
    event_type = serializers.CharField()
    source = serializers.CharField()  # type: ignore[assignment]  # see SessionEventInputSerializer
    role = serializers.CharField()
    ts = serializers.DateTimeField()
    text = serializers.CharField()
    data = serializers.DictField()  # type: ignore[assignment]
    topic_tags = serializers.ListField(child=serializers.CharField())
    entities = serializers.SerializerMethodField()
    task_refs = serializers.SerializerMethodField()
    artifacts = serializers.SerializerMethodField()
    importance = serializers.FloatField()
    confidence = serializers.FloatField()
    hash = serializers.SerializerMethodField(help_text="Keyed hash of the stored envelope")
    redaction = serializers.SerializerMethodField(help_text="{redacted, redactions: [{path, kind, count}]}")
    agent_id = serializers.CharField()
    actor = serializers.SerializerMethodField(help_text="{user, agent_id}: who logged it")
    recorded_at = serializers.DateTimeField(source="created_at")

    def get_entities(self, event: SessionEvent) -> list[str]:
        return list((event.refs or {}).get("entities", []))

    def get_task_refs(self, event: SessionEvent) -> list[str]:
        return list((event.refs or {}).get("task_refs", []))

    def get_artifacts(self, event: SessionEvent) -> list[dict[str, str]]:
        return list((event.refs or {}).get("artifacts", []))

    def get_actor(self, event: SessionEvent) -> dict[str, Any]:
        user = event.created_by.get_username() if event.created_by else None
        return {"user": user, "agent_id": event.agent_id}

    def get_hash(self, event: SessionEvent) -> str:
        return f"hmac-sha256:{event.hash}"

    def get_redaction(self, event: SessionEvent) -> dict[str, Any]:
        return {"redacted": bool(event.redactions), "redactions": event.redactions}


class AppendedEventSerializer(serializers.Serializer):
    event = SessionEventOutputSerializer()
    created = serializers.BooleanField(help_text="False: this event_id was logged before (a replay)")


class SessionEventsOutputSerializer(serializers.Serializer):
    session = SessionOutputSerializer()
    events = AppendedEventSerializer(many=True)
    created = serializers.IntegerField()
    replayed = serializers.IntegerField()
    redaction_report = serializers.ListField(child=serializers.DictField())


class HandoffOutputSerializer(serializers.Serializer):
    json = serializers.DictField(
        help_text="session, what_changed, what_shipped, what_failed, decisions, "
        "open_questions, next_steps; every entry cites its events"
    )
    markdown = serializers.CharField()


class LatestHandoffQuerySerializer(QueryParamsSerializer):
    space = serializers.SlugField(max_length=80)


class CompileOutputSerializer(serializers.Serializer):
    formed = serializers.IntegerField()
    skipped = serializers.IntegerField()
    deferred = serializers.BooleanField()
    validations = serializers.IntegerField()


# --- cards ----------------------------------------------------------------------------


class CardScopeSerializer(JSONInputSerializer):
    path = _text(
        1000, default="", help_text="A file the claim is about: a later change to it makes the card stale"
    )
    branch = _text(limits.BRANCH_MAX, default="")


class CardInputSerializer(JSONInputSerializer):
    space = serializers.SlugField(max_length=80)
    card_type = serializers.ChoiceField(choices=CardType.choices)
    claim = serializers.CharField(max_length=limits.CLAIM[1], help_text="A short, testable statement")
    body = _text(limits.CARD_BODY_MAX, default="")
    session = serializers.CharField(required=False, allow_null=True, max_length=40)
    evidence = _strings(limits.REFS_MAX, limits.EVENT_ID_MAX, "event_ids of the session events it rests on")
    scope = CardScopeSerializer(required=False)
    ttl_days = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=3650,
        help_text="Days a check stays good (default by type; 0: never stale)",
    )


class CardListQuerySerializer(QueryParamsSerializer):
    space = serializers.CharField(required=False, help_text="Comma-separated space slugs")
    session = serializers.CharField(required=False, max_length=40)
    card_type = serializers.ChoiceField(choices=CardType.choices, required=False)
    status = serializers.ChoiceField(choices=CardStatus.choices, required=False)


class CardValidationInputSerializer(JSONInputSerializer):
    status = serializers.ChoiceField(choices=["pass", "failed", "stale"])
    validator = _text(100, default="", help_text="Who or what checked (default: you)")
    note = _text(limits.VALIDATION_NOTE_MAX, default="")
    event = serializers.CharField(
        required=False,
        allow_null=True,
        max_length=limits.EVENT_ID_MAX,
        help_text="The session event that shows it (its event_id)",
    )


class CardValidationOutputSerializer(serializers.Serializer):
    status = serializers.CharField()
    validator = serializers.CharField()
    note = serializers.CharField()
    event = serializers.CharField(source="event.event_id", allow_null=True, default=None)
    checked_at = serializers.DateTimeField()


class CardOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    card_type = serializers.CharField()
    space = serializers.CharField(source="space.slug")
    session = serializers.CharField(source="session_id", allow_null=True)
    memory = serializers.CharField(source="memory_id", allow_null=True)
    claim = serializers.CharField(source="memory.title", default="")
    body = serializers.CharField(source="memory.content", default="")
    evidence = serializers.SerializerMethodField()
    scope = serializers.SerializerMethodField()
    validation = serializers.SerializerMethodField()
    ttl_days = serializers.IntegerField()
    created_at = serializers.DateTimeField()

    def get_evidence(self, card: MemoryCard) -> list[dict[str, Any]]:
        return [
            {"kind": "event", "ref": e.event_id, "id": e.id, "session": e.session_id}
            for e in sorted(card.evidence.all(), key=lambda e: (e.ts, e.sequence))
        ]

    def get_scope(self, card: MemoryCard) -> dict[str, str]:
        return {"project_id": card.space.slug, "path": card.scope_path, "branch": card.scope_branch}

    def get_validation(self, card: MemoryCard) -> dict[str, Any]:
        effective = session_rules.effective_status(
            card.status, checked_at=card.checked_at, ttl_days=card.ttl_days, at=timezone.now()
        )
        return {
            "status": effective,
            "stored_status": card.status,
            "last_checked_at": card.checked_at,
            "validator": card.validator,
        }


class CardDetailOutputSerializer(CardOutputSerializer):
    validations = CardValidationOutputSerializer(many=True, source="validations.all")
