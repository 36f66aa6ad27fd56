"""Compaction of a completed execution: the memories still due and the narrative summary."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

# Looked up through the module at call time, so a test can swap the provider.
from core.actor import Actor
from prd import formation
from prd.digest import execution_digest
from prd.models import (
    ExecutionStatus,
    PRDExecution,
)
from prd.services.common import (
    advisory_lock,
    enqueue,
    redact,
    schedule_retry,
)
from prd.services.executions import locked_execution
from prd.services.memory_formation import Gate, execution_memories_form, form_or_refresh, formation_gate
from prd.summarizers import registry

logger = logging.getLogger(__name__)


# --- compaction -----------------------------------------------------------------------

@dataclass
class CompactionOutcome:
    summary_source: str = ""
    formed: int = 0
    retry_scheduled: bool = False
    # The space was paused or incognito: nothing was compacted; the sweep tries again.
    deferred: bool = False


def keeps_better_summary(current_source: str, new: registry.Summary) -> bool:
    """A fallback (extractive) summary never replaces one a model wrote earlier."""
    return bool(new.fallback_reason) and current_source not in ("", "extractive")


def execution_compact(*, execution_id: str, attempt: int = 1) -> CompactionOutcome:
    """Compact a completed execution: form every memory still due (decisions included,
    and unresolved failures), write the narrative summary and its memory. The full log
    stays as it is. Safe to run twice; a summariser failure keeps the extractive summary
    and schedules another try.
    """
    outcome = CompactionOutcome()
    execution = PRDExecution.objects.select_related("space").filter(pk=execution_id).first()
    if execution is None or execution.status != ExecutionStatus.COMPLETED:
        logger.info("compaction: PRD execution %s is gone or not completed", execution_id)
        return outcome
    formed = execution_memories_form(execution_id=execution_id, include_unresolved=True)
    outcome.formed = len(formed.formed)
    if formed.deferred:
        outcome.deferred = True
        return outcome  # paused or incognito: compacted_at stays unset, so the sweep comes back
    execution.space.refresh_from_db(fields=["mode"])
    if formation_gate(execution.space) is Gate.SKIP:
        # Off: no narrative is captured either. Marked compacted so the sweep stops; the
        # admin's "Compact again" writes the narrative once the space is back on.
        PRDExecution.objects.filter(pk=execution_id, compacted_at__isnull=True).update(
            compacted_at=timezone.now(), updated_at=timezone.now())
        return outcome

    # Read and summarise outside any transaction: a model call may take seconds.
    events = list(execution.events.select_related("resolves").order_by("sequence"))
    decisions = list(execution.decisions.order_by("created_at", "id"))
    summary = registry.summarise(execution_digest(execution, events=events, decisions=decisions))

    with transaction.atomic():
        advisory_lock(f"prd-formation:{execution_id}")
        locked = (PRDExecution.objects.select_for_update(no_key=True, of=("self",)).select_related("space")
                  .get(pk=execution_id))
        if formation_gate(locked.space) is not Gate.FORM:
            # The mode changed while the summariser ran: leave everything for the next try.
            outcome.deferred = True
            return outcome
        if not keeps_better_summary(locked.summary_source, summary):
            # A model may write what the log never said (an address, a key): redact it
            # as any stored text (the extractive text is already clean).
            locked.summary = redact(summary.text, path="summary")
            locked.summary_source = summary.source
        locked.summary_attempts = attempt
        if not form_or_refresh(formation.plan_execution_summary(locked, locked.summary)):
            transaction.set_rollback(True)
            outcome.deferred = True
            return outcome
        locked.compacted_at = locked.compacted_at or timezone.now()
        locked.save(update_fields=["summary", "summary_source", "summary_attempts", "compacted_at",
                                   "updated_at"])
        if summary.fallback_reason and attempt < int(settings.SAM_SUMMARIZER["MAX_ATTEMPTS"]):
            schedule_retry("prd.tasks.execution_compact", attempt=attempt, execution_id=execution_id)
            outcome.retry_scheduled = True
    outcome.summary_source = locked.summary_source
    return outcome


@transaction.atomic
def execution_compaction_enqueue(*, actor: Actor, execution_id: str) -> bool:
    """Queue compaction again (the admin's action). False when the execution is not completed."""
    execution = locked_execution(actor, execution_id)
    if execution.status != ExecutionStatus.COMPLETED:
        return False
    enqueue("prd.tasks.execution_compact", execution_id=execution.id)
    return True

