"""Size the BLAS thread pool of django-q2 worker processes.

numpy's OpenBLAS starts one thread per core in every process. A cluster runs several
workers, so two workers embedding at once on a 2-core machine run four spinning BLAS
threads on two cores, and everything else on the machine (the web server, Postgres,
the other worker's formation or compaction job) waits for them. Measured on 2 cores
with 2 workers: the PRD lifecycle (create, 50 events, complete, compacted) took
2.5 s at p50 with the default pools and 1.2 s with one BLAS thread per worker.
Web processes are sized the same way (cores shared out among the web workers): one
query embedding alone runs faster on both cores (3.9 ms against 6.4 ms), but with
4 clients at once on 2 cores (2 web workers) the default pools made recall p95 2.4-2.7 s,
against 0.47 s with one BLAS thread per process, at a third of the throughput
(docs/benchmarks.md, "Serving under load").
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


def web_blas_threads(*, workers: int | None = None, threads: int = 1) -> int:
    """SAM_WEB_BLAS_THREADS, else the cores shared out among the request threads of `workers`
    web processes (default SAM_WEB_WORKERS) of `threads` threads each.

    Each request thread embeds with the whole pool: one process of two threads with a pool of
    two ran four BLAS threads on two cores, and a query embedding took 300 ms instead of 30.
    """
    configured = int(getattr(settings, "SAM_WEB_BLAS_THREADS", 0) or 0)
    if configured > 0:
        return configured
    if workers is None:
        workers = int(getattr(settings, "SAM_WEB_WORKERS", 1) or 1)
    return max(1, (os.cpu_count() or 1) // (max(1, workers) * max(1, threads)))


# Set once this process has sized its pool, so the WSGI import does not undo the value
# gunicorn's post_fork hook chose from the worker count gunicorn actually runs.
_web_limit_applied = False


def limit_web_threads(*, workers: int | None = None, threads: int = 1, force: bool = True) -> None:
    """Size this web process's BLAS pool.

    `force=False` leaves a pool that was already sized alone (the WSGI module's import,
    which runs after gunicorn's post_fork hook in each worker).
    """
    global _web_limit_applied
    if _web_limit_applied and not force:
        return
    # threadpoolctl only reaches libraries already loaded: numpy is imported lazily by
    # the encoder, so load it (and its OpenBLAS) now or the limit would miss it.
    import numpy  # noqa: F401
    from threadpoolctl import threadpool_limits

    pool = web_blas_threads(workers=workers, threads=threads)
    threadpool_limits(limits=pool, user_api="blas")
    _web_limit_applied = True
    logger.debug("web process %d: %d BLAS thread(s)", os.getpid(), pool)
