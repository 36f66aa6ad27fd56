"""Writes and workflows for PRD executions and thinking chains.

Every storage-bound text of the prd app is written here and nowhere else (views, tasks
and the admin call these functions), so redaction, encryption and audit hook into one
module. Memories are formed through memories.services, never written directly.

Concurrency: appends to one execution serialise on its row lock (FOR NO KEY UPDATE),
which orders the sequence numbers and keeps the materialised progress equal to the fold
of the log. NO KEY, because rows that merely reference the execution (its formed-memory
links, written by formation while it holds the audit chain's lock) take a key-share lock
on it, which a plain FOR UPDATE would block: a deadlock with an append waiting for the
audit chain. Formation and summarisation run in django-q2 jobs enqueued on commit; model
calls (embedding, a chat endpoint) happen outside any transaction.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import timedelta
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Max, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from governance import access, policy, privacy
from governance.access import SYSTEM
from governance.audit.services import audit_record
from governance.crypto import datakeys, search
from governance.modes import Mode, WriteOutcome
from memories import services as memory_services
from memories.normalize import clean_content, clean_line
from prd import formation, limits, prd_changes, thoughts
from prd.digest import chain_digest, execution_digest
from prd.learnings import learning_of
from prd.models import (
    ChainStatus,
    EventType,
    ExecutionStatus,
    FormedMemory,
    PRDDecision,
    PRDEvent,
    PRDExecution,
    PRDRun,
    ThinkingChain,
    new_event_id,
)
from prd.progress import EventFacts, Fold, TransitionRefused, replay
from prd.summarizers import registry
from prd.summarizers.extractive import clip
from samsite.api.errors import Conflict, InvalidInput, ModeRefusesWrites, VersionConflict

logger = logging.getLogger(__name__)

SEARCH_CONFIG = "english"


# --- small helpers --------------------------------------------------------------------

def _invalid(field_name: str, message: str) -> InvalidInput:
    return InvalidInput(message, fields={field_name: [message]})


def _refused(exc: TransitionRefused | thoughts.ThoughtRefused) -> Exception:
    fields = {exc.field: [exc.message]}
    return Conflict(exc.message, fields=fields) if exc.conflict else InvalidInput(exc.message, fields=fields)


# Redactions made while a service call cleans its input (every storage-bound text of
# the PRD app passes through _text or _redact), reported back on the write's answer.
_redactions: ContextVar[list[dict[str, Any]] | None] = ContextVar("prd_redactions", default=None)


def _redact(value: Any, *, path: str) -> Any:
    report = _redactions.get()
    return privacy.redact_value(value, path=path, report=report if report is not None else [])


@contextmanager
def _collecting_redactions() -> Iterator[list[dict[str, Any]]]:
    report: list[dict[str, Any]] = []
    token = _redactions.set(report)
    try:
        yield report
    finally:
        _redactions.reset(token)


def _writable(actor, space) -> WriteOutcome:
    """The memory mode's answer for a write (409 when paused or off)."""
    return policy.write_outcome(actor, space)


def _discard_if(outcome: WriteOutcome) -> None:
    """Incognito: the caller gets its answer; the surrounding atomic block rolls back."""
    if outcome is WriteOutcome.DISCARD:
        transaction.set_rollback(True)


def _audit(action: str, **kwargs: Any) -> None:
    audit_record(action, **kwargs)


def _text(value: str, *, field_name: str, bounds: tuple[int, int], multiline: bool = True) -> str:
    cleaned = _redact(clean_content(value) if multiline else clean_line(value), path=field_name)
    low, high = bounds
    if len(cleaned) < low:
        raise _invalid(field_name, "This field may not be blank." if low == 1 else
                       f"Must be at least {low} characters.")
    if len(cleaned) > high:
        raise _invalid(field_name, f"Must be at most {high} characters.")
    return cleaned


def _enqueue(func: str, **kwargs: Any) -> None:
    """Run `func` in the worker once this transaction commits (a rollback enqueues nothing)."""
    from django_q.tasks import async_task

    label = " ".join(f"{v}" for v in kwargs.values())
    transaction.on_commit(lambda: async_task(func, **kwargs, task_name=f"{func.rsplit('.', 1)[-1]} {label}",
                                             group="prd"))


def _schedule_retry(func: str, *, attempt: int, **kwargs: Any) -> None:
    """Try a summary again later, with exponential backoff (the scheduler starts it)."""
    from django_q.models import Schedule

    config = settings.SAM_SUMMARIZER
    delay = float(config["RETRY_BASE_SECONDS"]) * (2 ** (attempt - 1))
    Schedule.objects.create(
        name=f"prd summary retry {attempt + 1} {next(iter(kwargs.values()))}",
        func=func, kwargs=repr({**kwargs, "attempt": attempt + 1}),
        schedule_type=Schedule.ONCE, next_run=timezone.now() + timedelta(seconds=delay),
    )


