"""An MCP recall answers what the REST recall answers, defused and fitted to its budget."""

from __future__ import annotations

import json

import httpx2
import pytest

from governance.defuse import defuse_json
from retrieval import presenters
from samsite.mcp import budget
from samsite.mcp.toolkit import defused_items
from tests.mcp.conftest import World, http_client, run, structured


@pytest.fixture
def url(live_server) -> str:
    return live_server.url


@pytest.mark.parametrize("token_budget", [None, 120])
def test_the_recall_tool_answers_the_rest_recall_fitted_to_the_budget(url: str, world: World,
                                                                      token_budget: int | None):
    query = {"query": "how do we store amounts of money?", "spaces": ["webshop"], "k": 4}

    async def work():
        headers = {"Authorization": f"Bearer {world.owner_token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as rest:
            # The same recall twice over REST: the tool's answer must equal the one REST gives
            # at that moment, and the first call settles what tracking changes.
            await rest.post(f"{url}/api/v1/recall/", json=query)
            over_rest = (await rest.post(f"{url}/api/v1/recall/", json=query)).json()["data"]
        async with http_client(f"{url}/mcp", world.owner_token) as client:
            arguments = {**query, **({"token_budget": token_budget} if token_budget else {})}
            return over_rest, await client.call_tool("recall", arguments)

    over_rest, result = run(work)
    answer = structured(result)
    envelope, _ = defuse_json({"query": over_rest["query_text"], "spaces": over_rest["spaces"],
                               "silenced_spaces": over_rest.get("silenced_spaces", [])})
    expected = budget.fit(envelope, "memories", defused_items(over_rest["ranked_memory_list"]),
                          budget=token_budget or 4000, short=presenters.short_memory)
    assert [m["id"] for m in answer["memories"]] == [m["id"] for m in expected["memories"]]
    assert answer == json.loads(json.dumps(expected))
    assert result.structured_content == answer
    assert answer["truncated"] is (token_budget is not None)
