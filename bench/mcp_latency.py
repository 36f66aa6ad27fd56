"""What an MCP tool call costs over the REST call it wraps: wall time and server CPU per call,
over streamable HTTP and over stdio, with a baseline checkout measured beside this one.

Each checkout (this one, and `--base`, e.g. a worktree of the commit before a change) gets
its own gunicorn (1 worker, 2 threads, as bench/prd_benchenv.py runs it) and its own stdio
server (`manage.py sam_mcp`, started by the SDK's stdio client), all on one database: a
space of 300 embedded memories. Each round makes, for each checkout in turn (the order
alternating from round to round, so drift hits both), a REST recall, the same recall as an
MCP tool through the SDK's client over HTTP and over stdio, the same three for space stats,
and a trivial authenticated GET (`/api/v1/me/mode/`): what any request costs. Every recall
has its own query text, so no cache answers it.

CPU per call is the serving process's own (its threads' run times from /proc, read before
and after each call): the gunicorn worker for REST and HTTP MCP, the stdio server for stdio
MCP. Nothing else runs in those processes between calls.

    python bench/mcp_latency.py [--rounds 30] [--base /path/to/baseline/worktree]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import psutil
from django.contrib.auth import get_user_model
from django.core.management import call_command
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

# Django is set up by prd_benchenv, so it comes first.
from prd_benchenv import ROOT, ms, pct, start_gunicorn, stop, stop_database_if_started

from core.models import Space
from governance.access import SYSTEM
from governance.services import api_token_issue
from memories import services, tasks
from retrieval.tasks import lexeme_stats_refresh

RESULTS = ROOT / "bench" / "results" / "mcp_latency.json"
SPACE = "mcp-bench"
TOPICS = ["migrations", "caching", "retries", "logging", "feature flags", "pagination", "tokens",
          "indexes", "fixtures", "deploys", "timeouts", "queues", "money", "webhooks", "search"]
QUESTIONS = ["how do we handle {} in production?", "what went wrong with {} last time?",
             "which rule do we follow for {}?", "who decided how {} work and why?"]
CALLS = ("rest_recall", "http_recall", "stdio_recall", "rest_stats", "http_stats", "stdio_stats", "rest_mode")
WARMUP = 5


def seed() -> str:
    call_command("migrate", verbosity=0)
    Space.objects.filter(slug=SPACE).delete()
    user, _ = get_user_model().objects.get_or_create(username="mcp-bench")
    space = Space.objects.create(slug=SPACE, name="MCP bench")
    from governance.services import membership_grant

    membership_grant(actor=SYSTEM, space=space, user=user, role="owner")
    items = [{"space": SPACE, "title": f"Rule {n} about {TOPICS[n % len(TOPICS)]}",
              "content": f"For {TOPICS[n % len(TOPICS)]} in service {n % 17}, prefer the documented helper; "
                         f"incident {n} showed that skipping it costs an hour on call.",
              "kind": ("fact", "solution", "decision", "pattern", "gotcha")[n % 5]} for n in range(300)]
    services.memory_bulk_create(actor=SYSTEM, items=items)
    tasks.memory_embed_backlog(grace_seconds=0)
    lexeme_stats_refresh()
    return api_token_issue(user=user, name="mcp-bench")[1]


def failed(answer: Any) -> bool:
    if hasattr(answer, "is_error"):  # the SDK's CallToolResult
        return bool(answer.is_error)
    return bool(answer.status_code != 200)


TICK = os.sysconf("SC_CLK_TCK")


def _ticks(stat: Path) -> int:
    """user + system time of /proc/…/stat, in clock ticks (fields 14 and 15)."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def cpu_reading(process: psutil.Process) -> tuple[int, dict[str, tuple[int, int]]]:
    """The process's CPU time in clock ticks (ended threads included), and each live thread's
    (run time in ns from /proc/<pid>/task/*/schedstat, CPU time in ticks)."""
    threads: dict[str, tuple[int, int]] = {}
    for task in Path(f"/proc/{process.pid}/task").iterdir():
        try:
            threads[task.name] = (int((task / "schedstat").read_text().split()[0]), _ticks(task / "stat"))
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended between the listing and the read
    return _ticks(Path(f"/proc/{process.pid}/stat")), threads


