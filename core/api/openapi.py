"""What the published OpenAPI schema says beyond drf-spectacular's defaults.

Every error has one shape (core/api/exceptions.py); the views declare which statuses an
operation can answer with `error_responses(...)`, so a client generated from the schema
knows each one and its body. `SamAutoSchema` declares the string rules DRF enforces.
"""

from __future__ import annotations

from typing import Any

from django.core.validators import (
    EmailValidator,
    ProhibitNullCharactersValidator,
    RegexValidator,
    URLValidator,
)
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from core.api.fields import WHITESPACE_CLASS, EntryTextField, visible_pattern


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable, machine-readable: invalid, not_found, conflict...")
    message = serializers.CharField(help_text="For people; may change between versions.")
    # A declared field (DRF's metaclass moves it off the class), not Serializer.fields.
    fields = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        help_text='Messages per field path ("metadata", "items[3].title"); empty when none.',
    )
    current_version = serializers.IntegerField(
        required=False, help_text="version_conflict only: the memory's current version."
    )


class ErrorOutputSerializer(serializers.Serializer):
    """{"error": {"code", "message", "fields"}}: the body of every 4xx and 5xx answer."""

    error = ErrorDetailSerializer()


DESCRIPTIONS = {
    400: "Invalid input; `fields` names each bad field",
    401: "No or invalid credentials",
    403: "Visible to you, but you may not do this",
    404: "Not found (or not visible to you)",
    409: "Conflicts with the stored state",
    429: "Refused too often lately (too_many_attempts); try again later",
}


def error_responses(*statuses: int, **descriptions: str) -> dict[int, OpenApiResponse]:
    """Responses for `extend_schema(responses=...)`: each status with the error body.

    `descriptions` overrides a status's text, keyed `e409="Stale version"`.
    """
    return {
        code: OpenApiResponse(response=ErrorOutputSerializer,
                              description=descriptions.get(f"e{code}", DESCRIPTIONS[code]))
        for code in statuses
    }


# Postgres text cannot hold NUL, and DRF's CharField refuses it; say so in the schema.
NO_NUL_PATTERN = "^[^\\u0000]*$"
# A trimmed, non-blank CharField also needs one character that is not whitespace.
NOT_BLANK_PATTERN = f"^[^\\u0000]*[^{WHITESPACE_CLASS}\\u0000][^\\u0000]*$"


class SamAutoSchema(AutoSchema):
    """drf-spectacular's schema, plus the string rules DRF enforces but does not declare."""

    def _map_serializer_field(self, field: serializers.Field, direction: str,
                              bypass_extensions: bool = False) -> dict[str, Any]:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if isinstance(field, serializers.ListSerializer) and schema.get("type") == "array":
            # drf-spectacular leaves out the item bounds of `Serializer(many=True, max_length=...)`.
            # ListSerializer keeps both; the stubs know them only as __init__ arguments.
            max_items, min_items = field.max_length, field.min_length  # type: ignore[attr-defined]
            if max_items is not None:
                schema["maxItems"] = max_items
            if min_items is not None:
                schema["minItems"] = min_items
        if direction == "request" and isinstance(field, EntryTextField):
            # drf-spectacular adds the empty string as its own oneOf branch when blank is allowed.
            schema["pattern"] = visible_pattern(field.min_visible)
        elif direction == "request" and isinstance(field, serializers.CharField):
            _declare_string_rules(field, schema)
        return schema


def _declare_string_rules(field: serializers.CharField, schema: dict[str, Any]) -> None:
    if schema.get("type") != "string" or {"pattern", "format", "enum"} & set(schema):
        return
    if not any(isinstance(v, ProhibitNullCharactersValidator) for v in field.validators):
        return
    if any(isinstance(v, (RegexValidator, EmailValidator, URLValidator)) for v in field.validators):
        return  # drf-spectacular declares the field's own pattern or format after this
    blank_is_refused = not field.allow_blank and field.trim_whitespace
    schema["pattern"] = NOT_BLANK_PATTERN if blank_is_refused else NO_NUL_PATTERN
