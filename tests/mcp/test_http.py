"""The MCP server over streamable HTTP at /mcp, served by SAM's web process, driven by the
SDK's own client with real agent tokens."""

from __future__ import annotations

import json

import httpx2
import pytest
from mcp import MCPError

from memories.models import MemoryStats, ReviewItem
from samsite.mcp import budget
from tests.mcp.conftest import World, http_client, run, structured, tool_error

TOOLS = {
    "recall", "remember", "forget", "prd_context", "prd_event", "prd_decision", "start_thinking", "think",
    "finish_thinking", "recall_reasoning", "search_past_solutions", "find_similar_issues",
    "get_project_patterns", "recall_decision", "get_category_summary", "context_pack", "memory_stats",
    "augment_prompt", "session_start", "session_log", "session_handoff", "card_check", "memory_feedback",
    "ingest_chat_history", "chat_import_status", "capture_conversation", "conversation_status",
    "prd_start", "prd_executions",
}


@pytest.fixture
def url(live_server) -> str:
    return f"{live_server.url}/mcp"


def test_every_tool_is_listed_with_a_description_and_an_input_schema(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(work)}
    assert set(tools) >= TOOLS
    for tool in tools.values():
        assert len(tool.description or "") > 30
        assert tool.input_schema["type"] == "object"
    assert "query" in tools["recall"].input_schema["required"]


