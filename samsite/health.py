"""Liveness and readiness for load balancers and orchestrators (docs/deployment.md).

- `GET /healthz`: the process answers. Touches nothing else, so a database outage does not
  make an orchestrator restart healthy web processes.
- `GET /readyz`: this process can serve: the database answers, every migration is applied,
  the job broker answers, the embedding model is loaded. 200 when all hold, 503 otherwise.

Both are JSON, need no login and say nothing an outsider could use: no versions, hosts or
error texts (the reasons go to the log).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_q.brokers import get_broker

from memories.embeddings import registry as embeddings

logger = logging.getLogger(__name__)


def _database() -> bool:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone() == (1,)


def _migrations() -> bool:
    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    return not executor.migration_plan(executor.loader.graph.leaf_nodes())


def _broker() -> bool:
    # The ORM broker's ping answers True without asking anything: count its queue instead.
    broker = get_broker()
    broker.queue_size()
    return bool(broker.ping())


def _embedding() -> bool:
    embeddings.load_model()
    return True


CHECKS: dict[str, Callable[[], bool]] = {
    "database": _database, "migrations": _migrations, "broker": _broker, "embedding": _embedding,
}


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    results: dict[str, str] = {}
    for name, check in CHECKS.items():
        try:
            results[name] = "ok" if check() else "failing"
        except Exception:  # a probe reports, it never raises
            logger.warning("readiness check %s failed", name, exc_info=True)
            results[name] = "failing"
    ready = all(value == "ok" for value in results.values())
    return JsonResponse({"status": "ready" if ready else "not_ready", "checks": results},
                        status=200 if ready else 503)
