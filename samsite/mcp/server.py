"""SAM's MCP server: tools an agent calls to recall, remember, track a PRD and think.

Every tool is a typed front for one REST call (samsite.mcp.dispatch), made with the
caller's own token, so the gateway, memory modes, redaction and audit apply as they do to
the API. Answers that list memories or chains are fitted into a token budget
(samsite.mcp.budget); errors come back as tool errors carrying SAM's error code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from django.conf import settings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from samsite.mcp import budget
from samsite.mcp.dispatch import Answer, Caller, call, multipart

INSTRUCTIONS = """SAM keeps what agents and people learn (facts, preferences, decisions,
solutions, procedures) in spaces, and gives the right few back with their reasons.
Call `session_handoff` (with your space) and `context_pack` (pack_type=boot) when a session
starts, and `recall` before a task; log what you do with `session_start`/`session_log`;
`remember` what is worth keeping; track a PRD's progress with `prd_event`/`prd_decision` and resume it with
`prd_context`; reason step by step with `start_thinking`/`think`/`finish_thinking`.
Everything you see is limited to the spaces your token may read."""

# The short form of a ranked memory when the whole one does not fit: what it says.
SHORT_MEMORY_KEYS = ("id", "space", "title", "summary", "kind")
SHORT_CHAIN_KEYS = ("id", "space", "query", "summary", "status")

Space = Annotated[str, Field(description="Space slug, e.g. 'webshop'.", min_length=1, max_length=64)]
Spaces = Annotated[list[str] | None, Field(
    description="Space slugs to search; default: every space the token may read.", max_length=50)]
Query = Annotated[str, Field(description="What you need to know, in plain words.", min_length=1,
                             max_length=4000)]
K = Annotated[int, Field(description="How many memories at most.", ge=1, le=50)]
Budget = Annotated[int | None, Field(
    description="Token budget of this answer (default: the server's, 4,000). Answers never exceed it: "
                "best items whole, then short, then `truncated: true` with `total`.",
    ge=budget.MIN_BUDGET, le=200_000)]
MemoryId = Annotated[str, Field(description="A memory id (mem_…).", min_length=1, max_length=64)]
ExecutionId = Annotated[str, Field(description="A PRD execution id (prd_…).", min_length=1, max_length=64)]
ChainId = Annotated[str, Field(description="A thinking chain id (chn_…).", min_length=1, max_length=64)]


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


def default_budget() -> int:
    return int(settings.SAM_MCP["TOKEN_BUDGET"])


def _short(keys: tuple[str, ...]) -> Any:
    return lambda item: {k: item[k] for k in keys if k in item}


def _failed(answer: Answer) -> ToolError:
    """A tool error in SAM's error shape: {"error": {code, message, fields?}} as JSON text."""
    body = answer.body if isinstance(answer.body, dict) and "error" in answer.body else {
        "error": {"code": f"http_{answer.status}", "message": "The request failed."}}
    body["error"]["status"] = answer.status
    return ToolError(json.dumps(body, ensure_ascii=False))


class Tools:
    """The tools, bound to how a call's caller is found (headers over HTTP, the token the
    stdio server was started with otherwise)."""

    def __init__(self, default_caller: Caller | None) -> None:
        self.default_caller = default_caller

    def caller(self, ctx: Context | None) -> Caller:
        headers: Mapping[str, str] = {}
        try:
            headers = (ctx.headers if ctx is not None else None) or {}
        except ValueError:  # no request in flight (stdio has no headers)
            headers = {}
        authorization = headers.get("authorization", "")
        if authorization:
            return Caller(authorization=authorization, host=headers.get("host", ""),
                          secure=headers.get("x-sam-scheme") == "https",
                          request_id=headers.get("x-request-id", ""))
        if self.default_caller is None:
            raise ToolError(json.dumps({"error": {"code": "not_authenticated", "status": 401,
                                                  "message": "Send an Authorization: Bearer token."}}))
        return self.default_caller

    def api(self, ctx: Context | None, method: str, path: str, **kwargs: Any) -> Any:
        answer = call(self.caller(ctx), method, path, **kwargs)
        if not answer.ok:
            raise _failed(answer)
        return answer.body

    def recall(self, ctx: Context | None, *, query: str, spaces: list[str] | None, k: int,
               token_budget: int | None, filters: dict[str, Any] | None = None,
               query_type: str = "semantic", topic: str = "", active_task: str = "") -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, "k": k, "query_type": query_type, "active_task": active_task}
        if spaces:
            body["spaces"] = spaces
        if filters:
            body["filters"] = filters
        if topic:
            body["topic"] = topic
        data = self.api(ctx, "POST", "/api/v1/recall/", body=body)["data"]
        envelope = {"query": data["query_text"], "spaces": data["spaces"],
                    "silenced_spaces": data.get("silenced_spaces", [])}
        if not data["ranked_memory_list"]:
            envelope["hint"] = "Nothing relevant yet; `remember` what you learn."
        return budget.fit(envelope, "memories", data["ranked_memory_list"],
                          budget=token_budget or default_budget(), short=_short(SHORT_MEMORY_KEYS))


