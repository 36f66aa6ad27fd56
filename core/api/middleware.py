"""The API answers errors in its one JSON shape, whatever raised them and in any DEBUG mode.

DRF's exception handler (core.api.exceptions) shapes the errors of API views. Others
never reach it: a URL that matches no view, an exception DRF does not handle, and
anything raised in middleware (the token and session lookups, the rights memo) before a
view runs. Django turns those into HTML pages ("Not Found", "Server Error (500)", or the
debug pages). This middleware replaces them on /api/ paths with
{"error": {"code", "message", "fields"}}, and answers 503 with Retry-After, on every path,
when the cause is that the database cannot be reached.

It works on the response, not with try/except: Django turns an exception into a response
(its 404/500 page) at the layer that raised it, so none reaches an outer middleware. The
exception itself is recorded on the request when Django reports it (got_request_exception).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

import psycopg
from django.core.signals import got_request_exception
from django.db import InterfaceError
from django.db import OperationalError as DjangoOperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from rest_framework.response import Response as DrfResponse

from core.api.exceptions import error_body

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"
MCP_PATH = "/mcp"
# Long enough for a restart of the database server (the embedded one takes ~1.5 s).
RETRY_AFTER_SECONDS = 5
# Connection exceptions (08xxx) and the server shutting down or starting (57P01-57P03).
# Other operational errors (a cancelled statement, a deadlock) are faults of one query.
_UNAVAILABLE_SQLSTATE_PREFIXES = ("08", "57P01", "57P02", "57P03")

DATABASE_UNAVAILABLE_MESSAGE = (
    "The database cannot be reached right now. Nothing was changed; try again shortly."
)
SERVER_ERROR_MESSAGE = (
    "Something went wrong on the server; the error is logged under this response's "
    "X-Request-ID. Try again, or report it with that id."
)
# Codes for the statuses Django answers by itself (DRF's own errors already have theirs).
_CODES = {400: "bad_request", 403: "forbidden", 404: "not_found", 405: "method_not_allowed"}
_MESSAGES = {400: "The request is malformed.", 404: "Not found.", 500: SERVER_ERROR_MESSAGE}


def is_database_unavailable(exc: BaseException | None) -> bool:
    """True when `exc` says the database cannot be reached (down, restarting, the connection
    lost or refused), False for errors of a query on a working connection."""
    if isinstance(exc, InterfaceError | psycopg.InterfaceError):
        return True  # the connection is already closed
    if not isinstance(exc, DjangoOperationalError | psycopg.OperationalError):
        return False
    # Django wraps the driver's error; the driver's carries the SQLSTATE. A failed
    # connection attempt or a connection lost mid-query has none.
    driver_error = exc.__cause__ if isinstance(exc.__cause__, psycopg.Error) else exc
    sqlstate = getattr(driver_error, "sqlstate", None)
    return sqlstate is None or sqlstate.startswith(_UNAVAILABLE_SQLSTATE_PREFIXES)


def _remember_exception(sender: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
    # Django sends this signal from inside its `except` block for any uncaught exception,
    # then builds the 500 page; the exception is not passed, so it is read from
    # sys.exc_info() here and kept on the request for the middleware to look at.
    if request is not None:
        request.sam_uncaught_exception = sys.exc_info()[1]  # type: ignore[attr-defined]


def database_unavailable_response(request: HttpRequest) -> HttpResponse:
    """503 with Retry-After: JSON on the API, a plain page elsewhere (the admin)."""
    if _is_api(request):
        response: HttpResponse = JsonResponse(
            error_body("database_unavailable", DATABASE_UNAVAILABLE_MESSAGE), status=503
        )
    else:
        response = HttpResponse(
            f"<!doctype html><title>Service unavailable</title>"
            f"<h1>Service unavailable (503)</h1><p>{DATABASE_UNAVAILABLE_MESSAGE}</p>",
            status=503,
        )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _is_api(request: HttpRequest) -> bool:
    # The MCP endpoint (samsite/mcp) answers machines too: JSON errors there as well.
    return request.path_info.startswith(API_PREFIX) or request.path_info.rstrip("/") == MCP_PATH


def _shaped_already(response: HttpResponseBase) -> bool:
    # DRF responses went through the exception handler (the browsable API renders those
    # as HTML on purpose); a JSON body is a view's own error answer.
    return isinstance(response, DrfResponse) or response.get("Content-Type", "").startswith(
        "application/json"
    )


class ApiErrorMiddleware:
    """Put right after RequestIdMiddleware: everything inside it (sessions, auth, the
    rights memo, the views) is covered, and its answers still carry the request id."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        got_request_exception.connect(_remember_exception, dispatch_uid="sam-api-error-middleware")

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if response.status_code < 400:
            return response
        if is_database_unavailable(getattr(request, "sam_uncaught_exception", None)):
            logger.warning("database unavailable: answered 503 to %s %s", request.method,
                           request.path)
            return database_unavailable_response(request)
        if not _is_api(request) or _shaped_already(response):
            return response
        status = response.status_code
        code = _CODES.get(status, "server_error" if status >= 500 else "error")
        message = _MESSAGES.get(status, f"{response.reason_phrase}.")
        shaped = JsonResponse(error_body(code, message), status=status)
        if "Allow" in response:
            shaped["Allow"] = response["Allow"]
        return shaped
