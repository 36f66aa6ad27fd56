"""The PRD lifecycle on a real django-q2 cluster (qcluster in its own process): formation,
compaction and a chain's summary all run in the worker, after the writes committed."""

from __future__ import annotations

import pytest

from governance.access import SYSTEM
from prd import services
from prd.models import FormedMemory, PRDExecution, ThinkingChain
from prd.services import DecisionInput, EventInput
from prd.thoughts import ThoughtInput
from tests.factories import SpaceFactory
from tests.memories.test_cluster import start_cluster, stop_cluster, wait_for
from tests.queue import queued_count

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("enqueue_to_the_broker"),
              pytest.mark.django_db(transaction=True)]



def test_a_worker_forms_memories_compacts_and_summarises_chains():
    space = SpaceFactory(slug="cluster-prd")
    execution = services.execution_start(actor=SYSTEM, space=space.slug, prd_ref="prd.md",
                                         title="Cluster PRD").execution
    log = [("requirement_started", "R1", "Start R1"), ("test_failed", "R1", "Timezone test fails"),
           ("test_passed", "R1", "Pinned TZ=UTC in the test settings"),
           ("requirement_completed", "R1", "R1 done")]
    for type_, requirement, summary in log:
        services.event_append(actor=SYSTEM, execution_id=execution.id,
                              data=EventInput(type=type_, requirement_id=requirement, summary=summary))
    services.decision_record(actor=SYSTEM, execution_id=execution.id,
                             data=DecisionInput(decision="Store times in UTC",
                                                reason="one zone to reason about"))
    services.execution_status_update(actor=SYSTEM, execution_id=execution.id, status="completed")
    chain = services.chain_start(actor=SYSTEM, space=space.slug,
                                 query="Which time zone for stored times?").instance
    services.thought_add(actor=SYSTEM, chain_id=chain.id, data=ThoughtInput(content="Local time per shop"))
    services.thought_add(actor=SYSTEM, chain_id=chain.id, data=ThoughtInput(content="UTC; convert on display",
                                                                            revises=1))
    services.chain_complete(actor=SYSTEM, chain_id=chain.id)
    assert queued_count() >= 3  # formation, compaction, chain summary: queued, not run
    assert not FormedMemory.objects.exists()

    cluster = start_cluster()
    try:
        wait_for(lambda: PRDExecution.objects.filter(pk=execution.id, compacted_at__isnull=False).exists()
                 and ThinkingChain.objects.filter(pk=chain.id, embedding__isnull=False).exists(),
                 timeout=90, process=cluster)
    finally:
        stop_cluster(cluster)

    rules = sorted(FormedMemory.objects.values_list("rule", flat=True))
    assert rules == ["chain_revision", "chain_summary", "decision", "execution_summary", "failure_fixed",
                     "requirement_completed"]
    assert PRDExecution.objects.get(pk=execution.id).summary.startswith('PRD "Cluster PRD"')
