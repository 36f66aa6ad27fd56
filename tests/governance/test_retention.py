"""Retention windows reach past memories: finished PRD work, thinking chains and recall events."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from governance import spaces as space_services
from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.retention import retention_enforce
from prd.models import (
    AgentSession,
    FormedMemory,
    MemoryCard,
    PRDDecision,
    PRDEvent,
    PRDExecution,
    PRDRun,
    SessionEvent,
    ThinkingChain,
)
from retrieval.models import RecallEvent
from tests.factories import SpaceFactory, make_memory
from tests.prd.conftest import CHAINS, EXECUTIONS, appended, started

LONG_AGO = timedelta(days=8)


@pytest.fixture
def weekly(space):
    """The `webshop` space with a 7-day window."""
    space_services.space_update(actor=SYSTEM, slug=space.slug, changes={"retention_days": 7})
    space.refresh_from_db()
    return space


def aged(model, pk, **fields) -> None:
    """Move a row's times back past the window, as if it had happened 8 days ago."""
    then = timezone.now() - LONG_AGO
    model.objects.filter(pk=pk).update(**{name: then for name in fields or ("updated_at",)})


def completed_execution(api, on_commit, ref: str) -> str:
    """An execution with a started and completed requirement and a decision, then completed."""
    with on_commit():
        execution = started(api, prd_ref=ref, requirements=[{"id": "R1"}])
    eid = execution["id"]
    with on_commit():
        appended(api, eid, "requirement_started", "R1")
        decided = api.post(f"{EXECUTIONS}{eid}/decisions/", {"requirement_id": "R1",
                                                             "decision": "Money as Decimal"}, format="json")
        assert decided.status_code == 201, decided.content
        appended(api, eid, "requirement_completed", "R1", summary="Cart totals done")
        done = api.post(f"{EXECUTIONS}{eid}/status/", {"status": "completed"}, format="json")
        assert done.status_code == 200, done.content
    return eid


def chain(api, query: str, *, close: str | None = None) -> str:
    """A thinking chain with one thought, then completed or abandoned (or left active)."""
    made = api.post(CHAINS, {"space": "webshop", "query": query}, format="json")
    assert made.status_code == 201, made.content
    chain_id = made.json()["id"]
    assert api.post(f"{CHAINS}{chain_id}/thoughts/", {"content": "A first thought"},
                    format="json").status_code == 201
    if close == "complete":
        assert api.post(f"{CHAINS}{chain_id}/complete/").status_code == 200
    elif close == "abandon":
        assert api.post(f"{CHAINS}{chain_id}/abandon/", {"reason": "wrong question"},
                        format="json").status_code == 200
    return chain_id


def receipt() -> dict:
    return AuditEvent.objects.filter(action="retention_purge").latest("id").payload_data["after"]["deleted"]


def test_completed_executions_older_than_the_window_go_with_their_log(api, weekly, on_commit):
    old = completed_execution(api, on_commit, "docs/prd/old.md")
    fresh = completed_execution(api, on_commit, "docs/prd/fresh.md")
    unfinished = started(api, prd_ref="docs/prd/unfinished.md")["id"]
    appended(api, unfinished, "requirement_started", "R1")
    aged(PRDExecution, old, updated_at=True, last_event_at=True, completed_at=True)
    aged(PRDExecution, unfinished, updated_at=True, last_event_at=True)
    events = PRDEvent.objects.filter(execution_id=old).count()
    links = FormedMemory.objects.filter(execution_id=old).count()
    assert events >= 3
    assert links >= 1  # formation linked memories to the old execution

    purged = retention_enforce()

    assert set(PRDExecution.objects.values_list("pk", flat=True)) == {fresh, unfinished}
    for model in (PRDEvent, PRDDecision, PRDRun, FormedMemory):
        assert not model.objects.filter(execution_id=old).exists()
        assert model.objects.filter(execution_id=fresh).exists()
    counts = purged["webshop"]
    assert counts["prd_executions"] == 1
    assert counts["prd_events"] == events
    assert counts["prd_decisions"] == 1
    assert counts["prd_runs"] == 1
    assert counts["formed_memories"] == links
    assert receipt() == counts


