"""What an MCP tool call costs over the REST call it wraps, through SAM's own server.

gunicorn (1 worker, 2 threads, as bench/prd_benchenv.py runs it) serves both; a space of
300 embedded memories; each round makes a REST call and the same call as an MCP tool
(the SDK's client, one session, streamable HTTP at /mcp), alternating so drift hits both.
Every recall has its own query text, so neither path is served from a cache.

    python bench/mcp_latency.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import time
from typing import Any

import httpx2
from django.contrib.auth import get_user_model
from django.core.management import call_command
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

# Django is set up by prd_benchenv, so it comes first.
from prd_benchenv import PORT, ROOT, ms, pct, start_gunicorn, stop, stop_database_if_started

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
    if answer.status_code != 200:
        return True
    body = answer.json()
    if "jsonrpc" in body:  # a raw JSON-RPC answer: a protocol error or a tool error
        return "error" in body or bool(body["result"].get("isError"))
    return False


async def measure(token: str, rounds: int) -> dict[str, list[float]]:
    headers = {"Authorization": f"Bearer {token}"}
    url = f"http://127.0.0.1:{PORT}"
    timings: dict[str, list[float]] = {name: [] for name in (
        "rest_recall", "mcp_recall", "raw_recall", "rest_stats", "mcp_stats", "raw_stats")}
    rpc_headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}

    def rpc(tool: str, arguments: dict) -> Any:
        # The same tool call as one JSON-RPC POST, without the SDK's client.
        return rest.post(f"{url}/mcp", headers=rpc_headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}})

    async with httpx2.AsyncClient(headers=headers, timeout=60) as rest, \
            Client(streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(
                headers=headers, timeout=60))) as mcp:
        for n in range(rounds + 10):  # the first 10 warm both paths up
            question = QUESTIONS[n % len(QUESTIONS)].format(TOPICS[n % len(TOPICS)])
            calls = [
                ("rest_recall", lambda q=f"{question} (rest {n})": rest.post(f"{url}/api/v1/recall/", json={
                    "query": q, "spaces": [SPACE], "k": 8})),
                ("mcp_recall", lambda q=f"{question} (mcp {n})": mcp.call_tool("recall", {
                    "query": q, "spaces": [SPACE], "k": 8})),
                ("raw_recall", lambda q=f"{question} (raw {n})": rpc("recall", {
                    "query": q, "spaces": [SPACE], "k": 8})),
                ("rest_stats", lambda: rest.get(f"{url}/api/v1/spaces/{SPACE}/stats/")),
                ("mcp_stats", lambda: mcp.call_tool("memory_stats", {"space": SPACE})),
                ("raw_stats", lambda: rpc("memory_stats", {"space": SPACE})),
            ]
            for name, call in (calls if n % 2 else calls[::-1]):
                started = time.perf_counter()
                answer = await call()
                elapsed = time.perf_counter() - started
                if failed(answer):
                    raise RuntimeError(f"{name} failed: {answer}")
                if n >= 10:
                    timings[name].append(elapsed)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    token = seed()
    server = start_gunicorn()
    try:
        timings = asyncio.run(measure(token, args.rounds))
    finally:
        stop(server)
        stop_database_if_started()
    summary = {name: {"p50_ms": ms(pct(values, 50)), "p95_ms": ms(pct(values, 95)), "calls": len(values)}
               for name, values in timings.items()}
    result = {
        **summary,
        "overhead_p50_ms": {
            call: round(summary[f"mcp_{call}"]["p50_ms"] - summary[f"rest_{call}"]["p50_ms"], 1)
            for call in ("recall", "stats")},
        "server_overhead_p50_ms": {
            call: round(summary[f"raw_{call}"]["p50_ms"] - summary[f"rest_{call}"]["p50_ms"], 1)
            for call in ("recall", "stats")},
        "memories": 300, "server": "gunicorn, 1 worker, 2 threads", "cpus": os.cpu_count(),
        "python": platform.python_version(), "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print("| call | REST p50 / p95 | MCP, SDK client p50 / p95 | MCP, one JSON-RPC POST p50 / p95 |")
    print("|---|---|---|---|")
    for call in ("recall", "stats"):
        cells = [f"{summary[f'{way}_{call}']['p50_ms']} / {summary[f'{way}_{call}']['p95_ms']} ms"
                 for way in ("rest", "mcp", "raw")]
        print(f"| {call} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
