"""Recall tools: `recall`, the searches of one kind of memory (solutions, issues, patterns,
decisions) and the summary of a category."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from retrieval import presenters
from retrieval.defuse import defuse_json
from samsite.mcp import budget
from samsite.mcp.toolkit import Budget, K, Query, Space, Spaces, Tools, default_budget, defused_items


def recall_memories(tools: Tools, ctx: Context | None, *, query: str, spaces: list[str] | None, k: int,
                    token_budget: int | None, filters: dict[str, Any] | None = None,
                    query_type: str = "semantic", topic: str = "", active_task: str = "") -> dict[str, Any]:
    """POST /recall/ as the caller; the ranked memories in the answer's token budget."""
    body: dict[str, Any] = {"query": query, "k": k, "query_type": query_type, "active_task": active_task}
    if spaces:
        body["spaces"] = spaces
    if filters:
        body["filters"] = filters
    if topic:
        body["topic"] = topic
    data = tools.api(ctx, "POST", "/api/v1/recall/", body=body, defused=False)["data"]
    envelope, _ = defuse_json({"query": data["query_text"], "spaces": data["spaces"],
                               "silenced_spaces": data.get("silenced_spaces", [])})
    if not data["ranked_memory_list"]:
        envelope["hint"] = "Nothing relevant yet; `remember` what you learn."
    return budget.fit(envelope, "memories", defused_items(data["ranked_memory_list"]),
                      budget=token_budget or default_budget(), short=presenters.short_memory)


def _of_kind(tools: Tools, kind: str) -> Any:
    """A recall limited to one kind of memory."""
    def run(ctx: Context | None, query: str, spaces: list[str] | None, k: int,
            token_budget: int | None, query_type: str = "semantic") -> dict[str, Any]:
        return recall_memories(tools, ctx, query=query, spaces=spaces, k=k, token_budget=token_budget,
                               filters={"kind": kind}, query_type=query_type)
    return run


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="Recall the memories most relevant to a query, each with why it was "
                             "recalled (rationale), its score and provenance. Use before starting a task.")
    def recall(query: Query, spaces: Spaces = None, k: K = 8, active_task: Annotated[str, Field(
            description="What you are doing right now, if it adds to the query.", max_length=2000)] = "",
            token_budget: Budget = None, ctx: Context | None = None) -> dict[str, Any]:
        return recall_memories(tools, ctx, query=query, spaces=spaces, k=k, token_budget=token_budget,
                               active_task=active_task)

    solutions, gotchas, patterns, decisions = (_of_kind(tools, kind) for kind in (
        "solution", "gotcha", "pattern", "decision"))

    @server.tool(description="Search solutions found in earlier sessions for a problem or an error "
                             "message.")
    def search_past_solutions(problem: Query, error_message: Annotated[str, Field(
            description="The error text, if any.", max_length=2000)] = "", spaces: Spaces = None, k: K = 5,
            token_budget: Budget = None, ctx: Context | None = None) -> dict[str, Any]:
        return solutions(ctx, f"{problem}\n{error_message}".strip(), spaces, k, token_budget)

    @server.tool(description="Find past issues (gotchas: what failed and what fixed it) like the "
                             "current one.")
    def find_similar_issues(context: Query, error_message: Annotated[str, Field(
            description="The error text, if any.", max_length=2000)] = "", spaces: Spaces = None, k: K = 5,
            token_budget: Budget = None, ctx: Context | None = None) -> dict[str, Any]:
        return gotchas(ctx, f"{context}\n{error_message}".strip(), spaces, k, token_budget)

    @server.tool(description="Get the established patterns and standards of a project space, "
                             "optionally about one category (e.g. authentication, database).")
    def get_project_patterns(space: Space, category: Annotated[str, Field(
            description="A category or topic.", max_length=200)] = "", k: K = 10,
            token_budget: Budget = None, ctx: Context | None = None) -> dict[str, Any]:
        if category:
            return patterns(ctx, category, [space], k, token_budget)
        # No category: every pattern of the space, most recent first.
        return patterns(ctx, "project patterns and standards", [space], k, token_budget, query_type="recent")

    @server.tool(description="Recall why a technical decision was made: the decision, its reason "
                             "and the alternatives considered.")
    def recall_decision(topic: Query, spaces: Spaces = None, k: K = 5, token_budget: Budget = None,
                        ctx: Context | None = None) -> dict[str, Any]:
        return decisions(ctx, topic, spaces, k, token_budget)

    @server.tool(description="A high-level summary of one category (a tag, e.g. testing): how many "
                             "memories a space holds on it and the most relevant of them.")
    def get_category_summary(space: Space, category: Annotated[str, Field(
            description="A tag.", min_length=1, max_length=40)], k: K = 10, token_budget: Budget = None,
            ctx: Context | None = None) -> dict[str, Any]:
        stats = tools.api(ctx, "GET", f"/api/v1/spaces/{space}/stats/")
        tag = category.strip().lower()
        count = next((t["memories"] for t in stats["top_tags"] if t["tag"] == tag), None)
        found = recall_memories(tools, ctx, query=category, spaces=[space], k=k, token_budget=None,
                                query_type="topic", topic=tag)
        envelope = {"space": space, "category": tag, "memories_tagged": count}
        return budget.fit(envelope, "memories", found["memories"],
                          budget=token_budget or default_budget(), short=presenters.short_memory)
