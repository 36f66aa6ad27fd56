"""Sessions and cards API (docs/sessions.md): input serializer -> one service or selector call
-> output serializer."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.fields import comma_separated
from core.api.openapi import error_responses
from core.api.pagination import StandardPagination, paginated
from prd.sessions import selectors, services
from prd.sessions.api import serializers as s

ERRORS = error_responses(400, 401, 404)
LIST_ERRORS = error_responses(400, 401, 404, e404="Not found, or a page past the last one")
WRITE_ERRORS = error_responses(
    403, 409, e409="An event_id logged before with different content, or the memory mode refuses writes now"
)


class SessionViewSet(viewsets.ViewSet):
    lookup_value_regex = r"[A-Za-z0-9_]+"
    pagination_class = StandardPagination

    @extend_schema(
        parameters=[s.SessionListQuerySerializer],
        responses={200: s.SessionOutputSerializer(many=True), **LIST_ERRORS},
        summary="List coding sessions, newest first",
    )
    def list(self, request: Request) -> Response:
        query = s.SessionListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        spaces = comma_separated(query.validated_data.get("space"))
        rows = selectors.session_list(actor=request.user, spaces=spaces)
        return paginated(self, request, rows, s.SessionOutputSerializer)

    @extend_schema(
        request=s.SessionStartInputSerializer,
        responses={
            201: s.SessionStartOutputSerializer,
            200: s.SessionStartOutputSerializer,
            **ERRORS,
            **WRITE_ERRORS,
        },
        summary="Start a session, or resume the one with this key (200)",
    )
    def create(self, request: Request) -> Response:
        data = s.SessionStartInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        result = services.session_start(
            actor=request.user, space=v["space"], key=v.get("key"), title=v["title"], agent_id=v["agent_id"]
        )
        body = s.SessionStartOutputSerializer(result).data
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)

    @extend_schema(responses={200: s.SessionOutputSerializer, **ERRORS}, summary="Get a session")
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(
            s.SessionOutputSerializer(selectors.session_get(actor=request.user, session_id=pk)).data
        )

    @extend_schema(
        methods=["GET"],
        parameters=[s.SessionEventListQuerySerializer],
        responses={200: s.SessionEventOutputSerializer(many=True), **LIST_ERRORS},
        summary="The session's events, oldest first (paginated)",
    )
    @extend_schema(
        methods=["POST"],
        request=s.SessionEventsInputSerializer,
        responses={
            201: s.SessionEventsOutputSerializer,
            200: s.SessionEventsOutputSerializer,
            **ERRORS,
            **WRITE_ERRORS,
        },
        summary="Append a batch of events (all or none; idempotent by event_id)",
        description="201 when at least one event was new, 200 when every event_id was logged "
        "before (the stored events come back). Text, data and references are "
        "redacted before storage and sealed.",
    )
    @action(detail=True, methods=["get", "post"])
    def events(self, request: Request, pk: str) -> Response:
        if request.method == "GET":
            query = s.SessionEventListQuerySerializer(data=request.query_params)
            query.is_valid(raise_exception=True)
            q = query.validated_data
            rows = selectors.event_list(
                actor=request.user,
                session_id=pk,
                event_type=q.get("event_type"),
                after_sequence=q.get("after_sequence"),
            )
            return paginated(self, request, rows, s.SessionEventOutputSerializer)
        data = s.SessionEventsInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        events = [
            services.EventInput(
                **{
                    **e,
                    "topic_tags": tuple(e["topic_tags"]),
                    "entities": tuple(e["entities"]),
                    "task_refs": tuple(e["task_refs"]),
                    "artifacts": tuple(e["artifacts"]),
                }
            )
            for e in data.validated_data["events"]
        ]
        result = services.events_append(actor=request.user, session_id=pk, events=events)
        body = s.SessionEventsOutputSerializer(
            {
                "session": result.session,
                "created": result.created,
                "replayed": len(result.events) - result.created,
                "events": [{"event": e, "created": created} for e, created in result.events],
                "redaction_report": result.redaction_report,
            }
        ).data
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)

    @extend_schema(
        responses={200: s.HandoffOutputSerializer, **ERRORS},
        summary="The session's handoff (JSON and Markdown), compiled from its events",
    )
    @action(detail=True, methods=["get"])
    def handoff(self, request: Request, pk: str) -> Response:
        compiled = selectors.session_handoff(actor=request.user, session_id=pk)
        return Response(
            s.HandoffOutputSerializer({"json": compiled.json, "markdown": compiled.markdown}).data
        )

    @extend_schema(
        parameters=[s.LatestHandoffQuerySerializer],
        responses={200: s.HandoffOutputSerializer, **ERRORS},
        summary="The handoff of the space's latest session: what the next session reads",
    )
    @action(detail=False, methods=["get"], url_path="latest-handoff")
    def latest_handoff(self, request: Request) -> Response:
        query = s.LatestHandoffQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        compiled = selectors.latest_handoff(actor=request.user, space=query.validated_data["space"])
        return Response(
            s.HandoffOutputSerializer({"json": compiled.json, "markdown": compiled.markdown}).data
        )

    @extend_schema(
        request=None,
        responses={200: s.CompileOutputSerializer, **ERRORS, **WRITE_ERRORS},
        summary="Compile the session's events into cards now (a job also does it after appends)",
    )
    @action(detail=True, methods=["post"])
    def compile(self, request: Request, pk: str) -> Response:
        session = selectors.session_get(actor=request.user, session_id=pk)
        services.ensure_writable(actor=request.user, session=session)
        outcome = services.session_cards_compile(session_id=session.id)
        return Response(s.CompileOutputSerializer(outcome).data)


class CardViewSet(viewsets.ViewSet):
    lookup_value_regex = r"[A-Za-z0-9_]+"
    pagination_class = StandardPagination

    @extend_schema(
        parameters=[s.CardListQuerySerializer],
        responses={200: s.CardOutputSerializer(many=True), **LIST_ERRORS},
        summary="List memory cards, newest evidence first",
    )
    def list(self, request: Request) -> Response:
        query = s.CardListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        rows = selectors.card_list(
            actor=request.user,
            spaces=comma_separated(q.get("space")),
            session=q.get("session"),
            card_type=q.get("card_type"),
            status=q.get("status"),
        )
        return paginated(self, request, rows, s.CardOutputSerializer)

    @extend_schema(
        request=s.CardInputSerializer,
        responses={201: s.CardDetailOutputSerializer, **ERRORS, **WRITE_ERRORS},
        summary="State a card, citing the session events it rests on",
    )
    def create(self, request: Request) -> Response:
        data = s.CardInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        scope = v.get("scope") or {}
        card = services.card_create(
            actor=request.user,
            data=services.CardInput(
                space=v["space"],
                card_type=v["card_type"],
                claim=v["claim"],
                body=v["body"],
                session=v.get("session"),
                evidence=tuple(v["evidence"]),
                scope_path=scope.get("path", ""),
                scope_branch=scope.get("branch", ""),
                ttl_days=v.get("ttl_days"),
            ),
        )
        return Response(s.CardDetailOutputSerializer(card).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        responses={200: s.CardDetailOutputSerializer, **ERRORS},
        summary="Get a card with its evidence and checks",
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(s.CardDetailOutputSerializer(selectors.card_get(actor=request.user, card_id=pk)).data)

    @extend_schema(
        request=s.CardValidationInputSerializer,
        responses={201: s.CardDetailOutputSerializer, **ERRORS, **WRITE_ERRORS},
        summary="Record a check of a card: pass, failed or stale",
    )
    @action(detail=True, methods=["post"])
    def validations(self, request: Request, pk: str) -> Response:
        data = s.CardValidationInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        selectors.card_get(actor=request.user, card_id=pk)  # 404 for a card whose memory is hidden
        card = services.card_validate(
            actor=request.user,
            card_id=pk,
            status=v["status"],
            validator=v["validator"],
            note=v["note"],
            event=v.get("event"),
        )
        return Response(s.CardDetailOutputSerializer(card).data, status=status.HTTP_201_CREATED)
