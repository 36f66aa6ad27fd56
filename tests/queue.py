"""The job broker as the cluster tests see it, whichever broker the run uses (ORM or Redis)."""

from __future__ import annotations

from typing import Any

from django_q.brokers import get_broker
from django_q.models import OrmQ
from django_q.signing import SignedPackage


def queued_count() -> int:
    """Jobs waiting for a worker."""
    return int(get_broker().queue_size() or 0)


def queued_tasks() -> list[dict[str, Any]]:
    """The jobs waiting, decoded (func, kwargs…)."""
    broker = get_broker()
    if hasattr(broker.connection, "lrange"):  # Redis: a list of signed packages
        return [SignedPackage.loads(raw) for raw in broker.connection.lrange(broker.list_key, 0, -1)]
    return [queued.task for queued in OrmQ.objects.all()]


def purge_queue() -> None:
    get_broker().purge_queue()

