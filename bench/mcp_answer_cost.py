"""CPU an MCP recall answer costs on top of the REST answer it comes from: each string
defused, then the list fitted to the token budget (samsite.mcp.toolkit, samsite.mcp.budget).

No database: a recall answer of 8 memories shaped as the REST API returns it (ids, kinds,
titles, summaries, highlights, scores, signals, rationale, provenance). The first answer is
measured alone (nothing remembered yet); then 100 later answers over the same memories,
each with new scores and a new rationale in every item, as successive recalls give. Each
checkout given runs in a process of its own, so a baseline is measured beside this one.

    python bench/mcp_answer_cost.py [/path/to/baseline/worktree ...]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def answer(round_: int) -> list[dict]:
    topics = ["caching", "retries", "logging", "webhooks", "money", "indexes", "queues", "tokens"]
    return [{
        "id": f"mem_01M96QPT831F306H7NWBTV{n:04d}", "space": "mcp-bench",
        "title": f"Rule {n} about {topic}",
        "summary": f"For {topic} in service {n}, prefer the documented helper; incident {n} showed that "
                   "skipping it costs an hour on call.",
        "kind": ("fact", "solution", "decision", "pattern", "gotcha")[n % 5], "memory_type": "semantic",
        "score": round(0.4 + n / 100 + round_ / 1e5, 5),
        "signals": {"semantic": round(0.5 + round_ / 1e5, 5), "lexical": 0.2973, "exact": 0.0, "tags": 0.0,
                    "recency": 0.9998, "confidence": 0.75, "importance": 0.5, "access": 0.9999, "time": 0.0,
                    "graph": 0.0},
        "rationale": f"Recalled for semantic match (0.{round_ + 10}) and keyword match (0.{n + 20}), "
                     "relevant to your query.",
        "highlights": [f"For {topic} in service {n}, prefer the documented helper."],
        "conflict": None, "source": {"type": "user", "ref": "api", "uri": None}, "version": 1, "tokens": 30,
    } for n, topic in enumerate(topics)]


def measure() -> dict[str, float]:
    from retrieval import presenters
    from samsite.mcp import budget
    from samsite.mcp.toolkit import defused_items

    envelope = {"query": "how do we handle caching in production?", "spaces": ["mcp-bench"],
                "silenced_spaces": []}

    def one(round_: int) -> None:
        budget.fit(envelope, "memories", defused_items(answer(round_)), budget=4000,
                   short=presenters.short_memory)

    budget.tokens_of({"warm": "up"})  # the tokenizer is loaded once per process, not per answer
    started = time.process_time()
    one(0)
    first = time.process_time() - started
    started = time.process_time()
    for round_ in range(1, 101):
        one(round_)
    later = (time.process_time() - started) / 100
    return {"first_answer_ms": round(first * 1000, 2), "later_answer_ms": round(later * 1000, 2)}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--inside":
        sys.path.insert(0, os.getcwd())
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "samsite.settings.base")
        import django

        django.setup()
        print(json.dumps(measure()))
        return
    results = {}
    for checkout in [*sys.argv[1:], str(ROOT)]:
        found = subprocess.run([sys.executable, __file__, "--inside"], cwd=checkout, capture_output=True,
                               text=True, check=True)
        results[checkout] = json.loads(found.stdout.strip().splitlines()[-1])
        print(checkout, results[checkout])
    (ROOT / "bench" / "results" / "mcp_answer_cost.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
