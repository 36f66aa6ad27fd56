"""Mixed read/write load: several clients at once against gunicorn (the shipped config,
samsite/gunicorn_conf.py, 2 workers) and a real django-q2 cluster embedding the writes.

Each client loops for a fixed time over recall, context packs, list, create and edit in
an agent-like ratio (mostly reads). Two phases run back to back on the same data so they
are comparable: "default", the web processes keep numpy's default BLAS pool (one thread
per core), and "sized", the shipped default (SAM_WEB_BLAS_THREADS unset: the cores shared
out among the web workers). Only loopback addresses are loaded.

Run from the repository root (its own embedded Postgres under var/bench):

    .venv/bin/python bench/mixed_load.py [--seconds 60] [--clients 4] [--phases default sized]
                                         [--out bench/results/mixed_load.json]

Writes bench/results/mixed_load.json (or --out) and prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from benchenv import ROOT
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test.utils import setup_test_environment
from django_q.conf import Conf
from rest_framework.test import APIClient

from core.models import Space
from governance.access import SYSTEM
from governance.services import api_token_issue, membership_grant
from memories.models import Memory

CORPUS = ROOT / "bench" / "recall_corpus"
RESULTS = ROOT / "bench" / "results" / "mixed_load.json"
PORT = 8767
SLUG = "mixed-load"
WEB_WORKERS = 2
# Per 100 requests: agents recall far more than they write; people list and edit.
MIX = {"recall": 45, "context_pack": 10, "list": 25, "create": 10, "edit": 10}
SERVICES = ["billing", "search", "auth", "orders", "media", "reports", "notify", "catalog"]


def corpus(name: str) -> list[dict]:
    return [json.loads(line) for line in (CORPUS / name).read_text().splitlines() if line]


def seed() -> tuple[str, list[str]]:
    """One space with the recall corpus, embedded; returns an API token and the memory ids."""
    space, created = Space.objects.get_or_create(slug=SLUG, defaults={"name": "mixed load"})
    user, _ = get_user_model().objects.get_or_create(username="mixed-load")
    if created:
        membership_grant(actor=SYSTEM, space=space, role="owner", user=user)
    _, raw = api_token_issue(user=user, name=f"mixed-load-{int(time.time())}")
    if not Memory.objects.filter(space=space).exists():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        Conf.SYNC = True  # embed inline now, so nothing is left queued for the measured phases
        rows = corpus("memories.jsonl")
        for start in range(0, len(rows), 200):
            items = [{"space": SLUG, "title": r["title"], "content": r["content"], "tags": r["tags"]}
                     for r in rows[start:start + 200]]
            response = client.post("/api/v1/memories/bulk/", {"items": items}, format="json")
            assert response.status_code in (200, 201), response.content[:500]
        Conf.SYNC = False
    ids = list(Memory.objects.filter(space=space).order_by("id").values_list("id", flat=True))
    return raw, ids


def default_blas_threads() -> int:
    """numpy's own pool size on this machine (what a web process had before sizing)."""
    out = subprocess.run(
        [sys.executable, "-c", "import numpy, threadpoolctl; print(max(p['num_threads'] for p in "
         "threadpoolctl.threadpool_info() if p['user_api'] == 'blas'))"],
        capture_output=True, text=True, check=True, env={k: v for k, v in os.environ.items()
                                                         if not k.endswith("_NUM_THREADS")})
    return int(out.stdout.strip())


def start(command: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(command, cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)  # the main process stops its own workers
        try:
            process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class LoadClient(threading.Thread):
    """One agent: picks operations at random in the MIX ratio until the deadline."""

    def __init__(self, n: int, token: str, queries: list[dict], edit_targets: list[tuple[str, int]],
                 deadline: float) -> None:
        super().__init__(daemon=True)
        self.n, self.queries, self.deadline = n, queries, deadline
        self.rng = random.Random(n)
        self.versions = dict(edit_targets)  # disjoint per client: edits never conflict
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{PORT}", timeout=30,
                                 headers={"Authorization": f"Bearer {token}"})
        self.latencies: dict[str, list[float]] = {op: [] for op in MIX}
        self.errors: dict[str, int] = {op: 0 for op in MIX}
        self.counter = 0

    def query(self) -> str:
        self.counter += 1
        row = self.queries[self.rng.randrange(len(self.queries))]
        # A distinct text per request: no query-embedding cache hits.
        return f"{row['query']} ({SERVICES[self.counter % len(SERVICES)]} {self.n}-{self.counter})"

    def request(self, op: str) -> httpx.Response:
        if op == "recall":
            return self.http.post("/api/v1/recall/", json={"spaces": [SLUG], "k": 5, "query": self.query()})
        if op == "context_pack":
            return self.http.post("/api/v1/context-packs/", json={"spaces": [SLUG], "query": self.query(),
                                                                  "token_budget": 800})
        if op == "list":
            return self.http.get("/api/v1/memories/", params={"space": SLUG, "page": self.rng.randint(1, 5)})
        if op == "create":
            self.counter += 1
            return self.http.post("/api/v1/memories/", json={
                "space": SLUG, "title": f"Load note {self.n}-{self.counter}",
                "content": f"Client {self.n} observed that {self.query()} needs a retry budget of "
                           f"{self.rng.randint(1, 9)} attempts before paging the on-call engineer."})
        memory_id = self.rng.choice(sorted(self.versions))
        self.counter += 1
        response = self.http.patch(f"/api/v1/memories/{memory_id}/", json={
            "version": self.versions[memory_id],
            "content": f"Reviewed under load, pass {self.counter}: keep the documented helper."})
        if response.status_code == 200:
            self.versions[memory_id] = response.json()["memory"]["version"]
        return response

    def run(self) -> None:
        ops, weights = list(MIX), list(MIX.values())
        while time.monotonic() < self.deadline:
            op = self.rng.choices(ops, weights)[0]
            began = time.perf_counter()
            try:
                ok = self.request(op).status_code < 300
            except httpx.HTTPError:
                ok = False
            if ok:
                self.latencies[op].append((time.perf_counter() - began) * 1000)
            else:
                self.errors[op] += 1
        self.http.close()


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))], 1)


