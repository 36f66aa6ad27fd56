"""Jobs for the django-q2 cluster: queue one when a transaction commits, or retry one later.

A job queued inside a transaction could start before the rows it reads are committed, and
would still run if the transaction rolled back; so every app queues through
`enqueue_on_commit`, or through `enqueue` where no transaction of the caller's is open
(a job handing over to the next, a step that runs after the commit). A retry is a one-off
Schedule rather than a queued task, so it survives a worker restart and starts when it is due.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

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
