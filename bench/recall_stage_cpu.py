"""Where a recall's CPU goes, stage by stage: the web side and its Postgres backend apart.

Runs recalls in process, through Django's test client (middleware, token check, DRF and the
audit row included), on the 100k space `bench/recall_speed.py` builds, every query text new,
one BLAS thread as a web process has. Around each pipeline stage it reads the run time of
the request's thread and of its Postgres backend from /proc (`schedstat`, nanoseconds), so
each stage's CPU is split into what Python did and what Postgres did for it. The web side
reads higher in process than under gunicorn; the Postgres column and the shares are the
figures to read.

    .venv/bin/python bench/recall_stage_cpu.py [--queries 300] [--passes 2]
                                               [--out bench/results/recall_stage_cpu.json]
"""

from __future__ import annotations

import argparse
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["SAM_RECALL_CACHE_SECONDS"] = "0"

from benchenv import ROOT
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from threadpoolctl import threadpool_limits

from governance.services import api_token_issue
from retrieval import pipeline

RESULTS = ROOT / "bench" / "results" / "recall_stage_cpu.json"
QUERIES = ROOT / "bench" / "recall_corpus" / "queries.jsonl"
SPACE = "speed-100000"


def thread_ns() -> int:
    return int(Path(f"/proc/self/task/{threading.get_native_id()}/schedstat").read_text().split()[0])


def process_ns(pid: int) -> int:
    if not pid:  # the backend is not known yet (warming up)
        return 0
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


class StageClock:
    """Wraps pipeline._Timer.stage to add each stage's web and Postgres run time."""

    def __init__(self) -> None:
        self.backend = 0
        self.totals: dict[str, list[int]] = {}
        self._original = pipeline._Timer.stage

    def install(self) -> None:
        clock = self

        def stage(timer: Any, name: str, func: Callable[[], Any]) -> Any:
            web, postgres = thread_ns(), process_ns(clock.backend)
            try:
                return clock._original(timer, name, func)
            finally:
                spent = clock.totals.setdefault(name, [0, 0])
                spent[0] += thread_ns() - web
                spent[1] += process_ns(clock.backend) - postgres

        pipeline._Timer.stage = stage  # type: ignore[method-assign]


def recall_body(rows: list[dict], n: int) -> dict:
    row = rows[n % len(rows)]
    return {"spaces": [SPACE], "k": 5, "track": False, "query": f"{row['query']} (stage {n})",
            "active_task": row.get("active_task", "")}


def one_pass(client: Client, clock: StageClock, rows: list[dict], start: int, count: int) -> dict:
    clock.totals.clear()
    web, postgres = thread_ns(), process_ns(clock.backend)
    for n in range(start, start + count):
        response = client.post("/api/v1/recall/", recall_body(rows, n), content_type="application/json")
        if response.status_code != 200:
            raise RuntimeError(f"recall answered {response.status_code}: {response.content[:200]!r}")
    ms = 1e6 * count
    return {
        "requests": count,
        "whole_request_ms": {"web": round((thread_ns() - web) / ms, 2),
                             "postgres": round((process_ns(clock.backend) - postgres) / ms, 2)},
        "stages_ms": {name: {"web": round(w / ms, 2), "postgres": round(p / ms, 2)}
                      for name, (w, p) in sorted(clock.totals.items(), key=lambda kv: -sum(kv[1]))},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=300, help="recalls per pass")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    threadpool_limits(1)
    user = get_user_model().objects.get(username="bench")  # made by bench/recall_speed.py
    _, token = api_token_issue(user=user, name="stage cpu bench")
    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}")
    rows = [json.loads(line) for line in QUERIES.read_text().splitlines() if line]
    clock = StageClock()
    clock.install()
    for n in range(30):  # warm up: the model, the data keys, the rights kept
        client.post("/api/v1/recall/", recall_body(rows, n), content_type="application/json")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        clock.backend = cursor.fetchone()[0]
    passes = [one_pass(client, clock, rows, 1000 + i * args.queries, args.queries)
              for i in range(args.passes)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": f"{os.cpu_count()} cores", "passes": passes}, indent=2) + "\n")
    print("| stage | web CPU ms | Postgres CPU ms |")
    print("|---|---|---|")
    for name in passes[0]["stages_ms"]:
        web = " / ".join(str(p["stages_ms"].get(name, {}).get("web", 0)) for p in passes)
        postgres = " / ".join(str(p["stages_ms"].get(name, {}).get("postgres", 0)) for p in passes)
        print(f"| {name} | {web} | {postgres} |")
    web = " / ".join(str(p["whole_request_ms"]["web"]) for p in passes)
    postgres = " / ".join(str(p["whole_request_ms"]["postgres"]) for p in passes)
    print(f"| whole request | {web} | {postgres} |")


if __name__ == "__main__":
    main()
