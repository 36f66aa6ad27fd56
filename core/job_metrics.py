"""How long each job took in a worker, for Prometheus (samsite/metrics.py serves it).

Observed in the worker process, by django-q2's post_execute_in_worker signal. Another process
sees it only through prometheus-client's multiprocess folder: give the web processes and
the cluster the same PROMETHEUS_MULTIPROC_DIR (docs/deployment.md, "Metrics").
"""

from __future__ import annotations

from typing import Any

from prometheus_client import Histogram

JOB_SECONDS = Histogram(
    "sam_job_duration_seconds", "Time a job ran in a worker, by task and outcome.", ["func", "outcome"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)


def observe_job(sender: Any = None, task: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """post_execute_in_worker receiver."""
    if not task or not task.get("started") or not task.get("stopped"):
        return
    func = task.get("func")
    # SAM queues its jobs by dotted path, a bounded set of names; anything else is one label.
    name = func if isinstance(func, str) else "other"
    outcome = "success" if task.get("success") else "failure"
    JOB_SECONDS.labels(name, outcome).observe((task["stopped"] - task["started"]).total_seconds())
