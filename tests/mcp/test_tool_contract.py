"""What the MCP tools promise an agent, through the SDK's client over streamable HTTP: errors
in SAM's error object, a PRD tracked through MCP alone, token budgets that bound the whole
answer, REST's defaults, and REST's limits in the input schemas."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest

from memories.api.serializers import MemoryCreateInputSerializer
from memories.categories.api import CategoryInputSerializer
from prd.api.serializers import (
    PRDContextQuerySerializer,
    PRDDecisionInputSerializer,
    PRDEventInputSerializer,
    PRDExecutionStartInputSerializer,
    ThinkingChainRecallInputSerializer,
    ThinkingChainStartInputSerializer,
    ThoughtInputSerializer,
)
from prd.sessions.api.serializers import CardValidationInputSerializer, SessionStartInputSerializer
from retrieval.api.serializers import (
    ContextPackInputSerializer,
    PromptAugmentationInputSerializer,
    RecallInputSerializer,
)
from retrieval.tokens import count_tokens_by_run
from samsite.mcp.server import build_server
from tests.mcp.conftest import World, http_client, run, structured


@pytest.fixture
def url(live_server) -> str:
    return f"{live_server.url}/mcp"


def rest(world: World) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {world.owner_token}"}, timeout=60)


def sam_error(result: Any) -> dict[str, Any]:
    """The tool error's SAM error object, checked to be the same as text and as structured content."""
    assert result.is_error, result
    text = result.content[0].text
    assert json.loads(text) == result.structured_content  # the text is the object, nothing around it
    error = result.structured_content["error"]
    assert set(error) >= {"code", "status", "message", "fields"}
    assert isinstance(error["fields"], dict)
    return error


def test_every_kind_of_bad_call_answers_sam_error_object(url: str, world: World):
    session_events = [{"event_type": "test_result", "text": "no status"}]

    async def work():
        async with http_client(url, world.owner_token) as owner, \
                http_client(url, world.viewer_token) as viewer:
            session = structured(await owner.call_tool("session_start", {"space": "webshop"}))["session_id"]
            first = {"space": "webshop", "title": "Keys are kept once",
                     "content": "Stored once with its key.", "idempotency_key": "k-1"}
            structured(await owner.call_tool("remember", first))
            calls = {
                "missing": owner.call_tool("recall", {}),
                "wrong_type": owner.call_tool("recall", {"query": "money", "k": "many"}),
                "out_of_range": owner.call_tool("recall", {"query": "money", "k": 500}),
                "too_long": owner.call_tool("remember", {"space": "webshop", "title": "Long",
                                                         "content": "x" * 8001}),
                "not_a_choice": owner.call_tool("prd_event", {"execution_id": "prd_x", "type": "lunch",
                                                              "summary": "s"}),
                "nested": owner.call_tool("session_log", {"session_id": session,
                                                          "events": [{"event_type": "nap"}]}),
                "unknown_tool": owner.call_tool("no_such_tool", {}),
                "not_found": owner.call_tool("forget", {"memory_id": "mem_nope"}),
                "forbidden": viewer.call_tool("remember", {"space": "webshop", "title": "A viewer writes",
                                                           "content": "a viewer may not write"}),
                "conflict": owner.call_tool("remember", {**first, "content": "Another body, same key."}),
                "sam_invalid": owner.call_tool("session_log", {"session_id": session,
                                                               "events": session_events}),
            }
            return {name: await call for name, call in calls.items()}

    errors = {name: sam_error(result) for name, result in run(work).items()}
    invalid = {name: (e["code"], e["status"], e["fields"]) for name, e in errors.items()
               if name in ("missing", "wrong_type", "out_of_range", "too_long", "not_a_choice", "nested")}
    choice = invalid["not_a_choice"][2]["type"][0]
    event_type = invalid["nested"][2]["events[0].event_type"][0]
    assert invalid == {
        "missing": ("invalid", 400, {"query": ["This field is required."]}),
        "wrong_type": ("invalid", 400, {"k": ["A valid integer is required."]}),
        "out_of_range": ("invalid", 400, {"k": ["Ensure this value is less than or equal to 50."]}),
        "too_long": ("invalid", 400, {"content": ["Ensure this field has no more than 8000 characters."]}),
        "not_a_choice": ("invalid", 400, {"type": [choice]}),
        "nested": ("invalid", 400, {"events[0].event_type": [event_type]}),
    }
    assert choice.startswith("Must be one of 'requirement_started'")
    assert "'chat_turn'" in event_type
    assert (errors["unknown_tool"]["code"], errors["unknown_tool"]["status"]) == ("not_found", 404)
    assert (errors["not_found"]["code"], errors["not_found"]["status"]) == ("not_found", 404)
    assert (errors["forbidden"]["code"], errors["forbidden"]["status"]) == ("forbidden", 403)
    assert (errors["conflict"]["code"], errors["conflict"]["status"]) == ("idempotency_key_reused", 409)
    assert errors["sam_invalid"]["fields"] == {
        "events[0].data.status": ["Must be one of passed, failed, error, skipped."]}


