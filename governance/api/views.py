"""Governance API: who holds which role in a space, restricted tags, restricted memories, modes,
and your own API tokens."""

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
from governance import access, services, tokens
from governance.api import serializers as s
from governance.models import RestrictedTag, SpaceMembership

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
        return Response({"mode": services.user_mode_get(user=request.user)})

    @extend_schema(request=s.ModeSerializer, responses={200: s.ModeSerializer, **error_responses(400, 401)},
                   summary="Set your own memory mode (applies on top of each space's mode)")
    def put(self, request: Request) -> Response:
        data = s.ModeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        row = services.user_mode_set(actor=request.user, user=request.user, mode=data.validated_data["mode"])
        return Response({"mode": row.mode})


class MyTokensView(APIView):
    """Your own API tokens: list them, issue one (its secret is in this answer only)."""

    pagination_class = StandardPagination

    @extend_schema(responses={200: s.TokenOutputSerializer(many=True), **error_responses(400, 401, 403, 404)},
                   summary="List your API tokens (newest first; revoked and expired ones too)",
                   description="Through a token, only your tokens that name no space it cannot see.")
    def get(self, request: Request) -> Response:
        return paginated(self, request, tokens.own_tokens(actor=request.user), s.TokenOutputSerializer)

    @extend_schema(request=s.TokenIssueInputSerializer,
                   responses={201: s.TokenIssuedOutputSerializer, **error_responses(
                       400, 401, 403, e403="A role above yours, or wider than the token you call with")},
                   summary="Issue yourself an API token (the secret is shown in this answer only)",
                   description="`spaces` omitted or null: all of your spaces (through a token, its "
                               "spaces). A space you cannot see is refused exactly as one that does "
                               "not exist (400). `role` no higher than yours in each space named; "
                               "`expires_at` in the future. Through a token: it needs the write "
                               "scope, and the new token is never wider than it (what is left out "
                               "is inherited from it).")
    def post(self, request: Request) -> Response:
        data = s.TokenIssueInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        token, secret = tokens.own_token_issue(
            actor=request.user, name=v["name"], spaces=v.get("spaces"), role=v.get("role", ""),
            scopes=v.get("scopes"), expires_at=v.get("expires_at"))
        # Read back as it is listed (its spaces through the reader's eyes).
        shown = tokens.own_tokens(actor=request.user).get(pk=token.pk)
        shown.secret = secret  # type: ignore[attr-defined]
        return Response(s.TokenIssuedOutputSerializer(shown).data, status=status.HTTP_201_CREATED)


class MyTokenView(APIView):
    @extend_schema(responses={200: s.TokenOutputSerializer, **error_responses(401, 403, 404)},
                   summary="One of your API tokens (another's is 404)")
    def get(self, request: Request, pk: int) -> Response:
        return Response(s.TokenOutputSerializer(tokens.own_token_get(actor=request.user, token_id=pk)).data)

    @extend_schema(responses={204: None, **error_responses(401, 403, 404)},
                   summary="Revoke one of your API tokens (at once; a revoked one answers 204 too)")
    def delete(self, request: Request, pk: int) -> Response:
        tokens.token_revoke(actor=request.user, token_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
