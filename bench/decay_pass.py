"""The nightly decay pass over 100,000 memories, and recall while it runs.

Uses the 100k space of bench/recall_speed.py (built once in var/bench, real vectors, sealed
rows, an HNSW index). Each pass starts from a day of decay owed by every memory. Measured:

- the pass alone (memories.lifecycle.maintenance.decay_pass), several times;
- recall through the HTTP API (gunicorn, 1 worker, 2 threads, the result cache off, a new
  query text each time) with no pass running, then while passes run back to back;
- that the pass rewrote no memory row (the rows that carry the vectors): the table's update
  counter before and after, and how many stats updates were HOT.

    .venv/bin/python bench/decay_pass.py [--passes 5] [--queries 150]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from datetime import timedelta

import httpx
from benchenv import ROOT
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from recall_speed import existing_space, pct, queries, start_server

from governance.access import SYSTEM
from governance.services import api_token_issue, membership_grant
from memories.lifecycle import maintenance

RESULTS = ROOT / "bench" / "results" / "decay_pass.json"
SIZE = 100_000
PORT = 8765


def owe_a_day(space_id: int) -> None:
    """Every memory of the space last decayed a day ago, a third of them recently accessed."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories_memorystats s SET confidence = 0.75, decayed_at = now() - interval '1 day', "
            "last_accessed_at = CASE WHEN hashtext(s.memory_id) %% 3 = 0 THEN now() ELSE NULL END "
            "FROM memories_memory m WHERE m.id = s.memory_id AND m.space_id = %s", [space_id])
        cursor.execute("VACUUM ANALYZE memories_memorystats")


def table_counters() -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
                       "WHERE relname IN ('memories_memory', 'memories_memorystats')")
        return {f"{name}.{kind}": value for name, upd, hot in cursor.fetchall()
                for kind, value in (("updated", upd), ("hot", hot))}


def recall_latencies(token: str, requests: list[dict], stop: threading.Event | None = None) -> list[float]:
    client = httpx.Client(base_url=f"http://127.0.0.1:{PORT}", timeout=60,
                          headers={"Authorization": f"Bearer {token}"})
    body = {"spaces": [f"speed-{SIZE}"], "k": 5, "track": False}
    latencies = []
    for request in requests:
        if stop is not None and stop.is_set():
            break
        start = time.perf_counter()
        client.post("/api/v1/recall/", json={**body, **request}).raise_for_status()
        latencies.append((time.perf_counter() - start) * 1000)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--queries", type=int, default=150)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    space = existing_space(SIZE)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    membership_grant(actor=SYSTEM, space=space, role="viewer", user=user)
    token = api_token_issue(user=user, name="decay bench")[1]
    asked = queries(args.queries * 3)

    passes = []
    updates: dict[str, int] = {}
    for _ in range(args.passes):
        owe_a_day(space.id)
        before = table_counters()
        passes.append(maintenance.decay_pass(space_ids=[space.id]))
        for key, value in table_counters().items():
            updates[key] = updates.get(key, 0) + value - before.get(key, 0)

    server = start_server()
    try:
        recall_latencies(token, [{"query": "warm up " + q["query"]} for q in asked[:20]])
        quiet = recall_latencies(token, asked[:args.queries])
        owe_a_day(space.id)
        stop = threading.Event()
        during: list[float] = []
        worker = threading.Thread(target=lambda: during.extend(
            recall_latencies(token, asked[args.queries:], stop)))
        worker.start()
        timed = []
        for n in range(args.passes):
            timed.append(maintenance.decay_pass(space_ids=[space.id],
                                                now=timezone.now() + timedelta(days=n + 1)).seconds)
        stop.set()
        worker.join()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    result = {
        "memories": passes[0].memories, "batch": maintenance.BATCH,
        "pass_seconds": [p.seconds for p in passes],
        "pass_seconds_under_recall_load": timed,
        "mean_confidence": {"before": passes[0].mean_before, "after_one_day": passes[0].mean_after},
        "recall_quiet_ms": {"p50": pct(quiet, 50), "p95": pct(quiet, 95), "n": len(quiet)},
        "recall_during_passes_ms": {"p50": pct(during, 50), "p95": pct(during, 95), "n": len(during)},
        "table_updates_by_the_passes": updates,
        "server": "gunicorn, 1 worker, 2 threads", "cpus": os.cpu_count(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
