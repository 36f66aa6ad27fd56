"""Who calls SAM in the tests: users holding a role in a space, and API clients that
authenticate as agents do, with a real bearer token (never force_authenticate, so the
token's scope and role cap are part of every request)."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from core.models import Space
from governance.access import SYSTEM
from governance.services import api_token_issue, membership_grant
from tests.factories import UserFactory


def bearer(user: Any, *, name: str = "tests", **token_scope: Any) -> str:
    """The Authorization header of a new token of `user` (optionally scoped: spaces=, role=),
    for callers that are not an APIClient (the MCP server's Caller)."""
    _, raw = api_token_issue(user=user, name=name, **token_scope)
    return f"Bearer {raw}"


def client_for(user: Any, *, name: str = "tests", **token_scope: Any) -> APIClient:
    """An API client holding a new token of `user` (optionally scoped: spaces=, role=)."""
    return client_with(bearer(user, name=name, **token_scope))


def client_with(authorization: str) -> APIClient:
    """An API client that sends `authorization` (from bearer()) with every request."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=authorization)
    return client


def member(space: Space, role: str | None, username: str) -> Any:
    """A new user holding `role` in `space` (None: no role at all, a stranger to it)."""
    user = UserFactory(username=username)
    if role is not None:
        membership_grant(actor=SYSTEM, space=space, user=user, role=role)
    return user


def member_client(space: Space, role: str | None, username: str) -> APIClient:
    """An API client for a new user holding `role` in `space`."""
    return client_for(member(space, role, username))
