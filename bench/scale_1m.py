"""One million memories: ingest, index builds, disk and memory, recall latency, vector recall@10.

Two layouts, each in its own embedded Postgres under $SAM_BENCH_VAR_DIR (default
var/bench-scale), so neither layout's indexes hold the other's rows:

- one-space: --size memories in one space; 1% of them carry the tag `scale-rare`;
- spread: the same number spread evenly over --spaces spaces.

Rows are loaded sealed, by raw SQL, as bench/recall_speed.py loads them (texts are variants
of bench/recall_corpus, free text sealed under each space's data key, keyed search tokens).
The model embeds ~180 texts/s, so vectors are blends of the model's vectors of three base
texts plus noise; query vectors are the model's vectors of the corpus's queries. Each layout
is built once: a rerun finds it complete (or resumes the load at the last whole batch).

    SAM_BENCH_VAR_DIR=var/bench-scale .venv/bin/python bench/scale_1m.py \\
        [--size 1000000] [--spaces 1000] [--layouts one-space spread] [--queries 200] \\
        [--recall-queries 60] [--out bench/results/scale_1m.json]

Writes the JSON results (one entry per layout) and prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
from benchenv import ROOT
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import OperationalError, connection, transaction
from recall_speed import INSERT_SQL, PORT, REGIONS, SERVICES, _sealed, base_texts, pct, queries, start_server

from core import embedded_db
from core.models import Space
from governance.access import SYSTEM
from governance.crypto import datakeys, search
from governance.services import api_token_issue, membership_grant
from memories import entry
from memories.embeddings.registry import get_provider
from memories.models import Memory
from retrieval import channels
from retrieval.tasks import lexeme_stats_refresh

RESULTS = ROOT / "bench" / "results" / "scale_1m.json"
LAYOUTS = ("one-space", "spread")
BATCH = 2000
SEED = 1_000_003
RARE_TAG = "scale-rare"
HNSW = "memory_embedding_hnsw"
# Built after the load, as bulk loads do: one sorted build is far cheaper than a million
# row-by-row insertions into GIN posting trees (the indexes have no pending list).
SEARCH_INDEXES = ("memory_search_gin", "memory_phrase_tokens_gin", "memory_tags_gin")
HNSW_MAINTENANCE_MEM = "8GB"
HNSW_WORKERS = 1  # with the leader, one process per core on this 2-core machine
EF_SEARCH = (40, 100, 200)
WIDE_QUERIES = 40
ALL_SPACES_QUERIES = 5
LEXICAL_TIMEOUT_S = 30
MAX_TIMEOUTS = 3

# recall_speed's insert, with the search tokens written by the same statement (recall_speed
# adds them by an UPDATE, which at this size would leave a million dead row versions behind):
# phrase tokens become a parameter after training_examples, search_vector a last one.
PHRASES_AT = 13
SCALE_INSERT_SQL = INSERT_SQL.replace(
    " created_at, updated_at)", " created_at, updated_at, search_vector)", 1
).replace("%s, '{}', 0, false,", "%s, %s::varchar[], 0, false,", 1)[:-1] + ", %s::tsvector)"
assert SCALE_INSERT_SQL.count("%s") == INSERT_SQL.count("%s") + 2


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- building -------------------------------------------------------------------------------

def space_slugs(layout: str, spaces: int) -> list[str]:
    return ["scale-one"] if layout == "one-space" else [f"scale-s{n:04d}" for n in range(spaces)]


def state_path() -> Path:
    return Path(settings.VAR_DIR) / "scale_build.json"


def load_state(config: dict) -> dict:
    """The build's progress in this data folder; empty when it was built for another config."""
    path = state_path()
    state = json.loads(path.read_text()) if path.exists() else {}
    if state.get("config") == config:
        return state
    # The index definitions outlive a config: an interrupted load may have dropped the indexes.
    return {"config": config, "index_defs": state.get("index_defs", {})}


def save_state(state: dict) -> None:
    state_path().write_text(json.dumps(state, indent=2) + "\n")


