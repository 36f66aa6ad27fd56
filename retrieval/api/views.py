"""Recall and context-pack endpoints."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import error_responses
from retrieval import augment, pipeline, presenters, services
from retrieval.api import serializers as s
from retrieval.channels import Filters
from retrieval.context import RecallContext

# 404: a named space you cannot see.
ERRORS = error_responses(400, 401, 404)


def recall_request(data: dict[str, Any]) -> pipeline.RecallRequest:
    """The recall a request's validated body asks for."""
    filters = data.get("filters") or {}
    ui_state = data.get("ui_state") or {}
    context = RecallContext(
        query=data.get("query", ""),
        conversation=tuple(dict(turn) for turn in data.get("current_conversation", [])),
        last_turns=data.get("last_n_turns", 8),
        active_task=data.get("active_task", ""),
        ui_state=dict(ui_state),
    )
    return pipeline.RecallRequest(
        context=context,
        spaces=tuple(sorted(data.get("spaces", []))),
        k=data.get("k", 5),
        query_type=data.get("query_type", "semantic"),
        topic=(data.get("topic") or "").strip().lower(),
        profile=data.get("profile"),
        weights=data.get("weights"),
        thresholds=dict(data["thresholds"]) if data.get("thresholds") else None,
        filters=Filters(
            memory_type=filters.get("memory_type"),
            kind=filters.get("kind"),
            tags=tuple(sorted(t.strip().lower() for t in filters.get("tags", []))),
            reliability=filters.get("reliability"),
            after=filters.get("after"),
            before=filters.get("before"),
            include_archived=filters.get("include_archived", False),
        ),
        token_budget=data.get("token_budget"),
        as_of=data.get("as_of"),
        tiered=data.get("tiered", False),
    )


class RecallView(APIView):
    reads_only = True  # its reads may come from a read replica (core/replica.py)

    @extend_schema(
        request=s.RecallInputSerializer, responses={200: s.RecallOutputSerializer, **ERRORS},
        summary="Recall the memories that matter now, each with its reason",
    )
    def post(self, request: Request) -> Response:
        data = s.RecallInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # Always audited; `track` (and the memory modes) decide only counters and the event.
        answer = services.recall_run(actor=request.user, request=recall_request(data.validated_data),
                                     track=data.validated_data["track"])
        request._request.sam_recall_timings = answer.instance.timings_ms  # type: ignore[attr-defined]  # /metrics
        return Response(s.RecallOutputSerializer(
            presenters.recall_envelope(answer.instance, redaction_report=answer.redaction_report)).data)


class ContextPackView(APIView):
    reads_only = True  # its reads may come from a read replica (core/replica.py)

    @extend_schema(
        request=s.ContextPackInputSerializer, responses={200: s.ContextPackOutputSerializer, **ERRORS},
        summary="A context pack (JSON and Markdown) for a prompt or a handoff",
    )
    def post(self, request: Request) -> Response:
        data = s.ContextPackInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        # Always audited; `track` (and the memory modes) decide only counters and the event.
        answer = services.context_pack_build(
            actor=request.user, request=recall_request(values), pack_type=values["pack_type"],
            token_budget=values["token_budget"], include_unvalidated=values["include_unvalidated"],
            track=values["track"])
        request._request.sam_recall_timings = answer.recall.timings_ms  # type: ignore[attr-defined]  # /metrics
        pack = answer.pack
        return Response(s.ContextPackOutputSerializer({"json": pack.json, "markdown": pack.markdown}).data)


class PromptAugmentationView(APIView):
    reads_only = True  # its reads may come from a read replica (core/replica.py)

    @extend_schema(
        request=s.PromptAugmentationInputSerializer,
        responses={200: s.PromptAugmentationOutputSerializer, **ERRORS},
        summary="The block a chat app puts in its system prompt for a user",
        description="Core memories always, then by priority and relevance to the message; at most "
                    "`max_items` notes and `max_chars` characters, at most `max_summaries` summaries; "
                    "grouped by category; each note quoted, instruction-like text neutralised.",
    )
    def post(self, request: Request) -> Response:
        data = s.PromptAugmentationInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        result = augment.augment(actor=request.user, space=v["space"], message=v["message"],
                                 limits=augment.Limits(max_items=v["max_items"], max_chars=v["max_chars"],
                                                       max_summaries=v["max_summaries"]),
                                 track=v["track"])
        notes = [presenters.augmentation_note(n) for n in result.notes]
        return Response(s.PromptAugmentationOutputSerializer({
            "block": result.block, "notes": notes, "chars": result.chars, "left_out": result.left_out,
            "silenced": result.silenced, "tracked": result.tracked}).data)
