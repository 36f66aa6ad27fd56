"""Shapes of the governance API: members, restricted tags, restrictions and modes."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import JSONInputSerializer
from governance.modes import Mode
from governance.roles import RESTRICTABLE_TO, Role

RESTRICT_CHOICES = [r.value for r in RESTRICTABLE_TO]


class MembershipOutputSerializer(serializers.Serializer):
    principal = serializers.CharField(help_text="user:<username> or group:<name>")
    role = serializers.ChoiceField(choices=Role.choices)
    granted_by = serializers.CharField(source="granted_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class MembershipInputSerializer(JSONInputSerializer):
    user = serializers.CharField(required=False, help_text="A username")
    group = serializers.CharField(required=False, help_text="A group name")
    role = serializers.ChoiceField(choices=Role.choices)

    def validate(self, attrs: dict) -> dict:
        if ("user" in attrs) == ("group" in attrs):
            raise serializers.ValidationError({"user": ["Give either a user or a group."]})
        return attrs


class RestrictedTagSerializer(JSONInputSerializer):
    tag = serializers.CharField(max_length=64)
    min_role = serializers.ChoiceField(choices=RESTRICT_CHOICES)


class ModeSerializer(JSONInputSerializer):
    mode = serializers.ChoiceField(choices=Mode.choices)
