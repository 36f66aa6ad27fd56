"""Memory formation from an execution's events: the rules, the links back, and retries."""

import itertools

import pytest
from django.db import transaction

from governance.access import SYSTEM
from memories import services as memory_services
from memories.models import Memory
from prd import services
from prd.models import FormedMemory, PRDExecution
from prd.services import EventInput
from tests.prd.conftest import EXECUTIONS, appended, started


@pytest.fixture
def execution(api, space, on_commit):
    """An execution whose log exercises every formation rule (jobs run on commit, inline)."""
    with on_commit():
        found = started(api, requirements=[{"id": "R1"}, {"id": "R2"}])
    eid = found["id"]

    def log(*args, **kwargs):
        with on_commit():
            return appended(api, eid, *args, **kwargs)["event"]

    log("requirement_started", "R1")
    with on_commit():
        api.post(f"{EXECUTIONS}{eid}/decisions/", {"requirement_id": "R1", "decision": "Money as Decimal",
                                                   "reason": "floats round wrongly",
                                                   "alternatives": ["integer cents"]}, format="json")
    log("test_failed", "R1", summary="test_total fails: 0.30000000000000004")
    log("revision", "R1", summary="Switched the total to Decimal")
    log("test_passed", "R1", summary="Totals exact with Decimal")
    log("requirement_completed", "R1", summary="Cart totals done")
    log("requirement_started", "R2")
    log("blocker_hit", "R2", summary="Stripe sandbox rejects our keys")
    log("blocker_resolved", "R2", summary="Rotated the restricted key in the vault")
    log("review_feedback", "R2", summary="Never log full card numbers")
    log("agent_handoff", "R2", summary="Payment half done; webhook handler next", agent_id="claude-1")
    return PRDExecution.objects.get(pk=eid)


def formed(execution) -> dict[str, Memory]:
    links = FormedMemory.objects.filter(execution=execution).select_related("memory")
    return {link.rule: link.memory for link in links}


def test_each_rule_forms_one_memory_of_its_type_in_the_execution_space(execution):
    memories = formed(execution)

    assert {rule: (m.memory_type, m.kind) for rule, m in memories.items()} == {
        "requirement_completed": ("episodic", "task_state"),
        "agent_handoff": ("episodic", "task_state"),
        "decision": ("semantic", "decision"),
        "failure_fixed": ("procedural", "solution"),
        "blocker_resolved": ("procedural", "solution"),
        "review_feedback": ("semantic", "standard"),
    }
    assert {m.space_id for m in memories.values()} == {execution.space_id}


def test_learnings_read_when_x_failed_y_fixed_it(execution):
    memories = formed(execution)
    fixed = memories["failure_fixed"].content
    assert fixed.startswith("When test_total fails: 0.30000000000000004 (test failed on requirement R1)")
    assert "this fixed it: Totals exact with Decimal" in fixed
    assert "revision: Switched the total to Decimal" in fixed
    unblocked = memories["blocker_resolved"].content
    assert "When Stripe sandbox rejects our keys (blocker on requirement R2)" in unblocked
    assert "resolved it: Rotated the restricted key in the vault" in unblocked


def test_a_decision_memory_carries_the_reason_and_rejected_alternatives(execution):
    decision = formed(execution)["decision"]
    assert "Money as Decimal" in decision.content
    assert "Reason: floats round wrongly" in decision.content
    assert "Rejected alternatives: integer cents" in decision.content
    assert decision.tags[:2] == ["prd", "decision"]


def test_every_formed_memory_links_back_to_its_event(execution):
    for link in FormedMemory.objects.filter(execution=execution).select_related("memory", "event"):
        assert link.event.execution_id == execution.id
        assert link.memory.metadata["prd"]["execution"] == execution.id
        assert link.memory.source_ref == f"prd:{execution.id}"
        assert link.memory.metadata["prd"]["event"] == link.event_id
    assert PRDExecution.objects.get(pk=execution.id).formed_through == execution.formable_through


def test_what_one_execution_formed_is_linked_in_the_order_it_was_formed(execution):
    from memories.models import MemoryRelation

    links = list(FormedMemory.objects.filter(execution=execution).exclude(memory=None).order_by("id")
                 .values_list("memory_id", flat=True))
    edges = list(MemoryRelation.objects.filter(source_id__in=links).order_by("id")
                 .values_list("source_id", "target_id", "relation_type", "strength", "provenance"))

    # Formed over several jobs (one per append): each links to the one formed before it.
    assert edges == [(first, second, "RELATES_TO", 0.5, {"by": "formation"})
                     for first, second in itertools.pairwise(links)]


