"""Shapes of the PRD and thinking-chain API. Serializers check shape only; rules live in services."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone
from rest_framework import serializers

from core.api.fields import BoundedJSONObjectField, JSONInputSerializer, QueryParamsSerializer
from core.api.parsers import MAX_JSON_DEPTH
from prd import limits
from prd.learnings import Learning
from prd.models import ChainStatus, EventType, ExecutionStatus, PRDDecision, PRDEvent
from prd.selectors import ResumeContext


def _optional_text(max_length: int, **kwargs: Any) -> serializers.CharField:
    return serializers.CharField(required=False, allow_blank=True, max_length=max_length, **kwargs)


def _optional_id(max_length: int = 40) -> serializers.CharField:
    return serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=max_length)


# --- executions: input ----------------------------------------------------------------

class PRDRequirementSerializer(JSONInputSerializer):
    id = serializers.CharField(max_length=limits.REQUIREMENT_ID[1])
    title = _optional_text(limits.REQUIREMENT_TITLE_MAX, default="")
    hash = _optional_text(limits.PRD_HASH_MAX, default="",
                          help_text="Content hash of this requirement's text")


class PRDExecutionStartInputSerializer(JSONInputSerializer):
    space = serializers.SlugField(max_length=80)
    prd_ref = serializers.CharField(max_length=limits.PRD_REF[1], help_text="A file path or git SHA")
    title = _optional_text(limits.TITLE_MAX)
    prd_hash = _optional_text(limits.PRD_HASH_MAX, help_text="Content hash of the PRD, for change detection")
    prd_content = serializers.CharField(
        required=False, allow_blank=True, max_length=limits.PRD_CONTENT_MAX, trim_whitespace=False,
        help_text="The PRD's text; SAM keeps only its sha256 (instead of prd_hash)",
    )
    # many=True hands max_length to the ListSerializer; the stubs' __init__ does not take it.
    requirements = PRDRequirementSerializer(many=True, required=False,  # type: ignore[call-arg]
                                            max_length=limits.REQUIREMENTS_MAX)
    agent_id = _optional_text(limits.AGENT_ID_MAX, default="")


class PRDExecutionListQuerySerializer(QueryParamsSerializer):
    space = serializers.CharField(required=False, help_text="Comma-separated space slugs")
    status = serializers.ChoiceField(choices=ExecutionStatus.choices, required=False)
    prd_ref = serializers.CharField(required=False, max_length=limits.PRD_REF[1])


class PRDEventInputSerializer(JSONInputSerializer):
    type = serializers.ChoiceField(choices=EventType.choices)
    summary = serializers.CharField(max_length=limits.EVENT_SUMMARY[1])
    requirement_id = _optional_text(limits.REQUIREMENT_ID[1], default="")
    detail = BoundedJSONObjectField(
        required=False, default=dict, max_bytes=limits.EVENT_DETAIL_BYTES_MAX,
        help_text="Structured payload; for decision_made: {decision, reason, alternatives}. At most "
                  f"{limits.EVENT_DETAIL_BYTES_MAX} bytes as JSON and {MAX_JSON_DEPTH} levels deep.",
    )
    agent_id = _optional_text(limits.AGENT_ID_MAX, default="")
    thinking_chain = _optional_id()
    resolves = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=40,
                                     help_text="blocker_resolved only: the blocker_hit event it resolves "
                                               "(default: the oldest open blocker on the requirement)")
    idempotency_key = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, max_length=limits.IDEMPOTENCY_KEY_MAX,
        help_text="Sending the same key again returns the event logged the first time",
    )


class PRDEventListQuerySerializer(QueryParamsSerializer):
    type = serializers.ChoiceField(choices=EventType.choices, required=False)
    requirement_id = serializers.CharField(required=False, max_length=limits.REQUIREMENT_ID[1])
    after_sequence = serializers.IntegerField(required=False, min_value=0)


class PRDDecisionInputSerializer(JSONInputSerializer):
    decision = serializers.CharField(max_length=limits.DECISION[1])
    reason = _optional_text(limits.REASON_MAX, default="")
    alternatives = serializers.ListField(child=serializers.CharField(max_length=limits.ALTERNATIVE_MAX),
                                         max_length=limits.ALTERNATIVES_MAX, default=list,
                                         help_text="What was rejected")
    requirement_id = _optional_text(limits.REQUIREMENT_ID[1], default="")
    agent_id = _optional_text(limits.AGENT_ID_MAX, default="")
    thinking_chain = _optional_id()
    idempotency_key = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                            max_length=limits.IDEMPOTENCY_KEY_MAX)


class PRDStatusInputSerializer(JSONInputSerializer):
    status = serializers.ChoiceField(choices=ExecutionStatus.choices)


class PRDContextQuerySerializer(QueryParamsSerializer):
    event_limit = serializers.IntegerField(required=False, min_value=0,
                                           max_value=limits.CONTEXT_EVENT_LIMIT_MAX,
                                           default=limits.CONTEXT_EVENT_LIMIT_DEFAULT)
    include_decisions = serializers.BooleanField(required=False, default=True)
    learning_limit = serializers.IntegerField(required=False, min_value=0,
                                              max_value=limits.CONTEXT_LEARNING_LIMIT_MAX,
                                              default=limits.CONTEXT_LEARNING_LIMIT_DEFAULT)


# --- executions: output ---------------------------------------------------------------

class PRDProgressSerializer(serializers.Serializer):
    completed = serializers.ListField(child=serializers.CharField())
    in_progress = serializers.ListField(child=serializers.CharField())
    blocked = serializers.ListField(child=serializers.CharField())
    not_started = serializers.ListField(child=serializers.CharField())


class PRDExecutionOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    space = serializers.CharField(source="space.slug")
    prd_ref = serializers.CharField()
    prd_hash = serializers.CharField()
    title = serializers.CharField()
    status = serializers.ChoiceField(choices=ExecutionStatus.choices)
    progress = PRDProgressSerializer(help_text="Materialised from the events; never written directly")
    requirements = PRDRequirementSerializer(many=True)
    event_count = serializers.IntegerField()
    last_event_at = serializers.DateTimeField(allow_null=True)
    summary = serializers.CharField(help_text="The compact narrative written when the execution completed")
    summary_source = serializers.CharField(help_text="extractive, or the chat model that wrote the summary")
    compacted_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)


class PRDBeforeAfterSerializer(serializers.Serializer):
    before = serializers.CharField()
    after = serializers.CharField()


class PRDChangesSerializer(serializers.Serializer):
    first_run = serializers.BooleanField(required=False)
    changed = serializers.BooleanField(required=False)
    hash = PRDBeforeAfterSerializer(allow_null=True, required=False)
    title = PRDBeforeAfterSerializer(allow_null=True, required=False)
    requirements_added = serializers.ListField(child=serializers.CharField(), required=False)
    requirements_removed = serializers.ListField(child=serializers.CharField(), required=False)
    requirements_modified = serializers.ListField(child=serializers.CharField(), required=False)
    affected = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()), required=False,
        help_text="Requirements with progress (completed, in_progress, blocked) that were modified or "
                  "removed",
    )


class PRDRunOutputSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    prd_hash = serializers.CharField()
    agent_id = serializers.CharField()
    started_at = serializers.DateTimeField()
    prd_changed = serializers.BooleanField()
    changes = PRDChangesSerializer()


class PRDExecutionStartOutputSerializer(serializers.Serializer):
    execution = PRDExecutionOutputSerializer()
    created = serializers.BooleanField(help_text="False when an execution for this prd_ref was resumed")
    run = serializers.IntegerField(source="run.number")
    prd_changes = PRDChangesSerializer(source="run.changes")
    redaction_report = serializers.ListField(
        child=serializers.DictField(),
        help_text="[{path, kind, pattern, start, end}] per redaction (prd_ref, title, requirement titles)")


UTC_OFFSET = timedelta(0)


def iso(value: datetime | None) -> str | None:
    """A datetime as DRF renders it (ISO 8601, UTC as Z)."""
    if value is None:
        return None
    # Rows come back in UTC, which is SAM's time zone; converting only what is not UTC
    # keeps this cheap (localtime costs ~30 µs, and a context renders hundreds of times).
    if timezone.is_aware(value) and value.utcoffset() != UTC_OFFSET:
        value = timezone.localtime(value)
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


class PRDEventOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    sequence = serializers.IntegerField()
    type = serializers.ChoiceField(choices=EventType.choices)
    requirement_id = serializers.CharField()
    summary = serializers.CharField()
    detail = serializers.DictField()
    agent_id = serializers.CharField()
    thinking_chain = serializers.CharField(source="thinking_chain_id", allow_null=True)
    resolves = serializers.CharField(source="resolves_id", allow_null=True,
                                     help_text="The blocker or failure this event closed")
    created_at = serializers.DateTimeField()

    def to_representation(self, event: PRDEvent) -> dict[str, Any]:
        # The resume context renders hundreds of events; building the dict directly is many
        # times cheaper than DRF's per-field walk. The fields above stay the documented
        # shape, and tests/prd/test_serializers.py holds the two to each other.
        return {
            "id": event.id, "sequence": event.sequence, "type": event.type,
            "requirement_id": event.requirement_id, "summary": event.summary, "detail": event.detail,
            "agent_id": event.agent_id, "thinking_chain": event.thinking_chain_id,
            "resolves": event.resolves_id, "created_at": iso(event.created_at),
        }


class PRDEventRefOutputSerializer(serializers.Serializer):
    """An event named inside another answer (a learning's problem and fix): no detail."""

    id = serializers.CharField()
    sequence = serializers.IntegerField()
    type = serializers.ChoiceField(choices=EventType.choices)
    requirement_id = serializers.CharField()
    summary = serializers.CharField()
    created_at = serializers.DateTimeField()

    def to_representation(self, event: PRDEvent) -> dict[str, Any]:
        return event_ref(event)


def event_ref(event: PRDEvent) -> dict[str, Any]:
    return {"id": event.id, "sequence": event.sequence, "type": event.type,
            "requirement_id": event.requirement_id, "summary": event.summary,
            "created_at": iso(event.created_at)}


class PRDDecisionOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    event = serializers.CharField(source="event_id")
    requirement_id = serializers.CharField()
    decision = serializers.CharField()
    reason = serializers.CharField()
    alternatives = serializers.ListField(child=serializers.CharField())
    agent_id = serializers.CharField()
    thinking_chain = serializers.CharField(source="thinking_chain_id", allow_null=True)
    created_at = serializers.DateTimeField()

    def to_representation(self, decision: PRDDecision) -> dict[str, Any]:
        # Every decision goes into the resume context: built directly, as for events.
        return {
            "id": decision.id, "event": decision.event_id, "requirement_id": decision.requirement_id,
            "decision": decision.decision, "reason": decision.reason,
            "alternatives": list(decision.alternatives), "agent_id": decision.agent_id,
            "thinking_chain": decision.thinking_chain_id, "created_at": iso(decision.created_at),
        }


class PRDAppendOutputSerializer(serializers.Serializer):
    event = PRDEventOutputSerializer()
    decision = PRDDecisionOutputSerializer(allow_null=True)
    execution = PRDExecutionOutputSerializer()
    replayed = serializers.BooleanField(
        help_text="True when the idempotency key named an event already logged")
    redaction_report = serializers.ListField(
        child=serializers.DictField(), help_text="[{path, kind, pattern, start, end}] per redaction")


class PRDLearningOutputSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["blocker_resolved", "failure_fixed"])
    requirement_id = serializers.CharField()
    problem = PRDEventRefOutputSerializer()
    fix = PRDEventRefOutputSerializer()
    text = serializers.CharField(help_text='"When X failed, Y fixed it", as the procedural memory says it')

    def to_representation(self, learning: Learning) -> dict[str, Any]:
        return {"kind": learning.kind, "requirement_id": learning.requirement_id,
                "problem": event_ref(learning.problem), "fix": event_ref(learning.fix),
                "text": learning.sentence()}