def _advisory_lock(name: str) -> None:
    """Serialise formation of one execution for the rest of this transaction (a lock on a
    name, so it does not hold the execution row that appends need)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])


# --- executions: start or resume ------------------------------------------------------

@dataclass(frozen=True)
class RequirementInput:
    id: str
    title: str = ""
    hash: str = ""


@dataclass
class StartResult:
    execution: PRDExecution
    created: bool
    run: PRDRun
    redaction_report: list[dict[str, Any]] = field(default_factory=list)


def _prd_hash(prd_hash: str | None, prd_content: str | None) -> str | None:
    if prd_content is not None:
        computed = hashlib.sha256(prd_content.encode()).hexdigest()
        if prd_hash and prd_hash != computed:
            raise _invalid("prd_hash", "Does not match the sha256 of prd_content; send one or the other.")
        return computed
    return clean_line(prd_hash) if prd_hash is not None else None


def _requirements(requirements: list[RequirementInput] | None) -> list[dict[str, str]] | None:
    if requirements is None:
        return None
    cleaned: list[dict[str, str]] = []
    seen: set[str] = set()
    for index, requirement in enumerate(requirements):
        requirement_id = clean_line(requirement.id)
        if not requirement_id:
            raise _invalid(f"requirements[{index}].id", "This field may not be blank.")
        if requirement_id in seen:
            raise _invalid(f"requirements[{index}].id", f"Requirement '{requirement_id}' is listed twice.")
        seen.add(requirement_id)
        if len(requirement_id) > limits.REQUIREMENT_ID[1]:
            raise _invalid(f"requirements[{index}].id",
                           f"Must be at most {limits.REQUIREMENT_ID[1]} characters.")
        # The id and hash are keys the agent matches on, stored as sent; the title is text.
        title = _redact(clean_line(requirement.title), path=f"requirements[{index}].title")
        cleaned.append({"id": requirement_id, "title": title, "hash": clean_line(requirement.hash)})
    return cleaned


def execution_start(*, actor, space: str, prd_ref: str, title: str | None = None,
                    prd_hash: str | None = None, prd_content: str | None = None,
                    requirements: list[RequirementInput] | None = None,
                    agent_id: str = "") -> StartResult:
    """Start tracking the PRD `prd_ref` in `space`, or resume its execution. Idempotent by prd_ref.

    Every call records a run with what changed in the PRD since the run before. Fields
    left out (None) keep their stored values. A paused execution resumes (in_progress).
    A completed execution is final: the run is recorded and its `prd_changes` compare
    what was sent with the PRD as it was at completion, but nothing of the execution changes.
    """
    target_space = access.access_space(actor, slug=space, action="write")
    _writable(actor, target_space)
    with _collecting_redactions() as report:
        ref = _text(prd_ref, field_name="prd_ref", bounds=limits.PRD_REF, multiline=False)
        digest = _prd_hash(prd_hash, prd_content)
        if digest is not None and len(digest) > limits.PRD_HASH_MAX:
            raise _invalid("prd_hash", f"Must be at most {limits.PRD_HASH_MAX} characters.")
        declared = _requirements(requirements)
        new_title = _redact(clean_line(title), path="title") if title is not None else None
        if new_title is not None and len(new_title) > limits.TITLE_MAX:
            raise _invalid("title", f"Must be at most {limits.TITLE_MAX} characters.")
    agent = clean_line(agent_id)
    for attempt in (1, 2):
        try:
            with transaction.atomic():
                result = _start_locked(actor, target_space, ref, new_title, digest, declared, agent)
                result.redaction_report = report
                return result
        except IntegrityError:
            # Another request created the same prd_ref between our read and insert; the
            # second attempt finds and resumes it.
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _start_locked(actor, space, ref: str, title: str | None, digest: str | None,
                  declared: list[dict[str, str]] | None, agent: str) -> StartResult:
    execution = (PRDExecution.objects.select_for_update(no_key=True, of=("self",)).select_related("space")
                 .filter(space=space, prd_ref=ref).first())
    created = execution is None
    if execution is None:
        execution = PRDExecution(space=space, prd_ref=ref, created_by=access.user_or_none(actor))
        before = None
    else:
        before = {"hash": execution.prd_hash, "title": execution.title,
                  "requirements": execution.requirements}
    if execution.status == ExecutionStatus.COMPLETED:
        return _record_run_after_completion(actor, execution, before, title=title, digest=digest,
                                            declared=declared, agent=agent)
    if title is not None:
        execution.title = title
    if digest is not None:
        execution.prd_hash = digest
    fold = Fold.from_json(execution.state)
    if declared is not None:
        execution.requirements = declared
        fold.declare(r["id"] for r in declared)
    execution.state = fold.to_json()
    execution.progress = fold.progress()
    changes = prd_changes.compare(
        before, {"hash": execution.prd_hash, "title": execution.title, "requirements": declared},
        progress=execution.progress,
    )
    if execution.status == ExecutionStatus.PAUSED:
        execution.status = ExecutionStatus.IN_PROGRESS
    execution.save()
    last = execution.runs.aggregate(last=Max("number"))["last"] or 0
    run = PRDRun.objects.create(
        execution=execution, number=last + 1, prd_hash=execution.prd_hash, agent_id=agent,
        changes=changes, prd_changed=changes["changed"], event_sequence=execution.event_count,
    )
    _audit("create" if created else "edit", actor=actor, space=space, target=execution,
           after={"prd_ref": ref, "run": run.number, "prd_changed": run.prd_changed})
    _discard_if(policy.write_outcome(actor, space))
    return StartResult(execution=execution, created=created, run=run)


def _record_run_after_completion(actor, execution: PRDExecution, before: dict[str, Any], *,
                                 title: str | None, digest: str | None,
                                 declared: list[dict[str, str]] | None, agent: str) -> StartResult:
    """A start on a completed execution: completed is final, so its title, hash,
    requirements and progress stay as they were at completion. The run records what the
    agent sent, and its changes compare that with the completed PRD (every later run
    compares with the completion too, so the change is reported each time)."""
    sent = {"hash": digest if digest is not None else execution.prd_hash,
            "title": title if title is not None else execution.title, "requirements": declared}
    changes = prd_changes.compare(before, sent, progress=execution.progress)
    # Only updated_at moves: the served resume context is cached by it and must show this run.
    execution.save(update_fields=["updated_at"])
    last = execution.runs.aggregate(last=Max("number"))["last"] or 0
    run = PRDRun.objects.create(
        execution=execution, number=last + 1, prd_hash=sent["hash"], agent_id=agent,
        changes=changes, prd_changed=changes["changed"], event_sequence=execution.event_count,
    )
    _audit("edit", actor=actor, space=execution.space, target=execution,
           after={"prd_ref": execution.prd_ref, "run": run.number, "prd_changed": run.prd_changed,
                  "completed": True})
    _discard_if(policy.write_outcome(actor, execution.space))
    return StartResult(execution=execution, created=False, run=run)


# --- executions: events and decisions -------------------------------------------------

@dataclass(frozen=True)
class EventInput:
    type: str
    summary: str
    requirement_id: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
    agent_id: str = ""
    thinking_chain: str | None = None
    resolves: str | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class DecisionInput:
    decision: str
    reason: str = ""
    alternatives: tuple[str, ...] = ()
    requirement_id: str = ""
    agent_id: str = ""
    thinking_chain: str | None = None
    idempotency_key: str | None = None


@dataclass
class AppendResult:
    execution: PRDExecution
    event: PRDEvent
    decision: PRDDecision | None = None
    # True when the idempotency key named an event already logged (nothing was written).
    replayed: bool = False
    redaction_report: list[dict[str, Any]] = field(default_factory=list)


def _locked_execution(actor, execution_id: str) -> PRDExecution:
    queryset = PRDExecution.objects.select_for_update(no_key=True, of=("self",)).select_related("space")
    return access.access_object(queryset, actor, pk=execution_id, action="write", label="PRD execution")


def _clean_event(data: EventInput) -> EventInput:
    if data.type not in EventType.values:
        raise _invalid("type", f"Must be one of {', '.join(EventType.values)}.")
    if not isinstance(data.detail, dict):
        raise _invalid("detail", "Must be a JSON object.")
    if len(json.dumps(data.detail, default=str)) > limits.EVENT_DETAIL_BYTES_MAX:
        raise _invalid("detail", f"Must be at most {limits.EVENT_DETAIL_BYTES_MAX} bytes as JSON.")
    requirement = clean_line(data.requirement_id or "")
    if len(requirement) > limits.REQUIREMENT_ID[1]:
        raise _invalid("requirement_id", f"Must be at most {limits.REQUIREMENT_ID[1]} characters.")
    if data.resolves and data.type != EventType.BLOCKER_RESOLVED:
        raise _invalid("resolves", "Only a blocker_resolved event names the blocker it resolves.")
    return replace(
        data, requirement_id=requirement, detail=_redact(data.detail, path="detail"),
        summary=_text(data.summary, field_name="summary", bounds=limits.EVENT_SUMMARY),
        agent_id=clean_line(data.agent_id or ""),
        idempotency_key=clean_line(data.idempotency_key) if data.idempotency_key else None,
    )


def _clean_decision(data: DecisionInput) -> DecisionInput:
    alternatives = tuple(a for a in (clean_line(str(a)) for a in data.alternatives) if a)
    alternatives = tuple(_redact(list(alternatives), path="alternatives"))
    if len(alternatives) > limits.ALTERNATIVES_MAX:
        raise _invalid("alternatives", f"Allows at most {limits.ALTERNATIVES_MAX} items.")
    for index, alternative in enumerate(alternatives):
        if len(alternative) > limits.ALTERNATIVE_MAX:
            raise _invalid(f"alternatives[{index}]", f"Must be at most {limits.ALTERNATIVE_MAX} characters.")
    reason = _redact(clean_content(data.reason or ""), path="reason")
    if len(reason) > limits.REASON_MAX:
        raise _invalid("reason", f"Must be at most {limits.REASON_MAX} characters.")
    return replace(data, decision=_text(data.decision, field_name="decision", bounds=limits.DECISION),
                   reason=reason, alternatives=alternatives)


def _decision_from_detail(data: EventInput) -> DecisionInput:
    """A decision_made event logged through the events endpoint carries its decision in
    `detail` ({decision?, reason?, alternatives?}); the summary stands in for a missing one."""
    detail = data.detail
    alternatives = detail.get("alternatives", [])
    if not isinstance(alternatives, list) or not all(isinstance(a, str) for a in alternatives):
        raise _invalid("detail.alternatives", "Must be a list of strings.")
    for key in ("decision", "reason"):
        if key in detail and not isinstance(detail[key], str):
            raise _invalid(f"detail.{key}", "Must be a string.")
    return DecisionInput(decision=detail.get("decision") or data.summary, reason=detail.get("reason", ""),
                         alternatives=tuple(alternatives), requirement_id=data.requirement_id,
                         agent_id=data.agent_id, thinking_chain=data.thinking_chain,
                         idempotency_key=data.idempotency_key)


def event_append(*, actor, execution_id: str, data: EventInput) -> AppendResult:
    """Append one event; progress follows. A decision_made event also records its decision.

    Raises InvalidInput (400) for bad fields, Conflict (409) for an event that does not fit
    the current state or a completed execution, NotFound (404) for an unseen execution.
    """
    with _collecting_redactions() as report:
        event = _clean_event(data)
        decision = None
        if event.type == EventType.DECISION_MADE:
            decision = _clean_decision(_decision_from_detail(event))
    result = _append(actor, execution_id, event, decision)
    result.redaction_report = report
    return result


def decision_record(*, actor, execution_id: str, data: DecisionInput) -> AppendResult:
    """Record a decision, logged as a decision_made event in the same transaction."""
    with _collecting_redactions() as report:
        decision = _clean_decision(data)
        event = _clean_event(EventInput(
            type=EventType.DECISION_MADE, summary=clip(decision.decision, limits.EVENT_SUMMARY[1]),
            requirement_id=decision.requirement_id, agent_id=decision.agent_id,
            thinking_chain=decision.thinking_chain, idempotency_key=decision.idempotency_key,
        ))
    result = _append(actor, execution_id, event, decision)
    result.redaction_report = report
    return result


def _chain_in_space(chain_id: str | None, space_id: int, *, field_name: str = "thinking_chain"):
    if not chain_id:
        return None
    chain = ThinkingChain.objects.filter(pk=chain_id, space_id=space_id).first()
    if chain is None:
        raise _invalid(field_name, f"No thinking chain '{chain_id}' in this execution's space.")
    return chain


def _replayed(execution: PRDExecution, event: EventInput) -> AppendResult | None:
    if not event.idempotency_key:
        return None
    existing = (execution.events.filter(idempotency_key=event.idempotency_key)
                .select_related("decision").first())
    if existing is None:
        return None
    if (existing.type, existing.summary) != (event.type, event.summary) or (
            event.requirement_id and existing.requirement_id != event.requirement_id):
        raise Conflict(f"Idempotency key '{event.idempotency_key}' was used for another event "
                       f"(#{existing.sequence}).", fields={"idempotency_key": ["Already used."]})
    return AppendResult(execution=execution, event=existing,
                        decision=getattr(existing, "decision", None), replayed=True)


@transaction.atomic
def _append(actor, execution_id: str, data: EventInput, decision: DecisionInput | None) -> AppendResult:
    execution = _locked_execution(actor, execution_id)
    replayed = _replayed(execution, data)
    if replayed is not None:
        return replayed
    outcome_of_mode = _writable(actor, execution.space)
    if execution.status == ExecutionStatus.COMPLETED:
        raise Conflict(f"PRD execution '{execution.id}' is completed; its log is closed.",
                       fields={"status": ["completed"]})
    chain = _chain_in_space(data.thinking_chain, execution.space_id)
    if data.resolves and not execution.events.filter(pk=data.resolves, type=EventType.BLOCKER_HIT).exists():
        raise _invalid("resolves", f"No blocker_hit event '{data.resolves}' in this execution.")

    fold = Fold.from_json(execution.state)
    event_id = new_event_id()
    try:
        outcome = fold.apply(EventFacts(id=event_id, type=data.type, requirement_id=data.requirement_id,
                                        resolves=data.resolves))
    except TransitionRefused as exc:
        raise _refused(exc) from None

    sequence = execution.event_count + 1
    event = PRDEvent(
        id=event_id, execution=execution, sequence=sequence, type=data.type,
        requirement_id=outcome.requirement_id, summary=data.summary, detail=data.detail,
        agent_id=data.agent_id, thinking_chain=chain, resolves_id=outcome.resolves,
        idempotency_key=data.idempotency_key,
    )
    event.save()
    recorded = None
    if decision is not None:
        recorded = PRDDecision(
            execution=execution, event=event, requirement_id=outcome.requirement_id,
            decision=decision.decision, reason=decision.reason, alternatives=list(decision.alternatives),
            agent_id=data.agent_id, thinking_chain=chain,
        )
        recorded.save()

    execution.state = fold.to_json()
    execution.progress = fold.progress()
    execution.event_count = sequence
    execution.last_event_at = event.created_at
    fields = ["state", "progress", "event_count", "last_event_at", "updated_at"]
    if outcome.resolves is not None:
        execution.learning_count += 1
        fields.append("learning_count")
    # Logging work is working on it: the first event starts a not_started execution, and an
    # event on a paused one resumes it, as a start-or-resume call would. `blocked` is the
    # caller's own label (set by hand, lifted by hand), so an event leaves it as it is.
    if execution.status in (ExecutionStatus.NOT_STARTED, ExecutionStatus.PAUSED):
        execution.status = ExecutionStatus.IN_PROGRESS
        fields.append("status")
    forms_memory = data.type in formation.EVENT_RULES or outcome.resolves is not None
    # One formation job at a time per execution: enqueue only when none is pending; a
    # running job catches up with what is logged meanwhile (execution_memories_form).
    formation_idle = execution.formable_through <= execution.formed_through
    if forms_memory:
        execution.formable_through = sequence
        fields.append("formable_through")
    execution.save(update_fields=fields)
    if forms_memory and formation_idle:
        _enqueue("prd.tasks.execution_form_memories", execution_id=execution.id)
    _audit("create", actor=actor, space=execution.space, target=event,
           after={"execution": execution.id, "sequence": sequence, "type": data.type,
                  "requirement_id": outcome.requirement_id, "summary": data.summary,
                  "decision": recorded.decision if recorded else None}, digest_text=True)
    _discard_if(outcome_of_mode)
    return AppendResult(execution=execution, event=event, decision=recorded)


# --- executions: status, replay -------------------------------------------------------

@transaction.atomic
def execution_status_update(*, actor, execution_id: str, status: str) -> PRDExecution:
    """Move an execution to `status`. Completing it enqueues compaction.

    Completed is final (409 on any change). Completing needs every started requirement
    completed and no open blocker (409 names them). Setting the status it has is a no-op.
    """
    if status not in ExecutionStatus.values:
        raise _invalid("status", f"Must be one of {', '.join(ExecutionStatus.values)}.")
    execution = _locked_execution(actor, execution_id)
    outcome_of_mode = _writable(actor, execution.space)
    current = execution.status
    if status == current:
        return execution
    if current == ExecutionStatus.COMPLETED:
        raise Conflict(f"PRD execution '{execution.id}' is completed; its status is final.",
                       fields={"status": [f"Cannot go from completed to {status}."]})
    if status == ExecutionStatus.NOT_STARTED and execution.event_count:
        raise Conflict("An execution with events has started.",
                       fields={"status": ["Cannot go back to not_started."]})
    fields = ["status", "updated_at"]
    if status == ExecutionStatus.COMPLETED:
        problems: dict[str, list[str]] = {}
        for state in ("in_progress", "blocked"):
            if execution.progress.get(state):
                problems[f"progress.{state}"] = list(execution.progress[state])
        open_blockers = Fold.from_json(execution.state).open_blocker_ids()
        if open_blockers:
            problems["open_blockers"] = open_blockers
        if problems:
            raise Conflict("The execution has unfinished requirements or open blockers; complete or "
                           "roll back the requirements and resolve the blockers first.", fields=problems)
        execution.completed_at = timezone.now()
        fields.append("completed_at")
        _enqueue("prd.tasks.execution_compact", execution_id=execution.id)
    execution.status = status
    execution.save(update_fields=fields)
    _audit("edit", actor=actor, space=execution.space, target=execution,
           before={"status": current}, after={"status": status})
    _discard_if(outcome_of_mode)
    return execution


def event_facts(execution: PRDExecution) -> list[EventFacts]:
    """The log as the fold reads it: ids, types, requirements, named blockers (no text)."""
    rows = execution.events.order_by("sequence").values_list("id", "type", "requirement_id", "resolves_id")
    return [EventFacts(id=i, type=t, requirement_id=r,
                       resolves=res if t == EventType.BLOCKER_RESOLVED else None)
            for i, t, r, res in rows]


@transaction.atomic
def execution_rematerialise(*, actor, execution_id: str) -> bool:
    """Rebuild progress (and the learning count) from the log. Returns True when what was
    stored was out of step (it never should be; the admin offers this as a check)."""
    execution = _locked_execution(actor, execution_id)
    fold = replay(event_facts(execution), declared=Fold.from_json(execution.state).declared)
    state, progress = fold.to_json(), fold.progress()
    learnings = execution.events.filter(resolves__isnull=False).count()
    if (state, progress, learnings) == (execution.state, execution.progress, execution.learning_count):
        return False
    logger.warning("progress of %s was out of step with its log; rebuilt", execution.id)
    execution.state, execution.progress, execution.learning_count = state, progress, learnings
    execution.save(update_fields=["state", "progress", "learning_count", "updated_at"])
    return True


# --- formation ------------------------------------------------------------------------

@dataclass
class FormationOutcome:
    # Links written: a memory formed, a memory the space's `off` mode did not capture, or
    # a row the memories API refused as invalid (the link says why; see FormedMemory.error).
    formed: list[FormedMemory] = field(default_factory=list)
    skipped: int = 0  # planned memories whose link existed already
    # True when the space's mode (paused, incognito) made formation wait: nothing was
    # linked for what is left, and the caller must not move its watermark.
    deferred: bool = False


class Gate(StrEnum):
    """What the space's memory mode lets formation and compaction do right now."""

    FORM = "form"
    DEFER = "defer"  # paused, incognito: write nothing, try again later
    SKIP = "skip"  # off: no capture, by design; record that and move on


