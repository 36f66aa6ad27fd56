"""Query-count guards: what a list, a recall or a create costs in database queries does not
grow with the number of rows it returns or touches, so an N+1 cannot slip in unseen.

Each guard measures the same call twice, on a small and on a larger store, from the same
cache state (cleared before each call), and asserts the same number of queries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.access import SYSTEM
from prd import services as prd_services
from retrieval.tasks import lexeme_stats_refresh
from tests.factories import make_memory

AS_OF = "2026-11-22T12:00:00Z"


def measured(call: Callable[[], Any]) -> tuple[Any, int]:
    """The call's answer and how many queries it ran, from a cold cache."""
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        answer = call()
    return answer, len(captured)


def ok(response) -> dict:
    assert response.status_code in (200, 201), response.content
    return response.json()


# Distinct enough that recall keeps each (it folds near-duplicates into one item).
TESTING_NOTES = [
    "Checkout tests build their carts with pytest fixtures, never with setUp methods.",
    "Give every pytest fixture one concern: a user, a cart, a payment provider.",
    "Fixtures that touch the database take the db fixture; pure ones stay fast.",
    "The payment gateway fixture returns a fake that records each charge for asserts.",
    "Parametrize checkout tests over currencies instead of copying them per currency.",
    "A conftest.py per test folder holds the fixtures only that folder uses.",
    "factory-boy factories make the orders; fixtures combine them into scenarios.",
    "Use the freezer fixture to pin time in coupon expiry tests.",
    "Session-scoped fixtures are only for read-only data such as the tax tables.",
    "Name fixtures after what they give, like paid_order, not after how they build it.",
    "Async checkout handlers are tested with the anyio fixture and a real event loop.",
    "Clean up files written by a fixture with tmp_path rather than by hand.",
]


def add_memories(space, start: int, count: int) -> None:
    for n in range(start, start + count):
        make_memory(space, title=f"Testing note {n}", tags=["testing", f"topic-{n}", "pytest"],
                    content=TESTING_NOTES[n % len(TESTING_NOTES)], canonical_phrases=[f"testing note {n}"])


@pytest.mark.parametrize("path", ["/api/v1/memories/?space=webshop&page_size=50",
                                  "/api/v1/memories/?space=webshop&tags=testing&page_size=50"])
def test_a_memory_list_costs_the_same_queries_however_many_it_lists(api, space, on_commit, path):
    with on_commit():
        add_memories(space, 0, 2)
    ok(api.get(path))  # warm up: the token's last use is written once
    few, few_queries = measured(lambda: ok(api.get(path)))
    with on_commit():
        add_memories(space, 2, 10)
    many, many_queries = measured(lambda: ok(api.get(path)))

    assert (few["count"], many["count"]) == (2, 12)
    assert many_queries == few_queries


# What a recall costs at most, in statements (with `track`, the access counts, the recall event
# and its audit row follow): a budget, so a statement added to the hot path is a decision.
RECALL_STATEMENTS = {False: 23, True: 25}


@pytest.mark.parametrize("track", [False, True])
def test_a_recall_costs_the_same_queries_however_many_it_returns(api, space, on_commit, track):
    def recall() -> dict:
        body = {"query": "how do we write pytest fixtures for checkout tests?", "as_of": AS_OF,
                "track": track, "k": 20}
        return ok(api.post("/api/v1/recall/", body, format="json"))

    with on_commit():
        add_memories(space, 0, 2)
    lexeme_stats_refresh()
    recall()  # warm up: the model, the token's last use
    few, few_queries = measured(recall)
    with on_commit():
        add_memories(space, 2, 10)
    lexeme_stats_refresh()
    # Warm again: on a slow machine embedding the new memories can outlast the data keys'
    # 30-second cache, and their reload is not what this counts.
    recall()
    many, many_queries = measured(recall)

    assert len(few["data"]["ranked_memory_list"]) == 2
    assert len(many["data"]["ranked_memory_list"]) > 2
    assert many_queries == few_queries
    # Measured right after the warm-up, so the token's last use (written once a minute) is not due.
    assert few_queries <= RECALL_STATEMENTS[track]


def test_a_create_costs_the_same_queries_however_big_the_space_or_the_memory(api, space, on_commit):
    def create(n: int, tags: int) -> dict:
        body = {"space": "webshop", "title": f"Checkout rule {n}",
                "content": f"Rule {n}: round money only when it is shown, never when it is stored.",
                "tags": [f"tag-{t}" for t in range(tags)],
                "canonical_phrases": [f"money rule {n} phrase {p}" for p in range(tags)]}
        return ok(api.post("/api/v1/memories/", body, format="json"))

    create(0, 1)  # warm up
    _, small = measured(lambda: create(1, 1))
    with on_commit():
        add_memories(space, 2, 10)
    _, large = measured(lambda: create(2, 6))

    assert large == small


def test_prd_and_chain_lists_cost_the_same_queries_however_many_they_list(api, space):
    def lists() -> tuple[dict, dict]:
        return (ok(api.get("/api/v1/prd/executions/?space=webshop&page_size=50")),
                ok(api.get("/api/v1/thinking-chains/?space=webshop&page_size=50")))

    def add(start: int, count: int) -> None:
        for n in range(start, start + count):
            prd_services.execution_start(actor=SYSTEM, space="webshop", prd_ref=f"docs/prd/{n}.md",
                                         title=f"PRD {n}")
            prd_services.chain_start(actor=SYSTEM, space="webshop", query=f"Question {n}?")

    add(0, 1)
    lists()
    few, few_queries = measured(lists)
    add(1, 7)
    many, many_queries = measured(lists)

    assert [page["count"] for page in few] == [1, 1]
    assert [page["count"] for page in many] == [8, 8]
    assert many_queries == few_queries
