"""PRD tools: resume an execution (`prd_context`), log its events and record its decisions."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from samsite.mcp.toolkit import ExecutionId, Tools


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="Resume a PRD: its progress, open blockers, recent events, decisions and "
                             "learnings, to pick up where the last session stopped.")
    def prd_context(execution_id: ExecutionId, event_limit: Annotated[int, Field(ge=0, le=200)] = 20,
                    ctx: Context | None = None) -> dict[str, Any]:
        return dict(tools.api(ctx, "GET", f"/api/v1/prd/executions/{execution_id}/context/",
                              query={"event_limit": event_limit}))

    @server.tool(description="Log a PRD event: requirement_started, requirement_completed, test_failed, "
                             "test_passed, blocker_hit, blocker_resolved, revision, rollback, … "
                             "Progress follows from the log.")
    def prd_event(execution_id: ExecutionId, type: Annotated[str, Field(
            description="The event type.", min_length=1, max_length=40)],
            summary: Annotated[str, Field(description="What happened.", min_length=1, max_length=2000)],
            requirement_id: Annotated[str, Field(max_length=100)] = "",
            detail: Annotated[dict[str, Any] | None, Field(description="Structured detail.")] = None,
            resolves: Annotated[str | None, Field(description="For blocker_resolved: the blocker event id.",
                                                  max_length=64)] = None,
            idempotency_key: Annotated[str | None, Field(max_length=200)] = None,
            ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"type": type, "summary": summary, "requirement_id": requirement_id,
                                "detail": detail or {}}
        if resolves:
            body["resolves"] = resolves
        if idempotency_key:
            body["idempotency_key"] = idempotency_key
        answer = tools.api(ctx, "POST", f"/api/v1/prd/executions/{execution_id}/events/", body=body)
        return {"event": answer["event"], "progress": answer["execution"].get("progress"),
                "replayed": answer["replayed"]}

    @server.tool(description="Record a decision on a PRD (what, why, and the alternatives rejected).")
    def prd_decision(execution_id: ExecutionId,
                     decision: Annotated[str, Field(min_length=1, max_length=2000)],
                     reason: Annotated[str, Field(max_length=4000)] = "",
                     alternatives: Annotated[list[str] | None, Field(max_length=20)] = None,
                     requirement_id: Annotated[str, Field(max_length=100)] = "",
                     ctx: Context | None = None) -> dict[str, Any]:
        body = {"decision": decision, "reason": reason, "alternatives": alternatives or [],
                "requirement_id": requirement_id}
        answer = tools.api(ctx, "POST", f"/api/v1/prd/executions/{execution_id}/decisions/", body=body)
        return {"decision": answer["decision"], "event": answer["event"]["id"],
                "replayed": answer["replayed"]}