# Spaces in these modes hold formation back; the sweep leaves them alone until they resume.
DEFERRING_MODES = (Mode.PAUSED, Mode.INCOGNITO)
NOT_CAPTURED = "not captured: the space's memory mode is off"


def formation_gate(space) -> Gate:
    """Formation writes as SYSTEM, whose own mode is always assist, so the space's mode decides:

    - assist, capture_only: form;
    - paused (read-only until resumed) and incognito (nothing durable): defer — no memory
      and no link is written and the watermark stays, so the sweep (or compaction) forms
      them once the space resumes, and nothing logged before is lost;
    - off (no capture): the memories due are not formed, ever; each gets a link saying so.
    """
    if policy.policy(SYSTEM, space).write is WriteOutcome.STORE:
        return Gate.FORM
    return Gate.SKIP if space.mode == Mode.OFF else Gate.DEFER


def _form(planned: list[formation.Planned], *, gate: Gate = Gate.FORM) -> FormationOutcome:
    """Create the memories in `planned` whose key has no link yet, and their links.

    The caller holds the formation lock of the execution or chain, so the key check and
    the insert cannot interleave with another run; the unique key backs that up. With
    Gate.SKIP (an `off` space) only the links are written; with Gate.DEFER nothing is.
    A row the space's mode refused or discarded meanwhile (its mode changed after the
    caller asked) is left unlinked and the outcome says `deferred`: only a deterministic
    validation error is recorded on a link, because running again cannot change it.
    """
    outcome = FormationOutcome()
    unique = list({p.key: p for p in planned}.values())
    existing = set(FormedMemory.objects.filter(key__in=[p.key for p in unique]).values_list("key", flat=True))
    todo = [p for p in unique if p.key not in existing]
    outcome.skipped = len(unique) - len(todo)
    if not todo:
        return outcome
    if gate is Gate.DEFER:
        outcome.deferred = True
        return outcome
    if gate is Gate.SKIP:
        outcome.formed = FormedMemory.objects.bulk_create([_link(plan, error=NOT_CAPTURED) for plan in todo])
        return outcome
    result = memory_services.memory_bulk_create(actor=SYSTEM, items=[p.item for p in todo], atomic=False)
    created = {m.id for m in result.created}
    links = []
    for plan, row in zip(todo, result.rows, strict=True):
        if plan.memory_id in created:
            links.append(_link(plan, memory_id=plan.memory_id))
        elif row.outcome is not WriteOutcome.STORE or row.space is None:
            # Refused (paused, off) or discarded (incognito) by a mode set since the gate
            # was read, or the space is going away: not the memory's fault, so no link.
            outcome.deferred = True
        else:
            error = "; ".join(f"{k}: {' '.join(v)}" for k, v in row.errors.items()) or "not kept"
            logger.warning("formation %s did not form a memory: %s", plan.key, error)
            links.append(_link(plan, error=error))
    outcome.formed = FormedMemory.objects.bulk_create(links)
    return outcome


