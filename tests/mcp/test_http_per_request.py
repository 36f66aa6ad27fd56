"""What an MCP request over HTTP does not repeat: the token lookup (the tool's REST call
reuses the check the /mcp endpoint made, for the same Authorization header only), and the
tool's thread and its database connection (kept from one request to the next)."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx2
import pytest
from django.utils import timezone

from governance import authentication
from governance.models import ApiToken
from tests.mcp.conftest import World, http_client, run


@pytest.fixture
def url(live_server) -> str:
    return f"{live_server.url}/mcp"


@pytest.fixture
def lookups(monkeypatch) -> list[bytes]:
    """Every token lookup made, by any thread of this process (the server runs in one)."""
    seen: list[bytes] = []
    real = authentication.authenticate_header

    def counted(value: bytes) -> Any:
        seen.append(value)
        return real(value)

    monkeypatch.setattr(authentication, "authenticate_header", counted)
    # The endpoint imported the name: count its lookups too.
    monkeypatch.setattr("samsite.mcp.http.authenticate_header", counted)
    return seen


def tool_call(url: str, token: str, tool: str, arguments: dict[str, Any]) -> httpx2.Response:
    """One JSON-RPC POST: one HTTP request, one tool call."""
    async def work() -> httpx2.Response:
        async with httpx2.AsyncClient(timeout=60) as client:
            return await client.post(url, headers={
                "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-06-18"}, json={
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}})
    return run(work)


def test_a_tool_call_looks_the_token_up_once(url: str, world: World, lookups: list[bytes]):
    answer = tool_call(url, world.owner_token, "memory_stats", {"space": "webshop"})

    result = answer.json()["result"]
    assert not result.get("isError")
    assert json.loads(result["content"][0]["text"])["memories"]["active"] == 4
    assert lookups == [f"Bearer {world.owner_token}".encode()]


def test_a_scoped_token_is_still_limited_in_the_tool_call(url: str, world: World, lookups: list[bytes]):
    answer = tool_call(url, world.scoped_token, "memory_stats", {"space": "payroll"})

    result = answer.json()["result"]
    assert result["isError"] is True
    assert '"code": "not_found"' in result["content"][0]["text"]
    assert len(lookups) == 1


def test_a_token_revoked_between_requests_is_refused_on_the_next(url: str, world: World):
    first = tool_call(url, world.viewer_token, "memory_stats", {"space": "webshop"})
    ApiToken.objects.filter(name="mcp-viewer").update(revoked_at=timezone.now())
    second = tool_call(url, world.viewer_token, "memory_stats", {"space": "webshop"})

    assert first.status_code == 200
    assert not first.json()["result"].get("isError")
    assert second.status_code == 401
    assert second.json()["error"]["code"] == "not_authenticated"


def test_tool_calls_reuse_their_thread_and_its_database_connection(url: str, world: World, monkeypatch):
    from django.db import connection

    from samsite.mcp import toolkit

    seen: list[tuple[int, bool]] = []
    real = toolkit.Tools.api

    def api(self: toolkit.Tools, *args: Any, **kwargs: Any) -> Any:
        seen.append((threading.get_ident(), connection.connection is not None))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(toolkit.Tools, "api", api)

    async def work():
        async with http_client(url, world.owner_token) as client:
            for _ in range(3):
                await client.call_tool("memory_stats", {"space": "webshop"})

    run(work)
    assert len(seen) == 3
    # Each call is a request of its own; the second and third find the first one's connection.
    assert [connected for _, connected in seen[1:]] == [True, True]
