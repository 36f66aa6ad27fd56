"""Embedding on a slow worker with a short queue timeout: no job is killed, none repeats work.

A real `manage.py qcluster` (one worker, ORM broker) runs with the local model slowed to a
tenth of its speed (SAM_EMBEDDING_SLOWDOWN, through the provider registry) and a queue
timeout of a few seconds, far less than one bulk write's embedding job needs. Each
embedding write is counted by a trigger on the memory table, so a memory embedded twice
(a killed job started again from scratch) would show.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection
from django_q.models import Task

from governance.access import SYSTEM
from memories import services
from memories.models import Memory
from tests.factories import SpaceFactory
from tests.memories.test_cluster import start_cluster, stop_cluster, wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("enqueue_to_the_broker"),
              pytest.mark.django_db(transaction=True)]

# About 30 s of work for the slowed worker: more than one job may take before it is killed.
ROWS = 60
QUEUE_TIMEOUT = 20  # seconds; the job's budget is 0.4 of it


@pytest.fixture
def embedding_writes():
    """A table the trigger fills with one row per vector written to a memory."""
    with connection.cursor() as cursor:
        cursor.execute("""
            CREATE TABLE test_embedding_writes (memory_id text NOT NULL);
            CREATE FUNCTION test_count_embedding_write() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO test_embedding_writes VALUES (NEW.id);
                RETURN NEW;
            END $$;
            CREATE TRIGGER test_count_embedding_write AFTER UPDATE OF embedding ON memories_memory
                FOR EACH ROW WHEN (NEW.embedding IS NOT NULL) EXECUTE FUNCTION test_count_embedding_write();
        """)
    yield
    with connection.cursor() as cursor:
        cursor.execute("""
            DROP TRIGGER test_count_embedding_write ON memories_memory;
            DROP FUNCTION test_count_embedding_write();
            DROP TABLE test_embedding_writes;
        """)


def jobs_so_far() -> str:
    ready = Memory.objects.filter(space__slug="slow-worker", embedding_status="ready").count()
    jobs = [(task.func.rsplit(".", 1)[-1], task.success, str(task.result)[:120])
            for task in Task.objects.order_by("started")]
    return f"{ready} of {ROWS} ready; jobs: {jobs}"


def log_tail(log: Path) -> str:
    return "\n".join(log.read_text().splitlines()[-60:])


def writes_per_memory() -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT memory_id, count(*) FROM test_embedding_writes GROUP BY memory_id")
        return dict(cursor.fetchall())


def test_a_slow_worker_embeds_a_bulk_write_in_time_bounded_jobs(embedding_writes, tmp_path):
    """Given one job for a bulk write of ROWS memories that the slowed worker needs several
    timeouts for, when the cluster runs it, then no job is killed for its timeout, each
    memory is embedded exactly once, and all of them are embedded, by follow-up jobs."""
    SpaceFactory(slug="slow-worker")
    result = services.memory_bulk_create(actor=SYSTEM, items=[
        {"space": "slow-worker", "title": f"Slow worker rule {n}",
         "content": f"Rule {n}: on a loaded machine the embedding job must commit as it goes."}
        for n in range(ROWS)])
    assert not result.failed
    ids = list(Memory.objects.filter(space__slug="slow-worker").values_list("id", flat=True))
    assert len(ids) == ROWS

    log = tmp_path / "qcluster.log"
    cluster = start_cluster(log, SAM_Q_TIMEOUT=str(QUEUE_TIMEOUT), SAM_EMBEDDING_SLOWDOWN="10",
                            SAM_WORKER_BLAS_THREADS="1", SAM_LOG_FORMAT="plain")
    try:
        wait_for(lambda: Memory.objects.filter(pk__in=ids, embedding_status="ready").count() == ROWS,
                 timeout=240, process=cluster,
                 explain=lambda: jobs_so_far() + log_tail(log))
    finally:
        stop_cluster(cluster)

    failed = [str(task.result) for task in Task.objects.filter(success=False)]
    assert not [message for message in failed if "maximum timeout" in message], failed
    assert failed == []
    writes = writes_per_memory()
    assert set(writes) == set(ids)
    assert set(writes.values()) == {1}
    # The work really was spread over several jobs (follow-ups, or the worker's drain).
    assert Task.objects.filter(func__in=["memories.tasks.memory_embed",
                                         "memories.tasks.memory_embed_backlog"]).count() >= 2
