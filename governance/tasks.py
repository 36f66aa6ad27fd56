"""Scheduled governance jobs (django-q2)."""

from __future__ import annotations

from governance.retention import retention_enforce


def retention_sweep() -> dict[str, int]:
    """Apply every space's retention window; scheduled hourly by `manage.py sam_schedules`."""
    return retention_enforce()
