"""The embedding job: success, retry with backoff after a failure, re-embed on change."""

import numpy as np
import pytest
from django.core.management import call_command
from django_q.models import Schedule

from governance.access import SYSTEM
from memories import services, tasks
from memories.embeddings import jobs as embedding_jobs
from memories.embeddings.registry import get_provider
from memories.models import Memory
from tests.factories import make_memory
from tests.fakes.openai_embeddings import FakeEmbeddingServer, fake_vector


@pytest.fixture
def fake_endpoint(settings):
    with FakeEmbeddingServer(dims=384) as server:
        settings.SAM_EMBEDDING = {
            **settings.SAM_EMBEDDING, "PROVIDER": "openai", "URL": server.url,
            "MODEL": "fake-embed-1", "API_KEY": "test-key", "MAX_ATTEMPTS": 3,
            "RETRY_BASE_SECONDS": 10.0,
        }
        yield server


def test_memory_is_embedded_by_the_local_model_after_commit(space, on_commit):
    with on_commit():
        memory = make_memory(space)

    memory.refresh_from_db()
    assert memory.embedding_status == "ready"
    assert memory.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert memory.embedded_at is not None
    vector = np.asarray(memory.embedding)
    assert vector.shape == (384,)
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_nothing_is_embedded_when_the_transaction_rolls_back(space, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        memory = make_memory(space)
    # The enqueue waits for the commit; a rollback drops the callbacks with the rows.
    assert callbacks
    memory.refresh_from_db()
    assert memory.embedding_status == "pending"
    assert memory.embedding is None


def test_changing_content_re_embeds_and_other_edits_do_not(space, on_commit):
    with on_commit():
        memory = make_memory(space)
    memory.refresh_from_db()
    first = np.asarray(memory.embedding)

    with on_commit():
        services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                               changes={"reliability": "confirmed"})
    memory.refresh_from_db()
    assert np.array_equal(np.asarray(memory.embedding), first)

    with on_commit():
        services.memory_update(
            actor=SYSTEM, memory_id=memory.id, expected_version=2,
            changes={"content": "Use Hypothesis property tests for parsers and serializers."},
        )
        assert Memory.objects.get(pk=memory.id).embedding_status == "pending"
    memory.refresh_from_db()
    assert memory.embedding_status == "ready"
    assert float(np.dot(np.asarray(memory.embedding), first)) < 0.95


def test_changing_phrases_re_embeds(space, on_commit):
    with on_commit():
        memory = make_memory(space)
    hash_before = Memory.objects.get(pk=memory.id).embedding_input_hash
    services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                           changes={"canonical_phrases": ["property based testing"]})
    after = Memory.objects.get(pk=memory.id)
    assert after.embedding_status == "pending"
    assert after.embedding_input_hash != hash_before


def test_remote_provider_sends_model_key_and_texts(space, fake_endpoint, on_commit):
    with on_commit():
        memory = make_memory(space)

    memory.refresh_from_db()
    assert memory.embedding_status == "ready"
    assert memory.embedding_model == "fake-embed-1"
    assert fake_endpoint.requests[0]["model"] == "fake-embed-1"
    assert fake_endpoint.auth_headers[0] == "Bearer test-key"
    text = fake_endpoint.requests[0]["input"][0]
    assert text.startswith("Prefer pytest fixtures\n")
    assert np.allclose(memory.embedding, fake_vector(text, 384), atol=1e-6)


def test_failed_embedding_is_retried_with_backoff_then_succeeds(space, fake_endpoint, on_commit):
    fake_endpoint.fail_next = 1
    with on_commit():
        memory = make_memory(space)

    memory.refresh_from_db()
    assert memory.embedding_status == "pending"
    assert memory.embedding_attempts == 1
    assert "503" in memory.embedding_error
    retry = Schedule.objects.get(func="memories.tasks.memory_embed")
    assert retry.schedule_type == Schedule.ONCE
    delay = (retry.next_run - memory.updated_at).total_seconds()
    assert 9 <= delay <= 12

    # What the scheduler runs when the retry is due:
    from ast import literal_eval

    tasks.memory_embed(**literal_eval(retry.kwargs))

    memory.refresh_from_db()
    assert memory.embedding_status == "ready"
    assert memory.embedding_attempts == 2
    assert memory.embedding_error == ""


def test_backoff_doubles_and_gives_up_after_max_attempts(space, fake_endpoint):
    fake_endpoint.fail_next = 10
    memory = make_memory(space)

    first = embedding_jobs.memories_embed(memory_ids=[memory.id], attempt=1)
    second = embedding_jobs.memories_embed(memory_ids=[memory.id], attempt=2)
    last = embedding_jobs.memories_embed(memory_ids=[memory.id], attempt=3)

    gap_1 = (first.retry_at - Memory.objects.get(pk=memory.id).updated_at).total_seconds()
    gap_2 = (second.retry_at - Memory.objects.get(pk=memory.id).updated_at).total_seconds()
    assert 9 <= gap_1 <= 12
    assert 19 <= gap_2 <= 22
    assert last.failed == [memory.id]
    assert Memory.objects.get(pk=memory.id).embedding_status == "failed"


def test_an_edit_during_embedding_is_not_overwritten_by_the_stale_vector(space, monkeypatch):
    memory = make_memory(space)
    local = get_provider()

    class EditsWhileEmbedding:
        """Delegates to the real model, but an edit lands while the vectors are computed."""

        name, dims = local.name, local.dims

        def embed(self, texts):
            services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                                   changes={"content": "A completely different piece of content."})
            return local.embed(texts)

    monkeypatch.setattr("memories.embeddings.registry.get_provider", lambda: EditsWhileEmbedding())

    outcome = embedding_jobs.memories_embed(memory_ids=[memory.id])

    assert outcome.skipped == [memory.id]
    stored = Memory.objects.get(pk=memory.id)
    assert stored.embedding is None
    assert stored.embedding_status == "pending"


def test_a_job_for_a_deleted_memory_does_nothing(space):
    memory = make_memory(space)
    services.memory_delete(actor=SYSTEM, memory_id=memory.id)
    assert tasks.memory_embed(memory_ids=[memory.id]) == {
        "embedded": 0, "skipped": 1, "retry_scheduled": 0, "failed": 0, "left": 0}


def test_reembed_command_queues_everything_again(space, on_commit, capsys):
    with on_commit():
        make_memory(space)
        make_memory(space, title="Second memory")
    assert set(Memory.objects.values_list("embedding_status", flat=True)) == {"ready"}
    Memory.objects.update(embedding_model="old-model")

    with on_commit():
        call_command("sam_reembed", "--only-stale")

    assert "queued 2 memories" in capsys.readouterr().out
    assert set(Memory.objects.values_list("embedding_model", flat=True)) == {get_provider().name}


def test_the_pending_sweeper_picks_up_lost_jobs(space):
    memory = make_memory(space)  # no on_commit: the enqueue is "lost"
    Memory.objects.filter(pk=memory.id).update(updated_at=memory.updated_at.replace(year=2020))
    # Inline (sync) here: the drains it starts run before it returns.
    assert tasks.memory_embed_pending()["drains"] >= 1
    assert Memory.objects.get(pk=memory.id).embedding_status == "ready"
