"""Tools that put memories into a prompt: the block about a user (`augment_prompt`) and a
context pack for a task or a session's start (`context_pack`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from samsite.mcp.toolkit import Space, Spaces, Tools


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="For a chat app: the block to put in the system prompt about this user "
                             "(core facts, then by priority and relevance to the message, grouped by "
                             "category, the user's preferred style first). Notes are quoted data.")
    def augment_prompt(space: Space, message: Annotated[str, Field(
            description="The user's current message.", max_length=4000)] = "",
            max_items: Annotated[int, Field(ge=1, le=50)] = 15,
            max_chars: Annotated[int, Field(ge=100, le=8000)] = 1200,
            track: Annotated[bool, Field(description="Count the notes put in as used (default), so "
                                                     "they do not decay as if unused.")] = True,
            ctx: Context | None = None) -> dict[str, Any]:
        # Each note of the block is defused already; defusing the block again would quote
        # its own <sam_user_memory> delimiters.
        answer = tools.api(ctx, "POST", "/api/v1/prompt-augmentation/", defused=False, body={
            "space": space, "message": message, "max_items": max_items, "max_chars": max_chars,
            "track": track})
        return {"block": answer["block"], "notes": len(answer["notes"]), "left_out": answer["left_out"],
                "silenced": answer["silenced"], "tracked": answer["tracked"]}

    @server.tool(description="A context pack: the memories for a task (or for starting a session, "
                             "pack_type=boot) as Markdown ready for a prompt, within a token budget.")
    def context_pack(query: Annotated[str, Field(description="The task or question.", max_length=4000)] = "",
                     spaces: Spaces = None, pack_type: Literal["boot", "task"] = "task",
                     token_budget: Annotated[int, Field(description="Tokens for the Markdown.", ge=50,
                                                        le=200_000)] = 1500,
                     include_unvalidated: Annotated[bool, Field(
                         description="Also show memory cards whose checks failed or that went stale."
                     )] = False,
                     ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, "pack_type": pack_type, "token_budget": token_budget,
                                "include_unvalidated": include_unvalidated}
        if spaces:
            body["spaces"] = spaces
        pack = tools.api(ctx, "POST", "/api/v1/context-packs/", body=body, defused=False)  # defused as built
        report = pack["json"].get("validation_report", {})
        return {"markdown": pack["markdown"], "items": len(pack["json"].get("items", [])),
                "token_budget": token_budget,
                "left_out": {"failed": len(report.get("failed", [])), "stale": len(report.get("stale", [])),
                             "excluded": report.get("excluded", [])}}
