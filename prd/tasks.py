"""django-q2 entry points for PRD executions and thinking chains: load by id, one service
call, safe to run twice (formation is keyed, summaries are rewritten in place)."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db.models import F, Q
from django.utils import timezone

# Looked up through the module at call time, so a test can swap the provider.
from memories.embeddings import registry as embeddings
from prd import services
from prd.models import AgentSession, ChainStatus, PRDExecution, ThinkingChain
from prd.sessions import services as session_services

logger = logging.getLogger(__name__)

SWEEP_BATCH = 100


def execution_form_memories(*, execution_id: str) -> dict:
    outcome = services.execution_memories_form(execution_id=execution_id)
    return {"formed": len(outcome.formed), "skipped": outcome.skipped}


def execution_compact(*, execution_id: str, attempt: int = 1) -> dict:
    outcome = services.execution_compact(execution_id=execution_id, attempt=attempt)
    return {"summary_source": outcome.summary_source, "formed": outcome.formed,
            "retry_scheduled": outcome.retry_scheduled}


def chain_summarise(*, chain_id: str, attempt: int = 1) -> dict:
    outcome = services.chain_summarise(chain_id=chain_id, attempt=attempt)
    return {"summary_source": outcome.summary_source, "formed": outcome.formed,
            "retry_scheduled": outcome.retry_scheduled}


def session_compile_cards(*, session_id: str) -> dict:
    outcome = session_services.session_cards_compile(session_id=session_id)
    return {"formed": outcome.formed, "skipped": outcome.skipped, "validations": outcome.validations,
            "deferred": outcome.deferred}


def prd_sweep(*, older_than_seconds: int = 300) -> dict:
    """Finish work whose job was lost (worker down, queue purged, a job that failed):
    formation still due, completed executions never compacted, completed chains never
    summarised or whose embedding is missing or from another model."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    # Spaces that are paused or incognito hold formation back (services.formation_gate):
    # they are left out until they resume, so they never fill the batch and starve others.
    executions = PRDExecution.objects.exclude(space__mode__in=services.DEFERRING_MODES)
    # No age limit here: a busy execution's updated_at never ages, and a formation run
    # that overlaps a queued job only waits for its lock and then finds nothing to do.
    forming = list(executions.formation_pending().order_by("updated_at")
                   .values_list("id", flat=True)[:SWEEP_BATCH])
    for execution_id in forming:
        services.execution_memories_form(execution_id=execution_id)
    compacting = list(executions.awaiting_compaction().filter(completed_at__lt=cutoff)
                      .order_by("completed_at").values_list("id", flat=True)[:SWEEP_BATCH])
    for execution_id in compacting:
        services.execution_compact(execution_id=execution_id)
    chains = (ThinkingChain.objects.filter(status=ChainStatus.COMPLETED, completed_at__lt=cutoff)
              .exclude(space__mode__in=services.DEFERRING_MODES))
    summarising = list(chains.filter(summarized_at__isnull=True).values_list("id", flat=True)[:SWEEP_BATCH])
    for chain_id in summarising:
        services.chain_summarise(chain_id=chain_id)
    stale = list(chains.filter(summarized_at__isnull=False)
                 .filter(Q(embedding__isnull=True) | ~Q(embedding_model=embeddings.configured_model_name()))
                 .exclude(summary_source="").order_by(F("summarized_at").asc())
                 .values_list("id", flat=True)[:SWEEP_BATCH])
    embedded = sum(services.chain_embed(chain_id=chain_id) for chain_id in stale)
    sessions = list(AgentSession.objects.filter(event_count__gt=F("cards_through"))
                    .exclude(space__mode__in=services.DEFERRING_MODES).order_by("updated_at")
                    .values_list("id", flat=True)[:SWEEP_BATCH])
    for session_id in sessions:
        session_services.session_cards_compile(session_id=session_id)
    if forming or compacting or summarising or embedded or sessions:
        logger.info("prd sweep: formed %d, compacted %d, summarised %d, embedded %d, sessions compiled %d",
                    len(forming), len(compacting), len(summarising), embedded, len(sessions))
    return {"formed": len(forming), "compacted": len(compacting), "summarised": len(summarising),
            "embedded": embedded, "sessions_compiled": len(sessions)}
