"""Shapes of the governance API: members, restricted tags, restrictions, modes and your tokens."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import JSONInputSerializer
from governance.modes import Mode
from governance.roles import RESTRICTABLE_TO, Role
from governance.scopes import Scope

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


# --- a person's own API tokens ------------------------------------------------------------

class TokenOutputSerializer(serializers.Serializer):
    """A token as its owner sees it: never its hash, and its secret only when just issued."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="Its first characters, to tell tokens apart.")
    spaces = serializers.SerializerMethodField(
        help_text="Slugs of the spaces it works in; null when it works in all of yours.")
    role = serializers.ChoiceField(choices=[("", "your own role"), *Role.choices],
                                   help_text='Its cap; "" for your own role in each space.')
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=Scope.choices))
    expires_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True, help_text="To the minute.")
    revoked_at = serializers.DateTimeField(allow_null=True)
    usable = serializers.BooleanField(source="is_usable", help_text="Neither revoked nor expired.")

    def get_spaces(self, token) -> list[str] | None:
        if token.all_spaces:
            return None
        return [space.slug for space in token.spaces.all()]


class TokenIssuedOutputSerializer(TokenOutputSerializer):
    secret = serializers.CharField(help_text="The token itself: shown this once, never stored.")


class TokenIssueInputSerializer(JSONInputSerializer):
    name = serializers.CharField(max_length=100)
    spaces = serializers.ListField(child=serializers.CharField(max_length=64), required=False,
                                   allow_null=True, min_length=1, max_length=200,
                                   help_text="Slugs; omitted or null for all of your spaces.")
    role = serializers.ChoiceField(choices=[("", "your own role"), *Role.choices], required=False,
                                   default="", help_text="No higher than your own in each space.")
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=Scope.choices), required=False,
                                   min_length=1, max_length=len(Scope.choices),
                                   help_text="Default: read and write. Always with read.")
    expires_at = serializers.DateTimeField(required=False, allow_null=True,
                                           help_text="In the future; omitted or null: never.")
