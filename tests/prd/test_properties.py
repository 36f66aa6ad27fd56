"""Properties, checked with hypothesis on the real database:

- progress always equals what the stored events imply, for any order of appends (the
  refused ones write nothing);
- compaction never loses a decision or a learning, even when the space was paused when
  it ran (it waits, and the sweep finishes it once the space resumes);
- running formation again, any number of times, forms nothing twice.
"""

from __future__ import annotations

import string
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import Conflict, InvalidInput
from governance import spaces as space_services
from governance.access import SYSTEM
from memories.models import Memory
from prd import services, tasks
from prd.models import EventType, FormedMemory, PRDDecision, PRDEvent, PRDExecution
from prd.progress import replay
from prd.services import DecisionInput, EventInput

DECLARED = ["R1", "R2"]
REQUIREMENTS = ["", "R1", "R2", "R3"]
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                          HealthCheck.too_slow])
appends = st.lists(st.tuples(st.sampled_from(EventType.values), st.sampled_from(REQUIREMENTS)), max_size=30)
words = st.text(alphabet=string.ascii_letters + " ", min_size=1, max_size=120).filter(lambda s: s.strip())


def new_execution(space) -> PRDExecution:
    return services.execution_start(
        actor=SYSTEM, space=space.slug, prd_ref=f"prop/{uuid.uuid4()}.md",
        requirements=[services.RequirementInput(id=r) for r in DECLARED],
    ).execution


def append_all(execution: PRDExecution, ops) -> int:
    """Append every op; check each refused one wrote nothing. Returns how many were stored."""
    stored = 0
    for type_, requirement in ops:
        try:
            services.event_append(actor=SYSTEM, execution_id=execution.id, data=EventInput(
                type=type_, requirement_id=requirement, summary=f"{type_} {requirement}".strip()))
            stored += 1
        except (Conflict, InvalidInput):
            assert PRDEvent.objects.filter(execution=execution).count() == stored
    return stored


def implied_progress(events: list[PRDEvent], declared: list[str]) -> dict[str, set[str]]:
    """Progress read straight off the log, written independently of prd.progress:
    blocked while a requirement has more blockers than resolutions; otherwise its last
    start, completion or rollback says completed (completion) or in progress."""
    named = {e.requirement_id for e in events if e.requirement_id}
    lists: dict[str, set[str]] = {state: set() for state in ("completed", "in_progress", "blocked",
                                                             "not_started")}
    for requirement in set(declared) | named:
        mine = [e for e in events if e.requirement_id == requirement]
        hits = sum(e.type == "blocker_hit" for e in mine)
        resolutions = sum(e.type == "blocker_resolved" for e in mine)
        lifecycle = [e.type for e in mine
                     if e.type in ("requirement_started", "requirement_completed", "rollback")]
        if hits > resolutions:
            lists["blocked"].add(requirement)
        elif not lifecycle:
            lists["not_started"].add(requirement)
        elif lifecycle[-1] == "requirement_completed":
            lists["completed"].add(requirement)
        else:
            lists["in_progress"].add(requirement)
    return lists


@PROPERTY
@given(ops=appends)
def test_progress_always_equals_what_the_events_imply(space, ops):
    execution = new_execution(space)
    stored = append_all(execution, ops)

    execution.refresh_from_db()
    events = list(execution.events.order_by("sequence"))
    assert len(events) == execution.event_count == stored
    assert execution.learning_count == sum(e.resolves_id is not None for e in events)
    assert [e.sequence for e in events] == list(range(1, stored + 1))
    as_sets = {state: set(ids) for state, ids in execution.progress.items()}
    assert as_sets == implied_progress(events, DECLARED)
    assert execution.progress == replay(services.event_facts(execution), declared=DECLARED).progress()
    assert not services.execution_rematerialise(actor=SYSTEM, execution_id=execution.id)


# Events that never block completion, so every generated execution may complete; a
# "blocker" op logs a blocker_hit and its blocker_resolved (a learning).
STATELESS = ["test_passed", "test_failed", "revision", "review_feedback", "agent_handoff",
             "error_encountered", "decision_made", "blocker"]


def expand(ops):
    for type_, requirement in ops:
        if type_ == "blocker":
            yield from (("blocker_hit", requirement), ("blocker_resolved", requirement))
        else:
            yield type_, requirement


