"""Memories API: input serializer -> one service or selector call -> output serializer."""

from __future__ import annotations

import json
from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import (
    action,
    api_view,
    authentication_classes,
    permission_classes,
)
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.exceptions import error_body
from core.api.openapi import error_responses
from core.api.pagination import StandardPagination, paginated
from core.results import WriteResult
from governance import retention
from governance import spaces as space_services
from memories import selectors, services
from memories.api import serializers as s
from memories.api.idempotency import HEADER_PARAMETER, idempotent
from memories.lifecycle import curation
from memories.lifecycle.api import FeedbackViews
from memories.models import Memory
from memories.schema import MEMORY_ENTRY_SCHEMA

ERRORS = error_responses(400, 401, 404)
# Writes: 409 when the memory mode refuses writes now (paused, off), or the state clashes.
WRITE_ERRORS = {**ERRORS, **error_responses(
    403, 409, e409="The memory mode refuses writes (mode_refuses_writes), or the write clashes with "
              "what is stored (conflict, version_conflict with error.current_version)")}
# Lists: 404 for a page past the last one.
LIST_ERRORS = error_responses(400, 401, 404, e404="Page past the last one")


def _write_answer(result: WriteResult[Memory], *, code: int = status.HTTP_200_OK) -> Response:
    body = {
        "memory": s.MemoryOutputSerializer(result.instance).data,
        "changelog_diff": list(result.changelog),
        "suggested_fields": list(result.suggested),
        "redaction_report": list(result.redaction_report),
        "persisted": result.persisted,
        "reinforced": result.reinforced,
    }
    # A duplicate create answers 200 with the memory it reinforced: nothing was created.
    created = result.persisted and not result.reinforced
    return Response(body, status=code if created else status.HTTP_200_OK)


def _keep_created(response: Response) -> dict[str, Any] | None:
    """What a create replay needs: the id and the reports, not the memory's text."""
    # A reinforcing create (200) is kept too: its retry must not reinforce a second time.
    reinforced = bool(response.data.get("reinforced"))
    if not response.data.get("persisted") or (
            response.status_code != status.HTTP_201_CREATED and not reinforced):
        return None
    return {"memory_id": response.data["memory"]["id"], "reinforced": reinforced,
            "suggested_fields": list(response.data["suggested_fields"]),
            "redaction_report": list(response.data["redaction_report"]),
            "changelog_diff": list(response.data["changelog_diff"])}


def _replay_created(request: Request, answer: dict[str, Any]) -> Response:
    # Through the normal read path: the replay shows the memory as the caller may see it now.
    memory = selectors.memory_get(actor=request.user, memory_id=answer["memory_id"])
    return _write_answer(WriteResult(memory, changelog=answer["changelog_diff"],
                                     suggested=answer["suggested_fields"],
                                     redaction_report=answer["redaction_report"],
                                     reinforced=bool(answer.get("reinforced"))),
                         code=status.HTTP_201_CREATED)


def _keep_bulk(response: Response) -> dict[str, Any] | None:
    """A bulk answer holds ids, counts, errors and redaction positions: kept as it is."""
    results = response.data.get("results") or []
    if not any(row.get("ok") and row.get("persisted") for row in results):
        return None
    return json.loads(json.dumps(response.data))


def _replay_bulk(request: Request, answer: dict[str, Any]) -> Response:
    return Response(answer)


