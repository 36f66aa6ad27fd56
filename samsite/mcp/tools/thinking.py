"""Thinking-chain tools: start a chain, add thoughts, finish it, and find past chains."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from prd.api.serializers import (
    ThinkingChainRecallInputSerializer,
    ThinkingChainStartInputSerializer,
    ThoughtInputSerializer,
)
from samsite.mcp import budget
from samsite.mcp.limits import rest_default, rest_limits
from samsite.mcp.toolkit import BUDGET_RULE, Budget, ChainId, Space, Spaces, Tools, default_budget

START, RECALL = ThinkingChainStartInputSerializer, ThinkingChainRecallInputSerializer
# The short form of a chain when the whole one does not fit: what it asked and concluded.
SHORT_CHAIN_KEYS = ("id", "space", "query", "summary", "status")


def _short_chain(chain: dict[str, Any]) -> dict[str, Any]:
    return {k: chain[k] for k in SHORT_CHAIN_KEYS if k in chain}


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="Start a chain of thoughts on a question; add thoughts with `think`.")
    def start_thinking(space: Space, query: Annotated[str, Field(
            description="The question to reason about.", **rest_limits(START, "query"))],
            execution_id: Annotated[str | None, Field(description="A PRD execution it belongs to.",
                                                      **rest_limits(ThinkingChainStartInputSerializer,
                                                                    "execution"))] = None,
            ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"space": space, "query": query}
        if execution_id:
            body["execution"] = execution_id
        chain = tools.api(ctx, "POST", "/api/v1/thinking-chains/", body=body)
        return {"chain_id": chain["id"], "status": chain["status"]}

    @server.tool(description="Add the next thought to a chain; a revision names the thought it revises.")
    def think(chain_id: ChainId, content: Annotated[str, Field(
            description="The thought.", **rest_limits(ThoughtInputSerializer, "content"))],
              is_revision: bool = False,
              revises: Annotated[int | None, Field(description="Number of the revised thought.",
                                                   ge=1)] = None,
              ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"content": content, "is_revision": is_revision}
        if revises is not None:
            body["revises"] = revises
        chain = tools.api(ctx, "POST", f"/api/v1/thinking-chains/{chain_id}/thoughts/", body=body)
        return {"chain_id": chain["id"], "thoughts": len(chain["thoughts"]),
                "last": chain["thoughts"][-1]["number"]}

    @server.tool(description="Complete a chain: SAM summarises it and keeps what it learned as memories.")
    def finish_thinking(chain_id: ChainId, ctx: Context | None = None) -> dict[str, Any]:
        chain = tools.api(ctx, "POST", f"/api/v1/thinking-chains/{chain_id}/complete/")
        return {"chain_id": chain["id"], "status": chain["status"], "thoughts": len(chain["thoughts"])}

    @server.tool(description="Find past chains of reasoning on questions like this one, with their "
                             "summaries. " + BUDGET_RULE)
    def recall_reasoning(query: Annotated[str, Field(
            description="The question.", **rest_limits(ThinkingChainRecallInputSerializer, "query"))],
            spaces: Spaces = None, k: Annotated[int, Field(
                description="How many chains at most.", **rest_limits(RECALL, "k"))
            ] = rest_default(RECALL, "k"), token_budget: Budget = None,
                         ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, "k": k}
        if spaces:
            body["spaces"] = spaces
        answer = tools.api(ctx, "POST", "/api/v1/thinking-chains/recall/", body=body)
        chains = [{**match["chain"], "score": match["score"]} for match in answer["results"]]
        return budget.fit({"query": query}, "chains", chains, budget=token_budget or default_budget(),
                          short=_short_chain, headline="query")
