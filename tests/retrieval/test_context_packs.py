"""POST /api/v1/context-packs/: JSON and Markdown from one selection, lost-in-the-middle order,
a real token budget, provenance, and byte-identical output for identical inputs."""

import json
import re
from datetime import UTC, datetime

from django.core.cache import cache

from memories.models import Memory
from retrieval.packs import lost_in_the_middle_order
from retrieval.tokens import count_tokens
from tests.factories import make_memory
from tests.retrieval.conftest import AS_OF, MEMORIES


def pack(api, **body):
    response = api.post("/api/v1/context-packs/",
                        {"as_of": AS_OF, "track": False, "query": "migrations, tests and alerts", **body},
                        format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_order_puts_the_strongest_items_at_head_and_tail():
    assert lost_in_the_middle_order(list(range(1, 7))) == [1, 3, 5, 6, 4, 2]
    assert lost_in_the_middle_order([1]) == [1]


def test_pack_has_both_renderings_of_the_same_selection(api, store):
    body = pack(api, k=10, token_budget=5000, thresholds={"similarity": 0.0, "composite_min": 0.0})
    machine, markdown = body["json"], body["markdown"]

    assert machine["pack_type"] == "task"
    assert machine["generated_at"] == "2026-11-22T12:00:00Z"
    assert machine["query"].startswith("migrations, tests and alerts")
    ranks = [item["rank"] for item in machine["items"]]
    assert ranks == lost_in_the_middle_order(sorted(ranks))
    for item in machine["items"]:
        assert item["provenance"]["space"] == "webshop"
        assert item["provenance"]["version"] == 1
        assert item["provenance"]["source"]["type"] == "user"
        assert item["inclusion_reason"].startswith("Recalled for")
        assert f"`{item['id']}`" in markdown
    assert markdown.index("## Critical facts") < markdown.index("## Memories")
    assert machine["source_mix"] == {"user": len(machine["items"])}


def test_budget_is_a_real_token_count_and_trims_the_weakest(api, store):
    full = pack(api, k=10, token_budget=5000, thresholds={"similarity": 0.0, "composite_min": 0.0})["json"]
    item_costs = {i["id"]: i["tokens"] for i in full["items"]}
    header = full["token_budget"]["used"] - sum(item_costs.values())
    # Room for the two best items only (ranks 1 and 2): the rest must be trimmed, whatever
    # their size. (A budget of the two cheapest items depended on which items happen to be
    # cheapest: the packer skips an item too large for what is left and may keep a weaker
    # one that still fits.)
    best_two = [i["id"] for i in sorted(full["items"], key=lambda i: i["rank"])[:2]]
    tight_budget = header + sum(item_costs[i] for i in best_two) + 5

    tight = pack(api, k=10, token_budget=tight_budget,
                 thresholds={"similarity": 0.0, "composite_min": 0.0})["json"]

    budget = tight["token_budget"]
    assert budget["used"] <= tight_budget
    assert budget["trimmed"] == len(full["items"]) - len(tight["items"]) > 0
    weakest_kept = min(i["score"] for i in tight["items"])
    assert all(i["score"] <= weakest_kept for i in full["items"]
               if i["id"] not in {t["id"] for t in tight["items"]})
    # WordPiece: use, mud, ##s, ##nac, ##k, ##bar, for, alert, ##s
    assert count_tokens("Use MudSnackbar for alerts") == 9


def test_identical_inputs_give_byte_identical_packs(api, store):
    request = dict(k=10, token_budget=800, thresholds={"similarity": 0.0, "composite_min": 0.0})
    first = pack(api, **request)
    cache.clear()
    second = pack(api, **request)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    assert first["markdown"].encode() == second["markdown"].encode()


def test_a_boot_pack_without_a_query_lists_recent_memories(api, store):
    response = api.post("/api/v1/context-packs/", {"pack_type": "boot", "as_of": AS_OF, "track": False},
                        format="json")
    assert response.status_code == 200
    assert len(response.json()["json"]["items"]) == len(MEMORIES)


def test_the_whole_markdown_stays_within_the_budget(api, store):
    """Given budgets from the smallest allowed up, when packs are made, then the whole
    Markdown (title, summary, budget line, critical facts, items) counts no more tokens
    than the budget, and the budget line states that count (or, should the number's own
    length flip the count, one token more: never less)."""
    for budget in (50, 80, 120, 200, 400):
        body = pack(api, k=10, token_budget=budget, thresholds={"similarity": 0.0, "composite_min": 0.0})

        counted = count_tokens(body["markdown"])
        stated = body["json"]["token_budget"]["used"]
        assert counted <= stated <= budget, (budget, counted, stated)
        assert stated - counted <= 1
        assert f"{stated}/{budget} tokens" in body["markdown"]


TESTING_NOTES = [
    ("Run tests in parallel", "Use pytest-xdist with -n auto; the suite drops from 9 to 3 minutes."),
    ("Mark slow tests", "Mark tests over two seconds with @pytest.mark.slow and skip them in pre-commit."),
    ("Freeze time in tests", "Use time-machine to freeze the clock in tests instead of patching datetime."),
    ("Tests use real Postgres", "Tests run against a real Postgres with pgvector, never SQLite."),
    ("Small test data", "Keep fixtures small: three rows show a sort order as well as three hundred."),
]


def test_a_tight_pack_begins_with_the_categories_of_what_it_could_not_fit(api, store, space, on_commit):
    with on_commit():
        for title, content in TESTING_NOTES:
            make_memory(space, title=title, content=content, tags=["testing"])
    cache.clear()
    loose = dict(k=10, thresholds={"similarity": 0.0, "composite_min": 0.0})
    full = pack(api, token_budget=5000, **loose)
    needed = full["json"]["token_budget"]["used"]
    tight_budget = needed * 2 // 3

    tight = pack(api, token_budget=tight_budget, **loose)
    items_only = pack(api, token_budget=tight_budget, tiered=False, **loose)

    # Everything fits: no overview. Too tight: one, within its share, before the memories.
    assert full["json"]["overview"] == []
    overview = tight["json"]["overview"]
    assert overview
    assert sum(count_tokens(e["summary"]) for e in overview) <= tight_budget * 0.3
    assert tight["json"]["token_budget"]["used"] <= tight_budget
    markdown = tight["markdown"]
    assert markdown.index("## Overview by category") < markdown.index("## Memories")
    shown = {i["id"] for i in tight["json"]["items"]} | {f["id"] for f in tight["json"]["critical_facts"]}
    for entry in overview:
        assert entry["space"] == "webshop"
        # Only memories the pack does not show whole.
        assert not set(entry["memory_ids"]) & shown
        assert f"**{entry['display_name']}** (webshop)" in markdown
        assert 1 <= len(entry["summary"].splitlines()) <= 3
        assert set(entry["items"]) <= {i["id"] for i in full["json"]["items"]}
    assert items_only["json"]["overview"] == []
    assert len(items_only["json"]["items"]) >= len(tight["json"]["items"])


def _shown_ids(markdown: str) -> set[str]:
    return set(re.findall(r"`(mem_[0-9A-Za-z]+)`", markdown))


def test_the_header_counts_the_memories_it_shows_in_the_right_number(api, store):
    """Given budgets from one critical fact up to every item, when packs are made, then the
    header counts each memory shown (critical facts and items, once each), and says
    "1 memory", never "1 memories"."""
    counts = set()
    # Which memory ranks first, and so what its critical fact costs, depends on the space's
    # keyed search tokens (a new key every run): the budget steps finely enough to meet one.
    for budget in (*range(100, 400, 20), 5000):
        body = pack(api, k=10, token_budget=budget, thresholds={"similarity": 0.0, "composite_min": 0.0})
        markdown = body["markdown"]
        shown = _shown_ids(markdown)
        counts.add(len(shown))
        noun = "memory" if len(shown) == 1 else "memories"
        # "2 memories from webshop", "2 memories and an overview of 1 category from webshop".
        header = re.compile(rf"{len(shown)} {noun}( and an overview of \d+ categor(y|ies))? from "
                            rf"{'webshop' if shown else '(webshop|no space)'} for: ")
        assert header.search(markdown), (budget, markdown)
        assert header.match(body["json"]["summary"]), (budget, body["json"]["summary"])
        assert "1 memories" not in markdown
    # The budgets did show one memory, and several.
    assert 1 in counts
    assert max(counts) == len(MEMORIES)


def test_generated_is_when_the_pack_was_made_not_the_newest_memory(api, store):
    """Given memories last updated years ago, when a pack is asked for without `as_of`,
    then it says it was generated now; with `as_of`, at that time (reproducible)."""
    Memory.objects.filter(pk__in=[m.pk for m in store.values()]).update(
        updated_at=datetime(2021, 3, 4, tzinfo=UTC))
    cache.clear()
    before = datetime.now(UTC).replace(microsecond=0)
    response = api.post("/api/v1/context-packs/", {"track": False, "query": "migrations, tests and alerts",
                                                   "k": 10, "token_budget": 5000}, format="json")
    after = datetime.now(UTC)
    machine, markdown = response.json()["json"], response.json()["markdown"]

    generated = datetime.fromisoformat(machine["generated_at"].replace("Z", "+00:00"))
    assert before <= generated <= after
    assert f"*generated {machine['generated_at']} · " in markdown
    assert "2021" not in machine["generated_at"]
    assert pack(api, k=10, token_budget=5000)["json"]["generated_at"] == AS_OF


def test_a_critical_fact_whose_summary_starts_with_its_title_says_it_once(api, space, on_commit):
    with on_commit():
        memory = make_memory(space, title="Use UUIDv7 for new primary keys", priority="core",
                             summary="Use UUIDv7 for new primary keys: sortable by time, no hot index page.",
                             content="New tables use UUIDv7 primary keys: sortable by time, no hot spot.")
    cache.clear()
    markdown = pack(api, query="primary keys for new tables", token_budget=2000)["markdown"]

    fact = next(line for line in markdown.splitlines() if line.startswith("- ") and memory.id in line)
    assert fact.count("Use UUIDv7 for new primary keys") == 1, fact
    assert "sortable by time" in fact


def test_a_question_keeps_its_own_mark_in_the_header(api, store):
    markdown = pack(api, query="how do we test and alert?", token_budget=2000)["markdown"]

    assert " for: how do we test and alert?*" in markdown
    assert "?." not in markdown
