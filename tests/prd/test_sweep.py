"""The sweep finishes work whose job was lost: formation, compaction, chain summaries, embeddings."""

from datetime import timedelta

from django.utils import timezone

from governance.access import SYSTEM
from prd import services, tasks
from prd.models import FormedMemory, PRDExecution, ThinkingChain
from prd.services import EventInput
from prd.thoughts import ThoughtInput


def age(model, pk: str, **fields) -> None:
    """Make a row look as if its job was enqueued ten minutes ago and lost."""
    past = timezone.now() - timedelta(minutes=10)
    model.objects.filter(pk=pk).update(**dict.fromkeys(fields, past))


def test_the_sweep_forms_compacts_and_summarises_what_no_job_did(space):
    # No on_commit capture here: the jobs these writes enqueue never run, as if lost.
    execution = services.execution_start(actor=SYSTEM, space=space.slug, prd_ref="lost.md").execution
    for type_ in ("requirement_started", "requirement_completed"):
        services.event_append(actor=SYSTEM, execution_id=execution.id,
                              data=EventInput(type=type_, requirement_id="R1", summary=f"{type_} R1"))
    services.execution_status_update(actor=SYSTEM, execution_id=execution.id, status="completed")
    chain = services.chain_start(actor=SYSTEM, space=space.slug, query="Why was the job lost?").instance
    services.thought_add(actor=SYSTEM, chain_id=chain.id, data=ThoughtInput(content="The worker was down"))
    services.chain_complete(actor=SYSTEM, chain_id=chain.id)
    assert not FormedMemory.objects.exists()
    # Formation is due at once; compaction and summaries only once their job looks lost.
    assert tasks.prd_sweep() == {"formed": 1, "compacted": 0, "summarised": 0, "embedded": 0,
                                "sessions_compiled": 0}
    assert FormedMemory.objects.filter(rule="requirement_completed").exists()

    age(PRDExecution, execution.id, completed_at=True)
    age(ThinkingChain, chain.id, completed_at=True)
    done = tasks.prd_sweep()

    assert done == {"formed": 0, "compacted": 1, "summarised": 1, "embedded": 0, "sessions_compiled": 0}
    assert PRDExecution.objects.get(pk=execution.id).compacted_at is not None
    stored = ThinkingChain.objects.get(pk=chain.id)
    assert stored.summary
    assert stored.embedding is not None
    assert set(FormedMemory.objects.values_list("rule", flat=True)) == {
        "requirement_completed", "execution_summary", "chain_summary"}


def test_the_sweep_re_embeds_chains_embedded_by_another_model(space, on_commit):
    chain = services.chain_start(actor=SYSTEM, space=space.slug, query="Which model embedded this?").instance
    services.thought_add(actor=SYSTEM, chain_id=chain.id, data=ThoughtInput(content="An older one"))
    with on_commit():
        services.chain_complete(actor=SYSTEM, chain_id=chain.id)
    ThinkingChain.objects.filter(pk=chain.id).update(embedding_model="old-model")
    age(ThinkingChain, chain.id, completed_at=True)

    assert tasks.prd_sweep()["embedded"] == 1
    assert ThinkingChain.objects.get(pk=chain.id).embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