def build_server(default_caller: Caller | None = None) -> MCPServer:
    """The MCP server. `default_caller` acts for calls that bring no Authorization header
    (the stdio transport, started with a token)."""
    server = MCPServer("SAM", title="SAM (Semantic Anchor Memory)", instructions=INSTRUCTIONS,
                       version="1", log_level="WARNING")
    tools = Tools(default_caller)

    @server.tool(description="Recall the memories most relevant to a query, each with why it was "
                             "recalled (rationale), its score and provenance. Use before starting a task.")
    def recall(query: Query, spaces: Spaces = None, k: K = 8, active_task: Annotated[str, Field(
            description="What you are doing right now, if it adds to the query.", max_length=2000)] = "",
            token_budget: Budget = None, ctx: Context | None = None) -> dict[str, Any]:
        return tools.recall(ctx, query=query, spaces=spaces, k=k, token_budget=token_budget,
                            active_task=active_task)

    @server.tool(description="Store a memory worth keeping (a fact, preference, decision, solution, "
                             "pattern, procedure or gotcha). Personal data is redacted before storage.")
    def remember(space: Space, title: Annotated[str, Field(description="One line that names it.",
                                                           min_length=1, max_length=200)],
                 content: Annotated[str, Field(description="The memory itself, self-contained.",
                                               min_length=1, max_length=20000)],
                 kind: Annotated[str, Field(description="fact, preference, decision, solution, pattern, "
                                                        "standard, procedure, gotcha, … (default fact)",
                                            max_length=40)] = "fact",
                 tags: Annotated[list[str] | None, Field(description="A few topic tags.",
                                                         max_length=24)] = None,
                 idempotency_key: Annotated[str | None, Field(
                     description="Send the same key when retrying, so the memory is stored once.",
                     max_length=200)] = None,
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
            reason: Annotated[str, Field(description="Why, for the history.", max_length=500)] = "",
            ctx: Context | None = None) -> dict[str, Any]:
        if permanent:
            tools.api(ctx, "DELETE", f"/api/v1/memories/{memory_id}/")
            return {"id": memory_id, "deleted": True}
        answer = tools.api(ctx, "POST", f"/api/v1/memories/{memory_id}/archive/",
                           body={"reason": reason or "forgotten by an agent"})
        return {"id": memory_id, "archived": bool(answer["memory"]["archive_flag"])}

    def kind_recall(kind: str) -> Any:
        def run(ctx: Context | None, query: str, spaces: list[str] | None, k: int,
                token_budget: int | None, query_type: str = "semantic") -> dict[str, Any]:
            return tools.recall(ctx, query=query, spaces=spaces, k=k, token_budget=token_budget,
                                filters={"kind": kind}, query_type=query_type)
        return run

    solutions, gotchas, patterns, decisions = (kind_recall(k) for k in ("solution", "gotcha", "pattern",
                                                                          "decision"))

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
        found = tools.recall(ctx, query=category, spaces=[space], k=k, token_budget=None,
                             query_type="topic", topic=tag)
        envelope = {"space": space, "category": tag, "memories_tagged": count}
        return budget.fit(envelope, "memories", found["memories"],
                          budget=token_budget or default_budget(), short=_short(SHORT_MEMORY_KEYS))

    @server.tool(description="Statistics of a space: memories by type, kind and embedding status, top tags.")
    def memory_stats(space: Space, ctx: Context | None = None) -> dict[str, Any]:
        return dict(tools.api(ctx, "GET", f"/api/v1/spaces/{space}/stats/"))

    @server.tool(description="For a chat app: the block to put in the system prompt about this user "
                             "(core facts, then by priority and relevance to the message, grouped by "
                             "category, the user's preferred style first). Notes are quoted data.")
    def augment_prompt(space: Space, message: Annotated[str, Field(
            description="The user's current message.", max_length=4000)] = "",
            max_items: Annotated[int, Field(ge=1, le=50)] = 15,
            max_chars: Annotated[int, Field(ge=100, le=8000)] = 1200,
            ctx: Context | None = None) -> dict[str, Any]:
        answer = tools.api(ctx, "POST", "/api/v1/prompt-augmentation/", body={
            "space": space, "message": message, "max_items": max_items, "max_chars": max_chars})
        return {"block": answer["block"], "notes": len(answer["notes"]), "left_out": answer["left_out"],
                "silenced": answer["silenced"]}

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
        pack = tools.api(ctx, "POST", "/api/v1/context-packs/", body=body)
        report = pack["json"].get("validation_report", {})
        return {"markdown": pack["markdown"], "items": len(pack["json"].get("items", [])),
                "token_budget": token_budget,
                "left_out": {"failed": len(report.get("failed", [])), "stale": len(report.get("stale", [])),
                             "excluded": report.get("excluded", [])}}

    @server.tool(description="Tell SAM how a memory served you: `confirm` (it still holds: more "
                             "confidence), `contradict` (it is wrong: contested, less confidence, and a "
                             "curator reviews it), `used` (your answer relied on it: it fades more slowly).")
    def memory_feedback(memory_id: MemoryId, feedback: Literal["confirm", "contradict", "used"],
                        reason: Annotated[str, Field(description="Why (contradict).", max_length=500)] = "",
                        ctx: Context | None = None) -> dict[str, Any]:
        body = {"reason": reason} if feedback == "contradict" else None
        answer = tools.api(ctx, "POST", f"/api/v1/memories/{memory_id}/{feedback}/", body=body)
        return {"memory_id": answer["memory"], "confidence": answer["confidence"],
                "reliability": answer["reliability"], "recorded": answer["recorded"],
                "review_item": answer["review_item"]}

    @server.tool(description="Import a chat history into a space: what the user said about themselves "
                             "and the decisions, standards and fixes of past sessions become memories "
                             "(redacted; a repeated fact reinforces, a changed one supersedes). `source`: "
                             "claude_code (a session .jsonl), chatgpt (conversations.json) or jsonl (SAM's "
                             "format: conversation_id, role, content, time per line). The space's owner "
                             "must allow the source. Returns the import; check it with "
                             "`chat_import_status`.")
    def ingest_chat_history(space: Space, source: Literal["claude_code", "chatgpt", "jsonl"],
                            content: Annotated[str, Field(description="The history file's text.",
                                                          min_length=1, max_length=20_000_000)],
                            file_name: Annotated[str, Field(description="Its file name.",
                                                            max_length=200)] = "",
                            ctx: Context | None = None) -> dict[str, Any]:
        name = file_name or {"chatgpt": "conversations.json"}.get(source, "history.jsonl")
        body = multipart({"source": source}, {"file": (name, content.encode())})
        return _import_summary(tools.api(ctx, "POST", f"/api/v1/spaces/{space}/chat-imports/", raw=body))

    @server.tool(description="The status and report of a chat-history import (see `ingest_chat_history`).")
    def chat_import_status(import_id: Annotated[str, Field(description="The import's id (imp_…).",
                                                           max_length=40)],
                           ctx: Context | None = None) -> dict[str, Any]:
        return _import_summary(tools.api(ctx, "GET", f"/api/v1/chat-imports/{import_id}/"))

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
            answer = tools.api(ctx, "GET", f"/api/v1/sessions/{session_id}/handoff/")
        elif space:
            answer = tools.api(ctx, "GET", "/api/v1/sessions/latest-handoff/", query={"space": space})
        else:
            raise ToolError(json.dumps({"error": {"code": "invalid", "status": 400,
                                                  "message": "Give a session_id or a space."}}))
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

    @server.tool(description="Start a chain of thoughts on a question; add thoughts with `think`.")
    def start_thinking(space: Space, query: Annotated[str, Field(
            description="The question to reason about.", min_length=1, max_length=2000)],
            execution_id: Annotated[str | None, Field(description="A PRD execution it belongs to.",
                                                      max_length=64)] = None,
            ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"space": space, "query": query}
        if execution_id:
            body["execution"] = execution_id
        chain = tools.api(ctx, "POST", "/api/v1/thinking-chains/", body=body)
        return {"chain_id": chain["id"], "status": chain["status"]}

    @server.tool(description="Add the next thought to a chain; a revision names the thought it revises.")
    def think(chain_id: ChainId, content: Annotated[str, Field(min_length=1, max_length=8000)],
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
                             "summaries.")
    def recall_reasoning(query: Query, spaces: Spaces = None, k: K = 5, token_budget: Budget = None,
                         ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, "k": k}
        if spaces:
            body["spaces"] = spaces
        answer = tools.api(ctx, "POST", "/api/v1/thinking-chains/recall/", body=body)
        chains = [{**match["chain"], "score": match["score"]} for match in answer["results"]]
        return budget.fit({"query": query}, "chains", chains, budget=token_budget or default_budget(),
                          short=_short(SHORT_CHAIN_KEYS))

    return server


def _import_summary(answer: dict[str, Any]) -> dict[str, Any]:
    report = answer.get("report") or {}
    keys = ("conversations_seen", "conversations_skipped", "exchanges", "memories_created",
            "memories_reinforced")
    return {"import_id": answer["id"], "status": answer["status"], "error": answer["error"] or None,
            **{k: report[k] for k in keys if k in report},
            "rejected": len(report.get("rejected", [])), "unreadable": len(report.get("errors", []))}