def wait_until_up(server: subprocess.Popen, token: str) -> None:
    for _ in range(120):
        if server.poll() is not None:
            raise SystemExit("gunicorn exited during start-up")
        try:
            if httpx.get(f"http://127.0.0.1:{PORT}/api/v1/memories/", timeout=2,
                         headers={"Authorization": f"Bearer {token}"}).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("gunicorn did not answer")


def run_phase(name: str, blas_env: dict[str, str], *, token: str, ids: list[str], seconds: int,
              clients: int, queries: list[dict]) -> dict:
    load_before = os.getloadavg()
    env = {"SAM_PORT": str(PORT), "SAM_WEB_WORKERS": str(WEB_WORKERS), "SAM_WEB_ACCESS_LOG": "",
           "SAM_RECALL_CACHE_SECONDS": "0", "SAM_DEBUG": "0", **blas_env}
    server = start([str(Path(sys.executable).with_name("gunicorn")), "-c", "samsite/gunicorn_conf.py",
                    "samsite.wsgi", "--log-level", "warning"], env)
    cluster = start([sys.executable, "manage.py", "qcluster"],
                    {"SAM_Q_WORKERS": "2", "SAM_Q_POLL_SECONDS": "0.2"})
    try:
        wait_until_up(server, token)
        # Load the model in every web worker before measuring (the first recall of each).
        warm = httpx.Client(base_url=f"http://127.0.0.1:{PORT}", timeout=60,
                            headers={"Authorization": f"Bearer {token}"})
        for n in range(8):
            warm.post("/api/v1/recall/", json={"spaces": [SLUG], "query": f"warm up {n}"})
        warm.close()
        time.sleep(3)
        versions = dict(Memory.objects.filter(id__in=ids).values_list("id", "version"))
        deadline = time.monotonic() + seconds
        workers = [LoadClient(n, token, queries, [(i, versions[i]) for i in ids[n * 10:(n + 1) * 10]],
                              deadline) for n in range(clients)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        load_after = os.getloadavg()
    finally:
        stop(server)
        stop(cluster)
    per_op = {}
    for op in MIX:
        values = [v for w in workers for v in w.latencies[op]]
        per_op[op] = {"n": len(values), "errors": sum(w.errors[op] for w in workers),
                      "p50": pct(values, 50), "p95": pct(values, 95), "p99": pct(values, 99)}
    done = sum(o["n"] for o in per_op.values())
    sized = str(max(1, (os.cpu_count() or 1) // WEB_WORKERS))
    return {"phase": name, "web_blas_threads": int(blas_env.get("SAM_WEB_BLAS_THREADS", sized)),
            "seconds": seconds, "clients": clients, "requests": done,
            "throughput_rps": round(done / seconds, 1),
            "errors": sum(o["errors"] for o in per_op.values()),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in load_after], "ms": per_op}


def table(results: dict) -> str:
    lines = ["| phase | web BLAS threads | load avg (1 min) before | req/s | errors | "
             + " | ".join(f"{op} p50/p95/p99 ms" for op in MIX) + " |",
             "|" + "---|" * (5 + len(MIX))]
    for phase in results["phases"]:
        cells = [f"{o['p50']}/{o['p95']}/{o['p99']}" for o in phase["ms"].values()]
        lines.append(f"| {phase['phase']} | {phase['web_blas_threads']} | {phase['loadavg_before'][0]} | "
                     f"{phase['throughput_rps']} | {phase['errors']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--phases", nargs="+", default=["default", "sized"], choices=["default", "sized"])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    setup_test_environment()
    call_command("migrate", verbosity=0)
    token, ids = seed()
    assert len(ids) >= args.clients * 10
    queries = corpus("queries.jsonl")
    default_threads = default_blas_threads()
    settings_for = {"default": {"SAM_WEB_BLAS_THREADS": str(default_threads)}, "sized": {}}
    results: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} cores",
                     "python": platform.python_version(), "web_workers": WEB_WORKERS,
                     "web_threads_per_worker": 2, "q_workers": 2, "memories": len(ids), "mix": MIX,
                     "numpy_default_blas_threads": default_threads, "phases": []}
    for name in args.phases:
        results["phases"].append(run_phase(name, settings_for[name], token=token, ids=ids,
                                           seconds=args.seconds, clients=args.clients, queries=queries))
        print(json.dumps(results["phases"][-1]), file=sys.stderr)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