def blended_vectors(rng: np.random.Generator, base_vectors: np.ndarray, count: int) -> tuple[np.ndarray, ...]:
    """Unit vectors mixing three base texts' vectors (the first dominant) plus noise.

    Three random weights, not recall_speed's fixed 0.85/0.15 of two: at a million rows over
    ~1.2k base texts fixed weights would make ~800 near-copies per base, far denser
    clusters than a real store has, and recall@10 among near-ties says little.
    """
    picks = rng.integers(0, len(base_vectors), size=(count, 3))
    first = rng.uniform(0.55, 0.9, size=count)
    second = (1 - first) * rng.uniform(0.4, 1.0, size=count)
    third = 1 - first - second
    vectors = (first[:, None] * base_vectors[picks[:, 0]] + second[:, None] * base_vectors[picks[:, 1]]
               + third[:, None] * base_vectors[picks[:, 2]] + rng.normal(0, 0.02, size=(count, 384)))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors, picks[:, 0]


def batch_params(batch: int, *, size: int, per_space: int, space_ids: list[int], bases: list[dict],
                 base_vectors: np.ndarray) -> list[tuple]:
    """The insert parameters of one batch, sealed; deterministic per batch so a load can resume.

    Call inside a transaction: the active data key of each space is then read once.
    """
    start, stop = batch * BATCH, min(size, (batch + 1) * BATCH)
    rng = np.random.default_rng([SEED, batch])
    pick = random.Random(SEED * 100_000 + batch)
    vectors, firsts = blended_vectors(rng, base_vectors, stop - start)
    rows, docs = [], []
    for offset, n in enumerate(range(start, stop)):
        space_id = space_ids[n // per_space]
        base = bases[int(firsts[offset])]
        service, region = pick.choice(SERVICES), pick.choice(REGIONS)
        title = f"{base['title'][:90]} ({service})"
        content = f"{base['content']} Applies to {service} in {region}."
        summary = base["content"][:300]
        phrases = base["canonical_phrases"]
        tags = [*base["tags"], RARE_TAG] if n % 100 == 7 else list(base["tags"])
        state = {"title": title, "content": content, "canonical_phrases": phrases}
        memory_id = f"s{n:07d}"
        days = pick.randint(0, 400)
        rows.append([
            memory_id, space_id, _sealed(space_id, "title", title),
            _sealed(space_id, "content", content), _sealed(space_id, "summary", summary),
            _sealed(space_id, "canonical_phrases", phrases, json_value=True),
            tags, base.get("memory_type", "semantic"), base.get("kind", "fact"),
            _sealed(space_id, "source_ref", "bench"),
            _sealed(space_id, "context_window", {"applies_to": [], "excludes": []}, json_value=True),
            _sealed(space_id, "metadata", {}, json_value=True),
            _sealed(space_id, "training_examples", [], json_value=True),
            _sealed(space_id, "archive_reason", ""),
            datakeys.keyed_digest(space_id, content), channels.vector_literal(vectors[offset]),
            datakeys.keyed_digest(space_id, entry.embedding_text(state)), days, days,
        ])
        docs.append((memory_id, datakeys.active_key_id(space_id),
                     {**state, "summary": summary, "tags": tags}))
    tokens = {row_id: (sv, pt) for row_id, sv, pt in search.index_entries(docs)}
    params = []
    for row in rows:
        search_vector, phrase_tokens = tokens[row[0]]
        params.append((*row[:PHRASES_AT], phrase_tokens, *row[PHRASES_AT:], search_vector))
    return params


def ensure_spaces(slugs: list[str]) -> list[int]:
    have = set(Space.objects.filter(slug__in=slugs).values_list("slug", flat=True))
    for slug in slugs:
        if slug not in have:
            # One by one: Space.save() seals the space's own fields.
            Space.objects.create(slug=slug, name=slug)
    ids = dict(Space.objects.filter(slug__in=slugs).values_list("slug", "id"))
    return [ids[slug] for slug in slugs]


def index_defs(names: tuple[str, ...]) -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)", [list(names)])
        return dict(cursor.fetchall())


