"""The id of the request being served, for audit events and logs.

The middleware binds it for the length of a request; management commands and jobs may
bind their own with `request_id_bound` so their audit events group the same way.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

HEADER = "X-Request-ID"
MAX_LENGTH = 64
# Short and inert: the id is echoed in a response header, stored and shown in the admin.
VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")

_current: ContextVar[str | None] = ContextVar("sam_request_id", default=None)


def is_valid_request_id(value: str) -> bool:
    return VALID_REQUEST_ID.fullmatch(value) is not None


def new_request_id() -> str:
    return uuid.uuid4().hex


def current_request_id() -> str | None:
    """The request id bound in this context, or None outside a request."""
    return _current.get()


@contextmanager
def request_id_bound(value: str | None = None) -> Iterator[str]:
    """Bind `value` (or a new id) as the current request id until the block ends."""
    request_id = value or new_request_id()
    if not is_valid_request_id(request_id):
        raise ValueError(f"A request id is 1-{MAX_LENGTH} letters, digits, '.', '_', ':' or '-'.")
    token = _current.set(request_id)
    try:
        yield request_id
    finally:
        _current.reset(token)


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every record: the one bound now, else that of the request the
    record is about (Django logs a 4xx or 5xx after the middleware has unbound it); None
    outside a request or a job that bound one."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = current_request_id()
        if request_id is None:
            request_id = getattr(getattr(record, "request", None), "request_id", None)
        record.request_id = request_id
        return True
