"""Working-session tools: start or resume one, log its events, read its handoff, and check
the memory cards it compiled into."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from prd.sessions.api.serializers import (
    CardValidationInputSerializer,
    SessionEventInputSerializer,
    SessionEventsInputSerializer,
    SessionStartInputSerializer,
)
from samsite.mcp import budget
from samsite.mcp.limits import one_of, rest_limits
from samsite.mcp.toolkit import BUDGET_RULE, Budget, Space, Tools, default_budget, tool_error

HANDOFF_SECTIONS = ("what_changed", "what_shipped", "what_failed", "decisions", "open_questions",
                    "next_steps")


EVENT, START = SessionEventInputSerializer, SessionStartInputSerializer


def _strings(name: str) -> Any:
    """A list of strings held to the REST field's limits (count and length of each)."""
    return Annotated[list[Annotated[str, Field(**rest_limits(EVENT, f"{name}.child"))]] | None,
                     Field(**rest_limits(EVENT, name))]


TopicTags, Entities, TaskRefs = _strings("topic_tags"), _strings("entities"), _strings("task_refs")


class SessionEventIn(BaseModel):
    """One session event as an agent sends it (docs/sessions.md, "Events")."""

    event_type: Annotated[str, one_of(EVENT, "event_type")]
    text: Annotated[str, Field(description="The turn, the output, the decision...",
                               **rest_limits(EVENT, "text"))] = ""
    event_id: Annotated[str | None, Field(description="Your id: a retry stores it once.",
                                          **rest_limits(EVENT, "event_id"))] = None
    ts: str | None = Field(default=None, description="RFC 3339 time (default: now).")
    role: Annotated[str, one_of(EVENT, "role")] | None = None
    data: dict[str, Any] | None = Field(default=None, description="Typed fields of the event type.")
    topic_tags: TopicTags = None  # type: ignore[valid-type]
    entities: Entities = Field(default=None, description="Files, modules, libraries.")  # type: ignore[valid-type]
    task_refs: TaskRefs = None  # type: ignore[valid-type]


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="Start a working session in a space (or resume the one with your `key`), "
                             "then log what happens in it with `session_log`. SAM compiles the events into "
                             "memory cards and a handoff for the next session.")
    def session_start(space: Space, key: Annotated[str | None, Field(
            description="Your own id for this session; starting again with it resumes the session.",
            **rest_limits(START, "key"))] = None,
            title: Annotated[str, Field(description="What the session is about.",
                                        **rest_limits(START, "title"))] = "",
            agent_id: Annotated[str, Field(description="Which agent you are.",
                                           **rest_limits(START, "agent_id"))] = "",
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
                    events: Annotated[list[SessionEventIn], Field(
                        **rest_limits(SessionEventsInputSerializer, "events"))],
                    ctx: Context | None = None) -> dict[str, Any]:
        body = {"events": [e.model_dump(exclude_none=True) for e in events]}
        answer = tools.api(ctx, "POST", f"/api/v1/sessions/{session_id}/events/", body=body)
        return {"created": answer["created"], "replayed": answer["replayed"],
                "events": [{"event_id": e["event"]["event_id"], "sequence": e["event"]["sequence"],
                            "created": e["created"]} for e in answer["events"]],
                "redactions": len(answer["redaction_report"])}

    @server.tool(description="The handoff of a session: what changed, shipped and failed, decisions, open "
                             "questions and next steps, each citing its events. Without a session_id: the "
                             "latest session of `space`, which is how a new session picks up the last one. "
                             + BUDGET_RULE)
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
                   status: Annotated[str, one_of(CardValidationInputSerializer, "status")],
                   note: Annotated[str, Field(description="What you saw.",
                                              **rest_limits(CardValidationInputSerializer, "note"))] = "",
                   event_id: Annotated[str | None, Field(
                       description="The session event that shows it.",
                       **rest_limits(CardValidationInputSerializer, "event"))] = None,
                   ctx: Context | None = None) -> dict[str, Any]:
        card = tools.api(ctx, "POST", f"/api/v1/cards/{card_id}/validations/",
                         body={"status": status, "note": note, "event": event_id})
        return {"card_id": card["id"], "claim": card["claim"], "validation": card["validation"]}