class PRDContextOutputSerializer(serializers.Serializer):
    execution = PRDExecutionOutputSerializer()
    progress = PRDProgressSerializer()
    recent_events = PRDEventOutputSerializer(many=True, help_text="The newest events, oldest first")
    total_events = serializers.IntegerField(source="execution.event_count")
    decisions = PRDDecisionOutputSerializer(many=True, allow_null=True)
    learnings = PRDLearningOutputSerializer(many=True, help_text="The newest learnings (learning_limit)")
    learnings_total = serializers.IntegerField()
    open_blockers = PRDEventOutputSerializer(many=True)
    open_failures = PRDEventOutputSerializer(many=True,
                                             help_text="Failures no test_passed or completion fixed yet")
    prd_changes = PRDChangesSerializer(
        help_text="What changed in the PRD at the newest run, against the run before")
    last_prd_change = PRDRunOutputSerializer(allow_null=True,
                                             help_text="The newest run at which the PRD changed")
    runs = serializers.IntegerField()

    def to_representation(self, context: ResumeContext) -> dict[str, Any]:
        # The lists (up to hundreds of events and decisions) go through the direct
        # representations above; the small parts through DRF. Checked against DRF's own
        # walk of the declared fields in tests/prd/test_serializers.py.
        events, decisions = PRDEventOutputSerializer(), PRDDecisionOutputSerializer()
        learnings = PRDLearningOutputSerializer()
        last = context.last_prd_change
        return {
            "execution": PRDExecutionOutputSerializer(context.execution).data,
            "progress": PRDProgressSerializer(context.progress).data,
            "recent_events": [events.to_representation(e) for e in context.recent_events],
            "total_events": context.execution.event_count,
            "decisions": (None if context.decisions is None
                          else [decisions.to_representation(d) for d in context.decisions]),
            "learnings": [learnings.to_representation(item) for item in context.learnings],
            "learnings_total": context.learnings_total,
            "open_blockers": [events.to_representation(e) for e in context.open_blockers],
            "open_failures": [events.to_representation(e) for e in context.open_failures],
            "prd_changes": PRDChangesSerializer(context.prd_changes).data,
            "last_prd_change": PRDRunOutputSerializer(last).data if last is not None else None,
            "runs": context.runs,
        }


