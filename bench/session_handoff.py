"""A 1,000-event coding session: logging it, compiling its cards, and its handoff.

gunicorn (1 worker, 2 threads, as bench/prd_benchenv.py runs it) serves the API. The
session is generated from a fixed seed: chat turns, commands (some failing, then fixed),
file changes over 60 files, test results, decisions and a few summaries, with texts of
realistic length. Measured:

- appending it through REST in batches of 100 (redaction, sealing, audit included);
- compiling its cards (the job: rules, memory writes, checks), in process;
- the handoff through REST, recompiled each time (one more event before each call, so no
  answer comes from the handoff cache), and its parts in process (read + unseal, compile,
  Markdown);
- a boot context pack of the space (with its session sections) and the MCP `session_handoff`
  tool over streamable HTTP.

    python bench/session_handoff.py [--events 1000] [--rounds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import time
from typing import Any

import httpx2
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

# Django is set up by prd_benchenv, so it comes first.
from prd_benchenv import PORT, ROOT, ms, pct, start_gunicorn, stop, stop_database_if_started

from core.models import Space
from governance.access import SYSTEM
from governance.services import api_token_issue, membership_grant
from prd.models import AgentSession
from prd.sessions import handoff
from prd.sessions import selectors as session_selectors
from prd.sessions import services as session_services

RESULTS = ROOT / "bench" / "results" / "session_handoff.json"
SPACE = "session-bench"
URL = f"http://127.0.0.1:{PORT}"
WORDS = ("cart checkout refund invoice webhook retry queue cache index migration fixture token "
         "timeout deploy pipeline lint schema serializer view model service test config secret "
         "payment customer order discount tax shipping address email report export").split()


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def session_events(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """A deterministic session of `count` events in the seed's envelope."""
    rng = random.Random(seed)
    files = [f"shop/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{n}.py" for n in range(60)]
    commands = ["pytest -q", "ruff check .", "make migrate", "npm run build", "mypy shop",
                "git commit -am wip"]
    tests = [f"test_{rng.choice(WORDS)}_{n}" for n in range(40)]
    failing: dict[str, int] = {}
    events: list[dict[str, Any]] = []
    start = time.time() - count * 30
    for n in range(count):
        ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + n * 30))
        roll = rng.random()
        base = {"event_id": f"bench-{n}", "ts": ts}
        if roll < 0.35:
            event = {"event_type": "chat_turn", "role": rng.choice(["user", "assistant"]),
                     "text": " ".join(sentence(rng, rng.randint(8, 30)) for _ in range(rng.randint(1, 4)))}
        elif roll < 0.55:
            command = rng.choice(commands)
            code = 1 if rng.random() < 0.25 else 0
            event = {"event_type": "command_run", "text": sentence(rng, 40) if code else "ok",
                     "data": {"command": command, "exit_code": code,
                              "duration_ms": rng.randint(200, 90_000)}}
        elif roll < 0.75:
            change = rng.choice(["modified"] * 8 + ["added"])
            event = {"event_type": "file_change", "data": {"path": rng.choice(files), "change": change}}
        elif roll < 0.90:
            name = rng.choice(tests)
            failed = name not in failing and rng.random() < 0.3
            if failed:
                failing[name] = n
            elif name in failing and rng.random() < 0.7:
                failing.pop(name)
            event = {"event_type": "test_result", "text": sentence(rng, 20) if failed else "",
                     "data": {"name": name, "status": "failed" if failed else "passed"}}
        elif roll < 0.93:
            event = {"event_type": "decision", "text": sentence(rng, 14),
                     "data": {"reason": sentence(rng, 10)}}
        elif roll < 0.96:
            event = {"event_type": "summary", "text": sentence(rng, 30),
                     "data": {"open_questions": [sentence(rng, 8)[:-1] + "?"]}}
        else:
            event = {"event_type": "command_intent", "text": sentence(rng, 12)}
        events.append({**base, **event})
    events.append({"event_id": "bench-handoff", "ts": events[-1]["ts"], "event_type": "handoff",
                   "text": "Stopping here; the refund webhook is half done.",
                   "data": {"next_steps": ["Finish the refund webhook", "Re-run the failing tests"],
                            "open_questions": ["Should refunds over 500 need approval?"]}})
    return events


def seed() -> tuple[str, str]:
    call_command("migrate", verbosity=0)
    Space.objects.filter(slug=SPACE).delete()
    user, _ = get_user_model().objects.get_or_create(username="session-bench")
    space = Space.objects.create(slug=SPACE, name="Session bench")
    membership_grant(actor=SYSTEM, space=space, user=user, role="owner")
    return api_token_issue(user=user, name="session-bench")[1], user.username


