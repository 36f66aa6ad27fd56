"""A memory's training examples and their runs (docs/lifecycle.md, "Micro-training")."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import error_responses
from memories.api.serializers import TrainingExampleSerializer
from retrieval import selectors, services
from retrieval.training import RUNS_SHOWN


class TrainingRunSerializer(serializers.Serializer):
    ran_at = serializers.DateTimeField()
    examples = serializers.IntegerField()
    passed = serializers.IntegerField()
    pass_rate = serializers.FloatField()
    suggested = serializers.BooleanField(help_text="The run used SAM's suggested examples")
    results = serializers.ListField(child=serializers.DictField(), help_text="[{id, passed, rank, reasons}]")


class TrainingOutputSerializer(serializers.Serializer):
    memory = serializers.CharField()
    examples = TrainingExampleSerializer(many=True)
    suggested = serializers.BooleanField(
        help_text="True: the memory has no examples and these are SAM's suggestions; save them (edited) "
        "as the memory's training_examples to keep them"
    )
    runs = TrainingRunSerializer(many=True, help_text=f"The newest {RUNS_SHOWN} runs, newest first")


class TrainingView(APIView):
    @extend_schema(
        responses={200: TrainingOutputSerializer, **error_responses(400, 401, 404)},
        summary="A memory's training examples (its own, or suggested) and the history of their runs",
    )
    def get(self, request: Request, pk: str) -> Response:
        return Response(TrainingOutputSerializer(
            selectors.training_panel_get(actor=request.user, memory_id=pk)).data)

    @extend_schema(
        request=None,
        responses={
            201: TrainingOutputSerializer,
            **error_responses(
                400,
                401,
                403,
                404,
                409,
                e409="The memory's space keeps it out of recall now (capture_only, off)",
            ),
        },
        summary="Run the memory's training examples against recall now",
    )
    def post(self, request: Request, pk: str) -> Response:
        panel = services.training_run_create(actor=request.user, memory_id=pk)
        return Response(TrainingOutputSerializer(panel).data, status=status.HTTP_201_CREATED)
