"""Embedding jobs on a normal and on a slowed worker: memories/s, jobs killed, work repeated.

A bulk import's way: `--rows` memories stored in one bulk write (one embedding job for all of
them, kept in the queue), then a real `manage.py qcluster` (2 workers, ORM broker, one BLAS
thread each) embeds them. Each configuration runs the cluster from two checkouts in turn, the
one under test and the baseline (`--baseline DIR`, a worktree at the commit compared against,
given only the SAM_EMBEDDING_SLOWDOWN hook), so both see the same machine load:

    normal:  the local model at its speed, the default queue timeouts
    slowed:  the model at a tenth of its speed (SAM_EMBEDDING_SLOWDOWN=10)

Counted per run: wall seconds until every memory is ready, memories/s, CPU seconds of the
cluster (its processes, from the kernel's accounting of waited-for children), jobs failed
with django-q2's "Task exceeded maximum timeout value", and vectors written (a trigger on the
memory table counts them: more writes than memories is work done twice).

    .venv/bin/python bench/embedding_budget.py --baseline ../wt-base [--rows 200]

Runs on the embedded Postgres under var/bench_backlog (bench/embedding_backlog.py's).
Writes bench/results/embedding_budget.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

# The backlog benchmark's store: its own folder, apart from var/bench (bench/benchenv.py).
os.environ["SAM_BENCH_VAR_DIR"] = str(Path(__file__).resolve().parent.parent / "var" / "bench_backlog")

from benchenv import ROOT

# isort: split
from django.conf import settings
from django.core.management import call_command
from django.db import connection, connections
from django_q.conf import Conf
from django_q.models import OrmQ, Schedule, Task

from core.models import Space
from governance.access import SYSTEM
from memories import services
from memories.models import Memory

RESULTS = ROOT / "bench" / "results" / "embedding_budget.json"
SPACE = "bench-budget"
SLOWED = 10


def memory_item(n: int) -> dict:
    return {"space": SPACE, "title": f"Import rule {n}",
            "content": (f"Rule {n}: for service {n % 17}, prefer the documented helper over ad-hoc "
                        f"code; incident {n} showed that skipping it costs an hour on call.")}


def count_writes() -> None:
    with connection.cursor() as cursor:
        cursor.execute("""
            CREATE TABLE IF NOT EXISTS bench_embedding_writes (memory_id text NOT NULL);
            TRUNCATE bench_embedding_writes;
            CREATE OR REPLACE FUNCTION bench_count_embedding_write() RETURNS trigger
                LANGUAGE plpgsql AS $$
            BEGIN INSERT INTO bench_embedding_writes VALUES (NEW.id); RETURN NEW; END $$;
            DROP TRIGGER IF EXISTS bench_count_embedding_write ON memories_memory;
            CREATE TRIGGER bench_count_embedding_write AFTER UPDATE OF embedding ON memories_memory
                FOR EACH ROW WHEN (NEW.embedding IS NOT NULL)
                EXECUTE FUNCTION bench_count_embedding_write();
        """)


def drop_write_counter() -> None:
    with connection.cursor() as cursor:
        cursor.execute("""
            DROP TRIGGER IF EXISTS bench_count_embedding_write ON memories_memory;
            DROP FUNCTION IF EXISTS bench_count_embedding_write();
            DROP TABLE IF EXISTS bench_embedding_writes;
        """)


def writes() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM bench_embedding_writes")
        return int(cursor.fetchone()[0])


def store(rows: int) -> None:
    """One bulk write of `rows` memories: its one embedding job stays queued."""
    Space.objects.filter(slug=SPACE).delete()
    Space.objects.create(slug=SPACE, name="Embedding budget benchmark")
    OrmQ.objects.all().delete()
    Task.objects.all().delete()
    Schedule.objects.all().delete()
    count_writes()
    result = services.memory_bulk_create(actor=SYSTEM, items=[memory_item(n) for n in range(rows)])
    assert not result.failed, result.failed[0].errors


def run(code: Path, rows: int, slowdown: int, limit: float) -> dict:
    store(rows)
    pending = Memory.objects.filter(space__slug=SPACE).exclude(embedding_status="ready")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cluster = subprocess.Popen(
        [sys.executable, str(code / "manage.py"), "qcluster"], cwd=code,
        env={**os.environ, "SAM_Q_WORKERS": "2", "SAM_WORKER_BLAS_THREADS": "1",
             "SAM_EMBEDDING_SLOWDOWN": str(slowdown)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    start = time.perf_counter()
    try:
        while (left := pending.count()) and time.perf_counter() - start < limit:
            time.sleep(0.5)
        seconds = time.perf_counter() - start
    finally:
        cluster.send_signal(signal.SIGTERM)
        try:
            cluster.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    killed = [t for t in Task.objects.filter(success=False) if "maximum timeout" in str(t.result)]
    done = rows - left
    return {
        "rows": rows, "ready": done, "seconds": round(seconds, 1),
        "memories_per_s": round(done / seconds, 2),
        "cluster_cpu_s": round((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), 1),
        "jobs": Task.objects.filter(func__startswith="memories.tasks.memory_embed").count(),
        "killed_for_timeout": len(killed), "vector_writes": writes(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--limit", type=float, default=900, help="seconds before a run gives up")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    Conf.SYNC = False  # enqueue into the ORM broker; nothing runs until a worker does
    runs = []
    for label, slowdown in (("normal", 1), ("slowed", SLOWED)):
        for code_name, code in (("baseline", args.baseline.resolve()), ("change", ROOT)):
            result = {"worker": label, "code": code_name, **run(code, args.rows, slowdown, args.limit)}
            print(json.dumps(result), flush=True)
            runs.append(result)
    Space.objects.filter(slug=SPACE).delete()
    drop_write_counter()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "runs": runs, "cpus": os.cpu_count(), "q_timeout": settings.Q_CLUSTER["timeout"],
        "batch_size": settings.SAM_EMBEDDING["BATCH_SIZE"],
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
        "note": "shared 2-core machine, other jobs running; baseline and change alternated",
    }, indent=2) + "\n")
    print("| worker | code | ready | seconds | memories/s | cluster CPU s | embedding jobs "
          "| killed for timeout | vector writes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r['worker']} | {r['code']} | {r['ready']}/{r['rows']} | {r['seconds']} | "
              f"{r['memories_per_s']} | {r['cluster_cpu_s']} | {r['jobs']} | "
              f"{r['killed_for_timeout']} | {r['vector_writes']} |")
    from core import embedded_db

    data_dir = settings.SAM_EMBEDDED_DB_DIR
    if data_dir is not None and embedded_db.started_by_this_process(data_dir):
        connections.close_all()
        embedded_db.stop(settings.SAM_EMBEDDED_DB_DIR)


if __name__ == "__main__":
    main()
