"""/metrics: request latency by route, recall latency by stage, and the store's gauges, in
Prometheus's text format; a bearer token when SAM_METRICS_TOKEN is set."""

import re

from memories.models import EmbeddingStatus, Memory
from tests.factories import make_memory


def sample(body: str, name: str, **labels: str) -> float:
    """The value of one sample of the exposition text."""
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    series = f"{name}{{{wanted}}}" if labels else name
    pattern = rf"^{re.escape(series)} (\S+)$"
    found = re.search(pattern, body, re.MULTILINE)
    assert found, f"{name} {labels} not in /metrics"
    return float(found.group(1))


def test_requests_recalls_and_the_store_are_measured(api, anon, space):
    make_memory(space, title="Pool connections", content="Run PgBouncer in transaction mode.")
    Memory.objects.filter(space=space).update(embedding_status=EmbeddingStatus.FAILED)
    before = anon.get("/metrics").content.decode()
    recalled = 'route="api/v1/recall/"' in before
    recalls_before = sample(before, "sam_http_request_duration_seconds_count", method="POST",
                            route="api/v1/recall/", status="2xx") if recalled else 0.0

    api.post("/api/v1/recall/", {"query": "connection pooling", "track": False}, format="json")
    api.get(f"/api/v1/memories/{Memory.objects.get(space=space).pk}/")
    body = anon.get("/metrics").content.decode()

    assert sample(body, "sam_http_request_duration_seconds_count", method="POST", route="api/v1/recall/",
                  status="2xx") == recalls_before + 1
    # Filed under the route's pattern, never the memory's id.
    assert 'route="api/v1/memories/(?P<pk>' in body
    assert "mem_" not in body
    assert sample(body, "sam_recall_stage_duration_seconds_count", stage="embed") >= 1
    assert sample(body, "sam_recall_stage_duration_seconds_count", stage="channel_vector") >= 1
    assert sample(body, "sam_embeddings", state="failed") == 1
    assert sample(body, "sam_embeddings", state="pending") == 0
    assert sample(body, "sam_job_queue_depth") >= 0
    assert sample(body, "sam_audit_chain_head") > 0


def test_a_metrics_token_is_required_once_set(anon, db, settings):
    settings.SAM_METRICS_TOKEN = "scrape-secret-1"

    assert anon.get("/metrics").status_code == 401
    assert anon.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    answered = anon.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret-1")
    assert answered.status_code == 200
    assert answered["Content-Type"].startswith("text/plain")


def test_the_sample_dashboard_reads_only_metrics_sam_exports(api, anon, space):
    import json
    from pathlib import Path

    from django.conf import settings

    api.post("/api/v1/recall/", {"query": "anything", "track": False}, format="json")
    exported = set(re.findall(r"^# TYPE (\S+) ", anon.get("/metrics").content.decode(), re.MULTILINE))
    dashboard = json.loads((Path(settings.BASE_DIR) / "docs" / "grafana-dashboard.json").read_text())
    used = {name for panel in dashboard["panels"] for target in panel["targets"]
            for name in re.findall(r"\b(sam_[a-z_]+?)(?:_bucket|_count|_sum)?\b", target["expr"])}

    assert used
    assert used <= exported
