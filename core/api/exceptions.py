"""One error shape for the whole API: {"error": {"code", "message", "fields", ...}}."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError as DjangoInterfaceError
from django.db import OperationalError as DjangoOperationalError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core import replica
from core.errors import CryptoError, DomainError

logger = logging.getLogger(__name__)


def flatten_errors(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """Turn DRF's nested error detail into {"path.to.field": [messages]}."""
    fields: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
                path = f"{prefix}[{key}]"  # list items, as DRF reports them for ListField
            else:
                path = f"{prefix}.{key}" if prefix else str(key)
            if key == "non_field_errors" and not prefix:
                path = "non_field_errors"
            for sub_path, messages in flatten_errors(value, path).items():
                fields.setdefault(sub_path, []).extend(messages)
    elif isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            fields[prefix or "non_field_errors"] = [str(item) for item in detail]
        else:
            for index, item in enumerate(detail):
                if not item:
                    continue
                path = f"{prefix}[{index}]" if prefix else f"[{index}]"
                for sub_path, messages in flatten_errors(item, path).items():
                    fields.setdefault(sub_path, []).extend(messages)
    else:
        fields[prefix or "non_field_errors"] = [str(detail)]
    return fields


def error_body(code: str, message: str, fields: dict[str, list[str]] | None = None,
               **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "fields": fields or {}, **extra}}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DjangoOperationalError | DjangoInterfaceError) and replica.will_retry():
        # The read replica went away under this read-only request, which runs again on the
        # primary at once (core/replica.py): not an error of the server's.
        return Response(error_body("database_unavailable", "Read replica unavailable."),
                        status=status.HTTP_503_SERVICE_UNAVAILABLE)
    if isinstance(exc, CryptoError):
        # Never answer with garbage: a missing or wrong key stops the request, loudly.
        logger.error("encryption key problem: %s", exc)
        return Response(error_body("encryption_key_error", str(exc)),
                        status=status.HTTP_503_SERVICE_UNAVAILABLE)
    if isinstance(exc, DomainError):
        return Response(
            error_body(exc.code, exc.message, exc.fields, **exc.extra), status=exc.status_code
        )
    if isinstance(exc, DjangoValidationError):
        fields = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        exc = exceptions.ValidationError(fields)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        body = error_body("invalid", "The request has invalid fields.", flatten_errors(exc.detail))
    else:
        detail = exc.detail if isinstance(exc, exceptions.APIException) else str(exc)
        code = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
        body = error_body(code if isinstance(code, str) else "error", str(detail))
    if response.status_code == status.HTTP_401_UNAUTHORIZED:
        body["error"]["code"] = "not_authenticated"
    response.data = body
    return response