def _link(plan: formation.Planned, *, memory_id: str | None = None, error: str = "") -> FormedMemory:
    return FormedMemory(key=plan.key, rule=plan.rule, memory_id=memory_id, execution_id=plan.execution_id,
                        event_id=plan.event_id, decision_id=plan.decision_id, chain_id=plan.chain_id,
                        error=error[:500])


def _learning_steps(event: PRDEvent) -> list[PRDEvent]:
    """Revisions and rollbacks between a failure and its fix, on the same requirement."""
    problem = event.resolves
    return list(PRDEvent.objects.filter(
        execution_id=event.execution_id, requirement_id=problem.requirement_id,
        sequence__gt=problem.sequence, sequence__lt=event.sequence,
        type__in=[EventType.REVISION, EventType.ROLLBACK],
    ).order_by("sequence")[:5])


def execution_memories_form(*, execution_id: str, include_unresolved: bool = False) -> FormationOutcome:
    """Form the memories of every event logged since the last formation run. Safe to run twice.

    Appends enqueue this job only when no formation is pending for the execution, so a
    busy log makes one job, not one per event: the job keeps going until it has caught up
    with events logged while it ran. With include_unresolved (compaction), failures still
    open become procedural gotchas.
    """
    total = FormationOutcome()
    while True:
        outcome, caught_up = _form_once(execution_id, include_unresolved=include_unresolved)
        total.formed += outcome.formed
        total.skipped += outcome.skipped
        total.deferred = total.deferred or outcome.deferred
        if caught_up:
            return total
        include_unresolved = False  # done on the first pass


