"""Shapes of the audit timeline API. Serializers check shape only."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.api.fields import QueryParamsSerializer, RFC3339DateTimeField
from governance.audit.models import AuditAction

# One known action, or several separated by commas (spaces around them allowed): the
# schema publishes this pattern, so a client knows the accepted values before it asks.
_ACTION = "(?:" + "|".join(AuditAction.values) + ")"
ACTIONS_PATTERN = f"^ *{_ACTION} *(?:, *{_ACTION} *)*$"


class AuditTimelineQuerySerializer(QueryParamsSerializer):
    action = serializers.RegexField(
        ACTIONS_PATTERN, required=False,
        help_text=f"Comma-separated actions to keep ({', '.join(AuditAction.values)}); "
                  "`recall` selects recall events.",
    )
    after = RFC3339DateTimeField(required=False, help_text="Events at or after this time.")
    before = RFC3339DateTimeField(required=False, help_text="Events before this time.")

    def validate_action(self, value: str) -> list[str]:
        actions = [part.strip() for part in value.split(",") if part.strip()]
        unknown = sorted(set(actions) - set(AuditAction.values))
        if unknown:
            raise serializers.ValidationError(f"Unknown actions: {', '.join(unknown)}.")
        return actions

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        after, before = attrs.get("after"), attrs.get("before")
        if after is not None and before is not None and after >= before:
            raise serializers.ValidationError({"before": ["Must be later than `after`."]})
        return attrs


class AuditTargetOutputSerializer(serializers.Serializer):
    type = serializers.CharField()
    id = serializers.CharField()


class AuditChangeOutputSerializer(serializers.Serializer):
    path = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
    reason = serializers.CharField(required=False)


class RecalledMemoryOutputSerializer(serializers.Serializer):
    memory_id = serializers.CharField()
    rank = serializers.IntegerField(help_text="1 for the first memory the recall returned.")
    score = serializers.FloatField(allow_null=True)
    signals = serializers.DictField(child=serializers.FloatField(allow_null=True))
    rationale = serializers.CharField(help_text="Why this memory was recalled.")


class RecallDetailOutputSerializer(serializers.Serializer):
    query = serializers.CharField()
    active_task = serializers.CharField()
    profile = serializers.CharField()
    spaces = serializers.ListField(child=serializers.CharField())
    fail_safe = serializers.BooleanField()
    items = RecalledMemoryOutputSerializer(
        many=True, help_text="The memories of this timeline that the recall returned."
    )


class TimelineItemOutputSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["audit", "recall"])
    event_id = serializers.IntegerField(help_text="The audit event's or the recall event's id.")
    at = serializers.DateTimeField()
    action = serializers.ChoiceField(choices=AuditAction.choices)
    actor = serializers.CharField(allow_null=True, help_text="Username at the time, or system.")
    actor_id = serializers.IntegerField(allow_null=True)
    request_id = serializers.CharField(allow_null=True)
    space = serializers.CharField(allow_null=True)
    target = AuditTargetOutputSerializer(allow_null=True)
    changes = AuditChangeOutputSerializer(
        many=True, allow_null=True,
        help_text="What changed (the recorded diff, or one computed from before and after).",
    )
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
    note = serializers.CharField(allow_blank=True)
    payload_shredded = serializers.BooleanField(
        help_text="The payload's data key was destroyed (space deleted or forgotten): "
                  "the event stays, its before, after and changes are gone.")
    recall = RecallDetailOutputSerializer(allow_null=True, help_text="Only for recall events.")
