"""Sealed candidate text is opened when read: recall ranks exactly as if every candidate's
text had been opened, and decrypts the titles, summaries and contents of the few it shows only."""

import pickle

import pytest
from django.core.cache import cache

from governance.crypto import cipher
from retrieval import channels, pipeline, presenters
from retrieval.context import RecallContext
from retrieval.tasks import lexeme_stats_refresh
from tests.factories import make_memory

TOPICS = ["checkout", "payments", "search", "orders", "invoices", "catalog", "shipping", "accounts"]
QUERIES = [
    "how do we write pytest fixtures for checkout tests?",
    "which fixture pins time in coupon expiry tests",
    "create index concurrently on a large table",
    "MudSnackbar for alerts",
]


@pytest.fixture
def wide_store(store, space, on_commit):
    """The shared store plus enough look-alikes that most candidates do not make the cut."""
    with on_commit():
        for n, topic in enumerate(TOPICS * 3):
            make_memory(space, title=f"Fixtures for {topic} tests, note {n}", tags=["testing", topic],
                        content=f"The {topic} tests build their data with pytest fixtures and factories; "
                                f"note {n} says the {topic} fixture {n % 5} stays read-only.",
                        canonical_phrases=[f"{topic} fixture {n}"])
    lexeme_stats_refresh()
    return store


def ranked(user, query: str, k: int) -> tuple[int, list[dict]]:
    request = pipeline.RecallRequest(context=RecallContext(query=query), k=k, as_of=None)
    result = pipeline.recall(actor=user, request=request, use_cache=False)
    return result.candidates, [{**presenters.ranked_memory(item), "link": item.link} for item in result.items]


def every_candidate_opened(monkeypatch) -> None:
    """Recall as it ran before: every candidate's sealed text opened as it is fetched."""
    fetch = channels.candidate_rows

    def opened(*args, **kwargs):
        rows = fetch(*args, **kwargs)
        for row in rows:
            row.open_all()
        return rows

    monkeypatch.setattr(channels, "candidate_rows", opened)


@pytest.mark.parametrize("k", [3, 20])
def test_recall_ranks_the_same_as_when_every_candidate_is_opened(wide_store, user, monkeypatch, k):
    lazy = [ranked(user, query, k) for query in QUERIES]
    every_candidate_opened(monkeypatch)
    cache.clear()
    eager = [ranked(user, query, k) for query in QUERIES]

    assert lazy == eager
    assert all(items for _, items in lazy)


def test_a_recall_decrypts_the_text_of_what_it_shows_and_the_phrases_it_scores(wide_store, user, monkeypatch):
    opened: dict[str, int] = {}
    open_text, open_json = cipher.open_text, cipher.open_json

    def counting(opener):
        def count(blob, *, context):
            opened[context] = opened.get(context, 0) + 1
            return opener(blob, context=context)
        return count

    monkeypatch.setattr(cipher, "open_text", counting(open_text))
    monkeypatch.setattr(cipher, "open_json", counting(open_json))
    candidates, items = ranked(user, QUERIES[0], 3)

    assert candidates > 10
    assert len(items) == 3
    # The exact signal reads every candidate's phrases.
    assert opened["memories_memory.canonical_phrases"] == candidates
    # Contents of the items shown; titles of those and of the graph's seeds; no more.
    assert opened["memories_memory.content"] == 3
    assert 3 <= opened["memories_memory.title"] <= 3 + pipeline.GRAPH_SEEDS
    assert opened["memories_memory.title"] < candidates


def test_a_candidate_row_opens_a_value_when_read_and_everything_when_looked_at_whole(wide_store):
    memory = wide_store["Dana is vegetarian"]
    row = channels.candidate_rows([memory.id], vector=None, tokens={})[0]

    assert "title" in row
    assert "vegetarian" not in repr(row)
    assert row.get("title") == "Dana is vegetarian"
    assert "Dana is vegetarian" in repr(row)
    assert "does not eat fish" not in repr(row)
    kept = pickle.loads(pickle.dumps(row))
    assert "does not eat fish" not in repr(kept)
    whole = dict(kept)
    assert set(whole) == set(channels.CANDIDATE_COLUMNS)
    assert whole["content"].startswith("Dana is vegetarian and does not eat fish")
    assert kept == row
    assert {**row} == whole
    row["title"] = "changed"
    assert row["title"] == "changed"
