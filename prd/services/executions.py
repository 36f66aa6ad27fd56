"""PRD executions: start or resume, events and decisions, status, and replay of the log.

Appends to one execution serialise on its row lock (the package's docstring says why); the
mechanism, shared with the sessions' log, is prd.event_log.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from core.actor import Actor
from core.errors import Conflict
from governance import access, policy
from governance.audit.services import audit_record

# Looked up through the module at call time, so a test can swap the provider.
from memories.normalize import clean_content, clean_line
from prd import event_log, formation, limits, prd_changes
from prd.models import (
    EventType,
    ExecutionStatus,
    PRDDecision,
    PRDEvent,
    PRDExecution,
    PRDRun,
    ThinkingChain,
    new_event_id,
)
from prd.progress import EventFacts, Fold, TransitionRefused, replay
from prd.services.common import (
    collecting_redactions,
    enqueue,
    invalid,
    redact,
    refused,
    text,
    writable,
)
from prd.summarizers.extractive import clip

logger = logging.getLogger(__name__)


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
            raise invalid("prd_hash", "Does not match the sha256 of prd_content; send one or the other.")
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
            raise invalid(f"requirements[{index}].id", "This field may not be blank.")
        if requirement_id in seen:
            raise invalid(f"requirements[{index}].id", f"Requirement '{requirement_id}' is listed twice.")
        seen.add(requirement_id)
        if len(requirement_id) > limits.REQUIREMENT_ID[1]:
            raise invalid(f"requirements[{index}].id",
                           f"Must be at most {limits.REQUIREMENT_ID[1]} characters.")
        # The id and hash are keys the agent matches on, stored as sent; the title is text.
        title = redact(clean_line(requirement.title), path=f"requirements[{index}].title")
        cleaned.append({"id": requirement_id, "title": title, "hash": clean_line(requirement.hash)})
    return cleaned


def execution_start(*, actor: Actor, space: str, prd_ref: str, title: str | None = None,
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
    writable(actor, target_space)
    with collecting_redactions() as report:
        ref = text(prd_ref, field_name="prd_ref", bounds=limits.PRD_REF, multiline=False)
        digest = _prd_hash(prd_hash, prd_content)
        if digest is not None and len(digest) > limits.PRD_HASH_MAX:
            raise invalid("prd_hash", f"Must be at most {limits.PRD_HASH_MAX} characters.")
        declared = _requirements(requirements)
        new_title = redact(clean_line(title), path="title") if title is not None else None
        if new_title is not None and len(new_title) > limits.TITLE_MAX:
            raise invalid("title", f"Must be at most {limits.TITLE_MAX} characters.")
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


def _start_locked(actor: Actor, space, ref: str, title: str | None, digest: str | None,
                  declared: list[dict[str, str]] | None, agent: str) -> StartResult:
    execution = event_log.locked(PRDExecution).filter(space=space, prd_ref=ref).first()
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
    audit_record("create" if created else "edit", actor=actor, space=space, target=execution,
           after={"prd_ref": ref, "run": run.number, "prd_changed": run.prd_changed})
    policy.keep_or_discard(policy.write_outcome(actor, space))
    return StartResult(execution=execution, created=created, run=run)


def _record_run_after_completion(actor: Actor, execution: PRDExecution, before: dict[str, Any] | None, *,
                                 title: str | None, digest: str | None,
                                 declared: list[dict[str, str]] | None, agent: str) -> StartResult:
    """A start on a completed execution: completed is final, so its title, hash,
    requirements and progress stay as they were at completion. The run records what the
    agent sent, and its changes compare that with the completed PRD (every later run
    compares with the completion too, so the change is reported each time)."""
    sent: dict[str, Any] = {"hash": digest if digest is not None else execution.prd_hash,
                            "title": title if title is not None else execution.title,
                            "requirements": declared}
    changes = prd_changes.compare(before, sent, progress=execution.progress)
    # Only updated_at moves: the served resume context is cached by it and must show this run.
    execution.save(update_fields=["updated_at"])
    last = execution.runs.aggregate(last=Max("number"))["last"] or 0
    run = PRDRun.objects.create(
        execution=execution, number=last + 1, prd_hash=sent["hash"], agent_id=agent,
        changes=changes, prd_changed=changes["changed"], event_sequence=execution.event_count,
    )
    audit_record("edit", actor=actor, space=execution.space, target=execution,
           after={"prd_ref": execution.prd_ref, "run": run.number, "prd_changed": run.prd_changed,
                  "completed": True})
    policy.keep_or_discard(policy.write_outcome(actor, execution.space))
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


def locked_execution(actor: Actor, execution_id: str) -> PRDExecution:
    return event_log.lock_parent(PRDExecution, actor, pk=execution_id, label="PRD execution")


def _clean_event(data: EventInput) -> EventInput:
    if data.type not in EventType.values:
        raise invalid("type", f"Must be one of {', '.join(EventType.values)}.")
    if not isinstance(data.detail, dict):
        raise invalid("detail", "Must be a JSON object.")
    if len(json.dumps(data.detail, default=str)) > limits.EVENT_DETAIL_BYTES_MAX:
        raise invalid("detail", f"Must be at most {limits.EVENT_DETAIL_BYTES_MAX} bytes as JSON.")
    requirement = clean_line(data.requirement_id or "")
    if len(requirement) > limits.REQUIREMENT_ID[1]:
        raise invalid("requirement_id", f"Must be at most {limits.REQUIREMENT_ID[1]} characters.")
    if data.resolves and data.type != EventType.BLOCKER_RESOLVED:
        raise invalid("resolves", "Only a blocker_resolved event names the blocker it resolves.")
    return replace(
        data, requirement_id=requirement, detail=redact(data.detail, path="detail"),
        summary=text(data.summary, field_name="summary", bounds=limits.EVENT_SUMMARY),
        agent_id=clean_line(data.agent_id or ""),
        idempotency_key=clean_line(data.idempotency_key) if data.idempotency_key else None,
    )


def _clean_decision(data: DecisionInput) -> DecisionInput:
    alternatives = tuple(a for a in (clean_line(str(a)) for a in data.alternatives) if a)
    alternatives = tuple(redact(list(alternatives), path="alternatives"))
    if len(alternatives) > limits.ALTERNATIVES_MAX:
        raise invalid("alternatives", f"Allows at most {limits.ALTERNATIVES_MAX} items.")
    for index, alternative in enumerate(alternatives):
        if len(alternative) > limits.ALTERNATIVE_MAX:
            raise invalid(f"alternatives[{index}]", f"Must be at most {limits.ALTERNATIVE_MAX} characters.")
    reason = redact(clean_content(data.reason or ""), path="reason")
    if len(reason) > limits.REASON_MAX:
        raise invalid("reason", f"Must be at most {limits.REASON_MAX} characters.")
    return replace(data, decision=text(data.decision, field_name="decision", bounds=limits.DECISION),
                   reason=reason, alternatives=alternatives)


def _decision_from_detail(data: EventInput) -> DecisionInput:
    """A decision_made event logged through the events endpoint carries its decision in
    `detail` ({decision?, reason?, alternatives?}); the summary stands in for a missing one."""
    detail = data.detail
    alternatives = detail.get("alternatives", [])
    if not isinstance(alternatives, list) or not all(isinstance(a, str) for a in alternatives):
        raise invalid("detail.alternatives", "Must be a list of strings.")
    for key in ("decision", "reason"):
        if key in detail and not isinstance(detail[key], str):
            raise invalid(f"detail.{key}", "Must be a string.")
    return DecisionInput(decision=detail.get("decision") or data.summary, reason=detail.get("reason", ""),
                         alternatives=tuple(alternatives), requirement_id=data.requirement_id,
                         agent_id=data.agent_id, thinking_chain=data.thinking_chain,
                         idempotency_key=data.idempotency_key)


def event_append(*, actor: Actor, execution_id: str, data: EventInput) -> AppendResult:
    """Append one event; progress follows. A decision_made event also records its decision.

    Raises InvalidInput (400) for bad fields, Conflict (409) for an event that does not fit
    the current state or a completed execution, NotFound (404) for an unseen execution.
    """
    with collecting_redactions() as report:
        event = _clean_event(data)
        decision = None
        if event.type == EventType.DECISION_MADE:
            decision = _clean_decision(_decision_from_detail(event))
    result = _append(actor, execution_id, event, decision)
    result.redaction_report = report
    return result


def decision_record(*, actor: Actor, execution_id: str, data: DecisionInput) -> AppendResult:
    """Record a decision, logged as a decision_made event in the same transaction."""
    with collecting_redactions() as report:
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
        raise invalid(field_name, f"No thinking chain '{chain_id}' in this execution's space.")
    return chain


def _replayed(execution: PRDExecution, event: EventInput) -> AppendResult | None:
    """The event logged before under the event's idempotency key, when there is one."""
    if not event.idempotency_key:
        return None
    existing = (execution.events.filter(idempotency_key=event.idempotency_key)
                .select_related("decision").first())
    if existing is None:
        return None
    # The same event: its type and summary, and its requirement when the retry names one.
    same = (existing.type, existing.summary) == (event.type, event.summary) and (
        not event.requirement_id or existing.requirement_id == event.requirement_id)
    existing = event_log.replay(existing, same=same, conflict=Conflict(
        f"Idempotency key '{event.idempotency_key}' was used for another event (#{existing.sequence}).",
        fields={"idempotency_key": ["Already used."]}))
    return AppendResult(execution=execution, event=existing,
                        decision=getattr(existing, "decision", None), replayed=True)