class SpaceViewSet(viewsets.ViewSet):
    lookup_field = "slug"
    lookup_value_regex = r"[-a-zA-Z0-9_]+"
    pagination_class = StandardPagination  # what drf-spectacular reads to document the list envelope

    @extend_schema(responses={200: s.SpaceOutputSerializer(many=True), **LIST_ERRORS}, summary="List spaces")
    def list(self, request: Request) -> Response:
        return paginated(self, request, selectors.space_list(actor=request.user), s.SpaceOutputSerializer)

    @extend_schema(request=s.SpaceCreateInputSerializer,
                   responses={201: s.SpaceOutputSerializer, **ERRORS,
                              **error_responses(409, 429, e409="The slug is taken",
                                                e429="Too many unavailable slugs tried lately")},
                   summary="Create a space")
    def create(self, request: Request) -> Response:
        data = s.SpaceCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        space = space_services.space_create(actor=request.user, **data.validated_data)
        return Response(s.SpaceOutputSerializer(space).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: s.SpaceOutputSerializer, **ERRORS}, summary="Get a space")
    def retrieve(self, request: Request, slug: str) -> Response:
        return Response(s.SpaceOutputSerializer(selectors.space_get(actor=request.user, slug=slug)).data)

    @extend_schema(request=s.SpaceUpdateInputSerializer,
                   responses={200: s.SpaceOutputSerializer, **ERRORS, **error_responses(403)},
                   summary="Edit a space")
    def partial_update(self, request: Request, slug: str) -> Response:
        data = s.SpaceUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        space = space_services.space_update(actor=request.user, slug=slug, changes=data.validated_data)
        return Response(s.SpaceOutputSerializer(space).data)

    @extend_schema(responses={200: s.DeletionReceiptSerializer, **ERRORS, **error_responses(403)},
                   summary="Delete a space, its memories and its data keys (owners)")
    def destroy(self, request: Request, slug: str) -> Response:
        return Response(retention.space_delete(actor=request.user, slug=slug))

    @extend_schema(responses={200: s.SpaceStatsOutputSerializer, **ERRORS},
                   summary="What a space holds: counts by type, kind and embedding status, top tags",
                   description="Counted over the memories you may read.")
    @action(detail=True, methods=["get"])
    def stats(self, request: Request, slug: str) -> Response:
        stats = selectors.space_stats(actor=request.user, slug=slug)
        return Response(s.SpaceStatsOutputSerializer(stats).data)

    @extend_schema(request=None, responses={200: s.DeletionReceiptSerializer, **ERRORS,
                                            **error_responses(403)},
                   summary="Forget everything in a user space and return a deletion receipt")
    @action(detail=True, methods=["post"])
    def forget(self, request: Request, slug: str) -> Response:
        return Response(retention.space_forget(actor=request.user, slug=slug))