def _form_once(execution_id: str, *, include_unresolved: bool) -> tuple[FormationOutcome, bool]:
    with transaction.atomic():
        _advisory_lock(f"prd-formation:{execution_id}")
        # No row lock while forming: memory writes take the audit chain's lock until commit,
        # and an append holds the execution row and takes the chain lock last. Holding the
        # row here too would make appends wait for every memory this job writes.
        execution = PRDExecution.objects.select_related("space").filter(pk=execution_id).first()
        if execution is None:
            logger.info("formation: PRD execution %s is gone", execution_id)
            return FormationOutcome(), True
        watermark = execution.formable_through
        events = (execution.events.filter(sequence__gt=execution.formed_through, sequence__lte=watermark,
                                          type__in=formation.FORMING_TYPES)
                  .select_related("resolves", "decision").order_by("sequence"))
        planned: list[formation.Planned] = []
        for event in events:
            learning = learning_of(event, steps=_learning_steps(event)) if event.resolves_id else None
            planned += formation.plan_event(execution, event, learning=learning)
        if include_unresolved:
            failing = [e for _, e in execution.state.get("open_failures", [])]
            for failure in execution.events.filter(pk__in=failing).order_by("sequence"):
                planned.append(formation.plan_unresolved_failure(execution, failure))
        outcome = _form(planned, gate=formation_gate(execution.space))
    if outcome.deferred:
        # The space is paused or incognito: the watermark stays where it is, so the sweep
        # (which skips such spaces until they resume) forms the rest later; links written
        # before the mode changed make that run skip what is done.
        logger.info("formation of %s deferred: space '%s' is %s", execution_id, execution.space.slug,
                    execution.space.mode)
        return outcome, True
    # The watermark moves in a transaction of its own that takes only the row lock (so it
    # never holds the row and the audit chain at once). The update waits for an append in
    # progress, and the read after it sees what that append committed: either the append
    # saw this watermark and enqueued a new job, or this job sees its event and goes round
    # again. Should this step be lost, formation reruns later and its keys form nothing twice.
    with transaction.atomic():
        rows = PRDExecution.objects.filter(pk=execution_id)
        rows.update(formed_through=Greatest(F("formed_through"), Value(watermark)))
        caught_up = rows.values_list("formable_through", flat=True).get() <= watermark
    return outcome, caught_up


