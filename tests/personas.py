"""Who calls SAM in the tests: users holding a role in a space, and API clients that
authenticate as agents do, with a real bearer token (never force_authenticate, so the
token's scope and role cap are part of every request)."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from governance.access import SYSTEM
from governance.services import api_token_issue, membership_grant
from samsite.core.models import Space
from tests.factories import UserFactory


def client_for(user: Any, *, name: str = "tests", **token_scope: Any) -> APIClient:
    """An API client holding a new token of `user` (optionally scoped: spaces=, role=)."""
    _, raw = api_token_issue(user=user, name=name, **token_scope)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
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
