"""Jobs for the django-q2 cluster: queue one when a transaction commits, or retry one later.

A job queued inside a transaction could start before the rows it reads are committed, and
would still run if the transaction rolled back; so every app queues through
`enqueue_on_commit`, or through `enqueue` where no transaction of the caller's is open
(a job handing over to the next, a step that runs after the commit). A retry is a one-off
Schedule rather than a queued task, so it survives a worker restart and starts when it is due.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_q.models import Schedule
from django_q.tasks import async_task


def enqueue_on_commit(func: str, *, task_name: str, group: str, timeout: int | None = None,
                      **kwargs: Any) -> None:
    """Queue `func(**kwargs)` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: enqueue(func, task_name=task_name, group=group, timeout=timeout,
                                          **kwargs))


def enqueue(func: str, *, task_name: str, group: str, timeout: int | None = None, **kwargs: Any) -> None:
    """Queue `func(**kwargs)` now, whatever transaction is open: for callers that run after
    their writes committed (a job handing over to the next, a step after a settle)."""
    options: dict[str, Any] = {"task_name": task_name, "group": group}
    if timeout is not None:
        options["timeout"] = timeout
    async_task(func, **kwargs, **options)


def schedule_retry(func: str, *, name: str, kwargs: dict[str, Any], delay_seconds: float) -> datetime:
    """Run `func(**kwargs)` once more after `delay_seconds`; returns when."""
    run_at = timezone.now() + timedelta(seconds=delay_seconds)
    Schedule.objects.create(name=name, func=func, kwargs=repr(kwargs), schedule_type=Schedule.ONCE,
                            next_run=run_at)
    return run_at


def job_budget_seconds(timeout: float | None = None) -> float:
    """Seconds a batch job may spend taking new items before it hands the rest to a follow-up.

    A fraction (SAM_JOB_BUDGET_FRACTION, 0.4) of the timeout after which the cluster kills
    the job (`timeout`, or the cluster's own): the batch in hand when the budget runs out
    still finishes well before the kill, so no job is killed with its work half done.
    """
    limit = float(timeout or settings.Q_CLUSTER["timeout"])
    return limit * float(settings.SAM_JOB_BUDGET_FRACTION)


class Pacer:
    """Sizes a job's batches by the rate it measures, and says when its time budget is spent.

    Each batch is one commit. Its size is what the previous batch's rate (items/s) gets
    done in about SAM_JOB_COMMIT_SECONDS, so progress is saved every few seconds however
    slow or loaded the worker is: a job killed anyway keeps all but its last batch, and
    the job delivered again skips what was saved. No new batch starts once the budget is spent.
    """

    def __init__(self, *, budget_seconds: float, first: int, most: int,
                 commit_seconds: float | None = None) -> None:
        self.commit_seconds = float(commit_seconds if commit_seconds is not None
                                    else settings.SAM_JOB_COMMIT_SECONDS)
        self.most = max(1, most)
        self._size = max(1, min(first, self.most))
        self._deadline = time.monotonic() + budget_seconds
        self.rate: float | None = None  # items/s of the last batch
        self.batches = 0

    def spent(self) -> bool:
        return time.monotonic() >= self._deadline

    def next_size(self) -> int:
        """Items for the next batch; 0 once the budget is spent. The first batch is always
        taken, so every job moves on, however small its budget."""
        return 0 if self.batches and self.spent() else self._size

    def done(self, items: int, seconds: float) -> None:
        """Record a batch: the next one is sized from its rate."""
        self.batches += 1
        if items <= 0:
            return
        self.rate = items / max(seconds, 1e-3)
        # Grow at most fourfold a batch: one fast batch (cached, short texts) is no promise.
        wanted = int(self.rate * self.commit_seconds)
        self._size = max(1, min(self.most, wanted, self._size * 4))