@transaction.atomic
def _append(actor: Actor, execution_id: str, data: EventInput,
            decision: DecisionInput | None) -> AppendResult:
    execution = locked_execution(actor, execution_id)
    # A retry answers with what it logged, before the mode is asked: it writes nothing.
    replayed = _replayed(execution, data)
    if replayed is not None:
        return replayed
    outcome_of_mode = writable(actor, execution.space)
    chain = _check_appendable(execution, data)
    fold = Fold.from_json(execution.state)
    event_id = new_event_id()
    try:
        outcome = fold.apply(EventFacts(id=event_id, type=data.type, requirement_id=data.requirement_id,
                                        resolves=data.resolves))
    except TransitionRefused as exc:
        raise refused(exc) from None

    event = PRDEvent(
        id=event_id, execution=execution, type=data.type,
        requirement_id=outcome.requirement_id, summary=data.summary, detail=data.detail,
        agent_id=data.agent_id, thinking_chain=chain, resolves_id=outcome.resolves,
        idempotency_key=data.idempotency_key,
    )
    event_log.number(execution, [event])
    event.save()
    recorded = None
    if decision is not None:
        recorded = PRDDecision(
            execution=execution, event=event, requirement_id=outcome.requirement_id,
            decision=decision.decision, reason=decision.reason, alternatives=list(decision.alternatives),
            agent_id=data.agent_id, thinking_chain=chain,
        )
        recorded.save()
    _follow_event(execution, event, fold)
    audit_record("create", actor=actor, space=execution.space, target=event,
           after={"execution": execution.id, "sequence": event.sequence, "type": data.type,
                  "requirement_id": outcome.requirement_id, "summary": data.summary,
                  "decision": recorded.decision if recorded else None}, digest_text=True)
    policy.keep_or_discard(outcome_of_mode)
    return AppendResult(execution=execution, event=event, decision=recorded)