def cpu_between(before: tuple[int, dict[str, tuple[int, int]]],
                after: tuple[int, dict[str, tuple[int, int]]]) -> float:
    """Seconds of CPU the process used between two readings: to the nanosecond for threads
    alive at the second reading (all of it for a thread started since), and, for threads that
    ended in between, what the process's tick count says the live threads do not explain."""
    live_ns = sum(ns - before[1].get(thread, (0, 0))[0] for thread, (ns, _) in after[1].items())
    live_ticks = sum(ticks - before[1].get(thread, (0, 0))[1] for thread, (_, ticks) in after[1].items())
    ended_ticks = max(0, (after[0] - before[0]) - live_ticks)
    return live_ns / 1e9 + ended_ticks / TICK


def stdio_server(checkout: Path, token: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["manage.py", "sam_mcp"], cwd=str(checkout),
                                 env={**os.environ, "SAM_MCP_TOKEN": token})


def stdio_process(checkout: Path) -> psutil.Process:
    """The stdio server the SDK's client started for `checkout` (a child of this process)."""
    for child in psutil.Process().children(recursive=True):
        try:
            if "sam_mcp" in child.cmdline() and Path(child.cwd()) == checkout:
                return child
        except psutil.Error:
            continue
    raise RuntimeError(f"no stdio server found for {checkout}")


class Checkout:
    """One checkout's servers and clients, and the figures measured through them."""

    def __init__(self, name: str, path: Path, port: int) -> None:
        self.name, self.path, self.port = name, path, port
        self.url = f"http://127.0.0.1:{port}"
        self.wall: dict[str, list[float]] = {call: [] for call in CALLS}
        self.cpu: dict[str, list[float]] = {call: [] for call in CALLS}

    async def round(self, n: int, rest: httpx2.AsyncClient, http: Client, stdio: Client,
                    worker: psutil.Process, stdio_pid: psutil.Process) -> None:
        question = QUESTIONS[n % len(QUESTIONS)].format(TOPICS[n % len(TOPICS)])
        recall = {"spaces": [SPACE], "k": 8}
        calls: list[tuple[str, psutil.Process, Callable[[], Awaitable[Any]]]] = [
            ("rest_recall", worker, lambda: rest.post(f"{self.url}/api/v1/recall/", json={
                "query": f"{question} (rest {self.name} {n})", **recall})),
            ("http_recall", worker, lambda: http.call_tool("recall", {
                "query": f"{question} (http {self.name} {n})", **recall})),
            ("stdio_recall", stdio_pid, lambda: stdio.call_tool("recall", {
                "query": f"{question} (stdio {self.name} {n})", **recall})),
            ("rest_stats", worker, lambda: rest.get(f"{self.url}/api/v1/spaces/{SPACE}/stats/")),
            ("http_stats", worker, lambda: http.call_tool("memory_stats", {"space": SPACE})),
            ("stdio_stats", stdio_pid, lambda: stdio.call_tool("memory_stats", {"space": SPACE})),
            ("rest_mode", worker, lambda: rest.get(f"{self.url}/api/v1/me/mode/")),
        ]
        for name, process, call in (calls if n % 2 else calls[::-1]):
            cpu_before, started = cpu_reading(process), time.perf_counter()
            answer = await call()
            elapsed, cpu = time.perf_counter() - started, cpu_between(cpu_before, cpu_reading(process))
            if failed(answer):
                raise RuntimeError(f"{self.name} {name} failed: {answer}")
            if n >= WARMUP:
                self.wall[name].append(elapsed)
                self.cpu[name].append(cpu)

    def summary(self) -> dict[str, Any]:
        rows: dict[str, Any] = {call: {
            "wall_p50_ms": ms(pct(self.wall[call], 50)), "wall_p95_ms": ms(pct(self.wall[call], 95)),
            "cpu_mean_ms": ms(sum(self.cpu[call]) / len(self.cpu[call])),
            "cpu_p50_ms": ms(pct(self.cpu[call], 50)), "calls": len(self.wall[call])} for call in CALLS}
        rows["overhead"] = {  # MCP minus REST, for the same call
            f"{way}_{call}": {figure: round(rows[f"{way}_{call}"][figure] - rows[f"rest_{call}"][figure], 1)
                              for figure in ("wall_p50_ms", "cpu_mean_ms", "cpu_p50_ms")}
            for way in ("http", "stdio") for call in ("recall", "stats")}
        return rows


