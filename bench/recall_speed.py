"""Recall latency through the HTTP API at 1k, 10k and 100k memories in one space.

Builds the spaces once in its own embedded Postgres (var/bench): texts are variants of the
labelled corpus (bench/recall_corpus), vectors are the real model's vectors of the base
texts blended and jittered, so neighbourhoods look like a real store's. For each size it
starts a fresh gunicorn (as production runs SAM; Django's runserver adds ~45 ms a request
on small responses) on 127.0.0.1 and sends queries it has not seen, so every request embeds
its query (no embedding cache hits), with the recall result cache off.

    .venv/bin/python bench/recall_speed.py [--sizes 1000 10000 100000] [--queries 200] [--track]
                                           [--out bench/results/recall_speed_tracked.json]

A long memory gets its window vectors as the embedding job gives them
(memories.embeddings.passages), each near its memory's vector.

Writes bench/results/recall_speed.json (or --out) and prints a Markdown table. Without
--track every recall still writes its audit row; --track adds the sealed recall event and
the access counters, as agents' recalls do.
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
import time
from pathlib import Path

import httpx
import numpy as np
from benchenv import ROOT
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from load_mix import postmaster_pid, tree_cpu_seconds

from core.models import Space
from governance.access import SYSTEM
from governance.crypto import cipher, datakeys
from governance.services import api_token_issue, membership_grant
from memories import entry
from memories.embeddings import passages
from memories.embeddings.registry import get_provider
from memories.models import Memory
from memories.search_index import write_index
from retrieval.channels import vector_literal
from retrieval.tasks import lexeme_stats_refresh

CORPUS = ROOT / "bench" / "recall_corpus"
RESULTS = ROOT / "bench" / "results" / "recall_speed.json"
PORT = 8765
SERVICES = [f"{a}-{b}" for a in ("billing", "search", "auth", "orders", "media", "reports", "notify",
                                 "catalog", "payments", "profile") for b in ("api", "worker", "web",
                                                                              "etl", "cron", "gateway")]
REGIONS = ("eu-west", "us-east", "ap-south", "eu-central")


def base_texts() -> list[dict]:
    rows = [json.loads(line) for line in (CORPUS / "memories.jsonl").read_text().splitlines() if line]
    return rows


INSERT_SQL = (
    "INSERT INTO memories_memory (id, space_id, title, content, summary, canonical_phrases,"
    " tags, memory_type, kind, priority, reliability, importance, source_type, source_ref,"
    " context_window, decay_policy, metadata, training_examples, phrase_tokens, visibility_rank, archived,"
    " archive_reason, version, content_hash, embedding, embedding_model, embedding_status, embedded_at,"
    " embedding_input_hash, embedding_attempts, embedding_error, created_at, updated_at)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 'normal', 'unverified', 0.5, 'user',"
    " %s, %s,"
    " '{\"type\": \"exponential\", \"half_life_days\": 90, \"min_confidence\": 0.4}',"
    " %s, %s, '{}', 0, false, %s, 1, %s, %s::vector, 'sentence-transformers/all-MiniLM-L6-v2',"
    " 'ready', now(), %s, 1, '', now() - make_interval(days => %s),"
    " now() - make_interval(days => %s))"
)


def _sealed(space_id: int, column: str, value, *, json_value: bool = False) -> bytes:
    seal = cipher.seal_json if json_value else cipher.seal_text
    return seal(space_id, value, context=f"memories_memory.{column}")


def existing_space(size: int) -> Space:
    """Space speed-<size>, built first if this bench store does not have it yet."""
    if not Space.objects.filter(slug=f"speed-{size}").exists():
        bases = base_texts()
        build_space(size, bases, get_provider().embed([entry.embedding_text(b) for b in bases]))
    return Space.objects.get(slug=f"speed-{size}")


def build_space(size: int, bases: list[dict], base_vectors: np.ndarray) -> None:
    """Fill space speed-<size> with sealed rows by raw SQL (the ORM would take minutes).

    Sealed as services seal them: free text under the space's data key, keyed hashes, and
    the keyed search tokens (tsvector and phrase tokens) written by the search module.
    """
    slug = f"speed-{size}"
    if Memory.objects.filter(space__slug=slug).count() == size:
        # Statistics are keyed tokens: refresh them in case the rows were re-sealed or
        # re-keyed (an upgrade, a rotation) since they were counted.
        lexeme_stats_refresh(space_ids=list(Space.objects.filter(slug=slug).values_list("id", flat=True)))
        return
    Space.objects.filter(slug=slug).delete()
    space = Space.objects.create(slug=slug, name=slug)
    key_id = datakeys.active_key_id(space.id)
    rng = np.random.default_rng(size)
    # The windows' jitter from a generator of their own, so the memories are the same as a
    # store built before windows.
    window_rng = np.random.default_rng(size + 1)
    pick = random.Random(size)
    start = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
        cursor.execute("DROP INDEX IF EXISTS passage_embedding_hnsw")
        batch: list[tuple] = []
        windows: list[tuple] = []
        docs: list[tuple[str, int, dict]] = []
        for n in range(size):
            b1, b2 = pick.randrange(len(bases)), pick.randrange(len(bases))
            base = bases[b1]
            vector = 0.85 * base_vectors[b1] + 0.15 * base_vectors[b2] + rng.normal(0, 0.015, 384)
            vector /= np.linalg.norm(vector)
            service, region = pick.choice(SERVICES), pick.choice(REGIONS)
            title = f"{base['title'][:90]} ({service})"
            content = f"{base['content']} Applies to {service} in {region}."
            summary = base["content"][:300]
            phrases = base["canonical_phrases"]
            state = {"title": title, "content": content, "canonical_phrases": phrases}
            memory_id = f"m{size}x{n:06d}"
            batch.append((
                memory_id, space.id, _sealed(space.id, "title", title),
                _sealed(space.id, "content", content), _sealed(space.id, "summary", summary),
                _sealed(space.id, "canonical_phrases", phrases, json_value=True),
                base["tags"], base.get("memory_type", "semantic"), base.get("kind", "fact"),
                _sealed(space.id, "source_ref", "bench"),
                _sealed(space.id, "context_window", {"applies_to": [], "excludes": []}, json_value=True),
                _sealed(space.id, "metadata", {}, json_value=True),
                _sealed(space.id, "training_examples", [], json_value=True),
                _sealed(space.id, "archive_reason", ""),
                datakeys.keyed_digest(space.id, content), vector_literal(vector),
                datakeys.keyed_digest(space.id, entry.embedding_text(state)), pick.randint(0, 400),
            ))
            docs.append((memory_id, key_id, {**state, "summary": summary, "tags": base["tags"]}))
            # As the embedding job stores them: a vector per window of a long memory.
            for position, _ in enumerate(passages.windows(content)):
                near = vector + window_rng.normal(0, 0.03, 384)
                windows.append((memory_id, space.id, position, vector_literal(near / np.linalg.norm(near))))
            if len(batch) == 2000 or n == size - 1:
                cursor.executemany(INSERT_SQL, [(*row, row[-1]) for row in batch])
                cursor.executemany(
                    "INSERT INTO memories_memorypassage (memory_id, space_id, position, embedding) "
                    "VALUES (%s, %s, %s, %s::vector)", windows)
                windows = []
                for offset in range(0, len(docs), 500):
                    write_index(docs[offset:offset + 500])
                batch, docs = [], []
        cursor.execute(
            "INSERT INTO memories_memorystats (memory_id, space_id, confidence, usage_count, access_count, "
            "reinforced_count, check_pending) "
            "SELECT id, space_id, 0.75, 0, 0, 0, false FROM memories_memory WHERE space_id = %s", [space.id])
        print(f"  inserted and indexed {size} rows in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute(
            "CREATE INDEX memory_embedding_hnsw ON memories_memory USING hnsw (embedding vector_cosine_ops)"
            " WITH (m = 16, ef_construction = 64)")
        cursor.execute(
            "CREATE INDEX passage_embedding_hnsw ON memories_memorypassage USING hnsw "
            "(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)")
        print(f"  HNSW built at {time.perf_counter() - start:.1f} s", file=sys.stderr)
        cursor.execute("ANALYZE memories_memory")
        cursor.execute("ANALYZE memories_memorypassage")
        cursor.execute("ANALYZE memories_memorystats")
    lexeme_stats_refresh(space_ids=[space.id])
    print(f"  space {slug} ready in {time.perf_counter() - start:.1f} s", file=sys.stderr)


def queries(count: int) -> list[dict]:
    rows = [json.loads(line) for line in (CORPUS / "queries.jsonl").read_text().splitlines() if line]
    out = []
    for n in range(count):
        row = rows[n % len(rows)]
        # A different trailing word per repeat keeps every text distinct (no embedding cache hits).
        suffix = f" ({SERVICES[n % len(SERVICES)]})" if n >= len(rows) else ""
        out.append({"query": row["query"] + suffix, "active_task": row.get("active_task", "")})
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))], 1)


def measure(size: int, token: str, requests: list[dict], *, server_pid: int, track: bool = False) -> dict:
    client = httpx.Client(base_url=f"http://127.0.0.1:{PORT}", timeout=60,
                          headers={"Authorization": f"Bearer {token}"})
    body = {"spaces": [f"speed-{size}"], "k": 5, "track": track}
    for warm in requests[:20]:
        client.post("/api/v1/recall/", json={**body, "query": "warm up " + warm["query"]})
    latencies, stages = [], []
    # CPU per request of the web process tree and of Postgres (its backends are the
    # postmaster's children): steadier than wall time on a shared machine.
    postgres = postmaster_pid(Path(os.environ["SAM_VAR_DIR"]) / "pgdata")
    cpu_before = (tree_cpu_seconds(server_pid), tree_cpu_seconds(postgres))
    for request in requests:
        start = time.perf_counter()
        response = client.post("/api/v1/recall/", json={**body, **request})
        latencies.append((time.perf_counter() - start) * 1000)
        response.raise_for_status()
        stages.append(response.json()["data"]["timings_ms"])
    cpu_ms = [round((tree_cpu_seconds(pid) - before) * 1000 / len(requests), 2)
              for pid, before in zip((server_pid, postgres), cpu_before, strict=True)]
    total = statistics.mean(s["total"] for s in stages)
    names = sorted({k for s in stages for k in s if k != "total"})
    share = {name: round(statistics.mean(s.get(name, 0) for s in stages) / total * 100, 1) for name in names}
    return {
        "memories": size, "requests": len(requests), "track": track,
        "http_ms": {"p50": pct(latencies, 50), "p95": pct(latencies, 95), "p99": pct(latencies, 99),
                    "mean": round(statistics.mean(latencies), 1)},
        "cpu_ms_per_request": {"web": cpu_ms[0], "postgres": cpu_ms[1], "total": round(sum(cpu_ms), 2)},
        "server_total_ms": {"p50": pct([s["total"] for s in stages], 50),
                            "p95": pct([s["total"] for s in stages], 95)},
        "stage_share_percent": dict(sorted(share.items(), key=lambda kv: -kv[1])),
        "stage_mean_ms": {n: round(statistics.mean(s.get(n, 0) for s in stages), 2) for n in names},
    }


def start_server() -> subprocess.Popen:
    env = {**os.environ, "SAM_RECALL_CACHE_SECONDS": "0", "SAM_DEBUG": "0"}
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "samsite.wsgi", "--workers", "1",
         "--threads", "2", "--bind", f"127.0.0.1:{PORT}", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            httpx.get(f"http://127.0.0.1:{PORT}/api/schema/", timeout=2)
            return server
        except httpx.HTTPError:
            time.sleep(0.3)
    raise RuntimeError("gunicorn did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--track", action="store_true",
                        help="ask recall to track (sealed recall event, access counters) as agents do")
    parser.add_argument("--out", default=str(RESULTS), help="where to write the JSON results")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    bases = base_texts()
    print(f"embedding {len(bases)} base texts", file=sys.stderr)
    base_vectors = get_provider().embed([entry.embedding_text(b) for b in bases])
    for size in args.sizes:
        build_space(size, bases, base_vectors)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    # Recall answers only spaces the caller holds a role in; a viewer is enough.
    for size in args.sizes:
        space = Space.objects.get(slug=f"speed-{size}")
        membership_grant(actor=SYSTEM, space=space, role="viewer", user=user)
    _, token = api_token_issue(user=user, name="speed bench")
    results = []
    for size in args.sizes:
        server = start_server()
        try:
            results.append(measure(size, token, queries(args.queries), server_pid=server.pid,
                                   track=args.track))
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = {"machine": f"{os.cpu_count()} cores", "track": args.track, "results": results}
    out.write_text(json.dumps(summary, indent=2) + "\n")
    print("| memories | HTTP p50 | p95 | p99 | CPU per request (web + Postgres) "
          "| top stages (share of server time) |")
    print("|---|---|---|---|---|---|")
    for r in results:
        top = ", ".join(f"{k} {v}%" for k, v in list(r["stage_share_percent"].items())[:4])
        h = r["http_ms"]
        cpu = r["cpu_ms_per_request"]
        print(f"| {r['memories']:,} | {h['p50']} ms | {h['p95']} ms | {h['p99']} ms | "
              f"{cpu['total']} ms ({cpu['web']} + {cpu['postgres']}) | {top} |")


if __name__ == "__main__":
    main()
