"""The embedding job on a real django-q2 cluster (qcluster in its own process).

These tests commit for real (transactional_db), so the worker, with its own connection,
sees the rows. One uses the local model; the other a remote endpoint that fails once,
so the retry goes through the cluster's scheduler, as in production.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from memories.models import Memory, MemoryStats
from tests.database import database_url
from tests.factories import SpaceFactory, make_memory
from tests.fakes.openai_embeddings import FakeEmbeddingServer
from tests.queue import queued_count

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("enqueue_to_the_broker"),
              pytest.mark.django_db(transaction=True)]
ROOT = Path(settings.BASE_DIR)




def start_cluster(log: Path | None = None, **env: str) -> subprocess.Popen:
    """`manage.py qcluster` on the test database; its log goes to `log` when given (a
    pipe nobody reads fills up and blocks a cluster that logs a lot)."""
    environment = {
        **os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "samsite.settings.base",
        "SAM_Q_WORKERS": "1", "SAM_Q_POLL_SECONDS": "0.2", **env,
    }
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "qcluster"], cwd=ROOT, env=environment,
        stdout=subprocess.DEVNULL, stderr=log.open("w") if log else subprocess.PIPE,
        start_new_session=True,
    )


def stop_cluster(process: subprocess.Popen) -> None:
    if process.poll() is None:
        # Only the main process: it stops its workers itself (a group-wide signal makes
        # it wait on children that are already gone).
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def wait_for(predicate, *, timeout: float, process: subprocess.Popen,
             explain: Callable[[], str] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if process.poll() is not None:
            output = process.stderr.read().decode()[-2000:] if process.stderr else "see its log"
            raise AssertionError(f"qcluster exited: {output}")
        time.sleep(0.3)
    raise AssertionError("timed out waiting for the cluster" + (f": {explain()}" if explain else ""))


def test_a_running_worker_embeds_new_memories():
    space = SpaceFactory(slug="cluster-local")
    memories = [make_memory(space, title=f"Cluster memory {n}") for n in range(3)]
    assert {m.embedding_status for m in memories} == {"pending"}
    assert queued_count() == 3
    cluster = start_cluster()
    try:
        ids = [m.id for m in memories]
        wait_for(lambda: Memory.objects.filter(pk__in=ids, embedding_status="ready").count() == 3,
                 timeout=90, process=cluster)
    finally:
        stop_cluster(cluster)
    assert set(Memory.objects.filter(pk__in=ids).values_list("embedding_model", flat=True)) == {
        "sentence-transformers/all-MiniLM-L6-v2"}


def test_the_worker_supersedes_an_older_statement_once_the_newer_is_embedded():
    space = SpaceFactory(slug="cluster-supersede")
    older = make_memory(space, title="Deploy day", content="We deploy on Fridays.")
    cluster = start_cluster()
    try:
        wait_for(lambda: Memory.objects.get(pk=older.id).embedding_status == "ready", timeout=90,
                 process=cluster)
        newer = make_memory(space, title="No Friday deploys", content="We no longer deploy on Fridays.")
        wait_for(lambda: Memory.objects.get(pk=older.id).archived, timeout=60, process=cluster)
    finally:
        stop_cluster(cluster)
    assert Memory.objects.get(pk=older.id).superseded_by_id == newer.id
    assert not MemoryStats.objects.get(memory_id=newer.id).check_pending


def test_a_failed_embedding_is_retried_by_the_cluster_scheduler():
    with FakeEmbeddingServer(dims=settings.SAM_EMBEDDING_DIMS) as endpoint:
        endpoint.fail_next = 1
        space = SpaceFactory(slug="cluster-retry")
        memory = make_memory(space)
        assert queued_count() == 1
        cluster = start_cluster(
            SAM_EMBEDDING_PROVIDER="openai", SAM_EMBEDDING_URL=endpoint.url,
            SAM_EMBEDDING_MODEL="fake-embed-1", SAM_EMBEDDING_RETRY_BASE_SECONDS="1",
        )
        try:
            wait_for(lambda: Memory.objects.get(pk=memory.id).embedding_attempts >= 1,
                     timeout=60, process=cluster)
            assert Memory.objects.get(pk=memory.id).embedding_status == "pending"
            # The scheduler wakes about every 30 s and starts the due retry.
            wait_for(lambda: Memory.objects.get(pk=memory.id).embedding_status == "ready",
                     timeout=120, process=cluster)
        finally:
            stop_cluster(cluster)
    stored = Memory.objects.get(pk=memory.id)
    assert stored.embedding_model == "fake-embed-1"
    assert stored.embedding_attempts == 2
    assert len(endpoint.requests) == 2


def test_the_nightly_maintenance_runs_in_the_cluster():
    from django_q.tasks import async_task

    from memories.models import MemoryStats, ReviewItem

    space = SpaceFactory(slug="cluster-nightly")
    memory = make_memory(space, title="A memory that fades", memory_type="episodic")
    MemoryStats.objects.filter(memory=memory).update(confidence=0.45,
                                                     decayed_at=timezone.now() - timedelta(days=30))
    async_task("samsite.maintenance.nightly", task_name="nightly by hand")
    cluster = start_cluster()
    try:
        wait_for(lambda: ReviewItem.objects.filter(memory=memory, kind="archive_suggestion").exists(),
                 timeout=90, process=cluster)
    finally:
        stop_cluster(cluster)
    stats = MemoryStats.objects.get(memory=memory)
    assert stats.confidence < 0.45 * 0.98 ** 20  # thirty days of episodic decay, at least
    assert stats.decayed_at > timezone.now() - timedelta(minutes=5)


def test_job_durations_reach_metrics_through_the_shared_multiprocess_folder(tmp_path, monkeypatch, client):
    space = SpaceFactory(slug="cluster-metrics")
    memory = make_memory(space, title="Timed job")
    cluster = start_cluster(PROMETHEUS_MULTIPROC_DIR=str(tmp_path))
    try:
        wait_for(lambda: Memory.objects.get(pk=memory.id).embedding_status == "ready", timeout=90,
                 process=cluster)
    finally:
        stop_cluster(cluster)
    # The web process reads the folder the worker wrote its histogram into.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    text = client.get("/metrics").content.decode()

    line = next(line for line in text.splitlines() if line.startswith(
        'sam_job_duration_seconds_count{func="memories.tasks.memory_embed",outcome="success"}'))
    assert float(line.rsplit(" ", 1)[1]) >= 1
