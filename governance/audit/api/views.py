"""Audit timelines: query serializer -> one selector call -> paginated output."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import error_responses
from core.api.pagination import StandardPagination, paginated
from governance.audit import selectors
from governance.audit.api import serializers as s

ERRORS = error_responses(400, 401, 403, 404, e400="Invalid filters",
                         e403="You may see this but not read its audit timeline",
                         e404="Not found (or not visible to you), or a page past the last one")
DESCRIPTION = (
    "Audit events (with what changed) and recall events (with the query, the memory's rank, "
    "score, signals and rationale), newest first. Filter with `action` (comma-separated; "
    "`recall` for recall events), `after` (inclusive) and `before` (exclusive)."
)


def _filters(request: Request) -> selectors.TimelineFilters:
    query = s.AuditTimelineQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    values = query.validated_data
    return selectors.TimelineFilters(
        actions=tuple(values.get("action", ())), after=values.get("after"), before=values.get("before")
    )


class _TimelineView(APIView):
    pagination_class = StandardPagination

    def _page(self, request: Request, timeline: selectors.Timeline) -> Response:
        return paginated(self, request, timeline, s.TimelineItemOutputSerializer)


class MemoryTimelineView(_TimelineView):
    @extend_schema(
        parameters=[OpenApiParameter("id", str, OpenApiParameter.PATH, description="Memory id."),
                    s.AuditTimelineQuerySerializer],
        responses={200: s.TimelineItemOutputSerializer(many=True), **ERRORS},
        summary="A memory's audit timeline", description=DESCRIPTION,
    )
    def get(self, request: Request, id: str) -> Response:
        timeline = selectors.memory_timeline(actor=request.user, memory_id=id, filters=_filters(request))
        return self._page(request, timeline)


class SpaceTimelineView(_TimelineView):
    @extend_schema(
        parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH, description="Space slug."),
                    s.AuditTimelineQuerySerializer],
        responses={200: s.TimelineItemOutputSerializer(many=True), **ERRORS},
        summary="A space's audit timeline", description=DESCRIPTION,
    )
    def get(self, request: Request, slug: str) -> Response:
        timeline = selectors.space_timeline(actor=request.user, slug=slug, filters=_filters(request))
        return self._page(request, timeline)
