"""Two job clusters on one broker: each embedding runs once, and none is lost when one dies.

Both clusters (`manage.py qcluster`, one worker each) take jobs from the same broker: the
ORM queue in the default run, Redis in the redis lane (`python -m tests.lanes redis`). The
embedding endpoint is the local stand-in for a hosted API: it answers slowly, so batches are
in flight when a cluster is killed, and it tells which cluster asked for what (each cluster
has its own API key). Which cluster takes which job is the broker's race, so the tests
assert what holds whoever wins it.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

import pytest
from django.conf import settings
from django.core.management import call_command
from django_q.models import Task

from memories.models import Memory
from tests.factories import SpaceFactory, make_memory
from tests.fakes.openai_embeddings import FakeEmbeddingServer
from tests.memories.test_cluster import start_cluster, stop_cluster, wait_for
from tests.queue import queued_count

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("enqueue_to_the_broker"),
              pytest.mark.django_db(transaction=True)]

KEYS = ("cluster-a", "cluster-b")
# The pending sweep runs at every scheduler tick (about 30 s) and leaves rows alone for their
# first 15 s: a row whose job died with its cluster is embedded within about a minute.
PROMISE_SECONDS = 90


def start_pair(endpoint: FakeEmbeddingServer) -> list:
    clusters = [start_cluster(SAM_EMBEDDING_PROVIDER="openai", SAM_EMBEDDING_URL=endpoint.url,
                              SAM_EMBEDDING_MODEL="fake-embed-1", SAM_EMBEDDING_API_KEY=key)
                for key in KEYS]
    # Each worker drains the backlog as it starts: two such runs mean both clusters take jobs.
    wait_for(lambda: Task.objects.filter(func="memories.tasks.memory_embed_backlog").count() >= 2,
             timeout=60, process=clusters[0])
    return clusters


def create(count: int, slug: str) -> list[str]:
    """`count` memories in as many commits: one embedding job each."""
    space = SpaceFactory(slug=slug)
    return [make_memory(space, title=f"Shared queue memory {n}",
                        content=f"Memory {n} written while two clusters share one broker.").id
            for n in range(count)]


def ready(ids: list[str]) -> int:
    return Memory.objects.filter(pk__in=ids, embedding_status="ready").count()


def asked(endpoint: FakeEmbeddingServer, key: str) -> int:
    return endpoint.auth_headers.count(f"Bearer {key}")


def answered(endpoint: FakeEmbeddingServer, key: str) -> list[str]:
    return [text for header, inputs in endpoint.answered if header == f"Bearer {key}" for text in inputs]


def test_two_clusters_share_the_jobs_and_embed_each_memory_once():
    with FakeEmbeddingServer(dims=settings.SAM_EMBEDDING_DIMS) as endpoint:
        endpoint.delay_seconds = 0.2
        clusters = start_pair(endpoint)
        try:
            ids = create(24, "two-clusters")
            wait_for(lambda: ready(ids) == len(ids), timeout=PROMISE_SECONDS, process=clusters[0])
        finally:
            for cluster in clusters:
                stop_cluster(cluster)

    texts = [text for key in KEYS for text in answered(endpoint, key)]
    assert len(texts) == len(ids)
    assert set(Counter(texts).values()) == {1}  # no memory embedded twice, by either cluster
    assert queued_count() == 0


def in_flight(endpoint: FakeEmbeddingServer) -> str | None:
    """The key of a cluster whose request the endpoint is answering right now, if any."""
    for key in KEYS:
        if asked(endpoint, key) > len([1 for header, _ in endpoint.answered if header == f"Bearer {key}"]):
            return key
    return None


def test_a_cluster_killed_mid_batch_loses_nothing():
    call_command("sam_schedules", verbosity=0)  # the sweep that finds rows whose job died
    with FakeEmbeddingServer(dims=settings.SAM_EMBEDDING_DIMS) as endpoint:
        endpoint.delay_seconds = 0.5
        clusters = dict(zip(KEYS, start_pair(endpoint), strict=True))
        try:
            ids = create(16, "two-clusters-kill")
            # Whichever cluster took the jobs is killed while its worker waits on the
            # endpoint: a batch in flight, and maybe more jobs prefetched.
            wait_for(lambda: in_flight(endpoint) is not None, timeout=60, process=clusters[KEYS[0]])
            doomed_key = in_flight(endpoint)
            survivor_key = next(key for key in KEYS if key != doomed_key)
            os.killpg(clusters[doomed_key].pid, signal.SIGKILL)
            clusters[doomed_key].wait(timeout=10)
            assert ready(ids) < len(ids), "every job finished before the cluster was killed"
            wait_for(lambda: ready(ids) == len(ids), timeout=PROMISE_SECONDS, process=clusters[survivor_key])
        finally:
            for cluster in clusters.values():
                stop_cluster(cluster)

    survivor_texts = answered(endpoint, survivor_key)
    assert set(Counter(survivor_texts).values()) <= {1}  # the survivor embedded nothing twice
    # Only what the dead cluster had asked for (its batch in flight, or answered but never
    # written) was asked again; nothing else ran twice.
    again = set(survivor_texts) & set(answered(endpoint, doomed_key))
    doomed_asked = {text for header, body in zip(endpoint.auth_headers, endpoint.requests, strict=True)
                    if header == f"Bearer {doomed_key}" for text in body["input"]}
    assert again <= doomed_asked
    assert Memory.objects.filter(pk__in=ids, embedding_model="fake-embed-1").count() == len(ids)
