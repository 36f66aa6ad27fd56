"""Prometheus metrics (prometheus-client; docs/deployment.md, "Metrics").

- Request latency by route (the URL pattern, never the path: ids and slugs would make a
  series per memory) and status class, recorded by MetricsMiddleware.
- Recall latency by pipeline stage (embed, channels, signals, graph…), from the timings the
  recall views hand over on the request (`request.sam_recall_timings`).
- Job durations by task and outcome, observed in the workers (core/job_metrics.py;
  they reach /metrics through the shared multiprocess folder).
- Read from the database when scraped, so every process reports the same: the job queue's
  depth, memories pending or failed embedding, jobs done and failed (django-q keeps the
  last ones), and the audit chain's head (its newest event's id).

With several processes (gunicorn workers), set PROMETHEUS_MULTIPROC_DIR to an empty folder
shared by them: the histograms are then summed over all (samsite/gunicorn_conf.py marks a
dead worker's files). SAM_METRICS_TOKEN, when set, is required as a bearer token.
"""

from __future__ import annotations

import hmac
import os
import time
from collections.abc import Callable, Iterator

from django.conf import settings
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_q.brokers import get_broker
from django_q.models import Failure, Success
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from governance.audit.models import AuditEvent
from memories.models import EmbeddingStatus, Memory

REQUEST_SECONDS = Histogram(
    "sam_http_request_duration_seconds", "Time to answer an HTTP request, by route.",
    ["method", "route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10),
)
RECALL_STAGE_SECONDS = Histogram(
    "sam_recall_stage_duration_seconds", "Time a recall spent in each stage of its pipeline.", ["stage"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
)


class MetricsMiddleware:
    """Times every request and files it under its route pattern."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = match.route if match is not None and match.route else "unmatched"
        REQUEST_SECONDS.labels(request.method, route, f"{response.status_code // 100}xx").observe(
            time.perf_counter() - started)
        for stage, milliseconds in getattr(request, "sam_recall_timings", {}).items():
            if stage not in {"total", "cache"}:
                RECALL_STAGE_SECONDS.labels(stage).observe(milliseconds / 1000)
        return response


class StoreCollector(Collector):
    """What the database knows, read at scrape time."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        queue = GaugeMetricFamily("sam_job_queue_depth", "Jobs waiting in the queue.")
        queue.add_metric([], get_broker().queue_size())
        yield queue
        embeddings = GaugeMetricFamily("sam_embeddings", "Memories by embedding state (not ready).",
                                       labels=["state"])
        found = dict(Memory.objects.exclude(embedding_status=EmbeddingStatus.READY)
                     .values_list("embedding_status").annotate(n=Count("id")))
        for state in (EmbeddingStatus.PENDING, EmbeddingStatus.FAILED):
            embeddings.add_metric([state], found.get(state, 0))
        yield embeddings
        jobs = GaugeMetricFamily("sam_jobs_recorded", "Finished jobs django-q keeps, by outcome.",
                                 labels=["outcome"])
        jobs.add_metric(["success"], Success.objects.count())
        jobs.add_metric(["failure"], Failure.objects.count())
        yield jobs
        head = GaugeMetricFamily("sam_audit_chain_head", "Id of the newest audit event.")
        head.add_metric([], AuditEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0)
        yield head


_store_registered = False


def _registry() -> CollectorRegistry:
    """The multiprocess registry (every worker's histograms summed) when the folder is set,
    else this process's; each with the store's gauges."""
    global _store_registered
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        registry.register(StoreCollector())
        return registry
    if not _store_registered:
        REGISTRY.register(StoreCollector())
        _store_registered = True
    return REGISTRY


@never_cache
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    token = settings.SAM_METRICS_TOKEN
    offered = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    if token and not hmac.compare_digest(offered.encode(), token.encode()):
        return HttpResponse(status=401, headers={"WWW-Authenticate": "Bearer"})
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)
