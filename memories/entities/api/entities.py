"""Entities over HTTP: the people, projects, files and libraries a space's memories name
(only those named by memories you may read); curators correct and merge them."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.fields import JSONInputSerializer, QueryParamsSerializer
from core.api.openapi import error_responses
from core.api.pagination import StandardPagination, paginated
from memories.entities import services as entity_services
from memories.entities.services import EntityView
from memories.models import EntityKind

ERRORS = error_responses(400, 401, 403, 404, e403="Visible to you, but you may not curate it")


class EntityOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=EntityKind.choices)
    name = serializers.CharField()
    aliases = serializers.ListField(child=serializers.CharField(),
                                    help_text="Names merged into it (shown to the space's curators only)")
    space = serializers.CharField()
    mentions = serializers.IntegerField(help_text="Active memories you may read that name it")


class EntityMemorySerializer(serializers.Serializer):
    id = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.CharField()
    created_at = serializers.DateTimeField()


class RelatedEntitySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=EntityKind.choices)
    name = serializers.CharField()
    together = serializers.IntegerField(help_text="Memories you may read naming both")


class EntityDetailSerializer(serializers.Serializer):
    entity = EntityOutputSerializer()
    memories = EntityMemorySerializer(many=True, help_text="Newest first, at most 50")
    related = RelatedEntitySerializer(many=True, help_text="Named with it most often, at most 10")


class EntityListQuerySerializer(QueryParamsSerializer):
    # No default: "" is not one of the choices, and a schema whose default breaks its own enum
    # stops client generators; entity_list's own default ("" = every kind) applies instead.
    kind = serializers.ChoiceField(choices=EntityKind.choices, required=False)
    search = serializers.CharField(required=False, default="", max_length=120,
                                   help_text="Part of its name or an alias, any case")


class EntityUpdateSerializer(JSONInputSerializer):
    kind = serializers.ChoiceField(choices=EntityKind.choices, required=False)
    name = serializers.CharField(max_length=120, required=False)


class EntityMergeSerializer(JSONInputSerializer):
    other = serializers.IntegerField(help_text="The entity merged into this one, then deleted")


def _out(view: EntityView) -> dict:
    entity = view.entity
    return {"id": entity.pk, "kind": entity.kind, "name": entity.name, "aliases": view.aliases,
            "space": view.space, "mentions": view.mentions}


class SpaceEntitiesView(APIView):
    pagination_class = StandardPagination

    @extend_schema(parameters=[EntityListQuerySerializer], responses={200: EntityOutputSerializer(many=True),
                                                                      **ERRORS},
                   summary="The people, projects, files and libraries a space's memories name, most "
                           "mentioned first")
    def get(self, request: Request, slug: str) -> Response:
        query = EntityListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = entity_services.entity_list(actor=request.user, space_slug=slug, **query.validated_data)
        return paginated(self, request, found.rows, EntityOutputSerializer,
                         prepare=lambda page: [_out(view) for view in found.views(list(page))])


def _detail(found: dict) -> dict:
    """entity_detail's answer in the API's shape."""
    return {
        "entity": _out(found["entity"]),
        "memories": [{"id": m.pk, "title": m.title, "kind": m.kind, "created_at": m.created_at}
                     for m in found["memories"]],
        "related": [{"id": entity.pk, "kind": entity.kind, "name": entity.name, "together": together}
                    for entity, together in found["related"]],
    }


class EntityDetailView(APIView):
    @extend_schema(responses={200: EntityDetailSerializer, **ERRORS},
                   summary="An entity, the memories that name it and the entities named with it")
    def get(self, request: Request, pk: int) -> Response:
        return Response(_detail(entity_services.entity_detail(actor=request.user, entity_id=pk)))

    @extend_schema(request=EntityUpdateSerializer,
                   responses={200: EntityDetailSerializer, **ERRORS,
                              **error_responses(409, e409="Another entity has that name: merge them")},
                   summary="Correct an entity's kind or name (curators); the old name stays an alias")
    def patch(self, request: Request, pk: int) -> Response:
        data = EntityUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(_detail(entity_services.entity_update(actor=request.user, entity_id=pk,
                                                              **data.validated_data)))

    @extend_schema(responses={204: None, **ERRORS}, summary="Remove an entity read by mistake (curators)")
    def delete(self, request: Request, pk: int) -> Response:
        entity_services.entity_delete(actor=request.user, entity_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class EntityMergeView(APIView):
    @extend_schema(request=EntityMergeSerializer, responses={200: EntityDetailSerializer, **ERRORS},
                   summary="Merge another entity of the space into this one (curators): its memories "
                           "name this one, its names become aliases")
    def post(self, request: Request, pk: int) -> Response:
        data = EntityMergeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        found = entity_services.entity_merge(actor=request.user, entity_id=pk,
                                             other_id=data.validated_data["other"])
        return Response(_detail(found))
