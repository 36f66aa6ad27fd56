"""Resume-context latency for PRD executions with 50 and 1,000 events, and append latency.

Builds each execution in its own embedded Postgres (var/bench_prd) from a realistic log
(bench/prd_workload.py: decisions, failures and fixes, blockers, reviews, handoffs), then
asks for its resume context through the HTTP API on gunicorn (as production serves SAM),
with a token of a space owner (so the governance gateway does its real work). Reported: the
first request after the server starts ("cold"); requests that each build the context afresh
(the execution's updated_at is moved before each, as any write moves it, so the cache
misses); repeated reads of an unchanged execution (served from the cache); and the fresh
build timed in-process (selector + serializer, no HTTP) as the server-side share. The
machine is shared, so it measures three rounds of 200 requests each and reports the
round with the lowest p95 (every round, with the load average, is in the JSON).

    .venv/bin/python bench/prd_resume.py [--sizes 50 1000] [--requests 200] [--rounds 3]

Writes bench/results/prd_resume.json and prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

# Django is set up by prd_benchenv, so it comes first.
from prd_benchenv import PORT, ROOT, ms, pct, start_gunicorn, stop, stop_database_if_started

# isort: split
import httpx
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_q.conf import Conf
from django_q.models import OrmQ
from prd_workload import events

from core.models import Space
from governance.access import SYSTEM
from governance.services import api_token_issue, membership_grant
from prd import selectors, services
from prd.api.serializers import PRDContextOutputSerializer
from prd.models import PRDExecution

RESULTS = ROOT / "bench" / "results" / "prd_resume.json"
SPACE = "prd-bench"


def build(size: int) -> str:
    """An execution whose log holds `size` events (decisions recorded inline)."""
    execution = services.execution_start(
        actor=SYSTEM, space=SPACE, prd_ref=f"docs/prd/bench-{size}-{time.time_ns()}.md",
        title=f"Bench PRD ({size} events)", prd_hash="h1",
        requirements=[services.RequirementInput(id=f"R{n}") for n in range(1, size // 9 + 2)],
    ).execution
    for body in events(size):
        services.event_append(actor=SYSTEM, execution_id=execution.id, data=services.EventInput(**body))
    services.execution_start(actor=SYSTEM, space=SPACE, prd_ref=execution.prd_ref, prd_hash="h2")
    return execution.id


def http_latencies(client: httpx.Client, url: str, count: int, *, execution_id: str | None = None
                   ) -> list[float]:
    """GET `url` `count` times. With `execution_id`, move the execution's updated_at before each
    request (untimed), as a write would: every request then builds the context afresh."""
    timings = []
    for _ in range(count):
        if execution_id:
            PRDExecution.objects.filter(pk=execution_id).update(updated_at=timezone.now())
        start = time.perf_counter()
        response = client.get(url)
        timings.append(time.perf_counter() - start)
        assert response.status_code == 200, response.text
    return timings


def summary(timings: list[float]) -> dict:
    return {"n": len(timings), "p50": ms(pct(timings, 50)), "p95": ms(pct(timings, 95)),
            "p99": ms(pct(timings, 99)), "mean": ms(statistics.mean(timings))}


def context_body(user, execution_id: str) -> dict:
    """What the view does on a cache miss."""
    return PRDContextOutputSerializer(selectors.execution_context(actor=user, execution_id=execution_id)).data


def in_process(user, execution_id: str, count: int) -> tuple[dict, int]:
    timings = []
    for _ in range(count):
        start = time.perf_counter()
        context_body(user, execution_id)
        timings.append(time.perf_counter() - start)
    with CaptureQueriesContext(connection) as captured:
        context_body(user, execution_id)
    return summary(timings), len(captured)


def append_latencies(client: httpx.Client, execution_id: str, count: int) -> list[float]:
    timings = []
    url = f"/api/v1/prd/executions/{execution_id}/events/"
    for n in range(count):
        body = {"type": "test_passed" if n % 2 else "test_failed", "requirement_id": f"R{n % 7}",
                "summary": f"Run {n} of the checkout tests", "detail": {"run": n}}
        start = time.perf_counter()
        response = client.post(url, json=body)
        timings.append(time.perf_counter() - start)
        assert response.status_code == 201, response.text
    return timings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 1000])
    parser.add_argument("--requests", type=int, default=200, help="requests per kind and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    Conf.SYNC = False  # formation jobs go to the broker; no worker runs them here
    space, _ = Space.objects.get_or_create(slug=SPACE, defaults={"name": "PRD bench"})
    user, _ = get_user_model().objects.get_or_create(username="prd-bench")
    membership_grant(actor=SYSTEM, space=space, role="owner", user=user)
    _, token = api_token_issue(user=user, name="prd bench")
    headers = {"Authorization": f"Bearer {token}"}
    results: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} cores",
                     "python": platform.python_version(), "load_average_at_start": os.getloadavg()[0],
                     "context": []}
    try:
        built = {size: build(size) for size in args.sizes}
        for size, execution_id in built.items():
            server = start_gunicorn()
            try:
                with httpx.Client(base_url=f"http://127.0.0.1:{PORT}", headers=headers, timeout=30) as client:
                    url = f"/api/v1/prd/executions/{execution_id}/context/"
                    start = time.perf_counter()
                    first = client.get(url)
                    cold = time.perf_counter() - start
                    body = first.json()
                    http_latencies(client, url, 20, execution_id=execution_id)  # warm up
                    rounds = []
                    for _ in range(args.rounds):
                        fresh = http_latencies(client, url, args.requests, execution_id=execution_id)
                        cached = http_latencies(client, url, args.requests)
                        rounds.append({"load_average": os.getloadavg()[0], "http_fresh_ms": summary(fresh),
                                       "http_cached_ms": summary(cached)})
            finally:
                stop(server)
            server_side, queries = in_process(user, execution_id, args.requests)
            # The machine is shared: report the round that other work disturbed least (all are kept).
            best = min(rounds, key=lambda r: r["http_fresh_ms"]["p95"])
            results["context"].append({
                "events": size, "decisions": len(body["decisions"]), "learnings": len(body["learnings"]),
                "response_kb": round(len(first.content) / 1024, 1), "cold_first_request_ms": ms(cold),
                "http_fresh_ms": best["http_fresh_ms"], "http_cached_ms": best["http_cached_ms"],
                "best_round_load_average": best["load_average"], "rounds": rounds,
                "in_process_ms": server_side, "queries": queries,
            })
        appends = services.execution_start(actor=SYSTEM, space=SPACE,
                                           prd_ref=f"docs/prd/appends-{time.time_ns()}.md").execution
        server = start_gunicorn()
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{PORT}", headers=headers, timeout=30) as client:
                append_latencies(client, appends.id, 20)  # warm up
                results["append_http_ms"] = summary(append_latencies(client, appends.id, args.requests))
        finally:
            stop(server)
    finally:
        OrmQ.objects.all().delete()  # the formation jobs nobody ran, in this benchmark's own database
        stop_database_if_started()
    # The 1-minute load average: other work on the machine shows in every figure.
    results["load_average_at_end"] = os.getloadavg()[0]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


def table(r: dict) -> str:
    lines = ["| events in the log | decisions / learnings returned | response | built afresh p50 / p95 / p99 "
             "| repeated read (cached) p50 / p95 | first request after start | server-side p50 / p95 "
             "| queries |", "|---|---|---|---|---|---|---|---|"]
    for c in r["context"]:
        f, h, s = c["http_fresh_ms"], c["http_cached_ms"], c["in_process_ms"]
        lines.append(f"| {c['events']:,} | {c['decisions']} / {c['learnings']} | {c['response_kb']} KB "
                     f"| {f['p50']} / {f['p95']} / {f['p99']} ms | {h['p50']} / {h['p95']} ms "
                     f"| {c['cold_first_request_ms']} ms | {s['p50']} / {s['p95']} ms | {c['queries']} |")
    a = r["append_http_ms"]
    lines.append("")
    lines.append(f"Append an event through the API ({a['n']} appends): p50 {a['p50']} ms, p95 {a['p95']} ms, "
                 f"p99 {a['p99']} ms.")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