def test_recall_finds_the_memory_with_its_reason_within_the_budget(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            return await client.call_tool("recall", {"query": "how do we store amounts of money?"})

    answer = structured(run(work))
    top = answer["memories"][0]
    assert top["title"] == "Money is stored as Decimal"
    assert top["rationale"].startswith("Recalled for ")
    assert sorted(answer["spaces"]) == ["payroll", "webshop"]
    assert budget.tokens_of(answer) <= 4000


def test_a_small_budget_shortens_then_truncates_and_is_never_exceeded(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            return await client.call_tool("recall", {"query": "money webhooks migrations services",
                                                     "k": 10, "token_budget": 90})

    result = run(work)
    answer = structured(result)
    assert answer["truncated"] is True
    assert answer["total"] > len(answer["memories"])
    assert budget.tokens_of(answer) <= 90


def test_remember_then_recall_then_forget(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            stored = structured(await client.call_tool("remember", {
                "space": "webshop", "title": "Carts expire after two days",
                "content": "Anonymous carts are deleted 48 hours after their last change; "
                           "mail ops@example.com.",
                "kind": "fact", "tags": ["carts"]}))
            found = structured(await client.call_tool("recall", {"query": "when do carts expire?",
                                                                 "spaces": ["webshop"]}))
            forgotten = structured(await client.call_tool("forget", {"memory_id": stored["id"]}))
            again = structured(await client.call_tool("recall", {"query": "when do carts expire?",
                                                                 "spaces": ["webshop"]}))
            return stored, found, forgotten, again

    stored, found, forgotten, again = run(work)
    assert stored["persisted"] is True
    assert [r["kind"] for r in stored["redactions"]] == ["email"]
    assert found["memories"][0]["id"] == stored["id"]
    assert forgotten == {"id": stored["id"], "archived": True}
    assert stored["id"] not in [m["id"] for m in again["memories"]]


def test_kind_tools_recall_only_their_kind(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            calls = {
                "search_past_solutions": {"problem": "webhook delivery times out"},
                "find_similar_issues": {"context": "adding an index locked the orders table"},
                "get_project_patterns": {"space": "webshop"},
                "recall_decision": {"topic": "why Decimal for money"},
            }
            return {name: structured(await client.call_tool(name, args)) for name, args in calls.items()}

    answers = run(work)
    assert answers["search_past_solutions"]["memories"][0]["title"] == "Retry webhooks with backoff"
    assert answers["find_similar_issues"]["memories"][0]["title"] == "Migrations lock big tables"
    assert answers["get_project_patterns"]["memories"][0]["title"] == "Services and selectors"
    assert answers["recall_decision"]["memories"][0]["title"] == "Money is stored as Decimal"
    kinds = {name: {m["kind"] for m in a["memories"]} for name, a in answers.items()}
    assert kinds == {"search_past_solutions": {"solution"}, "find_similar_issues": {"gotcha"},
                     "get_project_patterns": {"pattern"}, "recall_decision": {"decision"}}


def test_stats_category_summary_and_context_pack(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            return (structured(await client.call_tool("memory_stats", {"space": "webshop"})),
                    structured(await client.call_tool("get_project_patterns", {"space": "webshop"})),
                    structured(await client.call_tool("context_pack", {"query": "checkout totals",
                                                                       "spaces": ["webshop"]})),
                    structured(await client.call_tool("augment_prompt", {"space": "webshop",
                                                                         "message": "money"})))

    stats, summary, pack, prompt = run(work)
    assert stats["memories"] == {"active": 4, "archived": 0}
    assert stats["by_kind"] == {"decision": 1, "gotcha": 1, "pattern": 1, "solution": 1}
    assert summary["memories"][0]["title"] == "Services and selectors"
    assert "Money is stored as Decimal" in pack["markdown"]
    assert '"Store money as Decimal with two places' in prompt["block"]
    assert prompt["tracked"] is True


def test_a_prd_and_a_thinking_chain_through_the_tools(url: str, world: World):
    from governance.access import SYSTEM
    from prd import services

    execution = services.execution_start(actor=SYSTEM, space="webshop", prd_ref="docs/prd/checkout.md",
                                         title="Checkout").execution

    async def work():
        async with http_client(url, world.owner_token) as client:
            event = structured(await client.call_tool("prd_event", {
                "execution_id": execution.id, "type": "requirement_started", "requirement_id": "R1",
                "summary": "Started the totals"}))
            decision = structured(await client.call_tool("prd_decision", {
                "execution_id": execution.id, "decision": "Decimal for money", "reason": "no lost cents",
                "alternatives": ["float"], "requirement_id": "R1"}))
            context = structured(await client.call_tool("prd_context", {"execution_id": execution.id}))
            chain = structured(await client.call_tool("start_thinking", {
                "space": "webshop", "query": "Which rounding for taxes?"}))
            thought = structured(await client.call_tool("think", {"chain_id": chain["chain_id"],
                                                                  "content": "Round per line"}))
            revised = structured(await client.call_tool("think", {
                "chain_id": chain["chain_id"], "content": "Round the total once", "is_revision": True,
                "revises": 1}))
            done = structured(await client.call_tool("finish_thinking", {"chain_id": chain["chain_id"]}))
            past = structured(await client.call_tool("recall_reasoning", {"query": "rounding taxes"}))
            return event, decision, context, thought, revised, done, past

    event, decision, context, thought, revised, done, past = run(work)
    assert event["progress"]["in_progress"] == ["R1"]
    assert decision["decision"]["decision"] == "Decimal for money"
    assert context["execution"]["id"] == execution.id
    assert (thought["last"], revised["last"]) == (1, 2)
    assert done["status"] == "completed"
    assert past["chains"][0]["id"] == done["chain_id"]


def test_errors_are_tool_errors_with_sam_codes_and_the_session_goes_on(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            missing = await client.call_tool("forget", {"memory_id": "mem_nope"})
            bad = await client.call_tool("remember", {"space": "nowhere", "title": "t", "content": "c"})
            invalid = await client.call_tool("recall", {"query": "x", "k": 500})
            still = await client.call_tool("memory_stats", {"space": "webshop"})
            return missing, bad, invalid, still

    missing, bad, invalid, still = run(work)
    assert tool_error(missing)["code"] == "not_found"
    assert tool_error(bad)["status"] in (400, 404)
    assert invalid.is_error
    assert structured(still)["space"] == "webshop"


def test_a_scoped_token_cannot_see_another_space_and_a_viewer_cannot_write(url: str, world: World):
    async def work():
        async with http_client(url, world.scoped_token) as scoped, \
                http_client(url, world.viewer_token) as viewer:
            return (await scoped.call_tool("memory_stats", {"space": "payroll"}),
                    structured(await scoped.call_tool("recall", {"query": "money"})),
                    await viewer.call_tool("remember", {"space": "webshop", "title": "A viewer writes",
                                                        "content": "a viewer may not write"}))

    hidden, scoped_recall, refused = run(work)
    assert tool_error(hidden)["code"] == "not_found"  # as through REST: 404, not 403
    assert scoped_recall["spaces"] == ["webshop"]
    assert tool_error(refused)["status"] == 403


def test_no_token_or_a_bad_token_is_refused_before_any_tool(url: str, world: World):
    for token in (None, "sam_not-a-real-token"):
        response = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                               headers={"Authorization": f"Bearer {token}"} if token else {})
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "not_authenticated"

    async def work():
        async with http_client(url, "sam_not-a-real-token") as client:
            await client.list_tools()

    # The SDK's client gets no session: its first request fails (the 401 asserted above).
    with pytest.raises(ExceptionGroup) as refused:
        run(work)
    assert refused.group_contains(MCPError, depth=None)


def test_a_session_through_the_tools_ends_in_a_handoff_the_next_session_reads(url: str, world: World):
    events = [
        {"event_id": "t1", "event_type": "test_result", "text": "FAILED test_vat - 19 != 20",
         "data": {"name": "test_vat", "status": "failed"}},
        {"event_id": "t2", "event_type": "file_change", "data": {"path": "shop/vat.py"}},
        {"event_id": "t3", "event_type": "test_result", "data": {"name": "test_vat", "status": "passed"}},
        {"event_id": "t4", "event_type": "handoff", "text": "VAT fixed; invoices next",
         "data": {"next_steps": ["Put VAT on invoices"]}},
    ]

    async def work():
        async with http_client(url, world.owner_token) as client:
            started = structured(await client.call_tool("session_start",
                                                        {"space": "webshop", "key": "mcp-1"}))
            logged = structured(await client.call_tool("session_log", {"session_id": started["session_id"],
                                                                       "events": events}))
            again = structured(await client.call_tool("session_log", {"session_id": started["session_id"],
                                                                      "events": events[:1]}))
            latest = structured(await client.call_tool("session_handoff", {"space": "webshop"}))
            small = structured(await client.call_tool("session_handoff", {"session_id": started["session_id"],
                                                                          "token_budget": 60}))
            sections = structured(await client.call_tool("session_handoff", {
                "session_id": started["session_id"], "format": "json"}))
            bad = await client.call_tool("session_log", {"session_id": started["session_id"], "events": [
                {"event_type": "test_result", "text": "no status"}]})
            return started, logged, again, latest, small, sections, bad

    started, logged, again, latest, small, sections, bad = run(work)
    assert started["created"] is True
    assert logged["created"] == 4
    assert again == {"created": 0, "replayed": 1, "redactions": 0,
                     "events": [{"event_id": "t1", "sequence": 1, "created": False}]}
    assert latest["session_id"] == started["session_id"]
    assert "- Put VAT on invoices [t4]" in latest["markdown"]
    assert "test `test_vat` passes again [t1, t3]" in latest["markdown"]
    assert small["truncated"] is True
    assert budget.tokens_of(small) <= 60
    assert {s["name"] for s in sections["sections"]} >= {"what_changed", "next_steps"}
    assert tool_error(bad)["fields"] == {
        "events[0].data.status": ["Must be one of passed, failed, error, skipped."]}


def test_a_failed_card_check_keeps_the_card_out_of_the_pack(url: str, world: World):
    events = [{"event_id": f"r{i}", "event_type": "command_run",
               "data": {"command": "make lint", "exit_code": 0}}
              for i in (1, 2)]

    async def work():
        async with http_client(url, world.owner_token) as client:
            session = structured(await client.call_tool("session_start", {"space": "webshop"}))["session_id"]
            await client.call_tool("session_log", {"session_id": session, "events": events})
            return session

    session = run(work)
    from prd.models import MemoryCard
    card = MemoryCard.objects.get(session_id=session, card_type="procedure")

    async def check():
        async with http_client(url, world.owner_token) as client:
            checked = structured(await client.call_tool("card_check", {"card_id": card.id, "status": "failed",
                                                                       "note": "make lint is gone"}))
            pack = structured(await client.call_tool("context_pack", {"query": "how to run make lint",
                                                                      "spaces": ["webshop"]}))
            return checked, pack

    checked, pack = run(check)
    assert checked["validation"]["status"] == "failed"
    assert card.memory_id in pack["left_out"]["excluded"]


def test_feedback_through_the_tool_reaches_the_memory(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            found = structured(await client.call_tool("recall",
                                                      {"query": "how do we store amounts of money?"}))
            memory_id = found["memories"][0]["id"]
            used = structured(await client.call_tool("memory_feedback",
                                                     {"memory_id": memory_id, "feedback": "used"}))
            contradicted = structured(await client.call_tool("memory_feedback", {
                "memory_id": memory_id, "feedback": "contradict", "reason": "we moved to integer cents"}))
            return memory_id, used, contradicted

    memory_id, used, contradicted = run(work)
    assert used["recorded"] is True
    assert MemoryStats.objects.get(memory_id=memory_id).usage_count == 1
    assert contradicted["reliability"] == "contested"
    assert ReviewItem.objects.get(pk=contradicted["review_item"]).memory_id == memory_id


def test_a_chat_history_imported_through_the_tool_becomes_memories(url: str, world: World):
    from core.models import Space

    Space.objects.filter(slug="webshop").update(capture_sources=["jsonl"])
    turns = (("user", "We decided to keep money as integer cents because rounding bit us."),
             ("assistant", "Noted."))
    history = "\n".join(json.dumps({"conversation_id": "c1", "role": role, "content": text})
                        for role, text in turns)

    async def work():
        async with http_client(url, world.owner_token) as client:
            started = structured(await client.call_tool("ingest_chat_history", {
                "space": "webshop", "source": "jsonl", "content": history}))
            status = structured(await client.call_tool("chat_import_status",
                                                       {"import_id": started["import_id"]}))
            refused = tool_error(await client.call_tool("ingest_chat_history", {
                "space": "webshop", "source": "chatgpt", "content": "[]"}))
            return status, refused

    status, refused = run(work)
    assert status["status"] == "done"
    assert status["memories_created"] == 1
    # The tool says, as REST does, whether the memories are final (jobs run inline here).
    assert status["extraction_done"] is True
    assert (status["pending"], status["final"]) == ({"embedding": 0, "checks": 0}, True)
    assert refused["code"] == "forbidden"
