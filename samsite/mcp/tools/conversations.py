"""Conversation tools: `capture_conversation` posts a finished conversation and answers what
SAM remembered from it (POST /api/v1/conversations/); `conversation_status` reads the outcome
once it has settled (GET /api/v1/conversations/{id}/)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from samsite.mcp.toolkit import Space, Tools


class ConversationToolCallIn(BaseModel):
    id: str = Field(max_length=200)
    name: str = Field(max_length=200, description="The tool's name (Bash, Edit, Read…).")
    input: dict[str, Any] = Field(default_factory=dict)


class ConversationToolResultIn(BaseModel):
    call_id: str = Field(max_length=200)
    content: str = ""
    is_error: bool = False


class ConversationMessageIn(BaseModel):
    """One message of the conversation. Its shape is checked by SAM's API, so a bad message is
    answered in SAM's error shape naming it (`messages[3].role`)."""

    role: str = Field(description="user, assistant or tool.", max_length=20)
    content: str = Field(default="", description="What was said.")
    time: str | None = Field(default=None, description="When (ISO 8601).")
    id: str | None = Field(default=None, max_length=200, description="Your id of the message: the "
                                                                     "evidence of each memory names it.")
    tool_calls: list[ConversationToolCallIn] | None = None
    tool_results: list[ConversationToolResultIn] | None = None


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="Give SAM a finished conversation: what the user said about themselves "
                             "(name, role, where they live, preferences, how they want answers) and the "
                             "decisions, standards and fixes in it become memories of `space` (redacted; a "
                             "repeated fact reinforces, a changed one supersedes). Answers what was "
                             "remembered, each memory with the quote and message it came from. Send the "
                             "same `conversation_id` again as the conversation grows: only new messages are "
                             "read. Over 50 messages a job captures it: check with `conversation_status`.")
    def capture_conversation(
            space: Space,
            messages: Annotated[list[ConversationMessageIn], Field(min_length=1, max_length=2000)],
            conversation_id: Annotated[str | None, Field(description="Your id of the conversation.",
                                                         max_length=200)] = None,
            title: Annotated[str, Field(description="What it was about.", max_length=500)] = "",
            ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"space": space, "title": title,
                                "messages": [m.model_dump(exclude_none=True) for m in messages]}
        if conversation_id:
            body["conversation_id"] = conversation_id
        return dict(tools.api(ctx, "POST", "/api/v1/conversations/", body=body))

    @server.tool(description="What a conversation given to `capture_conversation` left behind, as it "
                             "stands now: final once `pending` is false (embedded and checked for "
                             "supersession and review).")
    def conversation_status(capture_id: Annotated[str, Field(description="Its id (imp_…).", min_length=1,
                                                             max_length=40)],
                            ctx: Context | None = None) -> dict[str, Any]:
        return dict(tools.api(ctx, "GET", f"/api/v1/conversations/{capture_id}/"))
