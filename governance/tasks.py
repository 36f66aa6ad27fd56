"""Scheduled governance jobs (django-q2)."""

from __future__ import annotations

from governance.retention import retention_enforce


def retention_sweep() -> dict[str, dict[str, int]]:
    """Apply every space's retention window; scheduled hourly by `manage.py sam_schedules`.

    Returns {space slug: deleted counts} for the spaces that lost anything."""
    return retention_enforce()
