"""Write-path benchmark: single and bulk creates through the REST API, embedding throughput
of the embedding job, and write-to-embedded latency with a real django-q2 worker.

Run from the repository root (it uses its own embedded Postgres under var/bench, so the
development data is untouched):

    .venv/bin/python bench/writes.py

Writes bench/results/writes.json and prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time

from benchenv import ROOT
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test.utils import setup_test_environment
from django_q.conf import Conf
from rest_framework.test import APIClient

from core.models import Space
from governance.access import SYSTEM
from governance.services import api_token_issue, membership_grant
from memories import services
from memories.embeddings import jobs as embedding_jobs
from memories.models import Memory

RESULTS = ROOT / "bench" / "results" / "writes.json"
TOPICS = ["migrations", "caching", "retries", "logging", "feature flags", "pagination", "tokens",
          "indexes", "fixtures", "deploys", "timeouts", "queues"]


def memory_item(n: int, space: str) -> dict:
    topic = TOPICS[n % len(TOPICS)]
    return {
        "space": space,
        "title": f"Rule {n} about {topic}",
        "content": (f"For {topic} in service {n % 17}, prefer the documented helper over ad-hoc code; "
                    f"incident {n} showed that skipping it costs an hour of debugging on call."),
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def ms(value: float) -> float:
    return round(value * 1000, 1)


def main() -> None:
    setup_test_environment()
    call_command("migrate", verbosity=0)
    Conf.SYNC = False  # enqueue into the ORM broker; nothing runs until a worker does
    slug = f"bench-{int(time.time())}"
    space = Space.objects.create(slug=slug, name="bench")
    user, _ = get_user_model().objects.get_or_create(username="bench")
    # Writes answer only spaces the caller holds a role in.
    membership_grant(actor=SYSTEM, space=space, role="owner", user=user)
    _, raw = api_token_issue(user=user, name="bench")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    results: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} cores",
                     "python": platform.python_version()}

    # 1. Single creates through the API (normalise, suggest, validate, 3 inserts, tsvector, enqueue).
    timings = []
    for n in range(200):
        start = time.perf_counter()
        response = client.post("/api/v1/memories/", memory_item(n, slug), format="json")
        timings.append(time.perf_counter() - start)
        assert response.status_code == 201, response.content
    results["single_create_ms"] = {"n": 200, "p50": ms(pct(timings, 50)), "p95": ms(pct(timings, 95)),
                                   "p99": ms(pct(timings, 99))}

    # 2. Searchable by text right after the write returns.
    start = time.perf_counter()
    query = {"text": f"rule 199 {TOPICS[199 % len(TOPICS)]}", "space": slug}
    found = client.get("/api/v1/memories/", query).json()["count"]
    results["text_search_after_write_ms"] = ms(time.perf_counter() - start)
    assert found >= 1

    # 3. Bulk create of 1000 rows in one request.
    items = [memory_item(n, slug) for n in range(1000, 2000)]
    start = time.perf_counter()
    response = client.post("/api/v1/memories/bulk/", {"items": items}, format="json")
    results["bulk_1000_create_s"] = round(time.perf_counter() - start, 2)
    assert response.json()["created"] == 1000

    # 4. Embedding job throughput (model + vector writes), in this process.
    ids = list(Memory.objects.filter(space__slug=slug).values_list("id", flat=True))
    from memories.embeddings.registry import get_provider

    get_provider().embed(["warm up"])
    start = time.perf_counter()
    outcome = embedding_jobs.memories_embed(memory_ids=ids)
    elapsed = time.perf_counter() - start
    results["embedding_job"] = {"memories": len(outcome.embedded), "seconds": round(elapsed, 2),
                                "memories_per_s": round(len(outcome.embedded) / elapsed, 1)}

    # 5. Write-to-embedded with a real worker: create one at a time, wait for "ready".
    db = settings.DATABASES["default"]
    env = {**os.environ, "SAM_Q_WORKERS": "1", "SAM_Q_POLL_SECONDS": "0.2"}
    worker = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "qcluster"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(4)  # cluster start-up and model load happen once, not per write
        warm = services.memory_create(actor=SYSTEM, data=memory_item(5000, slug)).instance
        while Memory.objects.get(pk=warm.pk).embedding_status != "ready":
            time.sleep(0.05)
        latencies = []
        for n in range(30):
            start = time.perf_counter()
            memory = services.memory_create(actor=SYSTEM, data=memory_item(6000 + n, slug)).instance
            while Memory.objects.filter(pk=memory.pk, embedding_status="ready").count() == 0:
                time.sleep(0.02)
            latencies.append(time.perf_counter() - start)
        results["write_to_embedded_ms"] = {"n": 30, "p50": ms(pct(latencies, 50)),
                                           "p95": ms(pct(latencies, 95)),
                                           "mean": ms(statistics.mean(latencies))}
    finally:
        worker.send_signal(signal.SIGTERM)  # the main process stops its own workers
        worker.wait(timeout=30)
    external = os.environ.get("DATABASE_URL")
    results["database"] = db["HOST"] if external else "embedded PostgreSQL 18 + pgvector"

    services_cleanup(slug)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


def services_cleanup(slug: str) -> None:
    Space.objects.filter(slug=slug).delete()


def table(r: dict) -> str:
    single, embedded = r["single_create_ms"], r["write_to_embedded_ms"]
    rows = [
        ("single create via API (200 writes)",
         f"p50 {single['p50']} ms, p95 {single['p95']} ms, p99 {single['p99']} ms"),
        ("text search right after a write", f"{r['text_search_after_write_ms']} ms (found)"),
        ("bulk create, 1000 rows in one request", f"{r['bulk_1000_create_s']} s"),
        ("embedding job, 1,200 memories", f"{r['embedding_job']['memories_per_s']} memories/s"),
        ("write to embedding ready (real worker, 30 writes)",
         f"p50 {embedded['p50']} ms, p95 {embedded['p95']} ms"),
    ]
    lines = ["| measure | result |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
