"""The limits and defaults of a tool's arguments, read from the REST serializer the tool calls.

A tool is a typed front for one REST call, so what the call accepts is what the tool's
input schema states: the same field object answers both (its max_length, min_value,
max_value, choices and default), never a copy of its numbers that could drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema
from rest_framework import serializers

from core.api.fields import EntryTextField


def rest_field(serializer: type[serializers.Serializer], path: str) -> serializers.Field:
    """The field `path` ("filters.kind") of `serializer`, as an instance builds it (some
    serializers set choices in __init__)."""
    field: Any = serializer()
    for name in path.split("."):
        field = field.child if name == "child" else field.fields[name]
    return field


def rest_limits(serializer: type[serializers.Serializer], path: str) -> dict[str, Any]:
    """pydantic `Field` arguments stating the REST field's limits: max_length/min_length for
    text and lists, le/ge for numbers."""
    field = rest_field(serializer, path)
    out: dict[str, Any] = {}
    if isinstance(field, serializers.ListSerializer | serializers.ListField):
        out.update(max_length=getattr(field, "max_length", None),
                   min_length=getattr(field, "min_length", None))
    elif isinstance(field, serializers.CharField):
        minimum = field.min_length
        if isinstance(field, EntryTextField):
            minimum = field.min_visible
        elif field.required and not field.allow_blank:
            minimum = max(minimum or 0, 1)
        out.update(max_length=field.max_length, min_length=minimum or None)
    elif isinstance(field, serializers.IntegerField | serializers.FloatField):
        out.update(le=field.max_value, ge=field.min_value)
    return {key: value for key, value in out.items() if value is not None}


def rest_default(serializer: type[serializers.Serializer], path: str) -> Any:
    default = rest_field(serializer, path).default
    if default is serializers.empty:
        raise LookupError(f"{serializer.__name__}.{path} has no default")
    return default() if callable(default) else default


def rest_choices(serializer: type[serializers.Serializer], path: str) -> tuple[str, ...]:
    field = rest_field(serializer, path)
    if not isinstance(field, serializers.ChoiceField):
        raise TypeError(f"{serializer.__name__}.{path} is not a choice field")
    return tuple(str(choice) for choice in field.choices)


@dataclass(frozen=True)
class OneOf:
    """Annotated metadata: the value must be one of `choices` (a JSON schema `enum`, checked
    as pydantic checks a Literal)."""

    choices: tuple[str, ...]

    def __get_pydantic_core_schema__(self, source: Any,
                                     handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.literal_schema(list(self.choices))


def one_of(serializer: type[serializers.Serializer], path: str) -> OneOf:
    return OneOf(rest_choices(serializer, path))