def _check_appendable(execution: PRDExecution, data: EventInput) -> ThinkingChain | None:
    """Raise unless the execution's log is open and what the event names is in it; returns
    the thinking chain the event cites."""
    if execution.status == ExecutionStatus.COMPLETED:
        raise Conflict(f"PRD execution '{execution.id}' is completed; its log is closed.",
                       fields={"status": ["completed"]})
    chain = _chain_in_space(data.thinking_chain, execution.space_id)
    if data.resolves and not execution.events.filter(pk=data.resolves, type=EventType.BLOCKER_HIT).exists():
        raise invalid("resolves", f"No blocker_hit event '{data.resolves}' in this execution.")
    return chain


def _follow_event(execution: PRDExecution, event: PRDEvent, fold: Fold) -> None:
    """Move the execution on with its new event (numbered already): progress, learnings, status,
    and the formation job, when the event forms a memory."""
    execution.state = fold.to_json()
    execution.progress = fold.progress()
    execution.last_event_at = event.created_at
    fields = ["state", "progress", "event_count", "last_event_at", "updated_at"]
    if event.resolves_id is not None:
        execution.learning_count += 1
        fields.append("learning_count")
    # Logging work is working on it: the first event starts a not_started execution, and an
    # event on a paused one resumes it, as a start-or-resume call would. `blocked` is the
    # caller's own label (set by hand, lifted by hand), so an event leaves it as it is.
    if execution.status in (ExecutionStatus.NOT_STARTED, ExecutionStatus.PAUSED):
        execution.status = ExecutionStatus.IN_PROGRESS
        fields.append("status")
    forms_memory = event.type in formation.EVENT_RULES or event.resolves_id is not None
    # One formation job at a time per execution: enqueue only when none is pending; a
    # running job catches up with what is logged meanwhile (execution_memories_form).
    formation_idle = execution.formable_through <= execution.formed_through
    if forms_memory:
        execution.formable_through = event.sequence
        fields.append("formable_through")
    execution.save(update_fields=fields)
    if forms_memory and formation_idle:
        enqueue("prd.tasks.execution_form_memories", execution_id=execution.id)


