"""Recall tools: `recall`, the searches of one kind of memory (solutions, issues, patterns,
decisions) and the summary of a category."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from governance.defuse import defuse_json
from memories.categories.api import CategoryInputSerializer
from retrieval import presenters
from retrieval.api.serializers import RecallInputSerializer
from samsite.mcp import budget
from samsite.mcp.limits import rest_limits
from samsite.mcp.toolkit import (
    BUDGET_RULE,
    RECALL_K,
    Budget,
    K,
    Query,
    Space,
    Spaces,
    Tools,
    default_budget,
    defused_items,
    tool_error,
)

# A tool's problem and error message go to recall as one query, held to the query's limit.
QUERY_MAX = rest_limits(RecallInputSerializer, "query")["max_length"]
ActiveTask = Annotated[str, Field(description="What you are doing right now, if it adds to the query.",
                                  **rest_limits(RecallInputSerializer, "active_task"))]
ErrorMessage = Annotated[str, Field(description="The error text, if any.",
                                    **rest_limits(RecallInputSerializer, "active_task"))]


def _joined(first: str, second: str) -> str:
    return f"{first}\n{second}".strip()[:QUERY_MAX]


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
                             "recalled (rationale), its score and provenance. Use before starting a task. "
                             + BUDGET_RULE)
    def recall(query: Query, spaces: Spaces = None, k: K = RECALL_K, active_task: ActiveTask = "",
            token_budget: Budget = None, ctx: Context | None = None) -> dict[str, Any]:
        return recall_memories(tools, ctx, query=query, spaces=spaces, k=k, token_budget=token_budget,
                               active_task=active_task)

    solutions, gotchas, patterns, decisions = (_of_kind(tools, kind) for kind in (
        "solution", "gotcha", "pattern", "decision"))

    @server.tool(description="Search solutions found in earlier sessions for a problem or an error "
                             "message. " + BUDGET_RULE)
    def search_past_solutions(problem: Query, error_message: ErrorMessage = "", spaces: Spaces = None,
                              k: K = RECALL_K, token_budget: Budget = None,
                              ctx: Context | None = None) -> dict[str, Any]:
        return solutions(ctx, _joined(problem, error_message), spaces, k, token_budget)

    @server.tool(description="Find past issues (gotchas: what failed and what fixed it) like the "
                             "current one. " + BUDGET_RULE)
    def find_similar_issues(context: Query, error_message: ErrorMessage = "", spaces: Spaces = None,
                            k: K = RECALL_K, token_budget: Budget = None,
                            ctx: Context | None = None) -> dict[str, Any]:
        return gotchas(ctx, _joined(context, error_message), spaces, k, token_budget)

    @server.tool(description="Get the established patterns and standards of a project space, "
                             "optionally about one topic (e.g. authentication, database). " + BUDGET_RULE)
    def get_project_patterns(space: Space, category: Annotated[str, Field(
            description="A topic.", **rest_limits(RecallInputSerializer, "active_task"))] = "",
            k: K = RECALL_K,
            token_budget: Budget = None, ctx: Context | None = None) -> dict[str, Any]:
        if category:
            return patterns(ctx, category, [space], k, token_budget)
        # No category: every pattern of the space, most recent first.
        return patterns(ctx, "project patterns and standards", [space], k, token_budget, query_type="recent")

    @server.tool(description="Recall why a technical decision was made: the decision, its reason "
                             "and the alternatives considered. " + BUDGET_RULE)
    def recall_decision(topic: Query, spaces: Spaces = None, k: K = RECALL_K, token_budget: Budget = None,
                        ctx: Context | None = None) -> dict[str, Any]:
        return decisions(ctx, topic, spaces, k, token_budget)

    @server.tool(description="A high-level summary of one of a space's categories (GET "
                             "/api/v1/spaces/{slug}/categories/: e.g. preferences, standards, decisions): "
                             "its description, how many memories it holds, its summary, and its memories. "
                             "An unknown category is a not_found error naming the space's categories. "
                             + BUDGET_RULE)
    def get_category_summary(space: Space, category: Annotated[str, Field(
            description="A category's name.", **rest_limits(CategoryInputSerializer, "name"))],
            k: K = RECALL_K, token_budget: Budget = None, ctx: Context | None = None) -> dict[str, Any]:
        name = category.strip().lower()
        # A space has tens of categories, not hundreds: one page of the largest size holds them.
        known = tools.api(ctx, "GET", f"/api/v1/spaces/{space}/categories/",
                          query={"page_size": 500})["results"]
        found = next((c for c in known if c["name"] == name), None)
        if found is None:
            names = ", ".join(c["name"] for c in known) or "none"
            raise tool_error("not_found", 404, f"The space has no category named {name!r}.",
                             {"category": [f"Not a category of {space}; its categories: {names}."]})
        listed = tools.api(ctx, "GET", "/api/v1/memories/",
                           query={"space": space, "category": name, "page_size": k})
        memories = [presenters.short_memory(m) for m in defused_items(listed["results"])]
        envelope = {"space": space, "category": name, "display_name": found["display_name"],
                    "description": found["description"], "item_count": found["item_count"],
                    "summary": found["summary"]}
        return budget.fit(envelope, "memories", memories, budget=token_budget or default_budget(),
                          short=_headline)


def _headline(memory: dict[str, Any]) -> dict[str, Any]:
    return {k: memory[k] for k in ("id", "title", "kind") if k in memory}
