"""django-q2 entry points for recall maintenance."""

from __future__ import annotations

import logging
import time

from django.db import DatabaseError

from core.jobs import enqueue, job_budget_seconds
from core.models import Space
from memories.lifecycle import maintenance
from retrieval import training
from retrieval.channels import refresh_lexeme_stats

logger = logging.getLogger(__name__)


def lexeme_stats_refresh(*, space_ids: list[int] | None = None) -> dict:
    """Recount lexeme frequencies (for the lexical channel's budget), per space.

    Each space is its own commit. Once the job's time budget is spent (core.jobs) no new
    space is started: the rest go to a follow-up job, so none is killed by its timeout.
    """
    ids = space_ids or list(Space.objects.values_list("id", flat=True))
    counted: dict[str, int | str] = {}
    deadline = time.monotonic() + job_budget_seconds()
    for index, space_id in enumerate(ids):
        if index and time.monotonic() >= deadline:
            rest = ids[index:]
            enqueue("retrieval.tasks.lexeme_stats_refresh", space_ids=rest,
                    task_name=f"word statistics of {len(rest)} spaces", group="lexeme_stats")
            counted["handed_over"] = len(rest)
            break
        # One space that fails (a deleted space, a lock timeout) does not stop the others.
        try:
            counted[str(space_id)] = refresh_lexeme_stats(space_id)
        except DatabaseError as exc:
            logger.warning("word statistics of space %s not recounted: %s", space_id, type(exc).__name__)
            counted[str(space_id)] = "failed"
    return counted


def training_run(*, memory_ids: list[str]) -> dict:
    """Run the training examples of memories just edited (retrieval.training.after_edit)."""
    runs = training.run_due(memory_ids=memory_ids)
    failing = {r.memory_id: r.pass_rate for r in runs if r.pass_rate < 1.0}
    # Failing memories reach curators at once, as the nightly run's do.
    maintenance.queue_training_failures(failing)
    return {"runs": len(runs), "failing": sorted(failing)}
