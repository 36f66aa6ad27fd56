"""What dedupe and supersession on write cost, on the 100k space of bench/recall_speed.py.

- create: `memories.services.memory_create` of a new text, of a text the space holds
  (reinforced instead of stored), and of a new text in a space whose policies check
  nothing (`duplicate_policy=keep`, `near_duplicate_policy=keep`, `supersession_policy=off`):
  the price of the exact-duplicate lookup at write time;
- check: `memories.lifecycle.write_checks.finish` of one memory (its five nearest older neighbours
  through the HNSW index, the rules on each pair), what the embedding job adds per memory.

Everything runs in transactions that are rolled back: the store is left as it was.

    .venv/bin/python bench/write_checks.py [--samples 200]

Writes bench/results/write_checks.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections import Counter

from benchenv import ROOT
from django.core.management import call_command
from django.db import transaction
from recall_speed import existing_space, pct

from core.models import Space
from governance.access import SYSTEM
from memories import services
from memories.lifecycle import write_checks
from memories.models import Memory, MemoryStats

RESULTS = ROOT / "bench" / "results" / "write_checks.json"
SIZE = 100_000


class Rollback(Exception):
    pass


def timed(work) -> float:
    """Milliseconds `work` took, inside a transaction rolled back afterwards."""
    start = time.perf_counter()
    try:
        with transaction.atomic():
            work()
            elapsed = (time.perf_counter() - start) * 1000
            raise Rollback
    except Rollback:
        return elapsed


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 2), "p95": round(pct(values, 95), 2),
            "mean": round(statistics.fmean(values), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    space = existing_space(SIZE)
    rng = random.Random(7)
    stored = list(Memory.objects.filter(space=space).order_by("id").values_list("id", flat=True))
    picked = rng.sample(stored, args.samples)
    texts = {m.pk: m.content for m in Memory.objects.filter(pk__in=picked)}

    def create(content: str) -> None:
        services.memory_create(actor=SYSTEM, data={"space": space.slug, "title": "Bench write",
                                                   "content": content})

    # Warm the connection, the key cache and the plans.
    for n in range(5):
        timed(lambda n=n: create(f"Warm-up text number {n} for the write bench."))
    fresh = "A new statement {} about the release checklist and the deploy window."
    new = [timed(lambda n=n: create(fresh.format(n))) for n in range(args.samples)]
    repeat = [timed(lambda pk=pk: create(texts[pk])) for pk in picked]
    Space.objects.filter(pk=space.pk).update(duplicate_policy="keep", near_duplicate_policy="keep",
                                             supersession_policy="off")
    space.refresh_from_db()
    unchecked = [timed(lambda n=n: create(fresh.format(n))) for n in range(args.samples)]
    Space.objects.filter(pk=space.pk).update(duplicate_policy="reinforce", near_duplicate_policy="review",
                                             supersession_policy="auto")

    outcomes: Counter[str] = Counter()

    def check(pk: str) -> None:
        MemoryStats.objects.filter(memory_id=pk).update(check_pending=True)
        report = write_checks.finish([pk])
        for name in ("superseded", "merged", "linked", "reviewed"):
            outcomes[name] += len(getattr(report, name))
        outcomes["checked"] += report.checked

    checks = [timed(lambda pk=pk: check(pk)) for pk in picked]
    results = {
        "size": SIZE, "samples": args.samples,
        "create_new_text_ms": summary(new), "create_repeated_text_ms": summary(repeat),
        "create_checks_off_ms": summary(unchecked), "write_check_per_memory_ms": summary(checks),
        "write_check_outcomes": dict(outcomes),
    }
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print("| operation | p50 ms | p95 ms |")
    print("|---|---|---|")
    for label, key in (("create, a new text", "create_new_text_ms"),
                       ("create, a text stored already (reinforced)", "create_repeated_text_ms"),
                       ("create, checks off", "create_checks_off_ms"),
                       ("write check of one memory (embedding job)", "write_check_per_memory_ms")):
        print(f"| {label} | {results[key]['p50']} | {results[key]['p95']} |")
    print(dict(outcomes))


if __name__ == "__main__":
    main()