class MemoryViewSet(FeedbackViews, viewsets.ViewSet):
    lookup_value_regex = r"[A-Za-z0-9_-]+"
    pagination_class = StandardPagination  # what drf-spectacular reads to document the list envelope

    @extend_schema(
        parameters=[s.MemoryListQuerySerializer],
        responses={200: s.MemoryOutputSerializer(many=True), **LIST_ERRORS},
        summary="List memories",
        description="Active memories by default; `archived=true` or `any` to include archived ones.",
    )
    def list(self, request: Request) -> Response:
        query = s.MemoryListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        archived = {"false": False, "true": True, "any": None}[q["archived"]]
        filters = selectors.MemoryFilters(
            spaces=[p for p in q.get("space", "").split(",") if p],
            memory_type=q.get("memory_type"),
            kind=q.get("kind"),
            tags=[t.strip().lower() for t in q.get("tags", "").split(",") if t.strip()],
            reliability=q.get("reliability"),
            archived=archived,
            embedding_status=q.get("embedding_status"),
            text=q.get("text"),
            updated_after=q.get("updated_after"),
            updated_before=q.get("updated_before"),
            category=q.get("category"),
        )
        queryset = selectors.memory_list(actor=request.user, filters=filters)
        return paginated(self, request, queryset, s.MemoryOutputSerializer)

    @extend_schema(request=s.MemoryCreateInputSerializer,
                   responses={201: s.MemoryWriteOutputSerializer,
                              200: OpenApiResponse(s.MemoryWriteOutputSerializer,
                                                   description="Incognito: nothing kept (persisted false)"),
                              **WRITE_ERRORS},
                   parameters=[HEADER_PARAMETER],
                   summary="Create a memory")
    @idempotent("memories.create", keep=_keep_created, replay=_replay_created)
    def create(self, request: Request) -> Response:
        data = s.MemoryCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = services.memory_create(actor=request.user, data=data.validated_data, read_back=True)
        return _write_answer(result, code=status.HTTP_201_CREATED)

    @extend_schema(responses={200: s.MemoryOutputSerializer, **ERRORS}, summary="Get a memory")
    def retrieve(self, request: Request, pk: str) -> Response:
        memory = selectors.memory_get(actor=request.user, memory_id=pk)
        return Response(s.MemoryOutputSerializer(memory).data)

    @extend_schema(
        request=s.MemoryUpdateInputSerializer,
        responses={200: s.MemoryWriteOutputSerializer, **WRITE_ERRORS},
        summary="Edit a memory (names the version it edits)",
    )
    def partial_update(self, request: Request, pk: str) -> Response:
        data = s.MemoryUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        changes: dict[str, Any] = dict(data.validated_data)
        version = changes.pop("version")
        reason = changes.pop("reason", "")
        result = services.memory_update(
            actor=request.user, memory_id=pk, expected_version=version, changes=changes,
            reason=reason,
        )
        return _write_answer(result)

    @extend_schema(responses={204: None, **WRITE_ERRORS}, summary="Delete a memory for good")
    def destroy(self, request: Request, pk: str) -> Response:
        services.memory_delete(actor=request.user, memory_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=s.MemoryReasonInputSerializer,
                   responses={200: s.MemoryWriteOutputSerializer, **WRITE_ERRORS},
                   summary="Archive a memory (soft, restorable)")
    @action(detail=True, methods=["post"])
    def archive(self, request: Request, pk: str) -> Response:
        data = s.MemoryReasonInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = services.memory_archive(
            actor=request.user, memory_id=pk, reason=data.validated_data["reason"]
        )
        return _write_answer(result)

    @extend_schema(request=s.MemoryReasonInputSerializer,
                   responses={200: s.MemoryWriteOutputSerializer, **WRITE_ERRORS},
                   summary="Restore an archived memory")
    @action(detail=True, methods=["post"])
    def restore(self, request: Request, pk: str) -> Response:
        data = s.MemoryReasonInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = services.memory_unarchive(
            actor=request.user, memory_id=pk, reason=data.validated_data["reason"]
        )
        return _write_answer(result)

    @extend_schema(responses={200: s.MemoryVersionOutputSerializer(many=True),
                              **error_responses(400, 401, 404, e404="No such memory (or not visible to you), "
                                                                    "or a page past the last one")},
                   summary="A memory's versions, newest first")
    @action(detail=True, methods=["get"], url_path="versions", pagination_class=StandardPagination)
    def versions(self, request: Request, pk: str) -> Response:
        versions = selectors.memory_version_list(actor=request.user, memory_id=pk)
        return paginated(self, request, versions, s.MemoryVersionOutputSerializer,
                         prepare=lambda page: selectors.memory_versions_prepared(page, actor=request.user))

    @extend_schema(
        parameters=[OpenApiParameter("version", int, OpenApiParameter.PATH)],
        responses={200: s.MemoryVersionOutputSerializer, **ERRORS}, summary="One version",
    )
    @action(detail=True, methods=["get"], url_path=r"versions/(?P<version>[0-9]+)")
    def version_detail(self, request: Request, pk: str, version: str) -> Response:
        found = selectors.memory_version_get(actor=request.user, memory_id=pk, version=int(version))
        return Response(s.MemoryVersionOutputSerializer(found).data)

    @extend_schema(
        parameters=[OpenApiParameter("version", int, OpenApiParameter.PATH)],
        request=s.MemoryVersionRestoreInputSerializer,
        responses={200: s.MemoryWriteOutputSerializer, **WRITE_ERRORS},
        summary="Restore a version (the restore is a new version)",
    )
    @action(detail=True, methods=["post"], url_path=r"versions/(?P<version>[0-9]+)/restore")
    def version_restore(self, request: Request, pk: str, version: str) -> Response:
        data = s.MemoryVersionRestoreInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = services.memory_version_restore(
            actor=request.user, memory_id=pk, version=int(version),
            expected_version=data.validated_data.get("version"),
        )
        return _write_answer(result)

    @extend_schema(
        request=s.MemoryMergeInputSerializer,
        responses={200: s.MemoryMergeOutputSerializer, **WRITE_ERRORS},
        summary="Merge other memories into this one (curators)",
        description="The sources are marked superseded by this memory and archived; this memory gains "
                    "the union of their phrases, tags and training examples, and any title, content or "
                    "summary you send, as a new version.",
    )
    @action(detail=True, methods=["post"])
    def merge(self, request: Request, pk: str) -> Response:
        data = s.MemoryMergeInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        body = data.validated_data
        changes = {name: body[name] for name in curation.MERGE_TEXT_FIELDS if name in body}
        result = curation.memory_merge(actor=request.user, target_id=pk, source_ids=body["sources"],
                                       expected_version=body["version"], changes=changes,
                                       reason=body["reason"])
        answer = _write_answer(result.write)
        answer.data.update({"merged": result.merged, "dropped": result.dropped})
        return answer

    @extend_schema(
        request=s.MemoryConflictResolveInputSerializer,
        responses={200: s.MemoryConflictResolveOutputSerializer, **WRITE_ERRORS},
        summary="Resolve a conflict recall flagged: keep one memory, supersede and archive the other",
    )
    @action(detail=True, methods=["post"], url_path="resolve-conflict")
    def resolve_conflict(self, request: Request, pk: str) -> Response:
        data = s.MemoryConflictResolveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        body = data.validated_data
        result = curation.memory_conflict_resolve(actor=request.user, memory_id=pk, other_id=body["other"],
                                                  keep=body["keep"], reason=body["reason"])
        return Response({"kept": s.MemoryOutputSerializer(result.kept).data,
                         "superseded": s.MemoryOutputSerializer(result.superseded).data})

    @extend_schema(
        request=s.MemoryBulkInputSerializer,
        responses={201: s.MemoryBulkOutputSerializer, 200: s.MemoryBulkOutputSerializer,
                   **error_responses(400, 401, 409,
                                     e400="Invalid body, or atomic and some rows invalid: nothing written",
                                     e409="Idempotency-Key reused with another body")},
        parameters=[HEADER_PARAMETER],
        summary="Create up to 1000 memories, with per-row errors",
    )
    @action(detail=False, methods=["post"])
    @idempotent("memories.bulk", keep=_keep_bulk, replay=_replay_bulk)
    def bulk(self, request: Request) -> Response:
        data = s.MemoryBulkInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = services.memory_bulk_submit(actor=request.user, items=data.validated_data["items"],
                                             invalid=data.validated_data["invalid"],
                                             atomic=data.validated_data["atomic"])
        if report.refused:
            fields = {f"items[{i}].{k}": v for i, e in report.errors.items() for k, v in e.items()}
            body = error_body("invalid", "Some rows are invalid; nothing was written.", fields)
            body["results"] = report.results
            return Response(body, status=status.HTTP_400_BAD_REQUEST)
        code = status.HTTP_201_CREATED if not report.errors else status.HTTP_200_OK
        return Response(s.MemoryBulkOutputSerializer(report.summary()).data, status=code)


@extend_schema(responses={200: OpenApiResponse(description="JSON Schema (draft-07)")},
               summary="JSON Schema of a SAM memory entry", auth=[])
@api_view(["GET"])
@permission_classes([AllowAny])
@authentication_classes([])
def memory_entry_schema(request: Request) -> Response:
    return Response(MEMORY_ENTRY_SCHEMA)
