"""Tool errors in SAM's error shape, whatever failed: SAM's answer, the tool's own check, or
the arguments before the tool ran.

The REST API answers every error as {"error": {"code", "status", "message", "fields"}}
(core.api.exceptions). A tool answers the same object, as its text and as its structured
content, with `isError: true`, so an agent reads one shape over REST and MCP alike. The
SDK would answer "Error executing tool X: …" text (or pydantic's report of the arguments);
the server (samsite.mcp.server) turns each failure into the object here instead.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from core.api.exceptions import error_body

logger = logging.getLogger(__name__)


class SamToolError(ToolError):
    """A tool's failure carrying SAM's error object (`body`: {"error": {...}})."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__(json.dumps(body, ensure_ascii=False))
        self.body = body


def sam_error(code: str, status: int, message: str, fields: dict[str, list[str]] | None = None,
              **extra: Any) -> SamToolError:
    body = error_body(code, message, fields, **extra)
    body["error"]["status"] = status
    return SamToolError(body)


# pydantic's error types, said as the REST API's serializers say them.
_MESSAGES = {
    "missing": "This field is required.",
    "string_type": "Not a valid string.",
    "int_type": "A valid integer is required.",
    "int_parsing": "A valid integer is required.",
    "int_from_float": "A valid integer is required.",
    "float_type": "A valid number is required.",
    "float_parsing": "A valid number is required.",
    "bool_type": "Must be a valid boolean.",
    "bool_parsing": "Must be a valid boolean.",
    "list_type": "Expected a list of items.",
    "dict_type": "Expected a dictionary of items.",
    "model_type": "Expected a dictionary of items.",
    "extra_forbidden": "Unexpected field.",
}


def _message(error: Any) -> str:
    kind, context = error["type"], error.get("ctx") or {}
    if kind in _MESSAGES:
        return _MESSAGES[kind]
    if kind == "string_too_long":
        return f"Ensure this field has no more than {context['max_length']} characters."
    if kind == "string_too_short":
        return f"Ensure this field has at least {context['min_length']} characters."
    if kind == "too_long":
        return f"Ensure this field has no more than {context['max_length']} elements."
    if kind == "too_short":
        return f"Ensure this field has at least {context['min_length']} elements."
    if kind in ("less_than_equal", "less_than"):
        return f"Ensure this value is less than or equal to {context.get('le', context.get('lt'))}."
    if kind in ("greater_than_equal", "greater_than"):
        return f"Ensure this value is greater than or equal to {context.get('ge', context.get('gt'))}."
    if kind == "literal_error":
        return f"Must be one of {context.get('expected', '')}."
    return str(error["msg"])


def _path(location: tuple[Any, ...]) -> str:
    """A field's path as the REST API names it: `events[0].data.status`."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "non_field_errors"


def invalid_arguments(error: ValidationError) -> dict[str, Any]:
    """SAM's error object for arguments that fail the tool's input schema."""
    fields: dict[str, list[str]] = {}
    for entry in error.errors(include_url=False, include_input=False):
        # A union (`str | None`) reports each arm; the field's path is what the agent needs.
        location = tuple(part for part in entry["loc"] if not (isinstance(part, str) and part in (
            "str", "int", "list[str]", "none", "bool", "dict[str,any]", "function-after", "literal")))
        message = _message(entry)
        messages = fields.setdefault(_path(location), [])
        if message not in messages:
            messages.append(message)
    body = error_body("invalid", "The request has invalid fields.", fields)
    body["error"]["status"] = 400
    return body


def body_of(exc: ToolError, tool: str) -> dict[str, Any]:
    """SAM's error object for a failed tool call, found on the chain of causes the SDK wraps
    a failure in."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, SamToolError):
            return cause.body
        if isinstance(cause, ValidationError):
            return invalid_arguments(cause)
        cause = cause.__cause__
    if isinstance(exc, UnexpectedToolError):
        logger.error("MCP tool %r failed", tool, exc_info=exc)
        return sam_error("server_error", 500, "The tool failed; the server's log has the details.").body
    if str(exc).startswith("Unknown tool"):
        return sam_error("not_found", 404, f"No tool is named {tool!r}.").body
    return sam_error("invalid", 400, str(exc)).body


def as_result(body: dict[str, Any]) -> CallToolResult:
    """A tool error holding `body` as its text and as its structured content."""
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
                          structured_content=body, is_error=True)
