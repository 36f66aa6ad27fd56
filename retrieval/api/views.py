"""Recall and context-pack endpoints."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from retrieval import augment, packs, pipeline, services
from retrieval.api import serializers as s
from retrieval.channels import Filters
from retrieval.context import RecallContext
from samsite.api.openapi import error_responses

# 404: a named space you cannot see.
ERRORS = error_responses(400, 401, 404)


def recall_request(data: dict[str, Any], *, query_type: str | None = None) -> pipeline.RecallRequest:
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
        query_type=query_type or data.get("query_type", "semantic"),
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


def ranked_item(item: pipeline.RankedItem) -> dict[str, Any]:
    row = item.row
    return {
        "id": item.id, "space": row["space_slug"], "title": row["title"], "summary": row["summary"],
        "kind": row["kind"], "memory_type": row["memory_type"], "score": round(item.score, 4),
        "signals": item.signals.as_dict(), "rationale": item.rationale, "highlights": item.highlights,
        "conflict": item.conflict,
        "source": {"type": row["source_type"], "ref": row["source_ref"], "uri": row["source_uri"]},
        "version": row["version"], "tokens": item.tokens,
    }


def envelope(result: pipeline.RecallResult, *, redaction_report: list | None = None) -> dict[str, Any]:
    items = [ranked_item(item) for item in result.items]
    if items:
        headline = f"{len(items)} memor{'y' if len(items) == 1 else 'ies'} recalled"
    else:
        headline = "Nothing relevant is stored yet"
    return {
        "action": "recall",
        "ok": True,
        "ui_summary": {"headline": headline,
                       "items": [f"{i['title']}: {i['rationale']}" for i in items]},
        # What was redacted from the query before the recall event stored it.
        "redaction_report": redaction_report or [],
        "data": {
            "ranked_memory_list": items,
            "suggested_follow_up_actions": result.follow_ups,
            "query_text": result.query_text,
            "profile": result.profile.name,
            "spaces": result.spaces,
            "candidates": result.candidates,
            "trimmed": result.trimmed,
            "cached": result.cached,
            "tracked": result.track,
            "silenced_spaces": result.silenced,
            "timings_ms": result.timings_ms,
            "category_summaries": result.category_summaries,
        },
    }


class RecallView(APIView):
    reads_only = True  # its reads may come from a read replica (samsite/core/replica.py)

    @extend_schema(
        request=s.RecallInputSerializer, responses={200: s.RecallOutputSerializer, **ERRORS},
        summary="Recall the memories that matter now, each with its reason",
    )
    def post(self, request: Request) -> Response:
        data = s.RecallInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = pipeline.recall(actor=request.user, request=recall_request(data.validated_data))
        request._request.sam_recall_timings = result.timings_ms  # type: ignore[attr-defined]  # /metrics
        # Always audited; `track` (and the memory modes) decide only counters and the event.
        recorded = services.recall_record(actor=request.user, result=result,
                                          active_task=data.validated_data.get("active_task", ""),
                                          track=data.validated_data["track"])
        return Response(s.RecallOutputSerializer(
            envelope(result, redaction_report=recorded.redaction_report)).data)


class ContextPackView(APIView):
    reads_only = True  # its reads may come from a read replica (samsite/core/replica.py)

    @extend_schema(
        request=s.ContextPackInputSerializer, responses={200: s.ContextPackOutputSerializer, **ERRORS},
        summary="A context pack (JSON and Markdown) for a prompt or a handoff",
    )
    def post(self, request: Request) -> Response:
        data = s.ContextPackInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        query_type = None
        if values["pack_type"] == "boot" and not (
            values.get("query") or values.get("active_task") or values.get("current_conversation")
        ):
            query_type = "recent"  # a boot pack with nothing to match: what was used lately
        result = pipeline.recall(actor=request.user, request=recall_request(values, query_type=query_type))
        request._request.sam_recall_timings = result.timings_ms  # type: ignore[attr-defined]  # /metrics
        pack = packs.build_pack(result, pack_type=values["pack_type"], token_budget=values["token_budget"],
                                as_of=values.get("as_of"), actor=request.user,
                                include_unvalidated=values["include_unvalidated"])
        # Always audited; `track` (and the memory modes) decide only counters and the event.
        services.recall_record(actor=request.user, result=result,
                               active_task=values.get("active_task", ""), track=values["track"])
        return Response(s.ContextPackOutputSerializer({"json": pack.json, "markdown": pack.markdown}).data)


class PromptAugmentationView(APIView):
    reads_only = True  # its reads may come from a read replica (samsite/core/replica.py)

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
                                                       max_summaries=v["max_summaries"]))
        notes = [{"id": n.id, "kind": n.kind, "category": n.category, "priority": n.priority,
                  "reason": n.reason, "score": round(n.score, 4), "neutralised": n.neutralised}
                 for n in result.notes]
        return Response(s.PromptAugmentationOutputSerializer({
            "block": result.block, "notes": notes, "chars": result.chars, "left_out": result.left_out,
            "silenced": result.silenced}).data)