def test_an_agent_tracks_a_prd_through_mcp_alone(url: str, world: World):
    start = {"space": "webshop", "prd_ref": "docs/prd/checkout.md", "title": "Checkout",
             "requirements": [{"id": "R1", "title": "Totals in Decimal"}, {"id": "R2", "title": "VAT"}]}

    async def work():
        async with http_client(url, world.owner_token) as owner, \
                http_client(url, world.viewer_token) as viewer, \
                http_client(url, world.scoped_token) as scoped:
            started = structured(await owner.call_tool("prd_start", start))
            again = structured(await owner.call_tool("prd_start", start))
            listed = structured(await owner.call_tool("prd_executions", {"spaces": ["webshop"]}))
            execution = started["execution_id"]
            event = structured(await owner.call_tool("prd_event", {
                "execution_id": execution, "type": "requirement_started", "requirement_id": "R1",
                "summary": "Started the totals"}))
            decision = structured(await owner.call_tool("prd_decision", {
                "execution_id": execution, "decision": "Decimal for money", "reason": "no lost cents",
                "alternatives": ["float"], "requirement_id": "R1"}))
            context = structured(await owner.call_tool("prd_context", {"execution_id": execution}))
            refused = await viewer.call_tool("prd_start", {**start, "prd_ref": "docs/prd/other.md"})
            hidden = await scoped.call_tool("prd_start", {**start, "space": "payroll"})
            return started, again, listed, event, decision, context, refused, hidden

    started, again, listed, event, decision, context, refused, hidden = run(work)
    assert started["created"] is True
    assert started["execution_id"].startswith("prd_")
    assert (again["created"], again["execution_id"]) == (False, started["execution_id"])
    assert [e["id"] for e in listed["executions"]] == [started["execution_id"]]
    assert listed["executions"][0]["prd_ref"] == "docs/prd/checkout.md"
    assert event["progress"]["in_progress"] == ["R1"]
    assert decision["decision"]["decision"] == "Decimal for money"
    assert context["execution"]["id"] == started["execution_id"]
    assert context["execution"]["progress"]["in_progress"] == ["R1"]
    assert [d["decision"] for d in context["decisions"]] == ["Decimal for money"]
    assert sam_error(refused)["status"] == 403
    assert sam_error(hidden)["code"] == "not_found"  # a space the token cannot see, as over REST


BUDGETS = (30, 60, 120, 500)


