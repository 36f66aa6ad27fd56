"""The vector channel under selective filters: the exact top k, the same on every run.

A store of 3,000 memories with clustered vectors (the HNSW index built by the migrations
holds them); 1% carry the tag `rare`, 20% the tag `common`. Truth is brute force in numpy
over the vectors as Postgres stores them.
"""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection, transaction

from memories.models import Memory
from retrieval import channels
from tests.factories import SpaceFactory

SIZE = 3000
K = 50
DIMS = 384


@pytest.fixture
def vectors_store(space):
    """SIZE memories in `space`: ids, tags and the stored unit vectors."""
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(40, DIMS))
    chosen = rng.integers(0, len(centres), SIZE)
    vectors = centres[chosen] + rng.normal(0, 0.6, (SIZE, DIMS))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    order = rng.permutation(SIZE)
    rare = set(order[:SIZE // 100].tolist())
    common = set(order[SIZE // 100:SIZE // 100 + SIZE // 5].tolist())
    memories = []
    for n in range(SIZE):
        tags = ["rare"] if n in rare else ["common"] if n in common else ["plain"]
        memories.append(Memory(
            id=f"vec{n:05d}", space=space, title=f"memory {n}", content=f"memory {n}", summary="",
            tags=tags, content_hash=f"{n:064d}", embedding=vectors[n].tolist(), embedding_status="ready"))
    Memory.objects.bulk_create(memories, batch_size=500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    by_id = dict(Memory.objects.filter(space=space).values_list("id", "embedding"))
    stored = np.array([by_id[f"vec{n:05d}"] for n in range(SIZE)], dtype=np.float64)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    return {"ids": [f"vec{n:05d}" for n in range(SIZE)], "vectors": stored,
            "tags": {"rare": rare, "common": common},
            "queries": centres[:12] + rng.normal(0, 0.6, (12, DIMS))}


def brute_force(store, query: np.ndarray, rows: list[int], k: int = K) -> list[str]:
    unit = query / np.linalg.norm(query)
    distances = 1 - store["vectors"][rows] @ unit
    ranked = sorted(zip(distances.round(6), (store["ids"][i] for i in rows), strict=True))
    return [memory_id for _, memory_id in ranked[:k]]


def search(scope: channels.Scope, query: np.ndarray) -> tuple[list[str], channels.VectorPlan]:
    with transaction.atomic():
        return channels.vector_search(scope, channels.vector_literal(query), K)


def scope_of(space, *tags: str) -> channels.Scope:
    return channels.Scope(space_ids=(space.id,), filters=channels.Filters(tags=tags))


def test_a_one_percent_tag_filter_returns_the_exact_top_k_nearest_first(space, vectors_store):
    rows = sorted(vectors_store["tags"]["rare"])
    for query in vectors_store["queries"]:
        found, plan = search(scope_of(space, "rare"), query)
        expected = brute_force(vectors_store, query, rows)
        assert plan.path == "exact"
        assert plan.filtered_rows == len(rows)
        assert set(found) == set(expected)
        assert found == expected


def test_a_twenty_percent_tag_filter_under_the_exact_cap_is_ranked_exactly(space, vectors_store):
    rows = sorted(vectors_store["tags"]["common"])
    for query in vectors_store["queries"][:4]:
        found, plan = search(scope_of(space, "common"), query)
        assert plan.path == "exact"
        assert found == brute_force(vectors_store, query, rows)


def test_over_the_cap_the_iterative_scan_is_sorted_by_distance_and_repeatable(
        space, vectors_store, settings):
    settings.SAM_RECALL = {**settings.SAM_RECALL, "VECTOR_EXACT_MAX_ROWS": 100}
    rows = sorted(vectors_store["tags"]["common"])
    recalls = []
    for query in vectors_store["queries"]:
        first, plan = search(scope_of(space, "common"), query)
        again, _ = search(scope_of(space, "common"), query)
        assert plan.path == "iterative"
        assert first == again
        assert len(first) == K
        unit = query / np.linalg.norm(query)
        distances = dict(zip(vectors_store["ids"], 1 - vectors_store["vectors"] @ unit, strict=True))
        assert [distances[m] for m in first] == pytest.approx(sorted(distances[m] for m in first), abs=1e-6)
        recalls.append(len(set(first) & set(brute_force(vectors_store, query, rows))) / K)
    # An approximate index: most, not necessarily all, of the true neighbours.
    assert np.mean(recalls) >= 0.9


def test_a_tag_rare_here_but_common_elsewhere_is_still_ranked_exactly(space, vectors_store, settings):
    # Another space where every memory carries `rare`: the planner, taking space and tag
    # as independent, overestimates the filtered set of this space; the short index walk
    # gives it away.
    other_space = SpaceFactory(slug="elsewhere", name="Elsewhere")
    Memory.objects.bulk_create([
        Memory(id=f"oth{n:05d}", space=other_space, title="other", content="other", summary="", tags=["rare"],
               content_hash=f"{n:064d}", embedding=vectors_store["vectors"][n].tolist(),
               embedding_status="ready")
        for n in range(SIZE)], batch_size=500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    settings.SAM_RECALL = {**settings.SAM_RECALL, "VECTOR_EXACT_MAX_ROWS": 40}
    scope = channels.Scope(space_ids=(space.id,), filters=channels.Filters(tags=("rare",)))
    query = vectors_store["queries"][0]
    found, plan = search(scope, query)
    assert plan.estimated_rows is not None
    assert plan.estimated_rows > 40
    assert plan.path == "exact"
    assert found == brute_force(vectors_store, query, sorted(vectors_store["tags"]["rare"]))


def test_an_unfiltered_query_still_walks_the_index_as_before(space, vectors_store):
    scope = channels.Scope(space_ids=(space.id,))
    for query in vectors_store["queries"][:4]:
        vector = channels.vector_literal(query)
        found, plan = search(scope, query)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT set_config('hnsw.ef_search', '100', true)")
            cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
            cursor.execute("SELECT m.id FROM memories_memory m WHERE m.space_id = ANY(%s) "
                           "AND NOT m.archived AND m.embedding IS NOT NULL "
                           "ORDER BY m.embedding <=> %s::vector LIMIT %s",
                           [[space.id], vector, K])
            before = [row[0] for row in cursor.fetchall()]
        assert plan.path == "index"
        assert found == before


def test_a_kind_filter_no_index_finds_walks_the_index_iteratively_nearest_first(space, vectors_store):
    scope = channels.Scope(space_ids=(space.id,), filters=channels.Filters(kind="fact"))
    query = vectors_store["queries"][0]
    found, plan = search(scope, query)
    unit = query / np.linalg.norm(query)
    distances = dict(zip(vectors_store["ids"], 1 - vectors_store["vectors"] @ unit, strict=True))
    assert plan.path == "iterative"
    assert len(found) == K
    assert [distances[m] for m in found] == pytest.approx(sorted(distances[m] for m in found), abs=1e-6)
