"""Memory tools: store one (`remember`), archive or delete it (`forget`), say how it served
you (`memory_feedback`), and a space's statistics (`memory_stats`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from governance import idempotency
from memories.api.serializers import MemoryCreateInputSerializer, MemoryReasonInputSerializer
from samsite.mcp.limits import one_of, rest_limits
from samsite.mcp.toolkit import MemoryId, Space, Tools

CREATE = MemoryCreateInputSerializer
Tag = Annotated[str, Field(**rest_limits(CREATE, "tags.child"))]
Reason = Annotated[str, Field(description="Why, for the history.",
                              **rest_limits(MemoryReasonInputSerializer, "reason"))]


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="Store a memory worth keeping (a fact, preference, decision, solution, "
                             "pattern, procedure or gotcha). Personal data is redacted before storage.")
    def remember(space: Space, title: Annotated[str, Field(description="One line that names it.",
                                                           **rest_limits(CREATE, "title"))],
                 content: Annotated[str, Field(description="The memory itself, self-contained.",
                                               **rest_limits(CREATE, "content"))],
                 kind: Annotated[str, one_of(CREATE, "kind"), Field(
                     description="fact, preference, decision, solution, pattern, standard, procedure, "
                                 "gotcha, … (default fact)")] = "fact",
                 tags: Annotated[list[Tag] | None, Field(description="A few topic tags.",
                                                         **rest_limits(CREATE, "tags"))] = None,
                 idempotency_key: Annotated[str | None, Field(
                     description="Send the same key when retrying, so the memory is stored once.",
                     min_length=1, max_length=idempotency.MAX_KEY_LENGTH,
                     pattern=idempotency.KEY_REGEX)] = None,
                 ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"space": space, "title": title, "content": content, "kind": kind}
        if tags:
            body["tags"] = tags
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        answer = tools.api(ctx, "POST", "/api/v1/memories/", body=body, headers=headers)
        memory = answer["memory"]
        return {"id": memory["id"], "space": memory["space"], "title": memory["title"],
                "kind": memory["kind"], "version": memory["version"], "persisted": answer["persisted"],
                "reinforced": answer.get("reinforced", False), "redactions": answer["redaction_report"]}

    @server.tool(description="Forget a memory: archive it (hidden from recall, restorable by a curator), "
                             "or delete it for good with permanent=true (curators and owners).")
    def forget(memory_id: MemoryId, permanent: Annotated[bool, Field(
            description="Delete instead of archive.")] = False,
            reason: Reason = "",
            ctx: Context | None = None) -> dict[str, Any]:
        if permanent:
            tools.api(ctx, "DELETE", f"/api/v1/memories/{memory_id}/")
            return {"id": memory_id, "deleted": True}
        answer = tools.api(ctx, "POST", f"/api/v1/memories/{memory_id}/archive/",
                           body={"reason": reason or "forgotten by an agent"})
        return {"id": memory_id, "archived": bool(answer["memory"]["archive_flag"])}

    @server.tool(description="Statistics of a space: memories by type, kind and embedding status, top tags.")
    def memory_stats(space: Space, ctx: Context | None = None) -> dict[str, Any]:
        return dict(tools.api(ctx, "GET", f"/api/v1/spaces/{space}/stats/"))

    @server.tool(description="Tell SAM how a memory served you: `confirm` (it still holds: more "
                             "confidence), `contradict` (it is wrong: contested, less confidence, and a "
                             "curator reviews it), `used` (your answer relied on it: it fades more slowly).")
    def memory_feedback(memory_id: MemoryId, feedback: Literal["confirm", "contradict", "used"],
                        reason: Reason = "",
                        ctx: Context | None = None) -> dict[str, Any]:
        body = {"reason": reason} if feedback == "contradict" else None
        answer = tools.api(ctx, "POST", f"/api/v1/memories/{memory_id}/{feedback}/", body=body)
        return {"memory_id": answer["memory"], "confidence": answer["confidence"],
                "reliability": answer["reliability"], "recorded": answer["recorded"],
                "review_item": answer["review_item"]}
