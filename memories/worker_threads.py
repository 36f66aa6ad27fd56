"""Size the BLAS thread pool of django-q2 worker processes.

numpy's OpenBLAS starts one thread per core in every process. A cluster runs several
workers, so two workers embedding at once on a 2-core machine run four spinning BLAS
threads on two cores, and everything else on the machine (the web server, Postgres,
the other worker's formation or compaction job) waits for them. Measured on 2 cores
with 2 workers: the PRD lifecycle (create, 50 events, complete, compacted) took
2.5 s at p50 with the default pools and 1.2 s with one BLAS thread per worker.
Web processes keep the default: one query embedding runs faster on both cores
(3.9 ms against 6.4 ms).
"""

from __future__ import annotations

import logging
import os

from django.conf import settings

logger = logging.getLogger(__name__)


def worker_blas_threads() -> int:
    """SAM_WORKER_BLAS_THREADS, else the cores shared out among the cluster's workers."""
    configured = int(getattr(settings, "SAM_WORKER_BLAS_THREADS", 0) or 0)
    if configured > 0:
        return configured
    workers = max(1, int(settings.Q_CLUSTER.get("workers") or 1))
    return max(1, (os.cpu_count() or 1) // workers)


def limit_worker_threads(**kwargs) -> None:
    """django-q2's post_spawn receiver: runs once in each new worker process."""
    from threadpoolctl import threadpool_limits

    threads = worker_blas_threads()
    # Without a `with` block the limit holds for the rest of the process.
    threadpool_limits(limits=threads, user_api="blas")
    logger.debug("worker %s: %d BLAS thread(s)", kwargs.get("proc_name", "?"), threads)
