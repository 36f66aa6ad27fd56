"""Writes and workflows for PRD executions and thinking chains, one module per sub-domain
(coding sessions and their memory cards are prd/sessions/, imported through
prd.sessions.services, whose EventInput is not the PRD one):

- executions: start or resume, events and decisions, status, replay of the log;
- memory_formation: the memories a log forms (its rules are prd.formation), in a job;
- compaction: a completed execution's remaining memories and narrative summary;
- chains: thinking chains, their summary, embedding and memories;
- common: input cleaning and its redaction report, the memory mode's answer, jobs.

Every storage-bound text of the prd app is written by these modules and nowhere else
(views, tasks and the admin call them through this package), so redaction, encryption
and audit hook into one place. Memories are formed through memories.services, never
written directly.

Concurrency: appends to one execution serialise on its row lock (FOR NO KEY UPDATE),
which orders the sequence numbers and keeps the materialised progress equal to the fold
of the log. NO KEY, because rows that merely reference the execution (its formed-memory
links, written by formation while it holds the audit chain's lock) take a key-share lock
on it, which a plain FOR UPDATE would block: a deadlock with an append waiting for the
audit chain. Formation and summarisation run in django-q2 jobs enqueued on commit; model
calls (embedding, a chat endpoint) happen outside any transaction.
"""

from prd.services.chains import (
    chain_abandon,
    chain_complete,
    chain_embed,
    chain_start,
    chain_summarise,
    chain_summary_enqueue,
    chains_recall_run,
    thought_add,
)
from prd.services.compaction import CompactionOutcome, execution_compact, execution_compaction_enqueue
from prd.services.executions import (
    AppendResult,
    DecisionInput,
    EventInput,
    RequirementInput,
    StartResult,
    decision_record,
    event_append,
    event_facts,
    execution_rematerialise,
    execution_start,
    execution_status_update,
)
from prd.services.memory_formation import (
    DEFERRING_MODES,
    NOT_CAPTURED,
    FormationOutcome,
    Gate,
    execution_memories_form,
    formation_gate,
)

__all__ = [
    "DEFERRING_MODES", "NOT_CAPTURED", "AppendResult", "CompactionOutcome", "DecisionInput", "EventInput",
    "FormationOutcome", "Gate", "RequirementInput", "StartResult", "chain_abandon", "chain_complete",
    "chain_embed", "chain_start", "chain_summarise", "chain_summary_enqueue", "chains_recall_run",
    "decision_record",
    "event_append", "event_facts", "execution_compact", "execution_compaction_enqueue",
    "execution_memories_form", "execution_rematerialise", "execution_start", "execution_status_update",
    "formation_gate", "thought_add",
]