def _form_or_refresh(planned: formation.Planned) -> bool:
    """Form a summary memory, or rewrite the one formed before (a better summary arrived).

    Returns False when the space's mode changed meanwhile and refused the write (the
    caller then leaves its job undone, for the sweep).
    """
    link = FormedMemory.objects.filter(key=planned.key).select_related("memory").first()
    if link is None:
        return not _form([planned]).deferred
    memory = link.memory
    if memory is None:
        return True  # a curator deleted it (or it was never captured); do not bring it back
    changes = {"content": planned.item["content"]}
    if memory.content == changes["content"]:
        return True
    summary = clip(planned.item["content"], 320)
    if len(summary) >= 10:
        changes["summary"] = summary
    try:
        memory_services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=memory.version,
                                      changes=changes, reason="summary rewritten")
    except VersionConflict:
        logger.info("summary memory %s changed meanwhile; left as it is", memory.id)
    except ModeRefusesWrites:
        return False
    return True


# --- compaction -----------------------------------------------------------------------

@dataclass
class CompactionOutcome:
    summary_source: str = ""
    formed: int = 0
    retry_scheduled: bool = False
    # The space was paused or incognito: nothing was compacted; the sweep tries again.
    deferred: bool = False


def _keeps_better_summary(current_source: str, new: registry.Summary) -> bool:
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
        _advisory_lock(f"prd-formation:{execution_id}")
        locked = (PRDExecution.objects.select_for_update(no_key=True, of=("self",)).select_related("space")
                  .get(pk=execution_id))
        if formation_gate(locked.space) is not Gate.FORM:
            # The mode changed while the summariser ran: leave everything for the next try.
            outcome.deferred = True
            return outcome
        if not _keeps_better_summary(locked.summary_source, summary):
            # A model may write what the log never said (an address, a key): redact it
            # as any stored text (the extractive text is already clean).
            locked.summary = _redact(summary.text, path="summary")
            locked.summary_source = summary.source
        locked.summary_attempts = attempt
        if not _form_or_refresh(formation.plan_execution_summary(locked, locked.summary)):
            transaction.set_rollback(True)
            outcome.deferred = True
            return outcome
        locked.compacted_at = locked.compacted_at or timezone.now()
        locked.save(update_fields=["summary", "summary_source", "summary_attempts", "compacted_at",
                                   "updated_at"])
        if summary.fallback_reason and attempt < int(settings.SAM_SUMMARIZER["MAX_ATTEMPTS"]):
            _schedule_retry("prd.tasks.execution_compact", attempt=attempt, execution_id=execution_id)
            outcome.retry_scheduled = True
    outcome.summary_source = locked.summary_source
    return outcome


