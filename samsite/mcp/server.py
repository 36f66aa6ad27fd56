"""SAM's MCP server: tools an agent calls to recall, remember, track a PRD and think.

Every tool is a typed front for one REST call (samsite.mcp.dispatch), made with the
caller's own token, so the gateway, memory modes, redaction and audit apply as they do to
the API. Answers that list memories or chains are fitted into a token budget
(samsite.mcp.budget); errors come back as tool errors carrying SAM's error code. The tools
live in samsite.mcp.tools, one module per area; this module assembles them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent

from samsite.mcp import budget, errors
from samsite.mcp.dispatch import Caller
from samsite.mcp.toolkit import Tools
from samsite.mcp.tools import GROUPS

INSTRUCTIONS = """SAM keeps what agents and people learn (facts, preferences, decisions,
solutions, procedures) in spaces, and gives the right few back with their reasons.
Call `session_handoff` (with your space) and `context_pack` (pack_type=boot) when a session
starts, and `recall` before a task; log what you do with `session_start`/`session_log`;
`remember` what is worth keeping; track a PRD's progress with `prd_event`/`prd_decision` and resume it with
`prd_context`; reason step by step with `start_thinking`/`think`/`finish_thinking`.
Everything you see is limited to the spaces your token may read."""


class SamMCPServer(MCPServer):
    """The SDK's server, answering as SAM answers: a failed call (SAM's refusal, the tool's
    own check, or arguments the input schema refuses) is a tool error holding SAM's error
    object (samsite.mcp.errors); an answer's text is its JSON as `samsite.mcp.budget`
    counts it, so a token budget bounds exactly what the agent reads."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            return errors.as_result(errors.body_of(exc, name))
        if isinstance(result, CallToolResult) and isinstance(result.structured_content, dict):
            result.content = [TextContent(type="text", text=budget.as_text(result.structured_content))]
        return result


def build_server(default_caller: Caller | None = None) -> MCPServer:
    """The MCP server. `default_caller` acts for calls that bring no Authorization header
    (the stdio transport, started with a token)."""
    server = SamMCPServer("SAM", title="SAM (Semantic Anchor Memory)", instructions=INSTRUCTIONS,
                       version="1", log_level="WARNING")
    tools = Tools(default_caller)
    for group in GROUPS:
        group.register(server, tools)
    return server


def tool_names() -> list[str]:
    """The name of every tool the server offers, in the order it lists them. Call it from
    synchronous code (it runs the server's own list_tools on an event loop of its own)."""
    return [tool.name for tool in asyncio.run(build_server().list_tools())]
