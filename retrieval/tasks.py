"""django-q2 entry points for recall maintenance."""

from __future__ import annotations

import logging

from django.db import DatabaseError

from core.models import Space
from memories.lifecycle import maintenance
from retrieval import training
from retrieval.channels import refresh_lexeme_stats

logger = logging.getLogger(__name__)


def lexeme_stats_refresh(*, space_ids: list[int] | None = None) -> dict:
    """Recount lexeme frequencies (for the lexical channel's budget), per space."""
    ids = space_ids or list(Space.objects.values_list("id", flat=True))
    counted: dict[str, int | str] = {}
    for space_id in ids:
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
