"""PRD executions and thinking chains API: input serializer -> one service or selector call ->
output serializer."""

from __future__ import annotations

from django.core.cache import cache
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.fields import comma_separated
from core.api.openapi import error_responses
from core.api.pagination import StandardPagination, paginated
from core.results import WriteResult
from governance.scopes import reads_only_action
from prd import limits, selectors, services
from prd.api import serializers as s
from prd.models import ChainStatus, ThinkingChain
from prd.thoughts import ThoughtInput

ERRORS = error_responses(400, 401, 404)
# Lists: 404 for a page past the last one.
LIST_ERRORS = error_responses(400, 401, 404, e404="Not found, or a page past the last one")
CONFLICT = error_responses(
    403, 409, e409="Does not fit the current state, or the memory mode refuses writes now")


def _append_answer(result: services.AppendResult) -> Response:
    body = s.PRDAppendOutputSerializer({
        "event": result.event, "decision": result.decision, "execution": result.execution,
        "replayed": result.replayed, "redaction_report": result.redaction_report,
    }).data
    return Response(body, status=status.HTTP_200_OK if result.replayed else status.HTTP_201_CREATED)


class PRDExecutionViewSet(viewsets.ViewSet):
    lookup_value_regex = r"[A-Za-z0-9_]+"
    pagination_class = StandardPagination  # what drf-spectacular reads to document the list envelope

    @extend_schema(parameters=[s.PRDExecutionListQuerySerializer],
                   responses={200: s.PRDExecutionOutputSerializer(many=True), **LIST_ERRORS},
                   summary="List PRD executions")
    def list(self, request: Request) -> Response:
        query = s.PRDExecutionListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        filters = selectors.ExecutionFilters(spaces=comma_separated(q.get("space")), status=q.get("status"),
                                             prd_ref=q.get("prd_ref"))
        return paginated(self, request, selectors.execution_list(actor=request.user, filters=filters),
                         s.PRDExecutionOutputSerializer)

    @extend_schema(
        request=s.PRDExecutionStartInputSerializer,
        responses={201: s.PRDExecutionStartOutputSerializer, 200: s.PRDExecutionStartOutputSerializer,
                   **ERRORS, **CONFLICT},
        summary="Start or resume a PRD execution (idempotent by space and prd_ref)",
        description="201 when the execution was created, 200 when an execution for this prd_ref was "
                    "resumed. Every call records a run and reports what changed in the PRD since the "
                    "run before (`prd_changes`).",
    )
    def create(self, request: Request) -> Response:
        data = s.PRDExecutionStartInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        requirements = v.get("requirements")
        result = services.execution_start(
            actor=request.user, space=v["space"], prd_ref=v["prd_ref"], title=v.get("title"),
            prd_hash=v.get("prd_hash") or None, prd_content=v.get("prd_content"),
            requirements=(None if requirements is None
                          else [services.RequirementInput(**r) for r in requirements]),
            agent_id=v["agent_id"],
        )
        body = s.PRDExecutionStartOutputSerializer(result).data
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)

    @extend_schema(responses={200: s.PRDExecutionOutputSerializer, **ERRORS}, summary="Get a PRD execution")
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(s.PRDExecutionOutputSerializer(
            selectors.execution_get(actor=request.user, execution_id=pk)).data)

    @extend_schema(
        parameters=[s.PRDContextQuerySerializer],
        responses={200: s.PRDContextOutputSerializer, **ERRORS},
        summary="Resume context: progress, recent events, decisions, learnings, open blockers, PRD changes",
    )
    @action(detail=True, methods=["get"])
    def context(self, request: Request, pk: str) -> Response:
        query = s.PRDContextQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        execution = selectors.execution_get(actor=request.user, execution_id=pk)
        # The hot path (docs/prd.md, "The resume context"): the serialised context is
        # kept per execution state. Every write to an execution moves its updated_at, so a
        # changed execution has a new key and nothing needs invalidating.
        key = (f"sam:prdctx:{execution.pk}:{execution.updated_at.isoformat()}:{execution.event_count}:"
               f"{getattr(request.user, 'pk', '')}:{params['event_limit']}:{params['include_decisions']}:"
               f"{params['learning_limit']}")
        body = cache.get(key)
        if body is None:
            body = s.PRDContextOutputSerializer(selectors.context_of(execution, **params)).data
            cache.set(key, body, timeout=limits.CONTEXT_CACHE_SECONDS)
        return Response(body)

    @extend_schema(parameters=[s.PRDEventListQuerySerializer],
                   responses={200: s.PRDEventOutputSerializer(many=True), **LIST_ERRORS},
                   summary="The execution's full event log, oldest first (paginated)")
    @action(detail=True, methods=["get"], url_path="events")
    def events(self, request: Request, pk: str) -> Response:
        query = s.PRDEventListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        filters = selectors.EventFilters(**query.validated_data)
        events = selectors.event_list(actor=request.user, execution_id=pk, filters=filters)
        return paginated(self, request, events, s.PRDEventOutputSerializer)

    @extend_schema(request=s.PRDEventInputSerializer,
                   responses={201: s.PRDAppendOutputSerializer, 200: s.PRDAppendOutputSerializer,
                              **ERRORS, **CONFLICT},
                   summary="Append an event (progress follows; 409 when it does not fit the state)")
    @events.mapping.post
    def append_event(self, request: Request, pk: str) -> Response:
        data = s.PRDEventInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        event = services.EventInput(
            type=v["type"], summary=v["summary"], requirement_id=v["requirement_id"], detail=v["detail"],
            agent_id=v["agent_id"], thinking_chain=v.get("thinking_chain") or None,
            resolves=v.get("resolves") or None, idempotency_key=v.get("idempotency_key") or None,
        )
        return _append_answer(services.event_append(actor=request.user, execution_id=pk, data=event))

    @extend_schema(responses={200: s.PRDDecisionOutputSerializer(many=True), **LIST_ERRORS},
                   summary="The execution's decisions, oldest first (paginated)")
    @action(detail=True, methods=["get"], url_path="decisions")
    def decisions(self, request: Request, pk: str) -> Response:
        return paginated(self, request, selectors.decision_list(actor=request.user, execution_id=pk),
                         s.PRDDecisionOutputSerializer)

    @extend_schema(request=s.PRDDecisionInputSerializer,
                   responses={201: s.PRDAppendOutputSerializer, 200: s.PRDAppendOutputSerializer,
                              **ERRORS, **CONFLICT},
                   summary="Record a decision (logged as a decision_made event)")
    @decisions.mapping.post
    def record_decision(self, request: Request, pk: str) -> Response:
        data = s.PRDDecisionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        decision = services.DecisionInput(
            decision=v["decision"], reason=v["reason"], alternatives=tuple(v["alternatives"]),
            requirement_id=v["requirement_id"], agent_id=v["agent_id"],
            thinking_chain=v.get("thinking_chain") or None, idempotency_key=v.get("idempotency_key") or None,
        )
        return _append_answer(services.decision_record(actor=request.user, execution_id=pk, data=decision))

    @extend_schema(request=s.PRDStatusInputSerializer,
                   responses={200: s.PRDExecutionOutputSerializer, **ERRORS, **CONFLICT},
                   summary="Change the execution's status (completing it starts compaction)")
    @action(detail=True, methods=["post"], url_path="status")
    def set_status(self, request: Request, pk: str) -> Response:
        data = s.PRDStatusInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        execution = services.execution_status_update(actor=request.user, execution_id=pk,
                                                     status=data.validated_data["status"])
        return Response(s.PRDExecutionOutputSerializer(execution).data)


