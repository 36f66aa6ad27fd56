"""The full PRD lifecycle with a real django-q2 worker: create -> 50 events -> complete -> compacted.

Everything goes through the HTTP API on gunicorn (as production serves SAM); a real
`manage.py qcluster` runs formation and compaction, as `make run` does. The clock stops
when compaction has written the summary and every memory the log forms exists. Each run
is a new execution; one warm-up run (the worker loads the embedding model) is not counted.
Run with the broker's default poll interval and a short one, since with the ORM broker
the poll is the floor of any job's start.

    .venv/bin/python bench/prd_lifecycle.py [--runs 10] [--polls 0.5 0.1]

Writes bench/results/prd_lifecycle.json and prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

# Django is set up by prd_benchenv, so it comes first.
from prd_benchenv import (
    PORT,
    ROOT,
    ms,
    pct,
    start_gunicorn,
    start_worker,
    stop,
    stop_database_if_started,
)

# isort: split
import httpx
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import F
from prd_workload import closing, events

from core.models import Space
from governance.access import SYSTEM
from governance.services import api_token_issue, membership_grant
from prd.models import FormedMemory, PRDExecution

RESULTS = ROOT / "bench" / "results" / "prd_lifecycle.json"
SPACE = "prd-lifecycle"
EVENTS = 50


def log_of(total: int) -> list[dict]:
    """A log of exactly `total` events that leaves nothing open (so it may complete)."""
    for count in range(total, 0, -1):
        bodies = list(events(count))
        tail = closing(bodies)
        if count + len(tail) == total:
            return bodies + tail
    raise ValueError(total)


def lifecycle(client: httpx.Client, n: int) -> dict[str, float]:
    start = time.perf_counter()
    created = client.post("/api/v1/prd/executions/", json={
        "space": SPACE, "prd_ref": f"docs/prd/lifecycle-{time.time_ns()}-{n}.md", "title": f"Lifecycle {n}"})
    assert created.status_code == 201, created.text
    execution_id = created.json()["execution"]["id"]
    for body in log_of(EVENTS):
        response = client.post(f"/api/v1/prd/executions/{execution_id}/events/", json=body)
        assert response.status_code == 201, response.text
    logged = time.perf_counter()
    done = client.post(f"/api/v1/prd/executions/{execution_id}/status/", json={"status": "completed"})
    assert done.status_code == 200, done.text
    completed = time.perf_counter()
    compacted = PRDExecution.objects.filter(pk=execution_id, compacted_at__isnull=False,
                                            formed_through=F("formable_through"))
    while not compacted.exists():
        if time.perf_counter() - completed > 60:
            raise RuntimeError("compaction did not finish within 60 s; is the worker running?")
        time.sleep(0.01)
    finished = time.perf_counter()
    return {"total": finished - start, "create_and_log": logged - start, "complete_call": completed - logged,
            "compaction_wait": finished - completed,
            "memories": FormedMemory.objects.filter(execution_id=execution_id).count()}


def measure(headers: dict, runs: int, poll: float) -> dict:
    worker = start_worker(SAM_Q_POLL_SECONDS=str(poll))
    server = start_gunicorn()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{PORT}", headers=headers, timeout=30) as client:
            lifecycle(client, 0)  # warm-up: worker start, model load
            measured = [lifecycle(client, n) for n in range(1, runs + 1)]
    finally:
        stop(server)
        stop(worker)

    def stats(key: str) -> dict:
        values = [m[key] for m in measured]
        return {"min": ms(min(values)), "p50": ms(pct(values, 50)), "p95": ms(pct(values, 95)),
                "mean": ms(statistics.mean(values))}

    return {"poll_seconds": poll, "runs": runs, "events": EVENTS, "total_ms": stats("total"),
            "create_and_log_ms": stats("create_and_log"), "complete_call_ms": stats("complete_call"),
            "compaction_wait_ms": stats("compaction_wait"), "memories_formed": measured[0]["memories"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--polls", type=float, nargs="+", default=[0.5, 0.1])
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    space, _ = Space.objects.get_or_create(slug=SPACE, defaults={"name": "PRD lifecycle bench"})
    user, _ = get_user_model().objects.get_or_create(username="prd-lifecycle")
    membership_grant(actor=SYSTEM, space=space, role="owner", user=user)
    _, token = api_token_issue(user=user, name="prd lifecycle bench")
    headers = {"Authorization": f"Bearer {token}"}
    try:
        results = {"machine": f"{platform.machine()}, {os.cpu_count()} cores",
                   "python": platform.python_version(), "workers": os.environ.get("SAM_Q_WORKERS", "2"),
                   "load_average_at_start": os.getloadavg()[0],
                   "results": [measure(headers, args.runs, poll) for poll in args.polls]}
        # The 1-minute load average: other work on the machine shows in every figure.
        results["load_average_at_end"] = os.getloadavg()[0]
    finally:
        stop_database_if_started()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


def table(r: dict) -> str:
    lines = ["| broker poll | total min / p50 / p95 | create + 50 events p50 | complete call p50 "
             "| wait for compaction min / p50 / p95 | memories formed |", "|---|---|---|---|---|---|"]
    for m in r["results"]:
        t, w = m["total_ms"], m["compaction_wait_ms"]
        logged, call = m["create_and_log_ms"]["p50"], m["complete_call_ms"]["p50"]
        lines.append(f"| {m['poll_seconds']} s | {t['min']} / {t['p50']} / {t['p95']} ms | {logged} ms "
                     f"| {call} ms | {w['min']} / {w['p50']} / {w['p95']} ms | {m['memories_formed']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
