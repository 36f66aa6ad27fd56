"""Embeddings whose job was lost are finished by the next worker, on a real django-q2 cluster.

Each test commits for real and starts `manage.py qcluster` in its own process group, as in
tests/memories/test_cluster.py. Every wait is bounded: 60 s is the promise under test.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

import psutil
import pytest
from django.db import connection
from django_q.models import Task

from memories import services, tasks
from memories.embeddings import jobs as embedding_jobs
from memories.models import Memory
from tests.factories import SYSTEM, SpaceFactory
from tests.memories.test_cluster import start_cluster, stop_cluster, wait_for
from tests.queue import purge_queue, queued_count, queued_tasks
from tests.threads import in_thread

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("enqueue_to_the_broker"),
              pytest.mark.django_db(transaction=True)]

PROMISE_SECONDS = 60



def create_memories(slug: str, count: int) -> list[str]:
    space = SpaceFactory(slug=slug)
    items = [{"space": space.slug, "title": f"Recovery memory {n}",
              "content": f"Memory number {n} about recovering lost embedding jobs."}
             for n in range(count)]
    result = services.memory_bulk_create(actor=SYSTEM, items=items)
    return [m.id for m in result.created]


def ready(ids: list[str]) -> int:
    return Memory.objects.filter(pk__in=ids, embedding_status="ready").count()


def busiest_worker(cluster) -> psutil.Process:
    """The cluster process using the most CPU: the worker running the embedding."""
    processes = psutil.Process(cluster.pid).children(recursive=True)
    return max(processes, key=lambda p: sum(p.cpu_times()[:2]))


def test_memories_whose_jobs_were_lost_are_embedded_when_a_cluster_starts():
    ids = create_memories("recovery-lost", 5)
    # The jobs enqueued on commit are gone (a purged queue, a web process that died
    # before enqueueing): nothing in the broker names these memories any more.
    purge_queue()

    cluster = start_cluster()
    try:
        wait_for(lambda: ready(ids) == len(ids), timeout=PROMISE_SECONDS, process=cluster)
    finally:
        stop_cluster(cluster)


def test_a_worker_killed_mid_batch_is_replaced_and_its_rows_finished():
    ids = create_memories("recovery-killed-worker", 400)
    assert queued_count() == 1  # one job for the whole bulk
    cluster = start_cluster(SAM_EMBEDDING_BATCH_SIZE="8")
    try:
        wait_for(lambda: ready(ids) > 0, timeout=PROMISE_SECONDS, process=cluster)
        busiest_worker(cluster).send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        assert ready(ids) < len(ids), "the job finished before the worker could be killed"
        # The cluster's guard starts a new worker; the rows must not wait for the broker
        # to hand the dead worker's job out again (after the cluster's retry, 6 minutes).
        wait_for(lambda: ready(ids) == len(ids), timeout=PROMISE_SECONDS, process=cluster)
        assert time.monotonic() - killed_at < PROMISE_SECONDS
    finally:
        stop_cluster(cluster)


def test_rows_of_a_cluster_killed_mid_batch_are_finished_by_the_next_cluster():
    ids = create_memories("recovery-killed-cluster", 400)
    cluster = start_cluster(SAM_EMBEDDING_BATCH_SIZE="8")
    try:
        wait_for(lambda: ready(ids) > 0, timeout=PROMISE_SECONDS, process=cluster)
    finally:
        os.killpg(cluster.pid, signal.SIGKILL)  # the whole cluster, as a crashed host would
        cluster.wait(timeout=10)
    assert ready(ids) < len(ids), "the job finished before the cluster could be killed"

    successor = start_cluster()
    try:
        wait_for(lambda: ready(ids) == len(ids), timeout=PROMISE_SECONDS, process=successor)
    finally:
        stop_cluster(successor)


def _terminate_backends(application_name: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = %s AND pid <> pg_backend_pid()", [application_name])
        return cursor.fetchone()[0]


def test_the_first_job_after_the_database_dropped_every_connection_succeeds():
    # Only this cluster's own connections are cut: they carry a name nobody else uses.
    application_name = f"sam-test-cluster-{uuid.uuid4().hex[:12]}"
    warm_up = create_memories("recovery-dropped-warm", 1)
    cluster = start_cluster(PGAPPNAME=application_name)
    try:
        wait_for(lambda: ready(warm_up) == 1, timeout=PROMISE_SECONDS, process=cluster)
        time.sleep(1)  # let the monitor record the job, so every process holds a connection
        assert _terminate_backends(application_name) >= 2

        ids = create_memories("recovery-dropped", 3)
        # Quicker than any recovery path: only the job enqueued on commit can make it.
        wait_for(lambda: ready(ids) == 3, timeout=20, process=cluster)
    finally:
        stop_cluster(cluster)
    assert not Task.objects.filter(func="memories.tasks.memory_embed", success=False).exists()


def test_a_memory_another_job_is_embedding_is_skipped_then_drained_once_released():
    held_id, free_id = create_memories("recovery-held", 2)
    holding, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def other_job() -> None:
        # Another worker's job in the middle of embedding `held_id`.
        embedding_jobs._lock_rows([held_id])
        holding.set()
        release.wait(timeout=30)
        embedding_jobs._unlock_rows([held_id])

    thread = in_thread(other_job, errors)
    assert holding.wait(timeout=10)
    try:
        assert tasks.memory_embed(memory_ids=[held_id, free_id]) == {
            "embedded": 1, "skipped": 1, "retry_scheduled": 0, "failed": 0, "left": 0}
        assert tasks.memory_embed_backlog(grace_seconds=0)["embedded"] == 0
    finally:
        release.set()
        thread.join(timeout=30)
    assert errors == []
    assert Memory.objects.get(pk=held_id).embedding_status == "pending"

    assert tasks.memory_embed_backlog(grace_seconds=0)["embedded"] == 1
    assert ready([held_id, free_id]) == 2


def test_a_lost_enqueue_is_recovered_within_a_minute_while_the_workers_run(monkeypatch):
    from django.core.management import call_command

    call_command("sam_schedules", verbosity=0)
    cluster = start_cluster()
    try:
        # Start right after a sweep (the worst moment: a whole period until the next one),
        # with the worker's start-up drain done, so what follows is the next sweep's doing.
        wait_for(lambda: Task.objects.filter(func="memories.tasks.memory_embed_pending").exists(),
                 timeout=PROMISE_SECONDS, process=cluster)
        # A web process that dies between its commit and the enqueue: the rows are
        # committed and acknowledged, but no job names them.
        monkeypatch.setattr(services.transaction, "on_commit", lambda func, *a, **k: None)
        ids = create_memories("recovery-lost-enqueue", 3)
        monkeypatch.undo()
        committed_at = time.monotonic()
        # Scheduled jobs (statistics, sweeps) may be queued at this moment; none names these rows.
        queued = queued_tasks()
        assert not [t for t in queued if t["func"] == "memories.tasks.memory_embed"
                    and set(t["kwargs"].get("memory_ids", ())) & set(ids)]
        wait_for(lambda: ready(ids) == len(ids), timeout=PROMISE_SECONDS, process=cluster)
        assert time.monotonic() - committed_at < PROMISE_SECONDS
    finally:
        stop_cluster(cluster)
