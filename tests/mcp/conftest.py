"""A real SAM for the MCP tests: committed data (the server runs in another thread or
process), a real model, agent tokens, and the SDK's own client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from django.core.cache import cache
from django.db import connection
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from governance.services import api_token_issue
from retrieval.tasks import lexeme_stats_refresh
from tests.factories import SpaceFactory, UserFactory, make_memory

MEMORIES = [
    dict(title="Money is stored as Decimal", kind="decision", tags=["money", "python"],
         content="Store money as Decimal with two places; floats lost cents in the checkout totals."),
    dict(title="Retry webhooks with backoff", kind="solution", tags=["webhooks"],
         content="Webhook deliveries that time out are retried with exponential backoff, five tries."),
    dict(title="Migrations lock big tables", kind="gotcha", tags=["postgres", "migrations"],
         content="CREATE INDEX on the orders table locked writes; use AddIndexConcurrently instead."),
    dict(title="Services and selectors", kind="pattern", tags=["django", "architecture"],
         content="Writes go through services, reads through selectors; views stay thin."),
]


@dataclass
class World:
    owner_token: str
    scoped_token: str  # reads `webshop` only
    viewer_token: str


@pytest.fixture
def world(transactional_db) -> Iterator[World]:
    cache.clear()
    owner, viewer = UserFactory(username="mcp-owner"), UserFactory(username="mcp-viewer")
    webshop = SpaceFactory(slug="webshop", members={owner: "owner", viewer: "viewer"})
    SpaceFactory(slug="payroll", members={owner: "owner"})
    for memory in MEMORIES:
        make_memory(webshop, **memory)
    lexeme_stats_refresh()
    yield World(owner_token=api_token_issue(user=owner, name="mcp")[1],
                scoped_token=api_token_issue(user=owner, name="mcp-scoped", spaces=[webshop])[1],
                viewer_token=api_token_issue(user=viewer, name="mcp-viewer")[1])
    # The server's tool threads keep their connections (CONN_MAX_AGE), which would keep the
    # test database from being dropped; health checks reconnect them if used again.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")


def run(work: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(work())


def http_client(url: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=60)))


def structured(result: Any) -> dict[str, Any]:
    """A tool result's JSON, failing the test with the tool's message when it is an error."""
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def tool_error(result: Any) -> dict[str, Any]:
    assert result.is_error, result
    text = result.content[0].text  # SAM's error object as JSON: {"error": {…}}
    return json.loads(text[text.index("{"):])["error"]