@transaction.atomic
def execution_compaction_enqueue(*, actor, execution_id: str) -> bool:
    """Queue compaction again (the admin's action). False when the execution is not completed."""
    execution = _locked_execution(actor, execution_id)
    if execution.status != ExecutionStatus.COMPLETED:
        return False
    _enqueue("prd.tasks.execution_compact", execution_id=execution.id)
    return True


# --- thinking chains ------------------------------------------------------------------

def _chain_text(chain: ThinkingChain) -> str:
    return "\n".join(t["content"] for t in chain.thoughts)


def _refresh_chain_search(chain: ThinkingChain) -> None:
    """Keyed search tokens (governance.crypto.search): query A, summary B, thoughts C."""
    doc = {"title": chain.query, "summary": chain.summary, "content": _chain_text(chain)}
    vector = search.token_vectors(datakeys.active_key_id(chain.space_id), [doc])[0]
    with connection.cursor() as cursor:
        cursor.execute("UPDATE prd_thinkingchain SET search_vector = %s::tsvector WHERE id = %s",
                       [vector, chain.pk])


def _locked_chain(actor, chain_id: str) -> ThinkingChain:
    queryset = ThinkingChain.objects.select_for_update(no_key=True, of=("self",)).select_related("space")
    return access.access_object(queryset, actor, pk=chain_id, action="write", label="thinking chain")


@transaction.atomic
def chain_start(*, actor, space: str, query: str, agent_id: str = "",
                execution_id: str | None = None) -> ThinkingChain:
    """Start a chain of thoughts on `query`, optionally tied to a PRD execution of the space."""
    target_space = access.access_space(actor, slug=space, action="write")
    outcome_of_mode = _writable(actor, target_space)
    execution = None
    if execution_id:
        execution = PRDExecution.objects.filter(pk=execution_id, space=target_space).first()
        if execution is None:
            raise _invalid("execution", f"No PRD execution '{execution_id}' in space '{space}'.")
    with _collecting_redactions() as report:
        cleaned_query = _text(query, field_name="query", bounds=limits.CHAIN_QUERY)
    chain = ThinkingChain(
        space=target_space, execution=execution, agent_id=clean_line(agent_id), query=cleaned_query,
        created_by=access.user_or_none(actor),
    )
    chain.save()
    chain.redaction_report = report
    _refresh_chain_search(chain)
    _audit("create", actor=actor, space=target_space, target=chain, after={"query": chain.query},
           digest_text=True)
    _discard_if(outcome_of_mode)
    return chain


@transaction.atomic
def thought_add(*, actor, chain_id: str, data: thoughts.ThoughtInput) -> ThinkingChain:
    """Append a thought. 409 when the chain is closed or `number` is stale; 400 when
    `revises` or the branch fields do not fit the chain (prd.thoughts)."""
    chain = _locked_chain(actor, chain_id)
    outcome_of_mode = _writable(actor, chain.space)
    if chain.status != ChainStatus.ACTIVE:
        raise Conflict(f"Thinking chain '{chain.id}' is {chain.status}; it takes no more thoughts.",
                       fields={"status": [chain.status]})
    with _collecting_redactions() as report:
        content = _text(data.content, field_name="content", bounds=limits.THOUGHT)
    chain.redaction_report = report
    try:
        thought = thoughts.next_thought(chain.thoughts, replace(data, content=content))
    except thoughts.ThoughtRefused as exc:
        raise _refused(exc) from None
    thought["created_at"] = timezone.now().isoformat().replace("+00:00", "Z")
    chain.thoughts = [*chain.thoughts, thought]
    chain.save(update_fields=["thoughts", "updated_at"])
    _refresh_chain_search(chain)
    _audit("edit", actor=actor, space=chain.space, target=chain,
           after={"thought": thought["number"], "content": thought["content"]}, digest_text=True)
    _discard_if(outcome_of_mode)
    return chain


@transaction.atomic
def chain_complete(*, actor, chain_id: str) -> ThinkingChain:
    """Close the chain and enqueue its summary, embedding and memories. Idempotent.

    Like every write, 409 while the space (or the caller's mode) is paused or off."""
    chain = _locked_chain(actor, chain_id)
    outcome_of_mode = _writable(actor, chain.space)
    if chain.status == ChainStatus.COMPLETED:
        return chain
    if chain.status == ChainStatus.ABANDONED:
        raise Conflict(f"Thinking chain '{chain.id}' was abandoned.", fields={"status": ["abandoned"]})
    if not chain.thoughts:
        raise Conflict("A chain needs at least one thought to complete.", fields={"thoughts": ["Empty."]})
    chain.status = ChainStatus.COMPLETED
    chain.completed_at = timezone.now()
    chain.save(update_fields=["status", "completed_at", "updated_at"])
    _refresh_chain_search(chain)
    _enqueue("prd.tasks.chain_summarise", chain_id=chain.id)
    _audit("edit", actor=actor, space=chain.space, target=chain,
           before={"status": ChainStatus.ACTIVE}, after={"status": ChainStatus.COMPLETED})
    _discard_if(outcome_of_mode)
    return chain


