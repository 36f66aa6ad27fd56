"""Writes racing a forget: nothing is sealed with a destroyed key, nothing outlives the purge.

Processes cache data keys. A write that ran after a forget with the old key's id cached
would seal rows nobody can ever read (lists containing them answer 503), and a write in
flight while the forget purged could commit content after it. Writers hold the space row
FOR KEY SHARE from their first seal; forget and delete lock it FOR UPDATE.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from governance import retention
from governance.access import SYSTEM
from governance.crypto import cipher, datakeys
from governance.models import DataKey
from memories import services
from memories.models import Memory
from tests.factories import SpaceFactory, UserFactory, make_memory
from tests.threads import assert_second_waits

NOTE = {"title": "Dana drinks oat milk", "content": "Dana takes oat milk in coffee, never cow's milk."}


def sealed_with(memory_id: str) -> int:
    """The data key id the stored content of a memory was sealed with."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT content FROM memories_memory WHERE id = %s", [memory_id])
        return cipher.key_id_of(cursor.fetchone()[0])


def as_another_process_reads_it(api, slug: str):
    """List the space with empty key caches, as a process that never held the old key would."""
    datakeys.forget_cached()
    cipher.forget_ciphers()
    return api.get("/api/v1/memories/", {"space": slug})




@pytest.fixture
def dana(user):
    return SpaceFactory(slug="dana", kind="user", members={user: "owner"})


def test_a_write_after_a_forget_ignores_a_stale_cached_key(api, dana, monkeypatch):
    make_memory(dana)
    old = DataKey.objects.get(space=dana).pk
    assert api.post("/api/v1/spaces/dana/forget/").status_code == 200
    # What another process still holds: the old id in its 30-second cache, and this
    # thread's answer from an earlier transaction.
    monkeypatch.setitem(datakeys._active, dana.pk, (time.monotonic() + 30, old))
    held = datakeys._held.__dict__.setdefault("keys", {})
    monkeypatch.setitem(held, dana.pk, (datakeys._TransactionMarker(), old))

    created = api.post("/api/v1/memories/", {"space": "dana", **NOTE}, format="json")

    assert created.status_code == 201, created.content
    memory_id = created.json()["memory"]["id"]
    assert sealed_with(memory_id) != old
    assert DataKey.objects.filter(pk=sealed_with(memory_id), space=dana).exists()
    listed = as_another_process_reads_it(api, "dana")
    assert listed.status_code == 200, listed.content
    assert [m["id"] for m in listed.json()["results"]] == [memory_id]


@pytest.mark.django_db(transaction=True)
def test_a_forget_waits_for_a_write_in_flight_and_purges_what_it_wrote():
    owner = UserFactory(username="dana")
    space = SpaceFactory(slug="dana", kind="user", members={owner: "owner"})
    make_memory(space)
    sealed, release, forgotten = threading.Event(), threading.Event(), threading.Event()
    written: dict[str, object] = {}

    def writing() -> None:
        with transaction.atomic():
            memory = services.memory_create(actor=SYSTEM, data={"space": "dana", **NOTE}).instance
            written["id"] = memory.pk
            sealed.set()
            release.wait(timeout=30)

    def forgetting() -> None:
        sealed.wait(timeout=30)
        written["receipt"] = retention.space_forget(actor=owner, slug="dana")
        forgotten.set()

    # The forget must wait on the space row while the write is open.
    assert_second_waits(writing, forgetting, second_done=forgotten, release=release)

    assert written["receipt"]["deleted"]["memories"] == 2
    assert not Memory.objects.filter(pk=written["id"]).exists()
    assert not Memory.objects.filter(space=space).exists()


@pytest.mark.django_db(transaction=True)
def test_a_write_that_waited_for_a_forget_seals_with_the_new_key(monkeypatch):
    owner = UserFactory(username="dana")
    space = SpaceFactory(slug="dana", kind="user", members={owner: "owner"})
    make_memory(space)
    old = set(DataKey.objects.filter(space=space).values_list("pk", flat=True))
    keys_gone, release, written = threading.Event(), threading.Event(), threading.Event()
    created: dict[str, str] = {}
    receipt = retention._receipt

    def held_receipt(*args, **kwargs):
        # Inside the forget's transaction, after its keys were destroyed, before it commits.
        keys_gone.set()
        release.wait(timeout=30)
        return receipt(*args, **kwargs)

    monkeypatch.setattr(retention, "_receipt", held_receipt)

    def forgetting() -> None:
        retention.space_forget(actor=owner, slug="dana")

    def writing() -> None:
        keys_gone.wait(timeout=30)
        # This process cached the old key and would seal with it for 30 seconds.
        monkeypatch.setitem(datakeys._active, space.pk, (time.monotonic() + 30, min(old)))
        memory = services.memory_create(actor=SYSTEM, data={"space": "dana", **NOTE}).instance
        created["id"] = memory.pk
        written.set()

    # The write must wait for the forget to commit, not seal with the destroyed key.
    assert_second_waits(forgetting, writing, second_done=written, release=release)

    assert sealed_with(created["id"]) not in old
    assert DataKey.objects.filter(pk=sealed_with(created["id"]), space=space).exists()
    datakeys.forget_cached()  # read it as a process that never held a key would
    cipher.forget_ciphers()
    assert Memory.objects.get(pk=created["id"]).content == NOTE["content"]
