"""Scheduled governance jobs (django-q2)."""

from __future__ import annotations

import time

from core.jobs import enqueue, job_budget_seconds
from governance.retention import retention_enforce_until


def retention_sweep(*, after_space: int | None = None) -> dict[str, dict[str, int]]:
    """Apply every space's retention window; scheduled hourly by `manage.py sam_schedules`.

    Each space is its own transaction. Once the job's time budget is spent (core.jobs) no
    new space is started: a follow-up goes on after the last space done.
    Returns {space slug: deleted counts} for the spaces that lost anything."""
    purged, last_done = retention_enforce_until(
        after_space=after_space, deadline=time.monotonic() + job_budget_seconds())
    if last_done is not None:
        enqueue("governance.tasks.retention_sweep", after_space=last_done,
                task_name=f"retention sweep after space {last_done}", group="retention")
    return purged