async def measure(token: str, rounds: int, checkouts: list[Checkout],
                  workers: dict[str, psutil.Process]) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    clients = []
    for checkout in checkouts:
        rest = httpx2.AsyncClient(headers=headers, timeout=120)
        http = Client(streamable_http_client(f"{checkout.url}/mcp", http_client=httpx2.AsyncClient(
            headers=headers, timeout=120)))
        stdio = Client(stdio_server(checkout.path, token))
        clients.append((checkout, rest, http, stdio))
    opened = []
    try:
        for _, rest, http, stdio in clients:
            for client in (rest, http, stdio):
                await client.__aenter__()
                opened.append(client)
        stdio_pids = {checkout.name: stdio_process(checkout.path) for checkout in checkouts}
        for n in range(rounds + WARMUP):
            for checkout, rest, http, stdio in (clients if n % 2 else clients[::-1]):
                await checkout.round(n, rest, http, stdio, workers[checkout.name], stdio_pids[checkout.name])
    finally:
        for client in reversed(opened):
            await client.__aexit__(None, None, None)


def free_port() -> int:
    """A port nothing listens on (other benchmarks may hold prd_benchenv's)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--base", type=Path, help="a checkout of the baseline, measured beside this one")
    args = parser.parse_args()
    token = seed()
    checkouts = [Checkout("change", ROOT, free_port())]
    if args.base:
        checkouts.insert(0, Checkout("base", args.base.resolve(), free_port()))
    servers = {checkout.name: start_gunicorn(cwd=checkout.path, port=checkout.port) for checkout in checkouts}
    try:
        workers = {name: psutil.Process(server.pid).children()[0] for name, server in servers.items()}
        if len({checkout.port for checkout in checkouts}) != len(checkouts):
            raise RuntimeError("two checkouts were given the same port")
        asyncio.run(measure(token, args.rounds, checkouts, workers))
    finally:
        for server in servers.values():
            stop(server)
        stop_database_if_started()
    result = {
        **{checkout.name: checkout.summary() for checkout in checkouts},
        "rounds": args.rounds, "memories": 300, "server": "gunicorn, 1 worker, 2 threads",
        "cpus": os.cpu_count(), "load_average_1m_at_end": round(os.getloadavg()[0], 1),
        "python": platform.python_version(), "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print("| checkout | call | REST wall p50 / p95, CPU | MCP over HTTP | MCP over stdio |")
    print("|---|---|---|---|---|")
    for checkout in checkouts:
        rows = result[checkout.name]
        for call in ("recall", "stats"):
            cells = [f"{rows[f'{way}_{call}']['wall_p50_ms']} / {rows[f'{way}_{call}']['wall_p95_ms']} ms, "
                     f"{rows[f'{way}_{call}']['cpu_mean_ms']} ms" for way in ("rest", "http", "stdio")]
            print(f"| {checkout.name} | {call} | {' | '.join(cells)} |")
        mode = rows["rest_mode"]
        print(f"| {checkout.name} | GET /me/mode/ | {mode['wall_p50_ms']} / {mode['wall_p95_ms']} ms, "
              f"{mode['cpu_mean_ms']} ms | | |")
    print(json.dumps({checkout.name: result[checkout.name]["overhead"] for checkout in checkouts}, indent=1))


if __name__ == "__main__":
    main()
