"""How long importing 1,000 conversations (about 20,000 exchanges) takes, embedding included.

Writes 1,000 Claude Code session files (20 exchanges each: questions, code, statements the
extractors keep, and some the space holds already) under var/bench_chat/projects, then runs
`manage.py sam_chat_import claude_code` into a fresh space of the bench store, then embeds
what was created and finishes its write checks (what the worker does after an import), in
this process with the local model.

    .venv/bin/python bench/chat_import_speed.py [--conversations 1000] [--exchanges 20]

Writes bench/results/chat_import_speed.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import shutil
import time

from benchenv import ROOT
from django.core.management import call_command
from django_q.conf import Conf

from core.models import Space
from governance import spaces as space_services
from governance.access import SYSTEM
from memories import settle
from memories.embeddings import jobs as embedding_jobs
from memories.models import Memory

OUT = ROOT / "var" / "bench_chat" / "projects"
RESULTS = ROOT / "bench" / "results" / "chat_import_speed.json"
SLUG = "bench-chat-import"
CITIES = ["Lisbon", "Porto", "Berlin", "Vienna", "Oslo", "Tallinn", "Riga", "Ghent", "Lyon", "Turin"]
TOOLS = ["pytest", "ruff", "uv", "poetry", "mypy", "black", "tox", "nox", "hatch", "pdm"]
FILLER = [
    "How do I read a file line by line in Python?",
    "What is the difference between a list and a tuple?",
    "Can you review this function?\n```python\ndef total(xs):\n    return sum(x.price for x in xs)\n```",
    "Why does my query take 3 seconds on the orders table?",
    "Explain what an index-only scan is.",
]


def statement(rng: random.Random, n: int) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return f"I live in {rng.choice(CITIES)} these days."
    if kind == 1:
        return f"I prefer {rng.choice(TOOLS)} for new projects."
    if kind == 2:
        return f"We decided to split service {n} because the deploys were slow."
    if kind == 3:
        return f"Never deploy service {n} on a Friday."
    if kind == 4:
        return f"Watch out: the staging queue {n} drops messages after an hour."
    return "Please keep answers short."


def write_sessions(conversations: int, exchanges: int) -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "-home-bench-app").mkdir(parents=True)
    rng = random.Random(11)
    lines = 0
    for c in range(conversations):
        session = f"00000000-0000-4000-8000-{c:012d}"
        with (OUT / "-home-bench-app" / f"{session}.jsonl").open("w") as handle:
            for e in range(exchanges):
                said = statement(rng, c * exchanges + e) if rng.random() < 0.15 else rng.choice(FILLER)
                entries = [
                    {"type": "user", "sessionId": session, "uuid": f"u{c}-{e}",
                     "timestamp": f"2026-01-01T10:{e % 60:02d}:00Z",
                     "message": {"role": "user", "content": said}},
                    {"type": "assistant", "sessionId": session, "uuid": f"a{c}-{e}",
                     "timestamp": f"2026-01-01T10:{e % 60:02d}:30Z",
                     "message": {"id": f"msg_{c}_{e}", "role": "assistant",
                                 "content": [{"type": "text",
                                              "text": "Here is how:\n```python\nprint('ok')\n```"}]}},
                ]
                handle.write("".join(json.dumps(entry) + "\n" for entry in entries))
                lines += 2
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--exchanges", type=int, default=20)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    Conf.SYNC = False  # the embedding jobs wait in the queue; this process embeds them after
    Space.objects.filter(slug=SLUG).delete()
    space_services.space_create(actor=SYSTEM, slug=SLUG, name=SLUG, kind="user",
                                capture_sources=["claude_code"])
    lines = write_sessions(args.conversations, args.exchanges)
    started = time.perf_counter()
    out = io.StringIO()
    run = ("sam_chat_import", "claude_code", str(OUT), "--space", SLUG, "--json", "--no-progress")
    call_command(*run, stdout=out)
    imported = time.perf_counter() - started
    report = json.loads(out.getvalue())
    ids = list(Memory.objects.filter(space__slug=SLUG).values_list("id", flat=True))
    embed_started = time.perf_counter()
    for start in range(0, len(ids), 256):
        outcome = embedding_jobs.memories_embed(memory_ids=ids[start:start + 256])
        settle.settle(outcome.embedded)
    embedded = time.perf_counter() - embed_started
    again_started = time.perf_counter()
    out = io.StringIO()
    call_command(*run, stdout=out)
    again = time.perf_counter() - again_started
    repeat = json.loads(out.getvalue())
    results = {
        "conversations": args.conversations, "exchanges": report["exchanges"], "jsonl_lines": lines,
        "memories_created": report["memories_created"], "memories_reinforced": report["memories_reinforced"],
        "import_seconds": round(imported, 1), "embed_and_check_seconds": round(embedded, 1),
        "total_seconds": round(imported + embedded, 1),
        "exchanges_per_second": round(report["exchanges"] / imported, 1),
        "reimport_seconds": round(again, 1), "reimport_created": repeat["memories_created"],
        "reimport_skipped": repeat["conversations_skipped"],
        "archived_by_supersession": Memory.objects.filter(space__slug=SLUG, archived=True).count(),
    }
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
