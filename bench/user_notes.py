"""What a chat user's notes cost to keep: counting the notes a prompt augmentation puts in,
lowering N idle high notes, and trimming N notes over a user space's cap.

Runs on its own embedded Postgres (var/bench) with sealed rows written by the services (no
embeddings: none of the three needs a vector). Measured, in process:

- the counting statement alone (memories.lifecycle.feedback.memories_put_in_prompt) for the
  15 notes of a full block, and a whole augmentation (empty message: no model call) with
  and without `track`; plus the memory table's update counter across them (must not move);
- `lower_idle_high` over N idle high notes (a new version and an audit row each);
- `trim` of a space N notes over its cap (an archive and an audit row each).

    .venv/bin/python bench/user_notes.py [--notes 1000] [--repeats 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from benchenv import ROOT
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection

from core.models import Space
from governance.access import SYSTEM
from governance.services import membership_grant
from governance.spaces import space_create
from memories import services
from memories.lifecycle import feedback, user_notes
from memories.models import Memory, MemoryStats
from retrieval import augment

RESULTS = ROOT / "bench" / "results" / "user_notes.json"


def fresh_space(slug: str, **options) -> Space:
    Space.objects.filter(slug=slug).delete()
    return space_create(actor=SYSTEM, slug=slug, name=slug, kind="user", **options)


def write_notes(space: Space, count: int, label: str = "note", **fields) -> list[str]:
    ids: list[str] = []
    for start in range(0, count, 500):
        items = [{"space": space.slug, "title": f"{label} {n}", "kind": "fact",
                  "content": f"{space.slug} {label} {n}: the user mentioned detail number {n} once.",
                  **fields}
                 for n in range(start, min(count, start + 500))]
        ids += [m.id for m in services.memory_bulk_create(actor=SYSTEM, items=items).created]
    return ids


def age(ids: list[str], days: float) -> None:
    """Make these notes' last edit `days` ago, spread over a day so the trim order is total."""
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_memory SET updated_at = now() - make_interval(days => %s) "
                       "- make_interval(secs => hashtext(id) %% 86400) WHERE id = ANY(%s)", [days, ids])


def memory_updates() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'memories_memory'")
        return int(cursor.fetchone()[0])


def ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50": round(statistics.median(ordered), 3),
            "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 3), "n": len(ordered)}


def timed(work) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


def bench_counting(repeats: int) -> dict:
    space = fresh_space("bench-chat-user")
    user, _ = get_user_model().objects.get_or_create(username="bench-chat")
    membership_grant(actor=SYSTEM, space=space, role="owner", user=user)
    write_notes(space, 40, priority="high")
    block = augment.augment(actor=user, space=space.slug, track=False)
    ids = [n.id for n in block.notes]
    before = memory_updates()
    statement = [timed(lambda: feedback.memories_put_in_prompt(memory_ids=ids)) for _ in range(repeats)]
    untracked: list[float] = []
    tracked: list[float] = []
    for _ in range(repeats):  # interleaved, so both see the same load on a shared machine
        untracked.append(timed(lambda: augment.augment(actor=user, space=space.slug, track=False)))
        tracked.append(timed(lambda: augment.augment(actor=user, space=space.slug)))
    counted = MemoryStats.objects.filter(memory_id__in=ids).values_list("usage_count", flat=True)
    return {"notes_in_block": len(ids), "statement_ms": ms(statement),
            "augment_untracked_ms": ms(untracked), "augment_tracked_ms": ms(tracked),
            "usage_count_after": sorted(set(counted)),
            "memory_row_updates": memory_updates() - before}


def bench_lowering(count: int) -> dict:
    space = fresh_space("bench-lower")
    idle = write_notes(space, count, priority="high")
    age(idle, 60)
    write_notes(space, 1, label="today")  # the space's activity
    seconds = timed(lambda: user_notes.lower_idle_high(space_ids=[space.pk])) / 1000
    lowered = Memory.objects.filter(pk__in=idle, priority="normal", version=2).count()
    return {"notes": count, "lowered": lowered, "seconds": round(seconds, 3),
            "ms_per_note": round(seconds * 1000 / max(lowered, 1), 3), "batch": user_notes.BATCH}


def bench_trimming(count: int, cap: int) -> dict:
    space = fresh_space("bench-trim", note_cap=0)
    ids = write_notes(space, cap + count)
    age(ids, 10)
    space.note_cap = cap
    space.save(update_fields=["note_cap"])
    seconds = timed(lambda: user_notes.trim(space_ids=[space.pk])) / 1000
    left = Memory.objects.filter(space=space, archived=False).count()
    # The settle step's cost when nothing is over: a count under the space's trim lock.
    idle_check = [timed(lambda: user_notes.trim(space_ids=[space.pk])) for _ in range(50)]
    return {"notes_over_cap": count, "cap": cap, "active_after": left, "seconds": round(seconds, 3),
            "ms_per_note": round(seconds * 1000 / max(count, 1), 3), "batch": user_notes.BATCH,
            "check_when_within_cap_ms": ms(idle_check)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    result = {
        "counting_injected_use": bench_counting(args.repeats),
        "lowering_idle_high": bench_lowering(args.notes),
        "trimming_over_cap": bench_trimming(args.notes, cap=200),
        "cpus": os.cpu_count(), "measured_at": time.strftime("%Y-%m-%d %H:%M"),
        "note": "in process, embedded Postgres under var/bench, sealed rows, no embeddings; "
                "the machine was shared with other work while it ran",
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