# --- thinking chains ------------------------------------------------------------------

class ThoughtOutputSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    content = serializers.CharField()
    is_revision = serializers.BooleanField()
    revises = serializers.IntegerField(allow_null=True)
    branch_id = serializers.CharField(allow_null=True)
    branch_from = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()


class ThinkingChainOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    space = serializers.CharField(source="space.slug")
    execution = serializers.CharField(source="execution_id", allow_null=True)
    query = serializers.CharField()
    status = serializers.ChoiceField(choices=ChainStatus.choices)
    thoughts = ThoughtOutputSerializer(many=True)
    summary = serializers.CharField()
    summary_source = serializers.CharField()
    summarized_at = serializers.DateTimeField(allow_null=True)
    agent_id = serializers.CharField()
    abandon_reason = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)
    redaction_report = serializers.ListField(
        child=serializers.DictField(), required=False,
        help_text="On a start, a thought or an abandon: [{path, kind, pattern, start, end}] per redaction")


class ThinkingChainStartInputSerializer(JSONInputSerializer):
    space = serializers.SlugField(max_length=80)
    query = serializers.CharField(max_length=limits.CHAIN_QUERY[1], help_text="What started the chain")
    agent_id = _optional_text(limits.AGENT_ID_MAX, default="")
    execution = _optional_id()