def set_mode(space, mode: str) -> None:
    space_services.space_update(actor=SYSTEM, slug=space.slug, changes={"mode": mode})


def compact_while_paused_then_resume(space, execution: PRDExecution) -> None:
    """Compaction runs while the space is paused (it must wait and write nothing), then the
    sweep runs once the space has resumed."""
    set_mode(space, "paused")
    try:
        assert services.execution_compact(execution_id=execution.id).deferred
        assert not FormedMemory.objects.filter(execution=execution).exists()
        assert PRDExecution.objects.get(pk=execution.pk).compacted_at is None
    finally:
        set_mode(space, "assist")
    tasks.prd_sweep(older_than_seconds=0)


@PROPERTY
@given(decisions=st.lists(st.tuples(words, words, st.sampled_from(REQUIREMENTS)), min_size=1, max_size=6),
       noise=st.lists(st.tuples(st.sampled_from(STATELESS), st.sampled_from(REQUIREMENTS)), max_size=8),
       paused=st.booleans())
def test_compaction_never_loses_a_decision_or_a_learning(space, decisions, noise, paused):
    execution = new_execution(space)
    for decision, reason, requirement in decisions:
        services.decision_record(actor=SYSTEM, execution_id=execution.id, data=DecisionInput(
            decision=decision, reason=reason, requirement_id=requirement))
        append_all(execution, list(expand(noise[:2])))
        noise = noise[2:]
    recorded = list(PRDDecision.objects.filter(execution=execution).order_by("id")
                    .values_list("id", "decision"))

    services.execution_status_update(actor=SYSTEM, execution_id=execution.id, status="completed")
    if paused:
        compact_while_paused_then_resume(space, execution)
    else:
        services.execution_compact(execution_id=execution.id)

    assert list(PRDDecision.objects.filter(execution=execution).order_by("id")
                .values_list("id", "decision")) == recorded
    assert len(recorded) >= len(decisions)
    # Every decision is a standalone semantic memory, linked to its decision and event.
    for decision_id, text in recorded:
        link = FormedMemory.objects.select_related("memory", "decision").get(decision_id=decision_id)
        assert link.memory is not None
        assert link.memory.memory_type == "semantic"
        assert link.event_id == link.decision.event_id
        assert " ".join(text.split()) in link.memory.content
    # Every learning (a fix and the problem it closed) is a standalone procedural memory,
    # linked to the event that fixed it; every failure never fixed is a gotcha.
    execution.refresh_from_db()
    for fix in PRDEvent.objects.filter(execution=execution, resolves__isnull=False):
        link = FormedMemory.objects.select_related("memory").get(
            event=fix, rule__in=["failure_fixed", "blocker_resolved"])
        assert link.memory is not None
        assert (link.memory.memory_type, link.memory.kind) == ("procedural", "solution")
        # A learning with the same text as one formed before reinforces that memory.
        shared = FormedMemory.objects.filter(memory=link.memory).count() > 1
        assert link.memory.metadata["prd"]["problem_event"] == fix.resolves_id or shared
    for _, failure in execution.state.get("open_failures", []):
        link = FormedMemory.objects.select_related("memory").get(event_id=failure, rule="failure_unresolved")
        assert link.memory is not None
        assert link.memory.kind == "gotcha"
    assert not FormedMemory.objects.filter(execution=execution, memory__isnull=True).exists()
    assert execution.compacted_at is not None


@PROPERTY
@given(ops=appends, runs=st.integers(min_value=1, max_value=3))
def test_formation_run_again_forms_nothing_twice(space, ops, runs):
    execution = new_execution(space)
    append_all(execution, ops)
    memories_before = Memory.objects.count()

    for _ in range(runs):
        # Rewind the watermark so every run reconsiders the whole log, as a lost-job sweep would.
        PRDExecution.objects.filter(pk=execution.pk).update(formed_through=0)
        services.execution_memories_form(execution_id=execution.id)

    events = list(execution.events.all())
    expected = sum(e.type in ("requirement_completed", "agent_handoff", "decision_made", "review_feedback")
                   for e in events) + sum(e.resolves_id is not None for e in events)
    links = FormedMemory.objects.filter(execution=execution)
    assert links.count() == expected
    assert links.filter(memory__isnull=False).count() == expected
    # Events whose memories would say the same reinforce one memory instead of repeating it.
    assert Memory.objects.count() - memories_before == links.values("memory").distinct().count()