def test_running_formation_again_forms_nothing_twice(execution):
    before = Memory.objects.count()
    PRDExecution.objects.filter(pk=execution.pk).update(formed_through=0)

    again = services.execution_memories_form(execution_id=execution.id)

    assert again.formed == []
    assert again.skipped == 6
    assert Memory.objects.count() == before


def test_a_memory_a_curator_deleted_is_not_formed_again(execution):
    decision = formed(execution)["decision"]
    memory_services.memory_delete(actor=SYSTEM, memory_id=decision.id)
    PRDExecution.objects.filter(pk=execution.pk).update(formed_through=0)

    services.execution_memories_form(execution_id=execution.id)

    assert FormedMemory.objects.get(rule="decision").memory is None
    assert not Memory.objects.filter(kind="decision").exists()


def append_then_fail(execution_id: str) -> None:
    with transaction.atomic():
        services.event_append(actor=SYSTEM, execution_id=execution_id, data=EventInput(
            type="requirement_completed", requirement_id="R1", summary="done"))
        raise RuntimeError("boom")


def test_a_rolled_back_append_forms_nothing(api, space, on_commit):
    execution = started(api)
    with on_commit():
        appended(api, execution["id"], "requirement_started", "R1")
    with on_commit(), pytest.raises(RuntimeError, match="boom"):
        append_then_fail(execution["id"])

    assert not FormedMemory.objects.exists()
    assert PRDExecution.objects.get(pk=execution["id"]).event_count == 1
    # The same append, committed, does form its memory: nothing above was formed because
    # the append rolled back, not because formation never runs.
    with on_commit():
        appended(api, execution["id"], "requirement_completed", "R1", summary="done")
    completed = FormedMemory.objects.filter(execution_id=execution["id"], rule="requirement_completed")
    assert completed.count() == 1


def test_formation_starts_only_once_the_append_commits(api, space, django_capture_on_commit_callbacks):
    """Given an execution, when a formable event is appended, then no memory is formed while
    its transaction is open (a job started then could run against a log that later rolls
    back); the commit starts formation."""
    eid = started(api)["id"]
    with django_capture_on_commit_callbacks(execute=False) as pending:
        appended(api, eid, "requirement_started", "R1")
        appended(api, eid, "requirement_completed", "R1", summary="Cart totals done")
        assert not FormedMemory.objects.filter(execution_id=eid).exists()

    for commit_callback in pending:  # what the commit does
        commit_callback()

    assert FormedMemory.objects.filter(execution_id=eid, rule="requirement_completed").count() == 1


def test_events_that_form_nothing_leave_formation_idle(api, space, on_commit):
    execution = started(api)
    with on_commit():
        appended(api, execution["id"], "requirement_started", "R1")
        appended(api, execution["id"], "test_passed", "R1")

    stored = PRDExecution.objects.get(pk=execution["id"])
    assert (stored.formable_through, stored.formed_through) == (0, 0)
    assert not FormedMemory.objects.exists()


def test_a_busy_log_enqueues_one_formation_job_which_forms_everything(
        api, space, django_capture_on_commit_callbacks):
    eid = started(api)["id"]
    with django_capture_on_commit_callbacks(execute=False) as queued:
        for requirement in ("R1", "R2", "R3"):
            appended(api, eid, "requirement_started", requirement)
            appended(api, eid, "requirement_completed", requirement)
    assert len(queued) == 1

    services.execution_memories_form(execution_id=eid)

    assert FormedMemory.objects.filter(execution_id=eid, rule="requirement_completed").count() == 3
    with django_capture_on_commit_callbacks(execute=False) as queued_again:
        appended(api, eid, "agent_handoff", summary="over to you")
    assert len(queued_again) == 1  # idle again, so the next formable event enqueues


def test_a_summary_inside_a_learning_keeps_names_and_lowers_articles():
    from prd.learnings import clause

    assert clause("The staging API answers 503.") == "the staging API answers 503"
    assert clause("Stripe rejects our keys") == "Stripe rejects our keys"
    assert clause("CI has no Postgres") == "CI has no Postgres"
