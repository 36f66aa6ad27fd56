"""The vector channel under tag filters: recall@k against exact search, latency and CPU per query.

Builds one space of --size memories by raw SQL in its own embedded Postgres (var/bench, or
$SAM_BENCH_VAR_DIR), with the vectors of bench/recall_speed.py (the real model's vectors of
the corpus texts, blended and jittered). Three tags are spread at random so that filters
on 1%, 5% and 20% of the rows exist (`filter-1pct`, `filter-5pct`, `filter-20pct`). The
free text is one sealed placeholder per column: the vector channel reads only ids, tags
and vectors.

For every filter (and none) and every query vector (the model's vectors of the corpus's
queries) it runs, alternating which goes first:
- base: the channel of another checkout (--base, the commit this work started from),
  imported from its retrieval/channels.py into this process and this database;
- new: this checkout's channel (the plan it picks is recorded);
- with --paths, also this checkout's exact and iterative paths forced, to place the
  threshold between them.
Truth is brute force in numpy over the stored vectors of the filtered rows (cosine
distance, ties by id). CPU is this process's time.process_time plus the Postgres
backend's on-CPU time from /proc/<pid>/schedstat (nanoseconds).

    .venv/bin/python bench/filtered_recall.py [--size 100000] [--queries 60] [--k 50]
        [--base /work/base-checkout] [--paths] [--out bench/results/filtered_recall_100k.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
from benchenv import ROOT
from django.core.management import call_command
from django.db import connection, transaction
from recall_speed import INSERT_SQL, _sealed, base_texts

from core.models import Space
from governance.access import Visibility
from governance.crypto import datakeys
from memories import entry
from memories.embeddings.registry import get_provider
from memories.models import Memory
from retrieval import channels

CORPUS = ROOT / "bench" / "recall_corpus"
FILTERS = {"1%": ("filter-1pct", 0.01), "5%": ("filter-5pct", 0.05), "20%": ("filter-20pct", 0.20)}
BATCH = 2000


def build(size: int) -> Space:
    """Space filtered-<size>, built unless this store already holds it whole."""
    slug = f"filtered-{size}"
    space = Space.objects.filter(slug=slug).first()
    if space is not None and Memory.objects.filter(space=space).count() == size:
        return space
    Space.objects.filter(slug=slug).delete()
    space = Space.objects.create(slug=slug, name=slug)
    bases = base_texts()
    print(f"embedding {len(bases)} base texts", file=sys.stderr)
    base_vectors = get_provider().embed([entry.embedding_text(b) for b in bases])
    rng = np.random.default_rng(size)
    pick = random.Random(size)
    tagged = {tag: set(rng.permutation(size)[:round(size * share)].tolist())
              for tag, share in FILTERS.values()}
    # One sealed placeholder per column: sealing each row's text would only slow the load.
    sealed = {column: _sealed(space.id, column, value, json_value=isinstance(value, (dict, list)))
              for column, value in (("title", "bench"), ("content", "bench"), ("summary", "bench"),
                                    ("canonical_phrases", []), ("source_ref", "bench"),
                                    ("context_window", {"applies_to": [], "excludes": []}),
                                    ("metadata", {}), ("training_examples", []), ("archive_reason", ""))}
    start = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
        batch: list[tuple] = []
        for n in range(size):
            b1, b2 = pick.randrange(len(bases)), pick.randrange(len(bases))
            base = bases[b1]
            vector = 0.85 * base_vectors[b1] + 0.15 * base_vectors[b2] + rng.normal(0, 0.015, 384)
            vector /= np.linalg.norm(vector)
            tags = list(base["tags"]) + [tag for tag, _ in FILTERS.values() if n in tagged[tag]]
            digest = datakeys.keyed_digest(space.id, f"{size}:{n}")
            batch.append((
                f"f{size}x{n:07d}", space.id, sealed["title"], sealed["content"], sealed["summary"],
                sealed["canonical_phrases"], tags, base.get("memory_type", "semantic"),
                base.get("kind", "fact"), sealed["source_ref"], sealed["context_window"], sealed["metadata"],
                sealed["training_examples"], sealed["archive_reason"], digest,
                channels.vector_literal(vector), digest, pick.randint(0, 400),
            ))
            if len(batch) == BATCH or n == size - 1:
                cursor.executemany(INSERT_SQL, [(*row, row[-1]) for row in batch])
                batch = []
        cursor.execute(
            "INSERT INTO memories_memorystats (memory_id, space_id, confidence, usage_count, access_count, "
            "reinforced_count, check_pending) "
            "SELECT id, space_id, 0.75, 0, 0, 0, false FROM memories_memory WHERE space_id = %s", [space.id])
        print(f"  inserted {size} rows in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute(
            "CREATE INDEX memory_embedding_hnsw ON memories_memory USING hnsw (embedding vector_cosine_ops)"
            " WITH (m = 16, ef_construction = 64)")
        print(f"  HNSW built at {time.perf_counter() - start:.1f} s", file=sys.stderr)
        cursor.execute("VACUUM ANALYZE memories_memory")
    return space


def stored(space: Space) -> tuple[list[str], list[set[str]], np.ndarray]:
    """Ids (sorted), tags and unit vectors of the space, as Postgres holds them."""
    ids, tags, vectors = [], [], []
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, tags, embedding::text FROM memories_memory WHERE space_id = %s "
                       "AND embedding IS NOT NULL AND NOT archived ORDER BY id", [space.id])
        for memory_id, memory_tags, text in cursor.fetchall():
            ids.append(memory_id)
            tags.append(set(memory_tags))
            vectors.append(np.array(text[1:-1].split(","), dtype=np.float32))
    matrix = np.vstack(vectors).astype(np.float64)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return ids, tags, matrix


def truth(query: np.ndarray, rows: np.ndarray, ids: list[str], k: int) -> list[str]:
    """The exact k nearest of `rows` (indexes into ids) by cosine distance, ties by id."""
    distances = 1 - rows @ query
    order = np.lexsort((np.arange(len(distances)), distances))[:k]
    return [ids[i] for i in order]


def base_channels(checkout: Path) -> ModuleType:
    """The other checkout's retrieval/channels.py, loaded as a module of its own."""
    spec = importlib.util.spec_from_file_location("base_channels", checkout / "retrieval" / "channels.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Its dataclasses look their module up by name.
    sys.modules["base_channels"] = module
    spec.loader.exec_module(module)
    return module


def backend_cpu_ns(pid: int) -> int:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def timed(run: Callable[[], list[str]], pid: int) -> tuple[list[str], float, float]:
    """(ids, wall ms, CPU ms of this process and the backend) of one call in its own transaction."""
    cpu, backend, start = time.process_time(), backend_cpu_ns(pid), time.perf_counter()
    with transaction.atomic():
        found = run()
    wall = (time.perf_counter() - start) * 1000
    used = (time.process_time() - cpu) * 1000 + (backend_cpu_ns(pid) - backend) / 1e6
    return found, wall, used


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))], 1)


