"""SAM's MCP tools, one module per area. Each module's `register(server, tools)` adds its
tools to the server; GROUPS is every group, in the order the server lists their tools."""

from __future__ import annotations

from samsite.mcp.tools import chat_imports, context, conversations, memories, prd, recall, sessions, thinking

GROUPS = (recall, memories, context, chat_imports, conversations, sessions, prd, thinking)
