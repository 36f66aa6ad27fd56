"""What forgetting a space and its retention window delete of its PRD work.

Registered with governance.retention as the app starts (prd.apps); governance never
names these models.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Coalesce, Greatest

from core.models import Space
from governance.retention import Deleted, SpaceData
from prd.models import (
    AgentSession,
    CardValidation,
    ChainStatus,
    ExecutionStatus,
    FormedMemory,
    MemoryCard,
    PRDDecision,
    PRDEvent,
    PRDExecution,
    PRDRun,
    SessionEvent,
    ThinkingChain,
)


def _merge(total: Deleted, more: Deleted) -> Deleted:
    for label, rows in more.items():
        total[label] = total.get(label, 0) + rows
    return total


def purge_space(space: Space) -> Deleted:
    """Every execution, thinking chain, session and card of the space, with what cascades
    from them."""
    deleted: Deleted = {}
    _merge(deleted, PRDExecution.objects.filter(space=space).delete()[1])
    _merge(deleted, ThinkingChain.objects.filter(space=space).delete()[1])
    _merge(deleted, MemoryCard.objects.filter(space=space).delete()[1])
    _merge(deleted, AgentSession.objects.filter(space=space).delete()[1])
    return deleted


def purge_finished(space: Space, cutoff: datetime) -> Deleted:
    """Delete the space's finished PRD work older than `cutoff`.

    Completed executions whose last event (or completion) is older go, with their events,
    decisions, runs and formed-memory links (cascades). Completed or abandoned thinking
    chains last changed before the cutoff go too, unless an event or decision of an
    execution that stays cites them: those go with that execution. Memories formed from
    either are memories, under the memory rule.
    """
    deleted: Deleted = {}
    finished = Coalesce(Greatest("last_event_at", "completed_at"), "updated_at")
    executions = (PRDExecution.objects.filter(space=space, status=ExecutionStatus.COMPLETED)
                  .alias(finished=finished).filter(finished__lt=cutoff))
    _merge(deleted, executions.delete()[1])
    cited = Q(Exists(PRDEvent.objects.filter(thinking_chain=OuterRef("pk")))) | Q(
        Exists(PRDDecision.objects.filter(thinking_chain=OuterRef("pk"))))
    chains = (ThinkingChain.objects
              .filter(space=space, updated_at__lt=cutoff,
                      status__in=[ChainStatus.COMPLETED, ChainStatus.ABANDONED])
              .exclude(cited))
    _merge(deleted, chains.delete()[1])
    # Sessions whose newest event is older go with their events; the cards compiled from
    # them stay (they are memories, under the memory rule) and lose only their evidence.
    sessions = AgentSession.objects.filter(space=space).alias(
        finished=Coalesce("last_event_at", "updated_at")).filter(finished__lt=cutoff)
    _merge(deleted, sessions.delete()[1])
    return deleted


SPACE_DATA = SpaceData(
    everything=purge_space,
    expired=purge_finished,
    count_names={
        PRDExecution: "prd_executions",
        PRDEvent: "prd_events",
        PRDDecision: "prd_decisions",
        PRDRun: "prd_runs",
        FormedMemory: "formed_memories",
        ThinkingChain: "thinking_chains",
        AgentSession: "agent_sessions",
        SessionEvent: "session_events",
        MemoryCard: "memory_cards",
        CardValidation: "card_validations",
    },
)
