"""Memories formed from a PRD execution's log (rules in prd.formation), in a job per execution."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest

from core.errors import ModeRefusesWrites, VersionConflict
from governance import policy
from governance.access import SYSTEM
from governance.modes import Mode, WriteOutcome
from memories import services as memory_services
from memories.entities import graph

# Looked up through the module at call time, so a test can swap the provider.
from prd import formation
from prd.learnings import learning_of
from prd.models import (
    EventType,
    FormedMemory,
    PRDEvent,
    PRDExecution,
)
from prd.services.common import (
    advisory_lock,
)
from prd.summarizers.extractive import clip

logger = logging.getLogger(__name__)


# --- formation ------------------------------------------------------------------------

@dataclass
class FormationOutcome:
    # Links written: a memory formed, a memory the space's `off` mode did not capture, or
    # a row the memories API refused as invalid (the link says why; see FormedMemory.error).
    formed: list[Any] = field(default_factory=list)
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


# What one execution, chain or session formed is linked in order (RELATES_TO, this strong),
# as a conversation's memories are (memories.entities.graph.link_in_order).
FORMED_TOGETHER = 0.5


class LinkStore(Protocol):
    """Where formation records what each planned memory became (FormedMemory rows for PRD
    work; memory cards for sessions): keys already linked, new links, and the newest memory
    formed before in the same execution, chain or session."""

    def existing(self, keys: list[str]) -> set[str]: ...

    def newest_memory(self, plan: formation.Planned) -> str | None: ...

    def write(self, links: list[tuple[formation.Planned, str | None, str]]) -> list[Any]:
        """Write a link per (plan, memory id or None, error) and return the rows."""
        ...


class FormedLinks:
    def existing(self, keys: list[str]) -> set[str]:
        return set(FormedMemory.objects.filter(key__in=keys).values_list("key", flat=True))

    def newest_memory(self, plan: formation.Planned) -> str | None:
        if plan.execution_id:
            same = FormedMemory.objects.filter(execution_id=plan.execution_id)
        elif plan.chain_id:
            same = FormedMemory.objects.filter(chain_id=plan.chain_id)
        else:
            return None
        return same.exclude(memory=None).order_by("-id").values_list("memory_id", flat=True).first()

    def write(self, links: list[tuple[formation.Planned, str | None, str]]) -> list[Any]:
        return FormedMemory.objects.bulk_create(
            [_link(plan, memory_id=memory_id, error=error) for plan, memory_id, error in links])


FORMED_LINKS = FormedLinks()


def form(planned: list[formation.Planned], *, gate: Gate = Gate.FORM,
         links: LinkStore = FORMED_LINKS) -> FormationOutcome:
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
    existing = links.existing([p.key for p in unique])
    todo = [p for p in unique if p.key not in existing]
    outcome.skipped = len(unique) - len(todo)
    if not todo:
        return outcome
    if gate is Gate.DEFER:
        outcome.deferred = True
        return outcome
    if gate is Gate.SKIP:
        outcome.formed = links.write([(plan, None, NOT_CAPTURED) for plan in todo])
        return outcome
    previous = links.newest_memory(todo[0])
    result = memory_services.memory_bulk_create(actor=SYSTEM, items=[p.item for p in todo], atomic=False)
    created = {m.id for m in result.created}
    written: list[tuple[formation.Planned, str | None, str]] = []
    for plan, row in zip(todo, result.rows, strict=True):
        if plan.memory_id in created:
            written.append((plan, plan.memory_id, ""))
        elif row.reinforced and row.memory is not None:
            # The space holds this text already: the formed memory is that one, reinforced.
            written.append((plan, row.memory.id, ""))
        elif row.outcome is not WriteOutcome.STORE or row.space is None:
            # Refused (paused, off) or discarded (incognito) by a mode set since the gate
            # was read, or the space is going away: not the memory's fault, so no link.
            outcome.deferred = True
        else:
            error = "; ".join(f"{k}: {' '.join(v)}" for k, v in row.errors.items()) or "not kept"
            logger.warning("formation %s did not form a memory: %s", plan.key, error)
            written.append((plan, None, error))
    outcome.formed = links.write(written)
    graph.link_in_order([previous or "", *(memory_id or "" for _, memory_id, _ in written)],
                        strength=FORMED_TOGETHER, provenance={"by": "formation"})
    return outcome


def _link(plan: formation.Planned, *, memory_id: str | None = None, error: str = "") -> FormedMemory:
    return FormedMemory(key=plan.key, rule=plan.rule, memory_id=memory_id, execution_id=plan.execution_id,
                        event_id=plan.event_id, decision_id=plan.decision_id, chain_id=plan.chain_id,
                        error=error[:500])


def _learning_steps(event: PRDEvent) -> list[PRDEvent]:
    """Revisions and rollbacks between a failure and its fix, on the same requirement."""
    problem = event.resolves
    assert problem is not None  # called for fixes only (resolves_id set)
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
        advisory_lock(f"prd-formation:{execution_id}")
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
        outcome = form(planned, gate=formation_gate(execution.space))
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


def form_or_refresh(planned: formation.Planned) -> bool:
    """Form a summary memory, or rewrite the one formed before (a better summary arrived).

    Returns False when the space's mode changed meanwhile and refused the write (the
    caller then leaves its job undone, for the sweep).
    """
    link = FormedMemory.objects.filter(key=planned.key).select_related("memory").first()
    if link is None:
        return not form([planned]).deferred
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