async def tool_calls(token: str, rounds: int) -> list[float]:
    timings = []
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http, \
            Client(streamable_http_client(f"{URL}/mcp", http_client=http)) as client:
        for n in range(rounds + 3):
            started = time.perf_counter()
            answer = await client.call_tool("session_handoff", {"space": SPACE})
            if answer.is_error:
                raise RuntimeError(answer)
            if n >= 3:
                timings.append(time.perf_counter() - started)
    return timings


def summary(values: list[float]) -> dict[str, float]:
    return {"p50_ms": ms(pct(values, 50)), "p95_ms": ms(pct(values, 95)), "n": len(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    token, _ = seed()
    events = session_events(args.events - 1)
    headers = {"Authorization": f"Bearer {token}"}
    server = start_gunicorn()
    result: dict[str, Any] = {}
    try:
        with httpx2.Client(headers=headers, timeout=120) as api:
            session_id = api.post(f"{URL}/api/v1/sessions/", json={"space": SPACE, "key": "bench"}).json()[
                "session"]["id"]
            batches = []
            for start in range(0, len(events), 100):
                began = time.perf_counter()
                answer = api.post(f"{URL}/api/v1/sessions/{session_id}/events/",
                                  json={"events": events[start:start + 100]})
                batches.append(time.perf_counter() - began)
                if answer.status_code != 201:
                    raise RuntimeError(answer.text)
            result["append_batch_of_100"] = summary(batches)
            result["append_events_per_s"] = round(len(events) / sum(batches), 1)

            began = time.perf_counter()
            outcome = session_services.session_cards_compile(session_id=session_id)
            result["cards_compile_s"] = round(time.perf_counter() - began, 2)
            result["cards"] = {"formed": outcome.formed, "checks": outcome.validations}

            rest = []
            for n in range(args.rounds + 2):
                api.post(f"{URL}/api/v1/sessions/{session_id}/events/", json={"events": [
                    {"event_id": f"extra-{n}", "event_type": "chat_turn", "text": "one more turn"}]})
                began = time.perf_counter()
                answer = api.get(f"{URL}/api/v1/sessions/{session_id}/handoff/")
                elapsed = time.perf_counter() - began
                if answer.status_code != 200:
                    raise RuntimeError(answer.text)
                if n >= 2:
                    rest.append(elapsed)
            result["handoff_rest_recompiled"] = summary(rest)
            cached = []
            for _ in range(args.rounds):
                began = time.perf_counter()
                api.get(f"{URL}/api/v1/sessions/{session_id}/handoff/")
                cached.append(time.perf_counter() - began)
            result["handoff_rest_cached"] = summary(cached)
            packs = []
            for _ in range(args.rounds):
                began = time.perf_counter()
                answer = api.post(f"{URL}/api/v1/context-packs/", json={
                    "spaces": [SPACE], "pack_type": "boot", "token_budget": 2000, "track": False})
                packs.append(time.perf_counter() - began)
                if answer.status_code != 200:
                    raise RuntimeError(answer.text)
            result["boot_pack_rest"] = summary(packs)
            result["boot_pack_sections"] = {name: len(answer.json()["json"][name]) for name in (
                "active_tasks", "recent_decisions", "changed_files", "open_questions")}
        result["handoff_mcp_tool"] = summary(asyncio.run(tool_calls(token, args.rounds)))

        # The parts, in process, with the cache out of the way.
        session = AgentSession.objects.select_related("space").get(pk=session_id)
        reads, compiles, renders = [], [], []
        for _ in range(args.rounds):
            cache.clear()
            began = time.perf_counter()
            rows = [session_services.rule_event(e) for e in session.events.order_by("sequence")]
            read = time.perf_counter()
            compiled = handoff.compile_handoff({"id": session.id, "space": SPACE, "title": ""}, rows)
            done = time.perf_counter()
            handoff.render_markdown(compiled)
            reads.append(read - began)
            compiles.append(done - read)
            renders.append(time.perf_counter() - done)
        result["parts_in_process"] = {"read_and_unseal": summary(reads), "compile": summary(compiles),
                                      "markdown": summary(renders)}
        full = session_selectors.handoff_of(session).json
        result["handoff_shape"] = {"events": full["events"], "what_changed": len(full["what_changed"]),
                                   "what_failed": len(full["what_failed"]),
                                   "what_shipped": len(full["what_shipped"]),
                                   "decisions": len(full["decisions"])}
    finally:
        stop(server)
        stop_database_if_started()
    result.update({"events": args.events, "server": "gunicorn, 1 worker, 2 threads", "cpus": os.cpu_count(),
                   "python": platform.python_version(), "measured_at": time.strftime("%Y-%m-%d %H:%M")})
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
