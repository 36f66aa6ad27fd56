"""The relationship graph over HTTP: walk it from a memory, add and remove edges (curators)."""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.fields import JSONInputSerializer, QueryParamsSerializer
from core.api.openapi import error_responses
from memories.entities import graph
from memories.models import RelationType

TYPES = RelationType.values
ERRORS = error_responses(400, 401, 403, 404, e403="Visible to you, but you may not curate it")


class GraphQuerySerializer(QueryParamsSerializer):
    depth = serializers.IntegerField(min_value=0, max_value=graph.MAX_DEPTH, required=False, default=1)
    types = serializers.ListField(
        child=serializers.ChoiceField(choices=TYPES), required=False, default=list,
        help_text="Relation types to follow, repeated (?types=SOLVES&types=PART_OF); all when absent")
    min_strength = serializers.FloatField(min_value=0, max_value=1, required=False, default=0.0)

    def to_internal_value(self, data: Any) -> Any:
        # The one list parameter: every value given, not the last one only.
        if isinstance(data, QueryDict):
            data = {**data.dict(), **({"types": data.getlist("types")} if "types" in data else {})}
        return super().to_internal_value(data)


class GraphNodeSerializer(serializers.Serializer):
    id = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.CharField()
    space = serializers.CharField()
    depth = serializers.IntegerField(help_text="Edges from the memory asked about (0: itself)")
    archived = serializers.BooleanField()


class GraphEdgeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    # Declared fields named like Field attributes (DRF's metaclass moves them off the class).
    source = serializers.CharField()  # type: ignore[assignment]
    target = serializers.CharField()
    relation_type = serializers.ChoiceField(choices=TYPES)
    inverse = serializers.CharField(help_text="The type read from target to source")
    strength = serializers.FloatField()
    provenance = serializers.DictField(help_text="Which rule or person made it (ids and numbers only)")


class GraphOutputSerializer(serializers.Serializer):
    nodes = GraphNodeSerializer(many=True)
    edges = GraphEdgeSerializer(many=True)


class RelationInputSerializer(JSONInputSerializer):
    target = serializers.CharField(help_text="A memory of the same space")
    relation_type = serializers.ChoiceField(choices=TYPES)
    strength = serializers.FloatField(min_value=0, max_value=1, required=False, default=1.0)
    note = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


def _edge(pk: int, source: str, target: str, relation_type: str, strength: float, provenance: dict) -> dict:
    return {"id": pk, "source": source, "target": target, "relation_type": relation_type,
            "inverse": graph.INVERSE[relation_type], "strength": strength, "provenance": provenance}


class MemoryGraphView(APIView):
    @extend_schema(parameters=[GraphQuerySerializer], responses={200: GraphOutputSerializer, **ERRORS},
                   summary="The memories linked to one, up to `depth` edges away, and the edges between "
                           "them (only what you may see)")
    def get(self, request: Request, pk: str) -> Response:
        query = GraphQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        nodes, edges = graph.traverse(actor=request.user, memory_id=pk, depth=query.validated_data["depth"],
                                      types=query.validated_data["types"],
                                      min_strength=query.validated_data["min_strength"])
        return Response({
            "nodes": [{"id": m.pk, "title": m.title, "kind": m.kind, "space": m.space.slug, "depth": depth,
                       "archived": m.archived} for m, depth in nodes],
            "edges": [_edge(e.id, e.source, e.target, e.relation_type, e.strength, e.provenance)
                      for e in edges],
        })


class MemoryRelationsView(APIView):
    @extend_schema(request=RelationInputSerializer,
                   responses={201: GraphEdgeSerializer, 200: GraphEdgeSerializer, **ERRORS},
                   summary="Link this memory to another of its space (curators); 200 when the edge "
                           "existed and its strength was updated")
    def post(self, request: Request, pk: str) -> Response:
        data = RelationInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        relation, created = graph.relation_create(
            actor=request.user, source_id=pk, target_id=data.validated_data["target"],
            relation_type=data.validated_data["relation_type"], strength=data.validated_data["strength"],
            note=data.validated_data["note"])
        body = _edge(relation.pk, relation.source_id, relation.target_id, relation.relation_type,
                     relation.strength, relation.provenance)
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class RelationDetailView(APIView):
    @extend_schema(responses={204: None, **ERRORS}, summary="Remove an edge (curators of its space)")
    def delete(self, request: Request, pk: int) -> Response:
        graph.relation_delete(actor=request.user, relation_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