def _chain_answer(result: WriteResult[ThinkingChain], *, code: int = status.HTTP_200_OK) -> Response:
    """A chain as written, with what redaction removed from the text this call sent."""
    body = s.ThinkingChainOutputSerializer(result.instance).data
    return Response({**body, "redaction_report": result.redaction_report}, status=code)


class ThinkingChainViewSet(viewsets.ViewSet):
    lookup_value_regex = r"[A-Za-z0-9_]+"
    pagination_class = StandardPagination  # what drf-spectacular reads to document the list envelope

    @extend_schema(parameters=[s.ThinkingChainListQuerySerializer],
                   responses={200: s.ThinkingChainOutputSerializer(many=True), **LIST_ERRORS},
                   summary="List thinking chains")
    def list(self, request: Request) -> Response:
        query = s.ThinkingChainListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        filters = selectors.ChainFilters(spaces=comma_separated(q.get("space")), status=q.get("status"),
                                         execution=q.get("execution"))
        return paginated(self, request, selectors.chain_list(actor=request.user, filters=filters),
                         s.ThinkingChainOutputSerializer)

    @extend_schema(request=s.ThinkingChainStartInputSerializer,
                   responses={201: s.ThinkingChainOutputSerializer, **ERRORS, **CONFLICT},
                   summary="Start a thinking chain")
    def create(self, request: Request) -> Response:
        data = s.ThinkingChainStartInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        result = services.chain_start(actor=request.user, space=v["space"], query=v["query"],
                                      agent_id=v["agent_id"], execution_id=v.get("execution") or None)
        return _chain_answer(result, code=status.HTTP_201_CREATED)

    @extend_schema(responses={200: s.ThinkingChainOutputSerializer, **ERRORS}, summary="Get a thinking chain")
    def retrieve(self, request: Request, pk: str) -> Response:
        chain = selectors.chain_get(actor=request.user, chain_id=pk)
        return Response(s.ThinkingChainOutputSerializer(chain).data)

    @extend_schema(request=s.ThoughtInputSerializer,
                   responses={201: s.ThinkingChainOutputSerializer, **ERRORS, **CONFLICT},
                   summary="Add a thought (revisions name what they revise; branches where they grow from)")
    @action(detail=True, methods=["post"])
    def thoughts(self, request: Request, pk: str) -> Response:
        data = s.ThoughtInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        thought = ThoughtInput(content=v["content"], number=v.get("number"), is_revision=v.get("is_revision"),
                               revises=v.get("revises"), branch_id=v.get("branch_id") or None,
                               branch_from=v.get("branch_from"))
        result = services.thought_add(actor=request.user, chain_id=pk, data=thought)
        return _chain_answer(result, code=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: s.ThinkingChainOutputSerializer, **ERRORS, **CONFLICT},
                   summary="Complete a chain (summary, embedding and memories follow in the background)")
    @action(detail=True, methods=["post"])
    def complete(self, request: Request, pk: str) -> Response:
        result = services.chain_complete(actor=request.user, chain_id=pk)
        # Completing cleans no text, so the answer carries no redaction report.
        return Response(s.ThinkingChainOutputSerializer(result.instance).data)

    @extend_schema(request=s.ThinkingChainAbandonInputSerializer,
                   responses={200: s.ThinkingChainOutputSerializer, **ERRORS, **CONFLICT},
                   summary="Abandon a chain")
    @action(detail=True, methods=["post"])
    def abandon(self, request: Request, pk: str) -> Response:
        data = s.ThinkingChainAbandonInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = services.chain_abandon(actor=request.user, chain_id=pk, reason=data.validated_data["reason"])
        return _chain_answer(result)

    @extend_schema(request=s.ThinkingChainRecallInputSerializer,
                   responses={200: s.ThinkingChainRecallOutputSerializer, **ERRORS},
                   summary="recall_reasoning: past chains like this question, by embedding and text",
                   description="404 for a named space you cannot see (as POST /api/v1/recall/); spaces "
                               "whose memory mode does not recall (capture_only, off) are left out and "
                               "listed in `silenced_spaces`.")
    @action(detail=False, methods=["post"])
    @reads_only_action
    def recall(self, request: Request) -> Response:
        data = s.ThinkingChainRecallInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        statuses = ((ChainStatus.COMPLETED, ChainStatus.ACTIVE) if v["include_active"]
                    else (ChainStatus.COMPLETED,))
        found = services.chains_recall_run(actor=request.user, query=v["query"], spaces=v["spaces"],
                                           k=v["k"], statuses=statuses)
        return Response(s.ThinkingChainRecallOutputSerializer(
            {"results": found.results, "silenced_spaces": found.silenced}).data)
