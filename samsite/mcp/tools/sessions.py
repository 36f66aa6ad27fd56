"""Working-session tools: start or resume one, log its events, read its handoff, and check
the memory cards it compiled into."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from samsite.mcp import budget
from samsite.mcp.toolkit import Budget, Space, Tools, default_budget, tool_error

HANDOFF_SECTIONS = ("what_changed", "what_shipped", "what_failed", "decisions", "open_questions",
                    "next_steps")


class SessionEventIn(BaseModel):
    """One session event as an agent sends it (docs/sessions.md, "Events")."""

    event_type: Literal["chat_turn", "voice_transcript", "command_intent", "command_run", "file_change",
                        "test_result", "decision", "handoff", "summary", "action_run"]
    text: str = Field(default="", max_length=20_000, description="The turn, the output, the decision...")
    event_id: str | None = Field(default=None, max_length=120, description="Your id: a retry stores it once.")
    ts: str | None = Field(default=None, description="RFC 3339 time (default: now).")
    role: Literal["user", "assistant", "system", "tool"] | None = None
    data: dict[str, Any] | None = Field(default=None, description="Typed fields of the event type.")
    topic_tags: list[str] | None = Field(default=None, max_length=20)
    entities: list[str] | None = Field(default=None, max_length=50, description="Files, modules, libraries.")
    task_refs: list[str] | None = Field(default=None, max_length=50)


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="Start a working session in a space (or resume the one with your `key`), "
                             "then log what happens in it with `session_log`. SAM compiles the events into "
                             "memory cards and a handoff for the next session.")
    def session_start(space: Space, key: Annotated[str | None, Field(
            description="Your own id for this session; starting again with it resumes the session.",
            max_length=120)] = None,
            title: Annotated[str, Field(description="What the session is about.", max_length=300)] = "",
            agent_id: Annotated[str, Field(description="Which agent you are.", max_length=200)] = "",
            ctx: Context | None = None) -> dict[str, Any]:
        answer = tools.api(ctx, "POST", "/api/v1/sessions/",
                           body={"space": space, "key": key, "title": title, "agent_id": agent_id})
        session = answer["session"]
        return {"session_id": session["id"], "key": session["key"], "space": session["space"],
                "created": answer["created"], "event_count": session["event_count"]}

    @server.tool(description="Log events of a session (up to 500 at once): chat_turn, command_run "
                             "(data: command, exit_code), file_change (data: path, change), test_result "
                             "(data: name, status), decision (data: reason), handoff (data: next_steps, "
                             "open_questions), summary. Give each an event_id so a retry stores it once. "
                             "Secrets and personal data are redacted before storage.")
    def session_log(session_id: Annotated[str, Field(description="From session_start (ses_…).", min_length=1,
                                                     max_length=64)],
                    events: Annotated[list[SessionEventIn], Field(min_length=1, max_length=500)],
                    ctx: Context | None = None) -> dict[str, Any]:
        body = {"events": [e.model_dump(exclude_none=True) for e in events]}
        answer = tools.api(ctx, "POST", f"/api/v1/sessions/{session_id}/events/", body=body)
        return {"created": answer["created"], "replayed": answer["replayed"],
                "events": [{"event_id": e["event"]["event_id"], "sequence": e["event"]["sequence"],
                            "created": e["created"]} for e in answer["events"]],
                "redactions": len(answer["redaction_report"])}

    @server.tool(description="The handoff of a session: what changed, shipped and failed, decisions, open "
                             "questions and next steps, each citing its events. Without a session_id: the "
                             "latest session of `space`, which is how a new session picks up the last one.")
    def session_handoff(session_id: Annotated[str | None, Field(description="A session (ses_…).",
                                                                max_length=64)] = None,
                        space: Annotated[str | None, Field(description="Space slug, for its latest session.",
                                                           max_length=64)] = None,
                        format: Literal["markdown", "json"] = "markdown", token_budget: Budget = None,
                        ctx: Context | None = None) -> dict[str, Any]:
        if session_id:
            # A handoff is defused as it is compiled.
            answer = tools.api(ctx, "GET", f"/api/v1/sessions/{session_id}/handoff/", defused=False)
        elif space:
            answer = tools.api(ctx, "GET", "/api/v1/sessions/latest-handoff/", query={"space": space},
                               defused=False)
        else:
            raise tool_error("invalid", 400, "Give a session_id or a space.")
        handoff = answer["json"]
        if format == "json":
            return budget.fit({"session": handoff["session"], "generated_at": handoff["generated_at"],
                               "summary": handoff["summary"]}, "sections",
                              [{"name": name, "entries": handoff[name]} for name in HANDOFF_SECTIONS],
                              budget=token_budget or default_budget(),
                              short=lambda section: {"name": section["name"],
                                                     "count": len(section["entries"])})
        return budget.fit_text({"session_id": handoff["session"]["id"]}, "markdown", answer["markdown"],
                               budget=token_budget or default_budget())

    @server.tool(description="Record a check of a memory card (pass, failed, stale), e.g. after running "
                             "the command a procedure card names. Failed and stale cards stay out of packs.")
    def card_check(card_id: Annotated[str, Field(description="A card (card_…).", min_length=1,
                                                 max_length=64)],
                   status: Literal["pass", "failed", "stale"],
                   note: Annotated[str, Field(description="What you saw.", max_length=1000)] = "",
                   event_id: Annotated[str | None, Field(description="The session event that shows it.",
                                                         max_length=120)] = None,
                   ctx: Context | None = None) -> dict[str, Any]:
        card = tools.api(ctx, "POST", f"/api/v1/cards/{card_id}/validations/",
                         body={"status": status, "note": note, "event": event_id})
        return {"card_id": card["id"], "claim": card["claim"], "validation": card["validation"]}
