"""How fast a backlog of pending memories drains once a django-q2 cluster starts.

Stores `--rows` memories while no worker runs, throws away the jobs their commits enqueued
(as a purged queue or a crashed host would), then starts a real `manage.py qcluster`
(2 workers, ORM broker, as `make run` does) and times until every memory is ready.
Runs on its own embedded Postgres under var/bench_backlog, so it never touches or waits on
the databases of the other benchmarks.

    .venv/bin/python bench/embedding_backlog.py [--rows 10000]

Writes bench/results/embedding_backlog.json and prints a Markdown row for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["SAM_VAR_DIR"] = str(ROOT / "var" / "bench_backlog")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "samsite.settings.base")
os.environ["SAM_LOG_LEVEL"] = "WARNING"
os.environ["SAM_Q_LOG_LEVEL"] = "WARNING"

import django  # noqa: E402

django.setup()

# isort: split
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402
from django_q.conf import Conf  # noqa: E402
from django_q.models import OrmQ, Schedule  # noqa: E402

from governance.access import SYSTEM  # noqa: E402
from memories import services  # noqa: E402
from memories.models import Memory, Space  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "embedding_backlog.json"
SPACE = "bench-backlog"
TOPICS = ["migrations", "caching", "retries", "logging", "feature flags", "pagination", "tokens",
          "indexes", "fixtures", "deploys", "timeouts", "queues"]


def memory_item(n: int) -> dict:
    topic = TOPICS[n % len(TOPICS)]
    return {
        "space": SPACE,
        "title": f"Rule {n} about {topic}",
        "content": (f"For {topic} in service {n % 17}, prefer the documented helper over ad-hoc code; "
                    f"incident {n} showed that skipping it costs an hour of debugging on call."),
    }


def store_backlog(rows: int) -> float:
    """Store `rows` pending memories, drop their queued jobs; returns seconds it took."""
    Space.objects.filter(slug=SPACE).delete()
    Space.objects.create(slug=SPACE, name="Backlog benchmark")
    start = time.perf_counter()
    for first in range(0, rows, 1000):
        result = services.memory_bulk_create(
            actor=SYSTEM, items=[memory_item(n) for n in range(first, min(rows, first + 1000))])
        assert not result.failed, result.failed[0].errors
    OrmQ.objects.all().delete()
    # Only the drain under test may run: no scheduled jobs from a development setup.
    Schedule.objects.all().delete()
    return time.perf_counter() - start


def model_rate(rows: int = 256) -> float:
    """Memories/s of the embedding model alone on these texts, in this process: the ceiling."""
    from memories import entry
    from memories.embeddings.registry import get_provider

    provider = get_provider()
    texts = [entry.embedding_text({**memory_item(n), "canonical_phrases": []}) for n in range(rows)]
    provider.embed(texts[:8])  # load the model
    batch = max(1, int(settings.SAM_EMBEDDING["BATCH_SIZE"]))
    start = time.perf_counter()
    for first in range(0, rows, batch):
        provider.embed(texts[first:first + batch])
    return round(rows / (time.perf_counter() - start), 1)


def drain(rows: int, workers: int) -> dict:
    pending = Memory.objects.filter(space__slug=SPACE).exclude(embedding_status="ready")
    assert pending.count() == rows
    cluster = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "qcluster"], cwd=ROOT,
        env={**os.environ, "SAM_Q_WORKERS": str(workers)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    start = time.perf_counter()
    first_ready = None
    try:
        while True:
            left = pending.count()
            if first_ready is None and left < rows:
                first_ready = time.perf_counter() - start
            if left == 0:
                break
            if time.perf_counter() - start > 1800:
                raise RuntimeError(f"{left} memories still pending after 30 minutes")
            time.sleep(0.5)
        seconds = time.perf_counter() - start
    finally:
        cluster.send_signal(signal.SIGTERM)  # the main process stops its own workers
        try:
            cluster.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(cluster.pid, signal.SIGKILL)
    return {"seconds": round(seconds, 1), "memories_per_s": round(rows / seconds, 1),
            "first_ready_s": round(first_ready or seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    Conf.SYNC = False  # enqueue into the ORM broker; nothing runs until a worker does
    stored = store_backlog(args.rows)
    ceiling = model_rate()
    result = drain(args.rows, args.workers)
    results = {
        "rows": args.rows, "workers": args.workers, "store_seconds": round(stored, 1), **result,
        "model_only_memories_per_s": ceiling,
        # Before: a sweep every 5 minutes took at most 1,000 rows older than 5 minutes.
        "previous_sweep_minutes_for_backlog": 5 + 5 * -(-args.rows // 1000),
        "batch_size": settings.SAM_EMBEDDING["BATCH_SIZE"], "cpus": os.cpu_count(),
        "python": platform.python_version(), "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }
    Space.objects.filter(slug=SPACE).delete()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"| {args.rows:,} pending, {args.workers} workers | {result['seconds']} s | "
          f"{result['memories_per_s']} memories/s | {ceiling} memories/s | "
          f"first ready after {result['first_ready_s']} s | "
          f"about {results['previous_sweep_minutes_for_backlog']} min |")
    from core import embedded_db

    data_dir = settings.SAM_EMBEDDED_DB_DIR
    if data_dir is not None and embedded_db.started_by_this_process(data_dir):
        connections.close_all()
        embedded_db.stop(settings.SAM_EMBEDDED_DB_DIR)


if __name__ == "__main__":
    main()
