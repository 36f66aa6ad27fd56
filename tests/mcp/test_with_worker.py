"""The MCP server with every part SAM runs with: the web server, Postgres, the model and a
real django-q2 worker, which embeds what an agent remembers through MCP."""

from __future__ import annotations

import pytest

from memories.models import EmbeddingStatus, Memory
from tests.mcp.conftest import World, http_client, run, structured
from tests.memories.test_cluster import start_cluster, stop_cluster, wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("enqueue_to_the_broker")]



def test_a_memory_remembered_through_mcp_is_embedded_by_the_worker_and_recalled(live_server, world: World):
    url = f"{live_server.url}/mcp"

    async def remember():
        async with http_client(url, world.owner_token) as client:
            return structured(await client.call_tool("remember", {
                "space": "webshop", "title": "Refunds go back to the original card",
                "content": "A refund is always paid to the card that paid the order, never as credit.",
                "kind": "standard"}))

    stored = run(remember)
    assert Memory.objects.get(pk=stored["id"]).embedding_status == EmbeddingStatus.PENDING
    cluster = start_cluster()
    try:
        wait_for(lambda: Memory.objects.get(pk=stored["id"]).embedding_status == EmbeddingStatus.READY,
                 timeout=90, process=cluster)
    finally:
        stop_cluster(cluster)

    async def recall():
        async with http_client(url, world.owner_token) as client:
            return structured(await client.call_tool("recall", {"query": "where does a refund go?",
                                                                "spaces": ["webshop"]}))

    found = run(recall)
    assert found["memories"][0]["id"] == stored["id"]
    assert found["memories"][0]["signals"]["semantic"] > 0.3
