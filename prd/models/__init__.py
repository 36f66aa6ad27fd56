"""The prd app's models: PRD executions and thinking chains (executions), coding sessions
and the memory cards compiled from them (sessions)."""

from prd.event_log import AppendOnly, AppendOnlyError
from prd.models.executions import (
    ChainStatus,
    EventType,
    ExecutionStatus,
    FormationRule,
    FormedMemory,
    PRDDecision,
    PRDEvent,
    PRDExecution,
    PRDExecutionQuerySet,
    PRDRun,
    ThinkingChain,
    empty_progress,
    new_chain_id,
    new_decision_id,
    new_event_id,
    new_execution_id,
)
from prd.sessions.models import (
    AgentSession,
    CardStatus,
    CardType,
    CardValidation,
    EventRole,
    EventSource,
    MemoryCard,
    SessionEvent,
    SessionEventType,
    new_card_id,
    new_session_event_id,
    new_session_id,
)

__all__ = [
    "AgentSession", "AppendOnly", "AppendOnlyError", "CardStatus", "CardType", "CardValidation",
    "ChainStatus", "EventRole", "EventSource", "EventType", "ExecutionStatus", "FormationRule",
    "FormedMemory", "MemoryCard", "PRDDecision", "PRDEvent", "PRDExecution", "PRDExecutionQuerySet", "PRDRun",
    "SessionEvent", "SessionEventType", "ThinkingChain", "empty_progress", "new_card_id",
    "new_chain_id", "new_decision_id", "new_event_id", "new_execution_id", "new_session_event_id",
    "new_session_id",
]
