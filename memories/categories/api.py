"""A space's categories (seed 002, Phase 5): list them with their summaries; curators add,
change and remove them (docs/recall.md, "Categories")."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.fields import JSONInputSerializer
from core.api.openapi import error_responses
from core.api.pagination import StandardPagination, paginated
from memories.categories import services as categories
from memories.categories.services import CategoryView

ERRORS = error_responses(400, 401, 403, 404, e403="Visible to you, but you may not curate it")


class CategoryOutputSerializer(serializers.Serializer):
    name = serializers.SlugField()
    display_name = serializers.CharField()
    description = serializers.CharField()
    keywords = serializers.ListField(child=serializers.CharField())
    builtin = serializers.BooleanField(help_text="One of seed 002's defaults")
    item_count = serializers.IntegerField(help_text="Active memories placed in it that you may read")
    summary = serializers.CharField(help_text="Its strongest memories you may read, one line each")


class CategoryInputSerializer(JSONInputSerializer):
    name = serializers.SlugField(max_length=40)
    display_name = serializers.CharField(max_length=80, required=False, allow_blank=True, default="")
    description = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    keywords = serializers.ListField(child=serializers.CharField(max_length=40), min_length=1, max_length=50)


class CategoryUpdateInputSerializer(JSONInputSerializer):
    display_name = serializers.CharField(max_length=80, required=False)
    description = serializers.CharField(max_length=300, required=False, allow_blank=True)
    keywords = serializers.ListField(child=serializers.CharField(max_length=40), min_length=1, max_length=50,
                                     required=False)


def _fields(view: CategoryView) -> dict:
    category = view.category
    return {"name": category.name, "display_name": category.display_name, "description": category.description,
            "keywords": category.keywords, "builtin": category.builtin, "item_count": view.item_count,
            "summary": view.summary}


def _out(view: CategoryView) -> dict:
    return CategoryOutputSerializer(_fields(view)).data


class SpaceCategoriesView(APIView):
    pagination_class = StandardPagination  # what drf-spectacular reads to document the list envelope

    @extend_schema(responses={200: CategoryOutputSerializer(many=True),
                              **ERRORS, **error_responses(404, e404="No such space (or not visible to you), "
                                                                    "or a page past the last one")},
                   summary="A space's categories, with how many memories each holds and its summary")
    def get(self, request: Request, slug: str) -> Response:
        found = categories.category_list(actor=request.user, space_slug=slug)
        return paginated(self, request, found, CategoryOutputSerializer,
                         prepare=lambda page: [_fields(view) for view in page])

    @extend_schema(request=CategoryInputSerializer,
                   responses={201: CategoryOutputSerializer, **ERRORS,
                              **error_responses(409, e409="The space has a category of that name")},
                   summary="Add a category (curators); the space's memories are placed again")
    def post(self, request: Request, slug: str) -> Response:
        data = CategoryInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        category = categories.category_create(actor=request.user, space_slug=slug, **data.validated_data)
        return Response(_out(category), status=status.HTTP_201_CREATED)


class CategoryDetailView(APIView):
    @extend_schema(request=CategoryUpdateInputSerializer, responses={200: CategoryOutputSerializer, **ERRORS},
                   summary="Change a category (curators); new keywords place the space's memories again")
    def patch(self, request: Request, slug: str, name: str) -> Response:
        data = CategoryUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        category = categories.category_update(actor=request.user, space_slug=slug, name=name,
                                              changes=data.validated_data)
        return Response(_out(category))

    @extend_schema(responses={204: None, **ERRORS}, summary="Remove a category (curators)")
    def delete(self, request: Request, slug: str, name: str) -> Response:
        categories.category_delete(actor=request.user, space_slug=slug, name=name)
        return Response(status=status.HTTP_204_NO_CONTENT)