def summary(recalls: list[float], walls: list[float], cpus: list[float], extra: dict | None = None) -> dict:
    return {"recall": round(statistics.mean(recalls), 3), "recall_min": round(min(recalls), 3),
            "p50_ms": pct(walls, 50), "p95_ms": pct(walls, 95),
            "cpu_ms_mean": round(statistics.mean(cpus), 1), **(extra or {})}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--k", type=int, default=50, help="the channel's LIMIT (recall's VECTOR_CANDIDATES)")
    parser.add_argument("--base", type=Path, help="a checkout of the commit to compare against")
    parser.add_argument("--paths", action="store_true", help="also time the exact and iterative paths forced")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    space = build(args.size)
    ids, tags, matrix = stored(space)
    lines = (CORPUS / "queries.jsonl").read_text().splitlines()
    texts = [json.loads(line)["query"] for line in lines if line]
    query_vectors = get_provider().embed(texts[:args.queries])
    base = base_channels(args.base) if args.base else None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    visibility = Visibility(groups=(((space.id,), 100, ()),))
    results = []
    for name, tag in [("none", None), *[(label, tag) for label, (tag, _) in FILTERS.items()]]:
        filters = channels.Filters(tags=(tag,) if tag else ())
        scope = channels.Scope(space_ids=(space.id,), filters=filters, visibility=visibility)
        rows = [i for i, memory_tags in enumerate(tags) if tag is None or tag in memory_tags]
        sub = matrix[rows]
        sub_ids = [ids[i] for i in rows]
        runs: dict[str, Callable[[str], list[str]]] = {
            "new": lambda v, s=scope: channels.vector_candidates(s, v, args.k)}
        if base is not None:
            base_scope = base.Scope(space_ids=(space.id,), filters=base.Filters(tags=filters.tags),
                                    visibility=visibility)
            runs["base"] = lambda v, s=base_scope: base.vector_candidates(s, v, args.k)
        if args.paths and tag is not None:
            runs["exact"] = lambda v, s=scope: channels.exact_vector_candidates(s, v, args.k, cap=10**9)[0]
            runs["iterative"] = lambda v, s=scope: _forced_iterative(s, v, args.k)
        measured: dict[str, tuple[list[float], list[float], list[float]]] = {n: ([], [], []) for n in runs}
        plans: dict[str, int] = {}
        for number, query in enumerate(query_vectors):
            vector = channels.vector_literal(query)
            unit = np.asarray(query, dtype=np.float64) / np.linalg.norm(query)
            expected = set(truth(unit, sub, sub_ids, args.k))
            names = list(runs) if number % 2 == 0 else list(reversed(runs))
            for run_name in names:
                found, wall, cpu = timed(lambda r=runs[run_name], v=vector: r(v), pid)
                measured[run_name][0].append(len(expected & set(found)) / len(expected))
                measured[run_name][1].append(wall)
                measured[run_name][2].append(cpu)
            with transaction.atomic():
                plan = channels.vector_search(scope, vector, args.k)[1]
            plans[plan.path] = plans.get(plan.path, 0) + 1
        entry_ = {"filter": name, "tag": tag, "filtered_rows": len(rows), "plans": plans,
                  **{run_name: summary(*values) for run_name, values in measured.items()}}
        results.append(entry_)
        print(json.dumps(entry_), file=sys.stderr)
    out = args.out or ROOT / "bench" / "results" / f"filtered_recall_{args.size // 1000}k.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {"machine": f"{os.cpu_count()} cores, shared", "size": args.size,
              "queries": len(query_vectors), "k": args.k, "results": results}
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"| filter | rows | plan | base recall@{args.k} | new recall@{args.k} | base p50 / p95 | "
          "new p50 / p95 | base CPU | new CPU |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        b, n = r.get("base", {}), r["new"]
        print(f"| {r['filter']} | {r['filtered_rows']:,} | {r['plans']} | {b.get('recall', '-')} | "
              f"{n['recall']} | "
              f"{b.get('p50_ms', '-')} / {b.get('p95_ms', '-')} ms | {n['p50_ms']} / {n['p95_ms']} ms | "
              f"{b.get('cpu_ms_mean', '-')} ms | {n['cpu_ms_mean']} ms |")


def _forced_iterative(scope: channels.Scope, vector: str, k: int) -> list[str]:
    """The iterative path alone, under the settings vector_search sets."""
    channels.use_hnsw_settings(k)
    return channels.iterative_vector_candidates(scope, vector, k)


if __name__ == "__main__":
    main()
