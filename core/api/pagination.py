"""Page-number pagination with a client-chosen page size (capped)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer


class StandardPagination(PageNumberPagination):
    """`?page=` (from 1) and `?page_size=` (default 50, at most 500).

    Lists answer `{count, next, previous, results}`. A page that is not a number from 1 to
    the last page is 404; a page size that is not a positive integer is 400, and one above
    the cap is cut to it.

    Views declare `pagination_class = StandardPagination` so drf-spectacular documents the
    envelope and both parameters on every list operation.
    """

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
    last_page_strings = ()  # `?page=last` is not an integer, as the schema says

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if size < 1:
            # DRF would fall back to the default; a client that sent it meant something.
            raise ValidationError({self.page_size_query_param: ["Must be a positive integer."]})
        return min(size, self.max_page_size)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"]["minimum"] = 1
                parameter["description"] = "A page number, from 1 (404 past the last page)."
            elif parameter["name"] == self.page_size_query_param:
                parameter["schema"]["minimum"] = 1
                parameter["description"] = (f"Results per page (default {self.page_size}, "
                                            f"at most {self.max_page_size}).")
        return parameters


def paginated(view: Any, request: Request, rows: Any, serializer_class: type[Serializer], *,
              prepare: Callable[[list[Any]], list[Any]] | None = None) -> Response:
    """One page of `rows` through `serializer_class`, in the list envelope.

    `prepare` runs on the page's rows before they are serialised (to hide what the reader
    may not see, for one query per page rather than per row).
    """
    paginator = view.pagination_class()
    page = paginator.paginate_queryset(rows, request, view=view)
    if prepare is not None:
        page = prepare(page)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)
