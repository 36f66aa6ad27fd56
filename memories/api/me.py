"""What SAM knows about the caller, and taking it with them (docs/capture.md, "Your controls").

Correcting an item is an ordinary edit (PATCH /api/v1/memories/{id}/, a new version),
deleting one an ordinary delete (a contributor may delete what they wrote), and pausing
capture the caller's own memory mode (PUT /api/v1/me/mode/).
"""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.fields import QueryParamsSerializer
from core.api.openapi import error_responses
from core.api.pagination import StandardPagination, paginated
from memories import selectors
from memories.api.serializers import MemoryOutputSerializer
from memories.capture import transfer


class MyMemoriesQuerySerializer(QueryParamsSerializer):
    kind_group = serializers.ChoiceField(
        choices=selectors.KIND_GROUPS, required=False,
        help_text="fact, preference, style, topic, summary, or knowledge (decisions, solutions, "
                  "standards…): the group of the memory's kind. Not a space's categories, which "
                  "?category= filters on /api/v1/memories/.")
    category = serializers.ChoiceField(
        choices=selectors.KIND_GROUPS, required=False,
        help_text="Deprecated: the former name of kind_group here, still accepted (kind_group wins "
                  "when both are given).")
    archived = serializers.BooleanField(required=False, default=False)

    def validate(self, attrs: dict) -> dict:
        # The former name counts only when the new one is absent.
        former = attrs.pop("category", None)
        attrs.setdefault("kind_group", former)
        return attrs


class MyMemoryOutputSerializer(MemoryOutputSerializer):
    kind_group = serializers.SerializerMethodField(
        help_text="The group of the memory's kind: fact, preference, style, topic, summary or knowledge")
    category = serializers.SerializerMethodField(help_text="Deprecated: the same as kind_group")

    def get_kind_group(self, memory) -> str:
        return selectors.kind_group_of(memory.kind)

    def get_category(self, memory) -> str:
        return selectors.kind_group_of(memory.kind)


class MyExportQuerySerializer(QueryParamsSerializer):
    include_archived = serializers.BooleanField(required=False, default=True)


class MyMemoriesView(APIView):
    pagination_class = StandardPagination

    @extend_schema(parameters=[MyMemoriesQuerySerializer],
                   responses={200: MyMemoryOutputSerializer(many=True),
                              **error_responses(400, 401, 404, e404="Page past the last one")},
                   summary="What SAM knows about me: memories I wrote and those of my personal spaces, "
                           "with where each came from (source)",
                   description="A paged list, newest first (not grouped): each memory carries its "
                               "`kind_group`, and `?kind_group=` lists one group.")
    def get(self, request: Request) -> Response:
        query = MyMemoriesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        filters = selectors.MemoryFilters(about_me=True, archived=query.validated_data["archived"],
                                          kind_group=query.validated_data.get("kind_group"))
        rows = selectors.memory_list(actor=request.user, filters=filters)
        return paginated(self, request, rows, MyMemoryOutputSerializer)


class MyExportView(APIView):
    @extend_schema(parameters=[MyExportQuerySerializer],
                   responses={200: OpenApiResponse(description="JSON Lines: one SAM memory entry a line, "
                                                               "as GET /api/v1/memories/{id}/ shows it"),
                              **error_responses(400, 401)},
                   summary="Everything SAM knows about me as a SAM bundle (JSONL), for sam_import")
    def get(self, request: Request) -> StreamingHttpResponse:
        query = MyExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        lines = transfer.about_me_lines(actor=request.user,
                                        include_archived=query.validated_data["include_archived"])
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
        response["Content-Disposition"] = f'attachment; filename="{transfer.ABOUT_ME_FILE_NAME}"'
        return response
