"""PRD tools: start (or resume) an execution of a PRD (`prd_start`), list executions
(`prd_executions`), resume one (`prd_context`), log its events and record its decisions. An
agent tracks a PRD through these alone: start -> context -> event -> decision."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from prd.api.serializers import (
    PRDContextQuerySerializer,
    PRDDecisionInputSerializer,
    PRDEventInputSerializer,
    PRDExecutionListQuerySerializer,
    PRDExecutionStartInputSerializer,
    PRDRequirementSerializer,
)
from samsite.mcp import budget
from samsite.mcp.limits import one_of, rest_default, rest_limits
from samsite.mcp.toolkit import BUDGET_RULE, Budget, ExecutionId, Space, Tools, default_budget

START, EVENT, DECISION = PRDExecutionStartInputSerializer, PRDEventInputSerializer, PRDDecisionInputSerializer
IdempotencyKey = Annotated[str | None, Field(description="Send the same key when retrying: the first answer "
                                                         "comes back, nothing is logged twice.",
                                             **rest_limits(EVENT, "idempotency_key"))]
RequirementId = Annotated[str, Field(description="The requirement (e.g. R1).",
                                     **{**rest_limits(EVENT, "requirement_id"), "min_length": None})]
Status = Annotated[str, one_of(PRDExecutionListQuerySerializer, "status")]
# Keys of an execution as listed: what it is and where it stands, not its whole requirement list.
LISTED = ("id", "space", "prd_ref", "title", "status", "progress", "event_count", "last_event_at",
          "updated_at")


class RequirementIn(BaseModel):
    """A requirement of the PRD, as POST /api/v1/prd/executions/ takes it."""

    id: Annotated[str, Field(description="Its id, e.g. R1.", **rest_limits(PRDRequirementSerializer, "id"))]
    title: Annotated[str, Field(**rest_limits(PRDRequirementSerializer, "title"))] = ""
    hash: Annotated[str, Field(description="Content hash of the requirement's text (change detection).",
                               **rest_limits(PRDRequirementSerializer, "hash"))] = ""


def _listed(execution: dict[str, Any]) -> dict[str, Any]:
    return {k: execution[k] for k in LISTED if k in execution}


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="Start tracking a PRD in a space, or resume its execution: the same space "
                             "and prd_ref always give the same execution (created: false when resumed). "
                             "Returns the execution id that prd_context, prd_event and prd_decision take, "
                             "its progress, and what changed in the PRD since the last run.")
    def prd_start(space: Space,
                  prd_ref: Annotated[str, Field(description="The PRD: a file path or a git SHA.",
                                                **rest_limits(START, "prd_ref"))],
                  title: Annotated[str, Field(description="What the PRD is for.",
                                              **rest_limits(START, "title"))] = "",
                  requirements: Annotated[list[RequirementIn] | None, Field(
                      description="Its requirements (ids and titles), to follow progress per requirement.",
                      **rest_limits(START, "requirements"))] = None,
                  prd_content: Annotated[str, Field(
                      description="The PRD's text: SAM keeps only its hash, to say when it changed.",
                      **rest_limits(START, "prd_content"))] = "",
                  agent_id: Annotated[str, Field(description="Which agent you are.",
                                                 **rest_limits(START, "agent_id"))] = "",
                  ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"space": space, "prd_ref": prd_ref, "title": title, "agent_id": agent_id}
        if requirements is not None:
            body["requirements"] = [r.model_dump() for r in requirements]
        if prd_content:
            body["prd_content"] = prd_content
        answer = tools.api(ctx, "POST", "/api/v1/prd/executions/", body=body)
        execution = answer["execution"]
        return {"execution_id": execution["id"], "created": answer["created"], "run": answer["run"],
                "execution": _listed(execution), "prd_changes": answer["prd_changes"],
                "redactions": len(answer["redaction_report"])}

    @server.tool(description="List the PRD executions you may see, newest change first: id, PRD, status "
                             "and progress of each. " + BUDGET_RULE)
    def prd_executions(spaces: Annotated[list[Space] | None, Field(
                           description="Space slugs; default: every space the token may read.")] = None,
                       status: Annotated[Status | None,
                                         Field(description="Only executions in this status.")] = None,
                       prd_ref: Annotated[str | None, Field(
                           description="Only the execution of this PRD.",
                           **rest_limits(PRDExecutionListQuerySerializer, "prd_ref"))] = None,
                       token_budget: Budget = None, ctx: Context | None = None) -> dict[str, Any]:
        query = {"space": ",".join(spaces) if spaces else None, "status": status, "prd_ref": prd_ref}
        page = tools.api(ctx, "GET", "/api/v1/prd/executions/", query=query)
        return budget.fit({}, "executions", [_listed(e) for e in page["results"]],
                          budget=token_budget or default_budget(),
                          short=lambda e: {k: e[k] for k in ("id", "title", "status") if k in e})

    @server.tool(description="Resume a PRD: its progress, open blockers, recent events, decisions and "
                             "learnings, to pick up where the last session stopped (an execution id from "
                             "prd_start or prd_executions).")
    def prd_context(execution_id: ExecutionId, event_limit: Annotated[int, Field(
            description="How many recent events.", **rest_limits(PRDContextQuerySerializer, "event_limit"))
            ] = rest_default(PRDContextQuerySerializer, "event_limit"),
            ctx: Context | None = None) -> dict[str, Any]:
        return dict(tools.api(ctx, "GET", f"/api/v1/prd/executions/{execution_id}/context/",
                              query={"event_limit": event_limit}))

    @server.tool(description="Log a PRD event: requirement_started, requirement_completed, test_failed, "
                             "test_passed, blocker_hit, blocker_resolved, revision, rollback, … "
                             "Progress follows from the log.")
    def prd_event(execution_id: ExecutionId,
                  type: Annotated[str, one_of(EVENT, "type"), Field(description="The event type.")],
                  summary: Annotated[str, Field(description="What happened.",
                                                **rest_limits(EVENT, "summary"))],
                  requirement_id: RequirementId = "",
                  detail: Annotated[dict[str, Any] | None, Field(description="Structured detail.")] = None,
                  resolves: Annotated[str | None, Field(
                      description="For blocker_resolved: the blocker event id.",
                      **rest_limits(EVENT, "resolves"))] = None,
                  idempotency_key: IdempotencyKey = None,
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
                     decision: Annotated[str, Field(description="What was decided.",
                                                    **rest_limits(DECISION, "decision"))],
                     reason: Annotated[str, Field(description="Why.",
                                                  **rest_limits(DECISION, "reason"))] = "",
                     alternatives: Annotated[list[Annotated[str, Field(
                         **rest_limits(PRDDecisionInputSerializer, "alternatives.child"))]] | None, Field(
                         description="What was rejected.", **rest_limits(DECISION, "alternatives"))] = None,
                     requirement_id: RequirementId = "",
                     idempotency_key: IdempotencyKey = None,
                     ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"decision": decision, "reason": reason, "alternatives": alternatives or [],
                                "requirement_id": requirement_id}
        if idempotency_key:
            body["idempotency_key"] = idempotency_key
        answer = tools.api(ctx, "POST", f"/api/v1/prd/executions/{execution_id}/decisions/", body=body)
        return {"decision": answer["decision"], "event": answer["event"]["id"],
                "replayed": answer["replayed"]}
