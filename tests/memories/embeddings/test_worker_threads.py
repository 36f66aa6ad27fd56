"""Job workers size numpy's BLAS pool so that several workers do not oversubscribe the cores."""

from __future__ import annotations

import os

import pytest
from django_q.signals import post_spawn
from threadpoolctl import threadpool_info, threadpool_limits

from memories.embeddings.registry import get_provider
from memories.embeddings.worker_threads import worker_blas_threads


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


@pytest.fixture
def restore_blas_pool():
    get_provider()  # the encoder's numpy is loaded, so its BLAS pool is listed
    before = max(_blas_threads())
    yield
    threadpool_limits(limits=before, user_api="blas")


def test_the_default_shares_the_cores_out_among_the_workers(settings):
    settings.SAM_WORKER_BLAS_THREADS = 0
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "workers": 2}
    assert worker_blas_threads() == max(1, (os.cpu_count() or 1) // 2)
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "workers": 64}
    assert worker_blas_threads() == 1


def test_the_setting_overrides_the_default(settings):
    settings.SAM_WORKER_BLAS_THREADS = 3
    assert worker_blas_threads() == 3


def test_a_spawned_worker_limits_its_blas_pool(settings, restore_blas_pool):
    # given a worker setting of one BLAS thread
    settings.SAM_WORKER_BLAS_THREADS = 1
    threadpool_limits(limits=2, user_api="blas")
    assert _blas_threads() == {2}
    # when django-q2 announces a new worker process (as its worker loop does on start)
    post_spawn.send(sender="django_q", proc_name="Process-1:1")
    # then this process's BLAS pool has one thread
    assert _blas_threads() == {1}