def load_rows(state: dict, *, size: int, space_ids: list[int], bases: list[dict],
              base_vectors: np.ndarray) -> None:
    """Insert the rows batch by batch (each batch one transaction), resuming after the last."""
    defs = state["index_defs"]
    defs.update(index_defs((HNSW, *SEARCH_INDEXES)))
    save_state(state)
    with connection.cursor() as cursor:
        for name in defs:
            cursor.execute(f"DROP INDEX IF EXISTS {name}")  # names are ours, not input
    done = Memory.objects.count()
    if done % BATCH and done != size:
        raise RuntimeError(f"{done} rows is not a whole number of batches; delete {settings.VAR_DIR}")
    per_space = size // len(space_ids)
    batches = (size + BATCH - 1) // BATCH
    start = time.perf_counter()
    for batch in range(done // BATCH, batches):
        with transaction.atomic(), connection.cursor() as cursor:
            params = batch_params(batch, size=size, per_space=per_space, space_ids=space_ids,
                                  bases=bases, base_vectors=base_vectors)
            cursor.executemany(SCALE_INSERT_SQL, params)
        if batch % 25 == 0 or batch == batches - 1:
            rows = (batch + 1) * BATCH - done
            rate = rows / (time.perf_counter() - start)
            log(f"  loaded {min(size, (batch + 1) * BATCH):,} rows ({rate:.0f}/s)")
    state["load_seconds"] = state.get("load_seconds", 0) + time.perf_counter() - start
    state["loaded_this_run"] = size - done
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memories_memorystats (memory_id, space_id, confidence, usage_count, access_count, "
            "reinforced_count, check_pending) SELECT id, space_id, 0.75, 0, 0, 0, false FROM memories_memory "
            "ON CONFLICT (memory_id) DO NOTHING")
    state["loaded"] = True
    save_state(state)


def build_search_indexes(state: dict) -> None:
    start = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        for name in SEARCH_INDEXES:
            cursor.execute(state["index_defs"][name].replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))
            log(f"  {name} built at {time.perf_counter() - start:.0f} s")
    state["search_index_seconds"] = time.perf_counter() - start
    save_state(state)


def build_hnsw(state: dict) -> None:
    """The vector index, with the whole graph in memory and one parallel worker."""
    start = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(f"SET maintenance_work_mem = '{HNSW_MAINTENANCE_MEM}'")
        cursor.execute(f"SET max_parallel_maintenance_workers = {HNSW_WORKERS}")
        cursor.execute(state["index_defs"][HNSW].replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))
    state["hnsw_seconds"] = time.perf_counter() - start
    state["hnsw_build"] = {"maintenance_work_mem": HNSW_MAINTENANCE_MEM,
                           "max_parallel_maintenance_workers": HNSW_WORKERS, "m": 16, "ef_construction": 64}
    save_state(state)


