"""The MCP server over stdio (`manage.py sam_mcp`), started the way Claude Code, Cursor and
Claude Desktop start it, driven by the SDK's own client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.database import database_url
from tests.mcp.conftest import World, run, structured, tool_error

ROOT = Path(__file__).resolve().parents[2]


def server(token: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["manage.py", "sam_mcp"], cwd=str(ROOT),
        env={**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "samsite.settings.base",
             "SAM_MCP_TOKEN": token},
    )


def test_the_readme_configuration_serves_every_tool_over_stdio(world: World):
    async def work():
        async with Client(server(world.owner_token)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            stored = structured(await client.call_tool("remember", {
                "space": "webshop", "title": "Prices include VAT", "kind": "standard",
                "content": "Every price shown in the shop includes VAT at the customer's rate."}))
            found = structured(await client.call_tool("recall", {"query": "do shop prices include tax?",
                                                                 "spaces": ["webshop"], "token_budget": 300}))
            hidden = await client.call_tool("memory_stats", {"space": "nowhere"})
            session = structured(await client.call_tool("session_start", {"space": "webshop"}))["session_id"]
            await client.call_tool("session_log", {"session_id": session, "events": [
                {"event_type": "handoff", "text": "Prices checked",
                 "data": {"next_steps": ["Check invoices"]}}]})
            handoff = structured(await client.call_tool("session_handoff", {"space": "webshop"}))
            return names, stored, found, hidden, handoff

    names, stored, found, hidden, handoff = run(work)
    assert {"recall", "remember", "prd_context", "recall_reasoning", "memory_stats", "session_log"} <= names
    assert "- Check invoices" in handoff["markdown"]
    assert stored["persisted"] is True
    assert found["memories"][0]["id"] == stored["id"]
    assert tool_error(hidden)["code"] == "not_found"


def test_a_scoped_token_over_stdio_sees_only_its_space(world: World):
    async def work():
        async with Client(server(world.scoped_token)) as client:
            return (structured(await client.call_tool("recall", {"query": "money"})),
                    await client.call_tool("memory_stats", {"space": "payroll"}))

    scoped, hidden = run(work)
    assert scoped["spaces"] == ["webshop"]
    assert tool_error(hidden)["code"] == "not_found"


def test_a_refused_token_stops_the_server_with_a_clear_message(world: World):
    params = server("sam_not-a-real-token")
    finished = subprocess.run([params.command, *params.args], cwd=params.cwd, env=params.env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert finished.returncode != 0
    assert "The token was refused" in finished.stderr
    assert finished.stdout == ""  # stdout is the protocol's: nothing else is written there


def test_errors_over_stdio_carry_sam_error_object(world: World):
    async def work():
        async with Client(server(world.owner_token)) as client:
            return (await client.call_tool("remember", {"space": "webshop", "title": "Too long",
                                                        "content": "x" * 8001}),
                    await client.call_tool("recall", {}),
                    await client.call_tool("memory_stats", {"space": "nowhere"}))

    too_long, missing, hidden = run(work)
    errors = []
    for result in (too_long, missing, hidden):
        assert result.is_error
        assert json.loads(result.content[0].text) == result.structured_content
        errors.append(result.structured_content["error"])
    assert [(e["code"], e["status"]) for e in errors] == [("invalid", 400), ("invalid", 400),
                                                          ("not_found", 404)]
    assert errors[0]["fields"] == {"content": ["Ensure this field has no more than 8000 characters."]}
    assert errors[1]["fields"] == {"query": ["This field is required."]}
    assert errors[2]["fields"] == {}
