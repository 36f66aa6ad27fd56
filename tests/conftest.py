"""Shared fixtures: personas with real API tokens, spaces, and on-commit execution."""

from __future__ import annotations

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from governance.services import api_token_issue
from tests.factories import SpaceFactory, UserFactory


def pytest_sessionfinish(session, exitstatus) -> None:
    # Stop the embedded Postgres if this test run started it; leave a running one alone.
    if getattr(settings, "SAM_EMBEDDED_DB_STARTED", False):
        from django.db import connections

        from samsite import embedded_db

        connections.close_all()
        embedded_db.stop(settings.SAM_EMBEDDED_DB_DIR)


@pytest.fixture
def user(db):
    return UserFactory(username="curator")


@pytest.fixture
def api(user) -> APIClient:
    """An HTTP client authenticated the way agents are: a bearer token."""
    _, raw = api_token_issue(user=user, name="tests")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.fixture
def anon() -> APIClient:
    return APIClient()


@pytest.fixture
def space(db):
    return SpaceFactory(slug="webshop", name="Webshop")


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    """Run on-commit callbacks (the embedding enqueue) when the block ends, as a real commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)
