"""The API's one request parser: JSON, bounded in size and depth.

Every body is read through `BoundedJSONParser`, so no view, serializer or service ever
receives a document nested deeper than `MAX_JSON_DEPTH` levels or larger than
`settings.SAM_API_MAX_BODY_BYTES`. Deeply nested input is how a client makes recursive code
(the JSON decoder itself, redaction, hashing, diffing) exhaust the stack; an unbounded body
is how it exhausts memory. Both answer 400 in the API's error shape, never 5xx.

JSON is the only body format: the schema documents it alone, and the nested shapes of SAM's
inputs (metadata, filters, requirements) have no faithful form or multipart encoding.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.parsers import JSONParser

from core.errors import InvalidInput

# How many levels of objects and arrays a request body may nest. The body itself is level 1,
# so `{"metadata": {"a": [1]}}` is 3 deep. 32 leaves room for any real payload.
MAX_JSON_DEPTH = 32


def json_too_deep(value: Any, *, max_depth: int) -> bool:
    """Whether `value` nests objects and arrays deeper than `max_depth` levels.

    `value` itself is level 1 when it is an object or array. Iterative, so whatever depth
    the decoder produced is measured without recursion.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (Mapping, list)):
            if depth > max_depth:
                return True
            children = node.values() if isinstance(node, Mapping) else node
            stack.extend((child, depth + 1) for child in children)
    return False


def too_deep_message(max_depth: int) -> str:
    return f"Nested deeper than {max_depth} levels of objects and arrays."


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with a size cap (read before decoding) and a depth cap."""

    def parse(self, stream: IO[bytes] | None, media_type: str | None = None,
              parser_context: Mapping[str, Any] | None = None) -> Any:
        limit: int = settings.SAM_API_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise InvalidInput(f"The request body is larger than {limit} bytes.",
                               fields={"non_field_errors": [f"Must be at most {limit} bytes."]})
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.loads(raw.decode(encoding), parse_constant=_reject_constant,
                              parse_float=_finite_float)
        except RecursionError:
            # The decoder recurses once per level and stops at Python's recursion limit
            # (about a thousand levels), far past MAX_JSON_DEPTH.
            raise _too_deep(None) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"The request body is not valid JSON: {exc}",
                               fields={"non_field_errors": ["Must be valid JSON."]}) from None
        if json_too_deep(data, max_depth=MAX_JSON_DEPTH):
            raise _too_deep(data)
        return data


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; Postgres jsonb refuses them later with a 500.
    raise ValueError(f"{name} is not allowed")


def _finite_float(text: str) -> float:
    # 1e400 is valid JSON but becomes Infinity in Python, which jsonb cannot store.
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value


def _too_deep(data: Any) -> InvalidInput:
    """The error, under the top-level field that nests too deep, so the client sees which."""
    field = "non_field_errors"
    if isinstance(data, dict):
        field = next((key for key, value in data.items()
                      if json_too_deep(value, max_depth=MAX_JSON_DEPTH - 1)), field)
    message = too_deep_message(MAX_JSON_DEPTH)
    return InvalidInput(f"The request body is {message[0].lower()}{message[1:]}",
                        fields={field: [message]})
