"""django-q2 entry points for recall maintenance."""

from __future__ import annotations

from memories import maintenance
from retrieval import freshness, training
from samsite.core.models import Space


def lexeme_stats_refresh(*, space_ids: list[int] | None = None) -> dict:
    """Recount lexeme frequencies (for the lexical channel's budget), per space."""
    ids = space_ids or list(Space.objects.values_list("id", flat=True))
    return {str(space_id): freshness.refresh(space_id) for space_id in ids}


def training_run(*, memory_ids: list[str]) -> dict:
    """Run the training examples of memories just edited (retrieval.training.after_edit)."""
    runs = training.run_due(memory_ids=memory_ids)
    failing = {r.memory_id: r.pass_rate for r in runs if r.pass_rate < 1.0}
    # Failing memories reach curators at once, as the nightly run's do.
    maintenance.queue_training_failures(failing)
    return {"runs": len(runs), "failing": sorted(failing)}
