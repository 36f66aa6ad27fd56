"""Memory formation, compaction and chain summaries under the space's memory mode: a paused
or incognito space holds them back without losing anything, an `off` space records that it
captured nothing."""

from __future__ import annotations

import pytest

from governance.access import SYSTEM
from memories.models import Memory
from prd import services, tasks
from prd.models import FormedMemory, PRDExecution, ThinkingChain
from prd.services import DecisionInput, EventInput, memory_formation
from prd.thoughts import ThoughtInput


def set_mode(api, mode: str) -> None:
    response = api.patch("/api/v1/spaces/webshop/", {"mode": mode}, format="json")
    assert response.status_code == 200, response.content


def logged(space) -> PRDExecution:
    """An execution with a decision, a fixed failure and a completed requirement, whose
    formation jobs never ran (no on_commit capture: the enqueued jobs are dropped)."""
    execution = services.execution_start(actor=SYSTEM, space=space.slug, prd_ref="modes.md").execution

    def log(type_: str, summary: str) -> None:
        services.event_append(actor=SYSTEM, execution_id=execution.id,
                              data=EventInput(type=type_, requirement_id="R1", summary=summary))

    log("requirement_started", "Start the cart")
    services.decision_record(actor=SYSTEM, execution_id=execution.id, data=DecisionInput(
        decision="Money as Decimal", reason="floats round", requirement_id="R1"))
    log("test_failed", "Totals off by a cent")
    log("test_passed", "Totals exact with Decimal")
    log("requirement_completed", "Cart done")
    return PRDExecution.objects.get(pk=execution.id)


def memories_of(execution: PRDExecution) -> dict[str, Memory | None]:
    links = FormedMemory.objects.filter(execution=execution).select_related("memory")
    return {link.rule: link.memory for link in links}


@pytest.mark.parametrize("mode", ["paused", "incognito"])
def test_formation_in_a_paused_space_waits_and_forms_everything_once_it_resumes(api, space, mode):
    execution = logged(space)
    set_mode(api, mode)

    outcome = services.execution_memories_form(execution_id=execution.id)

    assert outcome.deferred
    assert not FormedMemory.objects.exists()
    assert not Memory.objects.filter(space=space).exists()
    stored = PRDExecution.objects.get(pk=execution.id)
    assert stored.formed_through == 0 < stored.formable_through  # the watermark did not move
    assert tasks.prd_sweep()["formed"] == 0  # the sweep leaves the space alone meanwhile

    set_mode(api, "assist")
    assert tasks.prd_sweep()["formed"] == 1

    formed = memories_of(execution)
    assert set(formed) == {"decision", "failure_fixed", "requirement_completed"}
    assert all(memory is not None for memory in formed.values())
    assert "Money as Decimal" in formed["decision"].content
    stored.refresh_from_db()
    assert stored.formed_through == stored.formable_through


def test_a_mode_set_while_formation_runs_defers_instead_of_losing_the_memory(api, space, monkeypatch):
    # The job read the space as assist, then the space was paused before the memories
    # were written: the memories API refuses the rows, which must not be linked as done.
    execution = logged(space)
    set_mode(api, "paused")
    monkeypatch.setattr(memory_formation, "formation_gate", lambda space: services.Gate.FORM)

    outcome = services.execution_memories_form(execution_id=execution.id)

    assert outcome.deferred
    assert not FormedMemory.objects.exists()
    assert PRDExecution.objects.get(pk=execution.id).formed_through == 0
    monkeypatch.undo()
    set_mode(api, "assist")
    services.execution_memories_form(execution_id=execution.id)
    assert all(memory is not None for memory in memories_of(execution).values())


def test_compaction_in_a_paused_space_waits_and_loses_no_decision(api, space):
    execution = logged(space)
    services.execution_status_update(actor=SYSTEM, execution_id=execution.id, status="completed")
    set_mode(api, "paused")

    outcome = services.execution_compact(execution_id=execution.id)

    assert outcome.deferred
    stored = PRDExecution.objects.get(pk=execution.id)
    assert stored.compacted_at is None
    assert stored.summary == ""
    assert not FormedMemory.objects.exists()

    set_mode(api, "assist")
    assert tasks.prd_sweep(older_than_seconds=0)["compacted"] == 1

    stored.refresh_from_db()
    assert stored.compacted_at is not None
    assert stored.summary_source == "extractive"
    formed = memories_of(execution)
    assert set(formed) == {"decision", "failure_fixed", "requirement_completed", "execution_summary"}
    assert all(memory is not None for memory in formed.values())
    for decision in stored.decisions.all():
        assert FormedMemory.objects.get(decision=decision).memory.kind == "decision"


def test_an_off_space_records_what_it_did_not_capture_and_moves_on(api, space):
    execution = logged(space)
    services.execution_status_update(actor=SYSTEM, execution_id=execution.id, status="completed")
    set_mode(api, "off")

    outcome = services.execution_compact(execution_id=execution.id)

    assert not outcome.deferred
    links = FormedMemory.objects.filter(execution=execution)
    assert {link.rule for link in links} == {"decision", "failure_fixed", "requirement_completed"}
    assert all(link.memory_id is None and link.error == services.NOT_CAPTURED for link in links)
    stored = PRDExecution.objects.get(pk=execution.id)
    assert stored.compacted_at is not None
    assert stored.summary == ""
    assert not Memory.objects.filter(space=space).exists()

    set_mode(api, "assist")
    tasks.prd_sweep(older_than_seconds=0)
    assert not Memory.objects.filter(space=space).exists()  # by design: off captures nothing


def test_a_chain_completed_before_a_pause_is_summarised_once_the_space_resumes(api, space):
    chain = services.chain_start(actor=SYSTEM, space=space.slug, query="Retry payments how?").instance
    services.thought_add(actor=SYSTEM, chain_id=chain.id, data=ThoughtInput(content="Retry all of them"))
    services.thought_add(actor=SYSTEM, chain_id=chain.id,
                         data=ThoughtInput(content="Never retry card declines", is_revision=True, revises=1))
    services.chain_complete(actor=SYSTEM, chain_id=chain.id)
    set_mode(api, "paused")

    assert services.chain_summarise(chain_id=chain.id).deferred
    assert ThinkingChain.objects.get(pk=chain.id).summarized_at is None
    assert not FormedMemory.objects.exists()

    set_mode(api, "assist")
    assert tasks.prd_sweep(older_than_seconds=0)["summarised"] == 1
    rules = set(FormedMemory.objects.filter(chain_id=chain.id, memory__isnull=False)
                .values_list("rule", flat=True))
    assert rules == {"chain_summary", "chain_revision"}
