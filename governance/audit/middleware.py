"""Give every request an id: the caller's X-Request-ID when it is safe, else a new one."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from governance.audit.request_id import HEADER, is_valid_request_id, new_request_id, request_id_bound


class RequestIdMiddleware:
    """Binds the request id for audit_record and echoes it in the X-Request-ID header.

    A caller's id lets an agent correlate its own logs with SAM's audit log. It is taken
    as given, not trusted: an id that is too long or has unsafe characters is replaced,
    not rejected, so a bad header never fails a request.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        offered = request.headers.get(HEADER, "")
        request_id = offered if is_valid_request_id(offered) else new_request_id()
        request.request_id = request_id  # type: ignore[attr-defined]
        with request_id_bound(request_id):
            response = self.get_response(request)
        response[HEADER] = request_id
        return response
