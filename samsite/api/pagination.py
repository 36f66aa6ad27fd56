"""Page-number pagination with a client-chosen page size (capped)."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request


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