class ThinkingChainListQuerySerializer(QueryParamsSerializer):
    space = serializers.CharField(required=False, help_text="Comma-separated space slugs")
    status = serializers.ChoiceField(choices=ChainStatus.choices, required=False)
    execution = serializers.CharField(required=False, max_length=40)


class ThoughtInputSerializer(JSONInputSerializer):
    content = serializers.CharField(max_length=limits.THOUGHT[1])
    number = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                      help_text="The number you expect this thought to get (409 if stale)")
    is_revision = serializers.BooleanField(required=False, allow_null=True, default=None)
    revises = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    branch_id = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                      max_length=limits.BRANCH_ID[1])
    branch_from = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                           help_text="The thought a new branch grows from")


class ThinkingChainAbandonInputSerializer(JSONInputSerializer):
    reason = _optional_text(limits.ABANDON_REASON_MAX, default="")


class ThinkingChainRecallInputSerializer(JSONInputSerializer):
    query = serializers.CharField(max_length=limits.CHAIN_QUERY[1])
    spaces = serializers.ListField(child=serializers.SlugField(max_length=80), required=False, default=list)
    k = serializers.IntegerField(required=False, min_value=1, max_value=limits.RECALL_K_MAX,
                                 default=limits.RECALL_K_DEFAULT)
    include_active = serializers.BooleanField(required=False, default=False,
                                              help_text="Also match chains still in progress")


class ThinkingChainMatchOutputSerializer(serializers.Serializer):
    chain = ThinkingChainOutputSerializer()
    score = serializers.FloatField()
    similarity = serializers.FloatField(allow_null=True, help_text="Cosine similarity of the embeddings")
    text_rank = serializers.FloatField(help_text="Full-text rank of the query's words, 0-1")


class ThinkingChainRecallOutputSerializer(serializers.Serializer):
    results = ThinkingChainMatchOutputSerializer(many=True)
    silenced_spaces = serializers.ListField(
        child=serializers.CharField(),
        help_text="Spaces whose memory mode (capture_only, off) keeps them out of recall",
    )