def test_an_execution_whose_last_event_is_recent_stays(api, weekly, on_commit):
    eid = completed_execution(api, on_commit, "docs/prd/checkout.md")
    aged(PRDExecution, eid, updated_at=True, completed_at=True)  # the last event is today's

    assert retention_enforce() == {}
    assert PRDExecution.objects.filter(pk=eid).exists()


def test_finished_thinking_chains_older_than_the_window_go(api, weekly, on_commit):
    completed = chain(api, "Which queue for emails?", close="complete")
    abandoned = chain(api, "Should we shard?", close="abandon")
    active = chain(api, "How to retry payments?")
    recent = chain(api, "Which PDF library?", close="complete")
    # A chain an event of a live execution cites stays until that execution goes.
    cited = chain(api, "Decimal or cents?", close="complete")
    execution = started(api, prd_ref="docs/prd/live.md")["id"]
    appended(api, execution, "requirement_started", "R1", thinking_chain=cited)
    for chain_id in (completed, abandoned, active, cited):
        aged(ThinkingChain, chain_id)

    purged = retention_enforce()

    assert set(ThinkingChain.objects.values_list("pk", flat=True)) == {active, recent, cited}
    assert purged["webshop"]["thinking_chains"] == 2
    assert receipt()["thinking_chains"] == 2


def test_recall_events_older_than_the_window_go_even_when_they_spanned_other_spaces(weekly, user):
    ops = SpaceFactory(slug="ops", members={user: "owner"})
    memory = make_memory(weekly)

    def recall(spaces: list[str], *, old: bool) -> RecallEvent:
        event = RecallEvent.objects.create(spaces=spaces, query_text="deploy steps", profile="sam",
                                           memory_ids=[memory.pk] if "webshop" in spaces else [],
                                           items=[])
        if old:
            aged(RecallEvent, event.pk, created_at=True)
        return event

    alone = recall(["webshop"], old=True)
    across = recall(["ops", "webshop"], old=True)
    recent_across = recall(["webshop", "ops"], old=False)
    only_ops = recall(["ops"], old=True)  # ops keeps everything

    purged = retention_enforce()

    assert set(RecallEvent.objects.values_list("pk", flat=True)) == {recent_across.pk, only_ops.pk}
    assert not RecallEvent.objects.filter(pk__in=[alone.pk, across.pk]).exists()
    assert purged == {"webshop": receipt()}
    assert receipt()["recall_events"] == 2
    assert receipt()["memories"] == 0
    assert ops.retention_days is None


def test_sessions_older_than_the_window_go_with_their_events_and_their_cards_stay(api, weekly, on_commit):
    def session(key: str) -> str:
        found = api.post("/api/v1/sessions/", {"space": "webshop", "key": key},
                         format="json").json()["session"]
        with on_commit():
            assert api.post(f"/api/v1/sessions/{found['id']}/events/", {"events": [
                {"event_id": "d1", "event_type": "decision", "text": f"Decided in {key}"}]},
                format="json").status_code == 201
        return found["id"]

    old, recent = session("old"), session("recent")
    aged(AgentSession, old, updated_at=True, last_event_at=True)
    card = MemoryCard.objects.get(session_id=old)

    purged = retention_enforce()

    assert set(AgentSession.objects.values_list("pk", flat=True)) == {recent}
    assert not SessionEvent.objects.filter(session_id=old).exists()
    assert purged["webshop"]["agent_sessions"] == 1
    assert purged["webshop"]["session_events"] == 1
    card.refresh_from_db()  # a memory, under the memory rule: it stays, without its evidence
    assert card.memory is not None
    assert card.session_id is None
    assert not card.evidence.exists()