def finish(state: dict, space_ids: list[int]) -> None:
    start = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE) memories_memory")
        cursor.execute("VACUUM (ANALYZE) memories_memorystats")
    state["analyze_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    lexeme_stats_refresh(space_ids=space_ids)
    state["lexeme_stats_seconds"] = time.perf_counter() - start
    state["complete"] = True
    save_state(state)


def ensure_built(layout: str, size: int, spaces: int) -> tuple[dict, list[int]]:
    """Build the layout's store unless it is complete; returns the build figures and space ids."""
    slugs = space_slugs(layout, spaces)
    config = {"layout": layout, "size": size, "spaces": len(slugs), "seed": SEED, "batch": BATCH}
    state = load_state(config)
    if not state.get("started") and Memory.objects.exists():
        clear_rows()
    state["started"] = True
    space_ids = ensure_spaces(slugs)
    steps: list[tuple[str, Callable[[], None]]] = [
        ("loaded", lambda: load_rows(state, size=size, space_ids=space_ids, bases=bases_cache(),
                                     base_vectors=base_vectors_cache())),
        ("search_index_seconds", lambda: build_search_indexes(state)),
        ("hnsw_seconds", lambda: build_hnsw(state)),
        ("complete", lambda: finish(state, space_ids)),
    ]
    for done_key, step in steps:
        if not state.get(done_key):
            log(f"{layout}: building until {done_key}")
            step()
    return state, space_ids


def clear_rows() -> None:
    """Remove the rows of a build for another config (this folder holds nothing else).

    TRUNCATE, not the ORM's cascade, which would collect a million rows in Python first.
    """
    log("  clearing the rows of another build")
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memories_memory, memories_memorystats, retrieval_lexemestat CASCADE")
    Space.objects.filter(slug__startswith="scale-").delete()


_cache: dict[str, object] = {}


def bases_cache() -> list[dict]:
    if "bases" not in _cache:
        _cache["bases"] = base_texts()
    return _cache["bases"]  # type: ignore[return-value]


def base_vectors_cache() -> np.ndarray:
    if "vectors" not in _cache:
        log(f"embedding {len(bases_cache())} base texts")
        _cache["vectors"] = get_provider().embed([entry.embedding_text(b) for b in bases_cache()])
    return _cache["vectors"]  # type: ignore[return-value]


# --- measuring ------------------------------------------------------------------------------

def disk_sizes() -> dict[str, float]:
    """Sizes in MB: the memory table and its parts, the search indexes and statistics tables."""
    relations = {
        "memories_memory_total": "pg_total_relation_size('memories_memory')",
        "memories_memory_heap": "pg_relation_size('memories_memory')",
        "memories_memory_toast": "pg_total_relation_size((SELECT reltoastrelid FROM pg_class "
                                 "WHERE relname = 'memories_memory'))",
        "all_indexes_of_memories_memory": "pg_indexes_size('memories_memory')",
        "hnsw_index": f"pg_relation_size('{HNSW}')",
        **{name: f"pg_relation_size('{name}')" for name in SEARCH_INDEXES},
        "memories_memorystats_total": "pg_total_relation_size('memories_memorystats')",
        "retrieval_lexemestat_total": "pg_total_relation_size('retrieval_lexemestat')",
        "retrieval_spacetextstats_total": "pg_total_relation_size('retrieval_spacetextstats')",
        "database": "pg_database_size(current_database())",
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(relations.values()))
        values = cursor.fetchone()
    return {name: round(value / 2**20, 1) for name, value in zip(relations, values, strict=True)}


def server_settings() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)",
                       [["shared_buffers", "effective_cache_size", "work_mem", "hnsw.max_scan_tuples",
                         "max_parallel_workers_per_gather", "server_version"]])
        return dict(cursor.fetchall())


def _memory_kb(pid: int) -> tuple[int, int]:
    rss = pss = 0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1])
        elif line.startswith("Pss:"):
            pss = int(line.split()[1])
    return rss, pss


def postgres_memory() -> dict[str, float]:
    """RSS and PSS (shared pages divided among their users) of the postmaster and its children, in MB.

    RSS counts the shared buffers a process touched once per process; PSS adds up to the
    real footprint.
    """
    postmaster = int((Path(settings.VAR_DIR) / "pgdata" / "postmaster.pid").read_text().split()[0])
    pids = [postmaster]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == postmaster:
            pids.append(int(stat.parent.name))
    rss = pss = largest = 0
    for pid in pids:
        try:
            one_rss, one_pss = _memory_kb(pid)
        except OSError:
            continue
        rss, pss, largest = rss + one_rss, pss + one_pss, max(largest, one_rss)
    return {"processes": len(pids), "rss_sum_mb": round(rss / 1024), "pss_sum_mb": round(pss / 1024),
            "largest_process_rss_mb": round(largest / 1024)}