@transaction.atomic
def chain_abandon(*, actor, chain_id: str, reason: str = "") -> ThinkingChain:
    """Close the chain without a summary or memories. Idempotent; a completed chain is 409."""
    chain = _locked_chain(actor, chain_id)
    outcome_of_mode = _writable(actor, chain.space)
    chain.redaction_report = []
    if chain.status == ChainStatus.ABANDONED:
        return chain
    if chain.status == ChainStatus.COMPLETED:
        raise Conflict(f"Thinking chain '{chain.id}' is completed.", fields={"status": ["completed"]})
    with _collecting_redactions() as report:
        cleaned = _redact(clean_line(reason), path="reason")
    if len(cleaned) > limits.ABANDON_REASON_MAX:
        raise _invalid("reason", f"Must be at most {limits.ABANDON_REASON_MAX} characters.")
    chain.status, chain.abandon_reason = ChainStatus.ABANDONED, cleaned
    chain.save(update_fields=["status", "abandon_reason", "updated_at"])
    # The reason stays readable on the chain (sealed, gone with it); the append-only log
    # keeps only its fingerprint, so the text does not outlive the chain.
    _audit("edit", actor=actor, space=chain.space, target=chain, digest_text=True,
           before={"status": ChainStatus.ACTIVE}, after={"status": ChainStatus.ABANDONED, "reason": cleaned})
    _discard_if(outcome_of_mode)
    chain.redaction_report = report
    return chain


@transaction.atomic
def chain_summary_enqueue(*, actor, chain_id: str) -> bool:
    """Queue the chain's summary again (the admin's action). False when it is not completed."""
    chain = _locked_chain(actor, chain_id)
    if chain.status != ChainStatus.COMPLETED:
        return False
    _enqueue("prd.tasks.chain_summarise", chain_id=chain.id)
    return True


def chain_embed(*, chain_id: str) -> bool:
    """Embed the chain's query and summary with the configured model. Returns True when done.

    Called outside transactions (the model call takes milliseconds to seconds); the write
    only lands if the summary it embedded is still the chain's summary.
    """
    from memories.embeddings.base import EmbeddingError
    from memories.embeddings.registry import get_provider

    chain = ThinkingChain.objects.filter(pk=chain_id).only("id", "space_id", "query", "summary",
                                                           "summarized_at").first()
    if chain is None:
        return False
    provider = get_provider()
    try:
        vector = provider.embed([f"{chain.query}\n{chain.summary}"])[0]
    except EmbeddingError as exc:
        logger.warning("embedding thinking chain %s failed: %s", chain_id, exc)
        return False
    # The summary is sealed, so "still the same summary" is checked by its time stamp.
    return bool(ThinkingChain.objects.filter(pk=chain_id, summarized_at=chain.summarized_at).update(
        embedding=vector.tolist(), embedding_model=provider.name))


def chain_summarise(*, chain_id: str, attempt: int = 1) -> CompactionOutcome:
    """Summarise a completed chain, embed it, and form its memories: the summary (semantic)
    and one procedural memory per revision (seed 001's revision handler). Safe to run twice."""
    outcome = CompactionOutcome()
    chain = ThinkingChain.objects.select_related("space").filter(pk=chain_id).first()
    if chain is None or chain.status != ChainStatus.COMPLETED:
        logger.info("summary: thinking chain %s is gone or not completed", chain_id)
        return outcome
    gate = formation_gate(chain.space)
    if gate is Gate.DEFER:
        # Paused or incognito: summarized_at stays unset, so the sweep summarises it later.
        outcome.deferred = True
        return outcome
    if gate is Gate.SKIP:
        _chain_not_captured(chain_id)
        return outcome
    summary = registry.summarise(chain_digest(query=chain.query, thoughts=chain.thoughts))
    with transaction.atomic():
        locked = (ThinkingChain.objects.select_for_update(no_key=True, of=("self",)).select_related("space")
                  .get(pk=chain_id))
        if formation_gate(locked.space) is not Gate.FORM:
            outcome.deferred = True  # the mode changed while the summariser ran
            return outcome
        if not _keeps_better_summary(locked.summary_source, summary):
            # A model may write what the log never said (an address, a key): redact it
            # as any stored text (the extractive text is already clean).
            locked.summary = _redact(summary.text, path="summary")
            locked.summary_source = summary.source
        locked.summary_attempts = attempt
        locked.summarized_at = timezone.now()
        locked.save(update_fields=["summary", "summary_source", "summary_attempts", "summarized_at",
                                   "updated_at"])
        _refresh_chain_search(locked)
        pairs = thoughts.revisions(locked.thoughts)
        revisions = _form([formation.plan_chain_revision(locked, o, r) for o, r in pairs])
        if not _form_or_refresh(formation.plan_chain_summary(locked, locked.summary)) or revisions.deferred:
            transaction.set_rollback(True)
            outcome.deferred = True
            return outcome
        outcome.formed = len(revisions.formed)
        if summary.fallback_reason and attempt < int(settings.SAM_SUMMARIZER["MAX_ATTEMPTS"]):
            _schedule_retry("prd.tasks.chain_summarise", attempt=attempt, chain_id=chain_id)
            outcome.retry_scheduled = True
    chain_embed(chain_id=chain_id)
    outcome.summary_source = locked.summary_source
    return outcome


@transaction.atomic
def _chain_not_captured(chain_id: str) -> None:
    """An `off` space captures nothing: no summary and no embedding; its revision memories
    are linked as not captured. Marked summarised, so the sweep stops coming back."""
    chain = ThinkingChain.objects.select_for_update(no_key=True, of=("self",)).select_related("space").get(
        pk=chain_id)
    pairs = thoughts.revisions(chain.thoughts)
    _form([formation.plan_chain_revision(chain, o, r) for o, r in pairs], gate=Gate.SKIP)
    if chain.summarized_at is None:
        chain.summarized_at = timezone.now()
        chain.save(update_fields=["summarized_at", "updated_at"])
