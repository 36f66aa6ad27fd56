"""Governance API: who holds which role in a space, restricted tags, restricted memories, modes."""

from __future__ import annotations

from django.contrib.auth.models import Group, User
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import error_responses
from core.api.pagination import StandardPagination, paginated
from core.errors import NotFound
from governance import access, services
from governance.api import serializers as s
from governance.models import RestrictedTag, SpaceMembership, UserMemorySettings
from governance.modes import Mode

ERRORS = error_responses(400, 401, 403, 404, e403="Visible to you, but you may not change it")
LIST_ERRORS = error_responses(400, 401, 403, 404, e403="Visible to you, but you may not change it",
                              e404="No such space (or not visible to you), or a page past the last one")


def _principal(user: str | None, group: str | None) -> dict:
    if user is not None:
        return {"user": services.user_lookup(user)}
    found = Group.objects.filter(name=group).first()
    if found is None:
        raise NotFound(f"No group '{group}'.")
    return {"group": found}


class SpaceMembersView(APIView):
    pagination_class = StandardPagination  # what drf-spectacular reads to document the list envelope

    @extend_schema(responses={200: s.MembershipOutputSerializer(many=True), **LIST_ERRORS},
                   summary="List a space's members and their roles")
    def get(self, request: Request, slug: str) -> Response:
        space = access.access_space(request.user, slug=slug)
        rows = (SpaceMembership.objects.filter(space=space).select_related("user", "group", "granted_by")
                .order_by("pk"))
        return paginated(self, request, rows, s.MembershipOutputSerializer)

    @extend_schema(request=s.MembershipInputSerializer,
                   responses={200: s.MembershipOutputSerializer, **ERRORS},
                   summary="Give a user or group a role in a space (replaces their old role)")
    def post(self, request: Request, slug: str) -> Response:
        space = access.access_space(request.user, slug=slug, action="manage")
        data = s.MembershipInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        who = _principal(data.validated_data.get("user"), data.validated_data.get("group"))
        membership = services.membership_grant(actor=request.user, space=space,
                                               role=data.validated_data["role"], **who)
        return Response(s.MembershipOutputSerializer(membership).data)


class SpaceMemberView(APIView):
    @extend_schema(responses={204: None, **ERRORS}, summary="Take a user's or group's role away")
    def delete(self, request: Request, slug: str, kind: str, name: str) -> Response:
        space = access.access_space(request.user, slug=slug, action="manage")
        # A name that is no user (or group) at all answers exactly like one that holds no
        # role here: a space's manager must not learn from this which accounts exist.
        not_a_member = NotFound(f"{kind} '{name}' holds no role in '{slug}'.")
        try:
            who = _principal(name if kind == "user" else None, name if kind == "group" else None)
        except NotFound:
            raise not_a_member from None
        if not services.membership_revoke(actor=request.user, space=space, **who):
            raise not_a_member
        return Response(status=status.HTTP_204_NO_CONTENT)


class RestrictedTagsView(APIView):
    pagination_class = StandardPagination  # what drf-spectacular reads to document the list envelope

    @extend_schema(responses={200: s.RestrictedTagSerializer(many=True), **LIST_ERRORS},
                   summary="List a space's restricted tags")
    def get(self, request: Request, slug: str) -> Response:
        space = access.access_space(request.user, slug=slug, action="manage")
        return paginated(self, request, RestrictedTag.objects.filter(space=space).order_by("tag"),
                         s.RestrictedTagSerializer)

    @extend_schema(request=s.RestrictedTagSerializer,
                   responses={200: s.RestrictedTagSerializer, **ERRORS},
                   summary="Hide memories with a tag from roles below min_role")
    def post(self, request: Request, slug: str) -> Response:
        space = access.access_space(request.user, slug=slug, action="manage")
        data = s.RestrictedTagSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        row = services.restricted_tag_set(actor=request.user, space=space, **data.validated_data)
        return Response(s.RestrictedTagSerializer(row).data)


class RestrictedTagView(APIView):
    @extend_schema(responses={204: None, **ERRORS}, summary="Lift a tag restriction")
    def delete(self, request: Request, slug: str, tag: str) -> Response:
        space = access.access_space(request.user, slug=slug, action="manage")
        if not services.restricted_tag_remove(actor=request.user, space=space, tag=tag):
            raise NotFound(f"Tag '{tag}' is not restricted in '{slug}'.")
        return Response(status=status.HTTP_204_NO_CONTENT)


class MyModeView(APIView):
    @extend_schema(responses={200: s.ModeSerializer, **error_responses(401)}, summary="Your own memory mode")
    def get(self, request: Request) -> Response:
        assert isinstance(request.user, User)  # IsAuthenticated (the default) let it through
        row = UserMemorySettings.objects.filter(user=request.user).first()
        return Response({"mode": row.mode if row else Mode.ASSIST})

    @extend_schema(request=s.ModeSerializer, responses={200: s.ModeSerializer, **error_responses(400, 401)},
                   summary="Set your own memory mode (applies on top of each space's mode)")
    def put(self, request: Request) -> Response:
        data = s.ModeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        row = services.user_mode_set(actor=request.user, user=request.user, mode=data.validated_data["mode"])
        return Response({"mode": row.mode})