class MemorySampler:
    """Samples the server's memory every second while the query phase runs; keeps the peak."""

    def __init__(self) -> None:
        self.peak: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            sample = postgres_memory()
            if sample["pss_sum_mb"] > self.peak.get("pss_sum_mb", -1):
                self.peak = sample

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def scan_node(plan: dict) -> str:
    """The first scan of memories_memory in an EXPLAIN (FORMAT JSON) plan, e.g. 'Index Scan on hnsw'."""
    if plan.get("Relation Name") == "memories_memory":
        return f"{plan['Node Type']}" + (f" using {plan['Index Name']}" if plan.get("Index Name") else "")
    for child in plan.get("Plans", []):
        found = scan_node(child)
        if found:
            return found
    return ""


def nearest(scope: channels.Scope, vector: str, *, ef: int, iterative: str, exact: bool,
            explain: bool = False) -> tuple[list[str], float, str]:
    """The vector channel's query at limit 10 (ids, ms, plan); `exact` turns index scans off."""
    where, params = scope.where()
    sql = (f"SELECT m.id FROM memories_memory m WHERE {where} AND m.embedding IS NOT NULL "
           "ORDER BY m.embedding <=> %s::vector LIMIT 10")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef)])
        cursor.execute("SELECT set_config('hnsw.iterative_scan', %s, true)", [iterative])
        if exact:
            cursor.execute("SET LOCAL enable_indexscan = off")
        plan = ""
        if explain:
            cursor.execute("EXPLAIN (FORMAT JSON) " + sql, [*params, vector])
            raw = cursor.fetchone()[0]
            plan = scan_node((json.loads(raw) if isinstance(raw, str) else raw)[0]["Plan"])
        start = time.perf_counter()
        cursor.execute(sql, [*params, vector])
        ids = [row[0] for row in cursor.fetchall()]
        return ids, (time.perf_counter() - start) * 1000, plan


def ms_summary(values: list[float]) -> dict[str, float]:
    return {"p50": pct(values, 50), "p95": pct(values, 95), "mean": round(statistics.mean(values), 1)}


def vector_recall(cases: dict[str, list[channels.Scope]], vectors: list[str]) -> dict:
    """recall@10 of the HNSW query against exact search, per case, ef_search and iterative mode."""
    out = {}
    for case, scopes in cases.items():
        log(f"  vector recall@10: {case}")
        exact = [nearest(scope, vector, ef=40, iterative="off", exact=True, explain=n == 0)
                 for n, (scope, vector) in enumerate(zip(scopes, vectors, strict=False))]
        rows = {"exact_ms": ms_summary([ms for _, ms, _ in exact]), "exact_plan": exact[0][2], "index": []}
        for iterative in ("off", "relaxed_order"):
            for ef in EF_SEARCH:
                found = [nearest(scope, vector, ef=ef, iterative=iterative, exact=False, explain=n == 0)
                         for n, (scope, vector) in enumerate(zip(scopes, vectors, strict=False))]
                hits = [len(set(ids) & set(truth)) / max(1, len(truth))
                        for (ids, _, _), (truth, _, _) in zip(found, exact, strict=True)]
                short = sum(1 for ids, _, _ in found if len(ids) < 10)
                rows["index"].append({
                    "ef_search": ef, "iterative_scan": iterative,
                    "recall_at_10": round(statistics.mean(hits), 3),
                    "queries_under_10_rows": short, "ms": ms_summary([ms for _, ms, _ in found]),
                    "plan": found[0][2]})
        out[case] = rows
    return out


def lexical_timing(cases: dict[str, list[channels.Scope]], texts: list[str]) -> dict:
    """The lexical channel as recall runs it: lexemes, the plan over the statistics, the query."""
    limit = int(settings.SAM_RECALL["LEXICAL_CANDIDATES"])
    out = {}
    for case, scopes in cases.items():
        times, rows, timeouts = [], [], 0
        for scope, text in zip(scopes, texts, strict=False):
            start = time.perf_counter()
            try:
                with transaction.atomic(), connection.cursor() as cursor:
                    # Over many spaces one query can run for minutes (an OR of every space's
                    # keyed tokens): cut it off and count it.
                    cursor.execute(f"SET LOCAL statement_timeout = '{LEXICAL_TIMEOUT_S}s'")
                    plan = channels.plan_lexical(scope, channels.query_lexemes(text))
                    channels.lexical_candidates(scope, plan, limit)
            except OperationalError:
                timeouts += 1
                if timeouts == MAX_TIMEOUTS:
                    break
                continue
            times.append((time.perf_counter() - start) * 1000)
            rows.append(plan.estimated_rows)
        out[case] = {"ms": ms_summary(times) if times else None, "timeouts": timeouts,
                     "timeout_seconds": LEXICAL_TIMEOUT_S,
                     "estimated_rows_mean": round(statistics.mean(rows)) if rows else None}
    return out


