"""Chat-history import tools: `ingest_chat_history` and `chat_import_status`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from samsite.mcp.dispatch import multipart
from samsite.mcp.toolkit import Space, Tools


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="Import a chat history into a space: what the user said about themselves "
                             "and the decisions, standards and fixes of past sessions become memories "
                             "(redacted; a repeated fact reinforces, a changed one supersedes). `source`: "
                             "claude_code (a session .jsonl), chatgpt (conversations.json) or jsonl (SAM's "
                             "format: conversation_id, role, content, time per line). The space's owner "
                             "must allow the source. Returns the import; check it with "
                             "`chat_import_status`.")
    def ingest_chat_history(space: Space, source: Literal["claude_code", "chatgpt", "jsonl"],
                            content: Annotated[str, Field(description="The history file's text.",
                                                          min_length=1, max_length=20_000_000)],
                            file_name: Annotated[str, Field(description="Its file name.",
                                                            max_length=200)] = "",
                            ctx: Context | None = None) -> dict[str, Any]:
        name = file_name or {"chatgpt": "conversations.json"}.get(source, "history.jsonl")
        body = multipart({"source": source}, {"file": (name, content.encode())})
        return _import_summary(tools.api(ctx, "POST", f"/api/v1/spaces/{space}/chat-imports/", raw=body))

    @server.tool(description="The status and report of a chat-history import (see `ingest_chat_history`).")
    def chat_import_status(import_id: Annotated[str, Field(description="The import's id (imp_…).",
                                                           max_length=40)],
                           ctx: Context | None = None) -> dict[str, Any]:
        return _import_summary(tools.api(ctx, "GET", f"/api/v1/chat-imports/{import_id}/"))


def _import_summary(answer: dict[str, Any]) -> dict[str, Any]:
    report = answer.get("report") or {}
    keys = ("conversations_seen", "conversations_skipped", "exchanges", "memories_created",
            "memories_reinforced")
    # Whether the memories are final (embedded and checked), as GET /chat-imports/{id}/ says.
    progress = ("extraction_done", "pending", "embedding_failed", "final")
    return {"import_id": answer["id"], "status": answer["status"], "error": answer["error"] or None,
            **{k: report[k] for k in keys if k in report},
            "rejected": len(report.get("rejected", [])), "unreadable": len(report.get("errors", [])),
            **{k: answer[k] for k in progress if k in answer}}
