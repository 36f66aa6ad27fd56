"""PRD executions, their append-only event log, decisions and runs; thinking chains; and the
links from each of them to the memories SAM formed from it.

Every storage-bound text here is written by prd.services only (never by views, tasks or
the admin), so redaction and encryption have one place to hook in. Free-form structured
data lives in one JSON field per model (`PRDEvent.detail`, `ThinkingChain.thoughts`).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F, Q
from pgvector.django import VectorField
from ulid import ULID

from core.models import Space
from governance.crypto.fields import SealedJSONField, SealedTextField
from memories.models import Memory
from prd import limits
from prd.event_log import AppendOnly
from prd.progress import STATES


def new_execution_id() -> str:
    return f"prd_{ULID()}"


def new_event_id() -> str:
    return f"evt_{ULID()}"


def new_decision_id() -> str:
    return f"dec_{ULID()}"


def new_chain_id() -> str:
    return f"chain_{ULID()}"


def empty_progress() -> dict[str, list[str]]:
    return {state: [] for state in STATES}


class ExecutionStatus(models.TextChoices):
    NOT_STARTED = "not_started"
    IN_PROGRESS = "in_progress"
    PAUSED = "paused"
    BLOCKED = "blocked"
    COMPLETED = "completed"


class EventType(models.TextChoices):
    """The twelve event types (docs/prd.md, "Events and progress")."""

    REQUIREMENT_STARTED = "requirement_started"
    REQUIREMENT_COMPLETED = "requirement_completed"
    DECISION_MADE = "decision_made"
    BLOCKER_HIT = "blocker_hit"
    BLOCKER_RESOLVED = "blocker_resolved"
    TEST_PASSED = "test_passed"
    TEST_FAILED = "test_failed"
    REVISION = "revision"
    REVIEW_FEEDBACK = "review_feedback"
    AGENT_HANDOFF = "agent_handoff"
    ERROR_ENCOUNTERED = "error_encountered"
    ROLLBACK = "rollback"


class ChainStatus(models.TextChoices):
    ACTIVE = "active"
    COMPLETED = "completed"
    ABANDONED = "abandoned"


class PRDExecutionQuerySet(models.QuerySet["PRDExecution"]):
    def formation_pending(self) -> PRDExecutionQuerySet:
        return self.filter(formable_through__gt=F("formed_through"))

    def awaiting_compaction(self) -> PRDExecutionQuerySet:
        return self.filter(status=ExecutionStatus.COMPLETED, compacted_at__isnull=True)


class PRDExecution(models.Model):
    """An agent's (or a team of agents') work through one PRD, in one space.

    `progress` and `state` are materialised from the events by prd.progress and written
    only by the append service under this row's lock; nothing sets them directly.
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_execution_id, editable=False)
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="prd_executions")
    prd_ref = models.CharField(max_length=limits.PRD_REF[1], help_text="A file path or git SHA.")
    prd_hash = models.CharField(max_length=limits.PRD_HASH_MAX, blank=True, default="")
    # Free text, sealed like the rest; its length is checked by prd.services.
    title = SealedTextField(blank=True, default="")
    status = models.CharField(max_length=16, choices=ExecutionStatus.choices,
                              default=ExecutionStatus.NOT_STARTED)
    # The PRD's requirements as last declared: [{id, title, hash}]. Sealed, like every
    # free text of the PRD app (governance.crypto); progress holds requirement ids only.
    requirements = SealedJSONField(default=list, blank=True)
    progress = models.JSONField(default=empty_progress, editable=False)
    state = SealedJSONField(default=dict, editable=False)

    event_count = models.PositiveIntegerField(default=0)
    # Events that closed a blocker or a failure streak (the learnings), counted at append.
    learning_count = models.PositiveIntegerField(default=0)
    last_event_at = models.DateTimeField(null=True, blank=True)
    # Sequence of the newest event that forms a memory, and of the newest one formed.
    formable_through = models.PositiveIntegerField(default=0)
    formed_through = models.PositiveIntegerField(default=0)

    summary = SealedTextField(blank=True, default="")
    summary_source = models.CharField(max_length=200, blank=True, default="")
    summary_attempts = models.PositiveSmallIntegerField(default=0)
    compacted_at = models.DateTimeField(null=True, blank=True)

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    objects = PRDExecutionQuerySet.as_manager()

    class Meta:
        verbose_name = "PRD execution"
        ordering = ["-updated_at", "id"]
        indexes = [
            models.Index(fields=["space", "status", "-updated_at"], name="prd_execution_space_status"),
            models.Index(fields=["id"], name="prd_execution_formation",
                         condition=Q(formable_through__gt=F("formed_through"))),
        ]
        constraints = [
            models.UniqueConstraint(fields=["space", "prd_ref"], name="prd_execution_ref_unique"),
            models.CheckConstraint(condition=Q(status__in=ExecutionStatus.values),
                                   name="prd_execution_status_valid"),
        ]

    def __str__(self) -> str:
        # Not the title, which is sealed: str() ends up in plaintext (admin log, messages).
        return self.prd_ref

    def progress_counts(self) -> dict[str, int]:
        return {state: len(self.progress.get(state, [])) for state in STATES}

    def sealing_space_id(self) -> int:
        return self.space_id


