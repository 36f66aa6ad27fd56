"""Exceptions carrying SAM's error shape: {"error": {"code", "message", "fields", …}}.

Each HTTP status a client acts on differently has its own class, so callers catch what they
mean (`except NotFound:`) and still read SAM's `code` (e.g. `version_conflict`) and the
messages per field.
"""

from __future__ import annotations

from typing import Any

import httpx


class SamError(Exception):
    """An answer SAM refused, or no answer at all (`status` 0)."""

    def __init__(self, message: str, *, status: int = 0, code: str = "error",
                 fields: dict[str, list[str]] | None = None, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.fields = fields or {}
        self.body = body or {}

    def __str__(self) -> str:
        head = f"{self.status} {self.code}: {self.message}" if self.status else self.message
        details = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in self.fields.items())
        return f"{head} ({details})" if details else head


class ValidationError(SamError):
    """400 (and 413, 415): the request's shape or values; `fields` says which."""


class AuthenticationError(SamError):
    """401: no token, or a token that is unknown, expired or revoked."""


class PermissionDenied(SamError):
    """403: the token may not do this (role, scope, or a space it only reads)."""


class NotFound(SamError):
    """404: no such thing, or one the token may not see (SAM does not say which)."""


class Conflict(SamError):
    """409: a stale version, a reused Idempotency-Key, a memory mode that refuses writes."""


class RateLimited(SamError):
    """429: too many attempts; try again later."""


class ServerError(SamError):
    """5xx: SAM failed; the request may be retried."""


class TransportError(SamError):
    """SAM could not be reached, or the connection broke before an answer came."""


_BY_STATUS: dict[int, type[SamError]] = {
    400: ValidationError, 413: ValidationError, 415: ValidationError,
    401: AuthenticationError, 403: PermissionDenied, 404: NotFound, 409: Conflict, 429: RateLimited,
}


def error_from_response(response: httpx.Response) -> SamError:
    """The exception for a refused answer, read from SAM's error body when there is one."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        code = str(error.get("code") or "error")
        message = str(error.get("message") or response.reason_phrase)
        raw_fields = error.get("fields") or {}
        fields = {str(key): [str(m) for m in (value if isinstance(value, list) else [value])]
                  for key, value in raw_fields.items()} if isinstance(raw_fields, dict) else {}
    else:
        code, message, fields = "error", response.text[:500] or response.reason_phrase, {}
    status = response.status_code
    kind = _BY_STATUS.get(status, ServerError if status >= 500 else SamError)
    return kind(message, status=status, code=code, fields=fields,
                body=payload if isinstance(payload, dict) else {})
