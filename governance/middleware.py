"""Request-scoped state of the access gateway."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from governance.access import rights_memoised


class RightsMemoMiddleware:
    """Keeps access.rights() answers for the length of one request.

    A request asks for the same actor's rights two or three times (find the object, check
    the action, hide unseen links); each answer costs about four queries. The memo ends
    with the request, and services that change rights clear it, so nothing outlives the
    request or hides a change made within it. A streamed body is produced after this
    returns, outside the memo: it computes rights afresh, which is only slower.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with rights_memoised():
            return self.get_response(request)