def test_no_answer_exceeds_its_token_budget_and_none_is_empty_while_anything_matches(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            category = await _a_category_with_memories(url, world)
            session = structured(await client.call_tool("session_start", {"space": "webshop"}))["session_id"]
            await client.call_tool("session_log", {"session_id": session, "events": [
                {"event_type": "handoff", "text": "Totals done",
                 "data": {"next_steps": ["Put VAT on invoices"]}}]})
            await client.call_tool("prd_start", {"space": "webshop", "prd_ref": "docs/prd/checkout.md"})
            calls = {
                "recall": ({"query": "how do we store amounts of money?"}, "memories"),
                "search_past_solutions": ({"problem": "webhook delivery times out"}, "memories"),
                "find_similar_issues": ({"context": "adding an index locked the orders table"}, "memories"),
                "recall_decision": ({"topic": "why Decimal for money"}, "memories"),
                "get_project_patterns": ({"space": "webshop"}, "memories"),
                "get_category_summary": ({"space": "webshop", "category": category}, "memories"),
                "context_pack": ({"query": "checkout totals money", "spaces": ["webshop"]}, "markdown"),
                "augment_prompt": ({"space": "webshop", "message": "money"}, "block"),
                "session_handoff": ({"session_id": session}, "markdown"),
                "prd_executions": ({}, "executions"),
            }
            answers = {}
            for name, (arguments, key) in calls.items():
                # A prompt block keeps its quoting delimiters (some 30 tokens) at any budget.
                for limit in BUDGETS if name != "augment_prompt" else (45, *BUDGETS[1:]):
                    result = await client.call_tool(name, {**arguments, "token_budget": limit})
                    answers[name, limit] = (result, key)
            return answers

    for (name, limit), (result, key) in run(work).items():
        assert not result.is_error, (name, limit, result.content[0].text)
        text = result.content[0].text
        assert count_tokens_by_run(text) <= limit, (name, limit, text)
        assert json.loads(text) == result.structured_content
        shown = result.structured_content[key]
        assert shown, (name, limit, text)
        assert not isinstance(shown, str) or shown.strip(), (name, limit, text)


def test_a_prompt_block_refuses_a_budget_too_small_for_its_delimiters(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            return await client.call_tool("augment_prompt", {"space": "webshop", "token_budget": 30})

    assert sam_error(run(work))["fields"] == {
        "token_budget": ["Ensure this value is greater than or equal to 45."]}


async def _a_category_with_memories(url: str, world: World) -> str:
    async with rest(world) as api:
        answer = await api.get(url.replace("/mcp", "/api/v1/spaces/webshop/categories/"))
        categories = answer.json()["results"]
    return next(c["name"] for c in categories if c["item_count"] > 0)


def test_the_category_summary_reads_the_space_categories(url: str, world: World):
    async def work():
        category = await _a_category_with_memories(url, world)
        async with rest(world) as api:
            base = url.replace("/mcp", "/api/v1")
            listed = (await api.get(f"{base}/spaces/webshop/categories/")).json()["results"]
            placed = (await api.get(f"{base}/memories/",
                                    params={"space": "webshop", "category": category})).json()
        async with http_client(url, world.owner_token) as client:
            summary = structured(await client.call_tool("get_category_summary",
                                                        {"space": "webshop", "category": category}))
            unknown = await client.call_tool("get_category_summary",
                                             {"space": "webshop", "category": "webhooks"})
        return category, listed, placed, summary, unknown

    category, listed, placed, summary, unknown = run(work)
    expected = next(c for c in listed if c["name"] == category)
    assert (summary["item_count"], summary["summary"]) == (expected["item_count"], expected["summary"])
    assert {m["id"] for m in summary["memories"]} == {m["id"] for m in placed["results"][:5]}
    error = sam_error(unknown)  # a tag, not a category
    assert error["code"] == "not_found"
    assert category in error["fields"]["category"][0]


def test_recall_defaults_are_rest_defaults(url: str, world: World):
    from core.models import Space
    from tests.factories import make_memory

    webshop = Space.objects.get(slug="webshop")
    for n in range(5):
        make_memory(webshop, title=f"Money rounding rule {n}", kind="decision",
                    content=f"Money amounts round half even at step {n} of the checkout totals.")
    query = {"query": "how do we round money in the checkout totals?", "spaces": ["webshop"]}

    async def work():
        async with rest(world) as api:
            by_rest = (await api.post(url.replace("/mcp", "/api/v1/recall/"), json=query)).json()
        async with http_client(url, world.owner_token) as client:
            by_mcp = structured(await client.call_tool("recall", query))
        return by_rest, by_mcp

    by_rest, by_mcp = run(work)
    rest_ids = [m["id"] for m in by_rest["data"]["ranked_memory_list"]]
    assert len(rest_ids) == RecallInputSerializer().fields["k"].default == 5
    assert [m["id"] for m in by_mcp["memories"]] == rest_ids


def _schemas() -> dict[str, dict[str, Any]]:
    return {tool.name: tool.input_schema for tool in asyncio.run(build_server().list_tools())}


def _property(schema: dict[str, Any], name: str) -> dict[str, Any]:
    found = schema["properties"][name]
    for arm in found.get("anyOf", []):  # a nullable argument: the arm that is not null
        if arm.get("type") != "null":
            return {**found, **arm}
    return found


def _rest(serializer: Any, path: str) -> Any:
    field: Any = serializer()
    for name in path.split("."):
        field = field.child if name == "child" else field.fields[name]
    return field


# (tool, argument, serializer the tool calls, its field)
TEXT_LIMITS = [
    ("remember", "title", MemoryCreateInputSerializer, "title"),
    ("remember", "content", MemoryCreateInputSerializer, "content"),
    ("recall", "query", RecallInputSerializer, "query"),
    ("recall", "active_task", RecallInputSerializer, "active_task"),
    ("context_pack", "query", ContextPackInputSerializer, "query"),
    ("augment_prompt", "message", PromptAugmentationInputSerializer, "message"),
    ("get_category_summary", "category", CategoryInputSerializer, "name"),
    ("prd_start", "prd_ref", PRDExecutionStartInputSerializer, "prd_ref"),
    ("prd_start", "title", PRDExecutionStartInputSerializer, "title"),
    ("prd_event", "summary", PRDEventInputSerializer, "summary"),
    ("prd_event", "requirement_id", PRDEventInputSerializer, "requirement_id"),
    ("prd_decision", "decision", PRDDecisionInputSerializer, "decision"),
    ("prd_decision", "reason", PRDDecisionInputSerializer, "reason"),
    ("start_thinking", "query", ThinkingChainStartInputSerializer, "query"),
    ("think", "content", ThoughtInputSerializer, "content"),
    ("recall_reasoning", "query", ThinkingChainRecallInputSerializer, "query"),
    ("session_start", "key", SessionStartInputSerializer, "key"),
    ("session_start", "title", SessionStartInputSerializer, "title"),
    ("card_check", "note", CardValidationInputSerializer, "note"),
]
NUMBER_LIMITS = [
    ("recall", "k", RecallInputSerializer, "k"),
    ("search_past_solutions", "k", RecallInputSerializer, "k"),
    ("augment_prompt", "max_items", PromptAugmentationInputSerializer, "max_items"),
    ("augment_prompt", "max_chars", PromptAugmentationInputSerializer, "max_chars"),
    ("prd_context", "event_limit", PRDContextQuerySerializer, "event_limit"),
    ("recall_reasoning", "k", ThinkingChainRecallInputSerializer, "k"),
]
LIST_LIMITS = [
    ("remember", "tags", MemoryCreateInputSerializer, "tags"),
    ("recall", "spaces", RecallInputSerializer, "spaces"),
    ("prd_decision", "alternatives", PRDDecisionInputSerializer, "alternatives"),
    ("prd_start", "requirements", PRDExecutionStartInputSerializer, "requirements"),
]
CHOICES = [
    ("remember", "kind", MemoryCreateInputSerializer, "kind"),
    ("context_pack", "pack_type", ContextPackInputSerializer, "pack_type"),
    ("prd_event", "type", PRDEventInputSerializer, "type"),
    ("card_check", "status", CardValidationInputSerializer, "status"),
]
DEFAULTS = [
    ("recall", "k", RecallInputSerializer, "k"),
    ("search_past_solutions", "k", RecallInputSerializer, "k"),
    ("find_similar_issues", "k", RecallInputSerializer, "k"),
    ("recall_decision", "k", RecallInputSerializer, "k"),
    ("get_project_patterns", "k", RecallInputSerializer, "k"),
    ("get_category_summary", "k", RecallInputSerializer, "k"),
    ("context_pack", "token_budget", ContextPackInputSerializer, "token_budget"),
    ("context_pack", "pack_type", ContextPackInputSerializer, "pack_type"),
    ("context_pack", "include_unvalidated", ContextPackInputSerializer, "include_unvalidated"),
    ("augment_prompt", "max_items", PromptAugmentationInputSerializer, "max_items"),
    ("prd_context", "event_limit", PRDContextQuerySerializer, "event_limit"),
    ("recall_reasoning", "k", ThinkingChainRecallInputSerializer, "k"),
]


def test_input_schemas_state_the_limits_the_rest_serializers_enforce():
    schemas = _schemas()
    for tool, argument, serializer, field in TEXT_LIMITS:
        stated, server = _property(schemas[tool], argument), _rest(serializer, field)
        assert stated["maxLength"] == server.max_length, (tool, argument)
    for tool, argument, serializer, field in NUMBER_LIMITS:
        stated, server = _property(schemas[tool], argument), _rest(serializer, field)
        assert (stated["minimum"], stated["maximum"]) == (server.min_value, server.max_value), argument
    for tool, argument, serializer, field in LIST_LIMITS:
        stated, server = _property(schemas[tool], argument), _rest(serializer, field)
        assert stated["maxItems"] == server.max_length, (tool, argument)
    for tool, argument, serializer, field in CHOICES:
        stated, server = _property(schemas[tool], argument), _rest(serializer, field)
        assert stated["enum"] == list(server.choices), (tool, argument)
    # The limit the first reading found wrong: SAM refuses more than 8,000 characters.
    assert _property(schemas["remember"], "content")["maxLength"] == 8000


def test_defaults_are_the_rest_defaults():
    schemas = _schemas()
    for tool, argument, serializer, field in DEFAULTS:
        stated, server = _property(schemas[tool], argument), _rest(serializer, field)
        assert stated["default"] == server.default, (tool, argument)
    assert _property(schemas["recall"], "k")["default"] == 5
