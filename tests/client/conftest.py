"""A live SAM for the client tests: the test server in a thread (pytest-django's live_server),
committed data, the real model, and tokens for an owner, a viewer and a stranger."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.cache import cache
from django.db import connection

from core.models import Space
from governance.services import api_token_issue
from retrieval.tasks import lexeme_stats_refresh
from tests.factories import SpaceFactory, UserFactory, make_memory

MEMORIES = [
    dict(title="Money is stored as Decimal", kind="decision", tags=["money"],
         content="Store money as Decimal with two places; floats lost cents in the checkout totals."),
    dict(title="Retry webhooks with backoff", kind="solution", tags=["webhooks"],
         content="Webhook deliveries that time out are retried with exponential backoff, five tries."),
    dict(title="Migrations lock big tables", kind="gotcha", tags=["postgres"],
         content="CREATE INDEX on the orders table locked writes; use AddIndexConcurrently instead."),
]


@dataclass
class World:
    url: str
    owner_token: str
    viewer_token: str
    stranger_token: str


@pytest.fixture
def world(transactional_db, live_server) -> Iterator[World]:
    cache.clear()
    owner, viewer = UserFactory(username="client-owner"), UserFactory(username="client-viewer")
    stranger = UserFactory(username="client-stranger")
    webshop = SpaceFactory(slug="webshop", members={owner: "owner", viewer: "viewer"})
    Space.objects.filter(pk=webshop.pk).update(capture_sources=["jsonl"])
    SpaceFactory(slug="payroll", members={owner: "owner"})
    for memory in MEMORIES:
        make_memory(webshop, **memory)
    lexeme_stats_refresh()
    yield World(url=live_server.url,
                owner_token=api_token_issue(user=owner, name="client")[1],
                viewer_token=api_token_issue(user=viewer, name="client-viewer")[1],
                stranger_token=api_token_issue(user=stranger, name="client-stranger")[1])
    # The server thread keeps its connections (CONN_MAX_AGE), which would keep the test
    # database from being dropped.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")


def run_sam(*args: str, url: str | None, token: str | None, home: Path, stdin: str | None = None,
            config: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m sam_client ARGS` as a user would run `sam`, with only the environment given
    (a home of its own, so no real config file is read)."""
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("SAM_") and key not in {"XDG_CONFIG_HOME"}}
    environment["HOME"] = str(home)
    if url:
        environment["SAM_URL"] = url
    if token:
        environment["SAM_TOKEN"] = token
    if config:
        environment["SAM_CONFIG"] = str(config)
    return subprocess.run([sys.executable, "-m", "sam_client", *args], input=stdin, capture_output=True,
                          text=True, env=environment, timeout=120, check=False)