class PRDRun(models.Model):
    """One start-or-resume of an execution, with what changed in the PRD since the run before.

    `changes` is {changed, hash: {before, after}, title, requirements_added,
    requirements_removed, requirements_modified, affected} (see prd.prd_changes).
    """

    execution = models.ForeignKey(PRDExecution, on_delete=models.CASCADE, related_name="runs")
    number = models.PositiveIntegerField()
    prd_hash = models.CharField(max_length=limits.PRD_HASH_MAX, blank=True, default="")
    agent_id = models.CharField(max_length=limits.AGENT_ID_MAX, blank=True, default="")
    changes = SealedJSONField(default=dict, blank=True)
    prd_changed = models.BooleanField(default=False)
    event_sequence = models.PositiveIntegerField(default=0, help_text="Events logged before this run.")
    started_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "PRD run"
        ordering = ["execution", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["execution", "number"], name="prd_run_number_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.execution_id} run {self.number}"

    def sealing_space_id(self) -> int:
        return self.execution.space_id


class ThinkingChain(models.Model):
    """A chain of numbered thoughts on one question, with branches and revisions (docs/prd.md,
    "Thinking chains").

    `thoughts` is [{number, content, is_revision, revises, branch_id, branch_from,
    created_at}]. The embedding is of the query and summary, made when the chain is
    summarised; its column has no fixed width, so a model change never breaks old rows
    (similarity only compares vectors of the configured model, see `embedding_model`).
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_chain_id, editable=False)
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="thinking_chains")
    execution = models.ForeignKey(PRDExecution, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="thinking_chains")
    query = SealedTextField()
    status = models.CharField(max_length=16, choices=ChainStatus.choices, default=ChainStatus.ACTIVE)
    thoughts = SealedJSONField(default=list, blank=True)
    agent_id = models.CharField(max_length=limits.AGENT_ID_MAX, blank=True, default="")
    abandon_reason = SealedTextField(blank=True, default="")

    summary = SealedTextField(blank=True, default="")
    summary_source = models.CharField(max_length=200, blank=True, default="")
    summary_attempts = models.PositiveSmallIntegerField(default=0)
    summarized_at = models.DateTimeField(null=True, blank=True)
    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    search_vector = SearchVectorField(null=True, editable=False)

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at", "id"]
        indexes = [
            models.Index(fields=["space", "status", "-updated_at"], name="chain_space_status"),
            GinIndex(fields=["search_vector"], name="chain_search_gin"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=ChainStatus.values), name="chain_status_valid"),
        ]

    def __str__(self) -> str:
        # Not the query, which is sealed: str() ends up in plaintext (admin log, messages).
        return f"thinking chain {self.id} ({self.status})"

    def sealing_space_id(self) -> int:
        return self.space_id


class PRDEvent(AppendOnly):
    """One entry of an execution's log. Append-only; `sequence` orders it (1, 2, 3...).

    `resolves` is set by the append service: the blocker a blocker_resolved closes, or
    the first failure of the streak a test_passed or requirement_completed ends.
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_event_id, editable=False)
    execution = models.ForeignKey(PRDExecution, on_delete=models.CASCADE, related_name="events")
    sequence = models.PositiveIntegerField()
    type = models.CharField(max_length=32, choices=EventType.choices)
    requirement_id = models.CharField(max_length=limits.REQUIREMENT_ID[1], blank=True, default="")
    summary = SealedTextField()
    detail = SealedJSONField(default=dict, blank=True)
    agent_id = models.CharField(max_length=limits.AGENT_ID_MAX, blank=True, default="")
    # RESTRICT: a chain an event cites cannot be deleted alone, only with its space.
    thinking_chain = models.ForeignKey(ThinkingChain, null=True, blank=True, on_delete=models.RESTRICT,
                                       related_name="events")
    resolves = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="resolved_by")
    idempotency_key = models.CharField(max_length=limits.IDEMPOTENCY_KEY_MAX, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "PRD event"
        ordering = ["execution", "sequence"]
        indexes = [
            models.Index(fields=["execution", "type", "sequence"], name="prd_event_type"),
            models.Index(fields=["execution", "requirement_id", "sequence"], name="prd_event_requirement"),
            models.Index(fields=["execution", "sequence"], name="prd_event_resolving",
                         condition=Q(resolves__isnull=False)),
        ]
        constraints = [
            models.UniqueConstraint(fields=["execution", "sequence"], name="prd_event_sequence_unique"),
            models.UniqueConstraint(fields=["execution", "idempotency_key"], name="prd_event_idempotency",
                                    condition=Q(idempotency_key__isnull=False)),
            models.CheckConstraint(condition=Q(type__in=EventType.values), name="prd_event_type_valid"),
            models.CheckConstraint(condition=Q(sequence__gte=1), name="prd_event_sequence_positive"),
        ]

    def __str__(self) -> str:
        return f"#{self.sequence} {self.type} {self.requirement_id}".strip()

    def sealing_space_id(self) -> int:
        return self.execution.space_id


class PRDDecision(AppendOnly):
    """A decision made during an execution. Each has its decision_made event, and back."""

    id = models.CharField(primary_key=True, max_length=40, default=new_decision_id, editable=False)
    execution = models.ForeignKey(PRDExecution, on_delete=models.CASCADE, related_name="decisions")
    event = models.OneToOneField(PRDEvent, on_delete=models.CASCADE, related_name="decision")
    requirement_id = models.CharField(max_length=limits.REQUIREMENT_ID[1], blank=True, default="")
    decision = SealedTextField()
    reason = SealedTextField(blank=True, default="")
    alternatives = SealedJSONField(default=list, blank=True)
    agent_id = models.CharField(max_length=limits.AGENT_ID_MAX, blank=True, default="")
    thinking_chain = models.ForeignKey(ThinkingChain, null=True, blank=True, on_delete=models.RESTRICT,
                                       related_name="decisions")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "PRD decision"
        ordering = ["execution", "created_at", "id"]
        indexes = [models.Index(fields=["execution", "created_at"], name="prd_decision_execution")]

    def __str__(self) -> str:
        # Not the decision, which is sealed: str() ends up in plaintext (admin log, messages).
        return f"decision {self.id} of {self.execution_id}"

    def sealing_space_id(self) -> int:
        return self.execution.space_id


class FormationRule(models.TextChoices):
    """Why a memory was formed (docs/prd.md, "Memory formation" and "Compaction and summaries")."""

    REQUIREMENT_COMPLETED = "requirement_completed", "completed requirement -> episodic"
    AGENT_HANDOFF = "agent_handoff", "handoff -> episodic"
    DECISION = "decision", "decision -> semantic"
    BLOCKER_RESOLVED = "blocker_resolved", "resolved blocker -> procedural"
    FAILURE_FIXED = "failure_fixed", "failure and its fix -> procedural"
    FAILURE_UNRESOLVED = "failure_unresolved", "failure never fixed (at completion) -> procedural"
    REVIEW_FEEDBACK = "review_feedback", "review feedback -> semantic"
    EXECUTION_SUMMARY = "execution_summary", "execution narrative (compaction) -> episodic"
    CHAIN_SUMMARY = "chain_summary", "thinking chain summary -> semantic"
    CHAIN_REVISION = "chain_revision", "revision pattern -> procedural"


class FormedMemory(models.Model):
    """The link from a memory SAM formed to what it was formed from.

    `key` is unique (e.g. "event:evt_…:requirement_completed"), so running formation again
    after a retry finds the link and forms nothing twice. A curator may delete the memory;
    the link stays (memory null) so formation does not bring it back.
    """

    key = models.CharField(max_length=200, unique=True)
    rule = models.CharField(max_length=32, choices=FormationRule.choices)
    memory = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="prd_formations")
    execution = models.ForeignKey(PRDExecution, null=True, blank=True, on_delete=models.CASCADE,
                                  related_name="formed_memories")
    event = models.ForeignKey(PRDEvent, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="formed_memories")
    decision = models.ForeignKey(PRDDecision, null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="formed_memories")
    chain = models.ForeignKey(ThinkingChain, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="formed_memories")
    error = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "formed memory"
        verbose_name_plural = "formed memories"
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["execution", "rule"], name="formed_execution_rule"),
            models.Index(fields=["chain", "rule"], name="formed_chain_rule"),
        ]

    def __str__(self) -> str:
        return self.key
