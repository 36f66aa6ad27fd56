"""Serializer fields and bases shared by the apps' APIs, so the server takes exactly what the
published schema describes: bounded free-form JSON, values of their JSON type, RFC 3339
date-times, and query strings read as values rather than as an HTML form."""

from __future__ import annotations

import json
import re
from typing import Any

from django.http import QueryDict
from django.utils.dateparse import parse_datetime
from rest_framework import serializers

from core.api.parsers import MAX_JSON_DEPTH, json_too_deep, too_deep_message

# The characters str.strip() and SAM's whitespace folding remove, as a regex class body: `\s`
# means fewer of them in the ECMA and Rust regexes that check the published patterns.
WHITESPACE_CLASS = "".join(f"\\u{ord(c):04x}" for c in map(chr, range(0x10000)) if c.isspace())


def comma_separated(value: str | None) -> list[str]:
    """The items of a comma-separated query value ("a, b,,c" -> ["a", "b", "c"])."""
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def visible_pattern(count: int) -> str:
    """A regex for text with at least `count` characters that are not whitespace (nor NUL).

    Each repetition takes the whitespace before one visible character, which keeps the
    pattern linear (no backtracking blow-up).
    """
    return f"^(?:[{WHITESPACE_CLASS}]*[^{WHITESPACE_CLASS}\\u0000]){{{count}}}[^\\u0000]*$"


class EntryTextField(serializers.CharField):
    """Text whose minimum length SAM checks after normalising it (memories/entry.py).

    Normalisation trims and folds whitespace, so the schema states the minimum as visible
    characters (`min_visible`), a rule any value it allows also passes after folding. The
    check itself stays in the service, after the shape checks, with its own messages.
    """

    def __init__(self, *, min_visible: int, **kwargs: Any) -> None:
        self.min_visible = min_visible
        super().__init__(**kwargs)


class BoundedJSONObjectField(serializers.DictField):
    """A JSON object of any shape, bounded in depth and in size.

    Free-form JSON (a memory's metadata, an event's detail) is stored as given and later
    walked by recursive code: redaction, hashing, diffing. The request parser already caps
    the body's depth; this field caps each value on its own, whatever parser or caller fed
    the serializer, and reports the limit against the field.

    `max_bytes` bounds the length of `json.dumps(value)` (ASCII-escaped, Python's default
    separators), the measure the services use; `max_depth` counts the object as level 1.
    """

    default_error_messages = {
        "too_deep": too_deep_message(MAX_JSON_DEPTH),
        "too_large": "Must be at most {max_bytes} bytes as JSON.",
        "not_json": "Must contain only JSON values (no NaN or Infinity).",
    }

    def __init__(self, *, max_bytes: int, max_depth: int = MAX_JSON_DEPTH, **kwargs: Any) -> None:
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        super().__init__(**kwargs)
        self.error_messages["too_deep"] = too_deep_message(max_depth)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        value = super().to_internal_value(data)
        # Depth first: it is what makes the size measurement below safe to run.
        if json_too_deep(value, max_depth=self.max_depth):
            self.fail("too_deep")
        try:
            size = len(json.dumps(value, allow_nan=False))
        except (TypeError, ValueError):
            self.fail("not_json")
        if size > self.max_bytes:
            self.fail("too_large", max_bytes=self.max_bytes)
        return value


def _json_types(field: serializers.Field) -> tuple[type, ...] | None:
    """The JSON value types a field's input must have, or None when any will do."""
    if isinstance(field, serializers.BooleanField):
        return (bool,)
    if isinstance(field, serializers.IntegerField):
        return (int,)
    if isinstance(field, (serializers.FloatField, serializers.DecimalField)):
        return (int, float)
    if isinstance(field, (serializers.CharField, serializers.DateTimeField, serializers.DateField,
                          serializers.UUIDField)):
        return (str,)
    if isinstance(field, serializers.ChoiceField):
        kinds = {type(key) for key in field.choices}
        return tuple(kinds) if kinds in ({str}, {int}) else None
    return None


def _type_errors(field: serializers.Field, value: Any) -> Any:
    """Errors for a value whose JSON type the field would silently coerce, in DRF's shape."""
    if value is None:
        return None  # allow_null decides, in the field's own validation
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        errors = {index: found for index, item in enumerate(value)
                  if (found := _type_errors(field.child, item))}
        return errors or None
    if isinstance(field, serializers.DictField) and isinstance(value, dict):
        errors = {key: found for key, item in value.items() if (found := _type_errors(field.child, item))}
        return errors or None
    expected = _json_types(field)
    if expected is None:
        return None
    if expected == (int,) and isinstance(value, float) and value.is_integer():
        return None  # 3.0 is an integer to JSON Schema too
    # bool is an int in Python, never in JSON.
    if (isinstance(value, bool) and bool not in expected) or not isinstance(value, expected):
        names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
        return [f"Must be {' or '.join(dict.fromkeys(names[kind] for kind in expected))}."]
    return None


class JSONInputSerializer(serializers.Serializer):
    """Base of the serializers that read request bodies: values must have the JSON type
    the schema documents.

    DRF coerces on input (the number 5 becomes the string "5", "true" becomes True), which
    lets a client that ignores the schema seem to work. SAM's bodies are JSON, so each
    value must already be the documented type; a wrong one is a 400 against its field.
    """

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            errors: dict[Any, Any] = {}  # by field_name (str | None to the stubs; bound: a str)
            for field in self._writable_fields:
                if field.field_name in data and (found := _type_errors(field, data[field.field_name])):
                    errors[field.field_name] = found
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


class RFC3339DateTimeField(serializers.DateTimeField):
    """A date-time as the schema's `format: date-time` means it: RFC 3339, with an offset.

    DRF alone also takes dates without a time, times without an offset and a space for the
    `T`, which a client generated from the schema never sends and a validator refuses.
    A leap second (:60) is read as :59 and fractions beyond microseconds are cut, as
    Python's datetime cannot hold either.
    """

    def to_internal_value(self, value: Any) -> Any:
        if isinstance(value, str):
            match = _RFC3339.fullmatch(value)
            if match is None:
                self.fail("invalid", format="RFC 3339, e.g. 2026-01-31T09:30:00Z")
            second, fraction, _ = match.groups()
            start, end = match.span(1)
            value = value[:start] + ("59" if second == "60" else second) + value[end:]
            if fraction and len(fraction) > 7:
                value = value.replace(fraction, fraction[:7], 1)
            value = value.upper()
        return super().to_internal_value(value)

    def to_representation(self, value: Any) -> Any:
        if isinstance(value, str):
            # A date-time kept as text inside JSON (a training example's last_tested_at) may
            # be in Python's str() form, "2026-01-31 09:30:00+00:00": answer it as RFC 3339.
            parsed = parse_datetime(value)
            value = parsed if parsed is not None else value
        return super().to_representation(value)


class QueryParamsSerializer(serializers.Serializer):
    """Base of the serializers that read query strings: an empty value is a value.

    Given a QueryDict, DRF reads it as an HTML form and drops an empty optional field
    (`?status=` as if absent), though the schema says an empty string is not a valid
    status. Read as a plain mapping, `?status=` is refused like any other bad value.
    """

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, QueryDict):
            data = data.dict()
        return super().to_internal_value(data)