# --- executions: status, replay -------------------------------------------------------

@transaction.atomic
def execution_status_update(*, actor: Actor, execution_id: str, status: str) -> PRDExecution:
    """Move an execution to `status`. Completing it enqueues compaction.

    Completed is final (409 on any change). Completing needs every started requirement
    completed and no open blocker (409 names them). Setting the status it has is a no-op.
    """
    if status not in ExecutionStatus.values:
        raise invalid("status", f"Must be one of {', '.join(ExecutionStatus.values)}.")
    execution = locked_execution(actor, execution_id)
    outcome_of_mode = writable(actor, execution.space)
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
        enqueue("prd.tasks.execution_compact", execution_id=execution.id)
    execution.status = status
    execution.save(update_fields=fields)
    audit_record("edit", actor=actor, space=execution.space, target=execution,
           before={"status": current}, after={"status": status})
    policy.keep_or_discard(outcome_of_mode)
    return execution


def event_facts(execution: PRDExecution) -> list[EventFacts]:
    """The log as the fold reads it: ids, types, requirements, named blockers (no text)."""
    rows = execution.events.order_by("sequence").values_list("id", "type", "requirement_id", "resolves_id")
    return [EventFacts(id=i, type=t, requirement_id=r,
                       resolves=res if t == EventType.BLOCKER_RESOLVED else None)
            for i, t, r, res in rows]


@transaction.atomic
def execution_rematerialise(*, actor: Actor, execution_id: str) -> bool:
    """Rebuild progress (and the learning count) from the log. Returns True when what was
    stored was out of step (it never should be; the admin offers this as a check)."""
    execution = locked_execution(actor, execution_id)
    fold = replay(event_facts(execution), declared=Fold.from_json(execution.state).declared)
    state, progress = fold.to_json(), fold.progress()
    learnings = execution.events.filter(resolves__isnull=False).count()
    if (state, progress, learnings) == (execution.state, execution.progress, execution.learning_count):
        return False
    logger.warning("progress of %s was out of step with its log; rebuilt", execution.id)
    execution.state, execution.progress, execution.learning_count = state, progress, learnings
    execution.save(update_fields=["state", "progress", "learning_count", "updated_at"])
    return True

