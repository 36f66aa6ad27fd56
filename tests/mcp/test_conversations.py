"""The conversation tools over MCP: `capture_conversation` answers what POST
/api/v1/conversations/ answers, and bad input comes back in SAM's error shape."""

from __future__ import annotations

import pytest

from memories.models import Memory
from tests.mcp.conftest import World, http_client, run, structured, tool_error


@pytest.fixture
def url(live_server) -> str:
    return f"{live_server.url}/mcp"


def test_a_conversation_given_to_the_tool_becomes_memories_with_their_evidence(url: str, world: World):
    messages = [{"role": "user", "content": "I live in Lisbon. Keep answers short please.", "id": "u1"},
                {"role": "assistant", "content": "Noted.", "id": "a1"}]

    async def work():
        async with http_client(url, world.owner_token) as client:
            captured = structured(await client.call_tool("capture_conversation", {
                "space": "webshop", "conversation_id": "mcp-1", "messages": messages}))
            again = structured(await client.call_tool("capture_conversation", {
                "space": "webshop", "conversation_id": "mcp-1", "messages": messages}))
            status = structured(await client.call_tool("conversation_status", {"capture_id": captured["id"]}))
            return captured, again, status

    captured, again, status = run(work)
    assert {item["rule"] for item in captured["created"]} == {"location", "style"}
    [lisbon] = [item for item in captured["created"] if item["rule"] == "location"]
    assert lisbon["evidence"]["message_id"] == "u1"
    assert Memory.objects.get(pk=lisbon["memory_id"]).content == "The user lives in Lisbon."
    assert again["skipped"] is True
    assert status["id"] == captured["id"]
    assert [i["memory_id"] for i in status["created"]] == [i["memory_id"] for i in captured["created"]]


def test_bad_messages_and_spaces_answer_in_sams_error_shape(url: str, world: World):
    async def work():
        async with http_client(url, world.owner_token) as client:
            bad_role = tool_error(await client.call_tool("capture_conversation", {
                "space": "webshop", "messages": [{"role": "user", "content": "Hi"},
                                                 {"role": "narrator", "content": "Once upon a time"}]}))
            elsewhere = tool_error(await client.call_tool("capture_conversation", {
                "space": "nowhere", "messages": [{"role": "user", "content": "Hi"}]}))
            return bad_role, elsewhere

    async def as_viewer():
        async with http_client(url, world.viewer_token) as client:
            return tool_error(await client.call_tool("capture_conversation", {
                "space": "webshop", "messages": [{"role": "user", "content": "I live in Oslo."}]}))

    bad_role, elsewhere = run(work)
    assert (bad_role["code"], bad_role["status"]) == ("invalid", 400)
    assert list(bad_role["fields"]) == ["messages[1].role"]
    assert (elsewhere["code"], elsewhere["status"]) == ("not_found", 404)
    assert run(as_viewer)["status"] == 403
    assert not Memory.objects.filter(tags__contains=["api"]).exists()