def http_recall(token: str, bodies: dict[str, list[dict]], requests: list[dict]) -> tuple[dict, dict]:
    """Recall through gunicorn (1 worker, 2 threads) per case; also the server's memory meanwhile."""
    server = start_server()
    client = httpx.Client(base_url=f"http://127.0.0.1:{PORT}", timeout=120,
                          headers={"Authorization": f"Bearer {token}"})
    out = {}
    common = {"k": 5, "track": False}
    try:
        with MemorySampler() as sampler:
            for case, case_bodies in bodies.items():
                log(f"  HTTP recall: {case}")
                warm_up = list(zip(case_bodies, requests, strict=False))[:min(20, len(case_bodies) // 2)]
                for body, warm in warm_up:
                    warm_body = {**common, **body, "query": "warm up " + warm["query"]}
                    client.post("/api/v1/recall/", json=warm_body)
                latencies, stages, errors = [], [], []
                for body, request in zip(case_bodies, requests, strict=False):
                    start = time.perf_counter()
                    try:
                        response = client.post("/api/v1/recall/", json={**common, **body, **request})
                        response.raise_for_status()
                    except httpx.HTTPError as exc:
                        # A request past gunicorn's 30 s timeout: counted, not fatal to the run.
                        errors.append(f"{type(exc).__name__} after {time.perf_counter() - start:.1f} s")
                        continue
                    latencies.append((time.perf_counter() - start) * 1000)
                    stages.append(response.json()["data"]["timings_ms"])
                if not stages:
                    out[case] = {"requests": 0, "errors": errors}
                    continue
                names = sorted({k for s in stages for k in s if k != "total"})
                means = {n: round(statistics.mean(s.get(n, 0) for s in stages), 1) for n in names}
                out[case] = {"requests": len(latencies), "errors": errors,
                             "http_ms": {**ms_summary(latencies), "p99": pct(latencies, 99)},
                             "server_total_ms": ms_summary([s["total"] for s in stages]),
                             "stage_mean_ms": dict(sorted(means.items(), key=lambda kv: -kv[1])[:6])}
        memory = sampler.peak
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    return out, memory


def measure(layout: str, state: dict, space_ids: list[int], args: argparse.Namespace) -> dict:
    rows = [json.loads(line) for line in (ROOT / "bench" / "recall_corpus" / "queries.jsonl").read_text()
            .splitlines() if line][:args.recall_queries]
    texts = [row["query"] for row in rows]
    log(f"embedding {len(texts)} queries")
    vectors = [channels.vector_literal(v) for v in get_provider().embed(texts)]
    pick = random.Random(7)
    slugs = dict(Space.objects.filter(id__in=space_ids).values_list("id", "slug"))
    rare = channels.Filters(tags=(RARE_TAG,))
    n = max(args.queries, args.recall_queries)
    if layout == "one-space":
        whole = channels.Scope(space_ids=tuple(space_ids))
        cases = {"no filter": [whole] * n,
                 f"tag {RARE_TAG} (1%)": [channels.Scope(space_ids=tuple(space_ids), filters=rare)] * n}
        named = {"spaces": [slugs[space_ids[0]]]}
        bodies = {"no filter": [named] * n,
                  f"tag {RARE_TAG} (1%)": [{**named, "filters": {"tags": [RARE_TAG]}}] * n}
    else:
        chosen = [pick.choice(space_ids) for _ in range(n)]
        share = f"{100 / len(space_ids):g}%"
        # The API names at most 50 spaces; naming none means every space the caller reads.
        # Recall over many spaces is slow (every keyed token is per space), so those cases
        # run fewer queries.
        wide = space_ids[:50]
        many = f"{len(wide)} spaces ({len(wide) * 100 / len(space_ids):g}%)"
        every = f"all {len(space_ids):,} spaces"
        cases = {f"one space ({share})": [channels.Scope(space_ids=(sid,)) for sid in chosen],
                 many: [channels.Scope(space_ids=tuple(wide))] * min(n, WIDE_QUERIES),
                 every: [channels.Scope(space_ids=tuple(space_ids))] * min(n, ALL_SPACES_QUERIES)}
        bodies = {f"one space ({share})": [{"spaces": [slugs[sid]]} for sid in chosen],
                  many: [{"spaces": [slugs[sid] for sid in wide]}] * min(n, WIDE_QUERIES),
                  every: [{}] * min(n, ALL_SPACES_QUERIES)}
    result = {"layout": layout, "memories": Memory.objects.count(), "spaces": len(space_ids),
              "settings": server_settings(), "build": build_figures(state), "disk_mb": disk_sizes()}
    result["vector_recall"] = vector_recall(cases, vectors)
    log("  lexical channel")
    result["lexical_channel"] = lexical_timing(cases, [q["query"] for q in queries(n)])
    user, _ = get_user_model().objects.get_or_create(username="bench")
    # Recall answers only spaces the caller holds a role in; a viewer is enough.
    for space in Space.objects.filter(id__in=space_ids):
        membership_grant(actor=SYSTEM, space=space, role="viewer", user=user)
    _, token = api_token_issue(user=user, name="scale bench")
    # A recall whose lexical channel outlasts the timeout would outlast gunicorn's too, and
    # its query would keep running in Postgres after the worker is killed.
    lexical = result["lexical_channel"]
    runnable = {case: body for case, body in bodies.items() if not lexical[case]["timeouts"]}
    result["http_recall"], result["postgres_memory_mb"] = http_recall(token, runnable, queries(args.queries))
    for case in bodies.keys() - runnable.keys():
        result["http_recall"][case] = {"requests": 0, "errors": ["skipped: the lexical channel timed out"]}
    return result


def build_figures(state: dict) -> dict:
    size = state["config"]["size"]
    load = state["load_seconds"]
    total = load + state["search_index_seconds"]
    return {
        "load_seconds": round(load, 1), "load_rows_per_second": round(state["loaded_this_run"] / load),
        "search_index_seconds": round(state["search_index_seconds"], 1),
        "ingest_rows_per_second": round(size / total) if state["loaded_this_run"] == size else None,
        "hnsw_seconds": round(state["hnsw_seconds"], 1), "hnsw_build": state["hnsw_build"],
        "vacuum_analyze_seconds": round(state["analyze_seconds"], 1),
        "lexeme_stats_seconds": round(state["lexeme_stats_seconds"], 1),
    }


# --- driving --------------------------------------------------------------------------------

def run_layout(args: argparse.Namespace) -> None:
    """One layout, in this process's data folder: build if need be, measure, store the entry."""
    call_command("migrate", verbosity=0)
    state, space_ids = ensure_built(args.layout, args.size, args.spaces)
    if args.build_only:
        return
    log(f"{args.layout}: measuring")
    result = measure(args.layout, state, space_ids, args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = json.loads(out.read_text()) if out.exists() else {}
    summary["machine"] = f"{os.cpu_count()} cores"
    summary.setdefault("layouts", {})[args.layout] = result
    out.write_text(json.dumps(summary, indent=2) + "\n")
    # Leave no idle server with gigabytes of buffers behind; the next run starts it again.
    connection.close()
    embedded_db.stop(Path(settings.VAR_DIR) / "pgdata")


def print_tables(path: Path) -> None:
    layouts = json.loads(path.read_text())["layouts"]
    print("| layout | rows | load rows/s | search indexes | ingest rows/s | HNSW build | table + indexes "
          "| HNSW index | search indexes | Postgres PSS / RSS (query phase) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, r in layouts.items():
        b, d, m = r["build"], r["disk_mb"], r["postgres_memory_mb"]
        gin = sum(d[n] for n in SEARCH_INDEXES)
        print(f"| {name} | {r['memories']:,} | {b['load_rows_per_second']:,} | {b['search_index_seconds']} s "
              f"| {b['ingest_rows_per_second']} | {b['hnsw_seconds']} s "
              f"| {d['memories_memory_total'] / 1024:.1f} GB "
              f"| {d['hnsw_index'] / 1024:.2f} GB | {gin / 1024:.2f} GB | {m.get('pss_sum_mb')} / "
              f"{m.get('rss_sum_mb')} MB |")
    print("\n| layout | case | HTTP p50 | HTTP p95 | server p95 | lexical channel p50 / p95 |")
    print("|---|---|---|---|---|---|")
    for name, r in layouts.items():
        for case, h in r["http_recall"].items():
            lexical = r["lexical_channel"][case]
            over = f"{lexical.get('timeouts')} × over {lexical.get('timeout_seconds')} s"
            lex = lexical["ms"] or {"p50": "-", "p95": over}
            if "http_ms" not in h:
                print(f"| {name} | {case} | {h['errors'][:1]} | | | {lex['p50']} / {lex['p95']} ms |")
                continue
            print(f"| {name} | {case} | {h['http_ms']['p50']} ms | {h['http_ms']['p95']} ms "
                  f"| {h['server_total_ms']['p95']} ms | {lex['p50']} / {lex['p95']} ms |")
    print("\n| layout | case | iterative scan | ef_search | recall@10 | p50 / p95 | plan |")
    print("|---|---|---|---|---|---|---|")
    for name, r in layouts.items():
        for case, v in r["vector_recall"].items():
            print(f"| {name} | {case} | exact | - | 1 | {v['exact_ms']['p50']} / {v['exact_ms']['p95']} ms "
                  f"| {v['exact_plan']} |")
            for row in v["index"]:
                print(f"| {name} | {case} | {row['iterative_scan']} | {row['ef_search']} "
                      f"| {row['recall_at_10']} "
                      f"| {row['ms']['p50']} / {row['ms']['p95']} ms | {row['plan']} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--spaces", type=int, default=1000, help="spaces of the spread layout")
    parser.add_argument("--layouts", nargs="+", choices=LAYOUTS, default=list(LAYOUTS))
    parser.add_argument("--layout", choices=LAYOUTS, help=argparse.SUPPRESS)  # one layout, in-process
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=int, default=200, help="HTTP recalls per case")
    parser.add_argument("--recall-queries", type=int, default=60,
                        help="queries for recall@10 (exact search is slow)")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    if args.layout:
        run_layout(args)
        return
    # Each layout in its own data folder and process (Django's settings fix the folder at start-up).
    base = Path(os.environ.get("SAM_BENCH_VAR_DIR") or ROOT / "var" / "bench-scale")
    def command(layout: str) -> list[str]:
        return [sys.executable, __file__, "--layout", layout, "--size", str(args.size), "--spaces",
                str(args.spaces), "--queries", str(args.queries), "--recall-queries",
                str(args.recall_queries), "--out", args.out]

    def env(layout: str) -> dict[str, str]:
        return {**os.environ, "SAM_BENCH_VAR_DIR": str(base / layout)}

    # The layouts build at once (the load is one Python process each: two use both cores),
    # then are measured one after the other on an otherwise idle machine.
    builds = [subprocess.Popen([*command(layout), "--build-only"], env=env(layout))
              for layout in args.layouts]
    if any(build.wait() for build in builds):
        raise SystemExit("a build failed")
    for layout in args.layouts:
        subprocess.run(command(layout), check=True, env=env(layout))
    print_tables(Path(args.out))


if __name__ == "__main__":
    main()
