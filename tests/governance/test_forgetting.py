"""Retention windows, "forget everything about me" and space deletion (crypto-shredding)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from governance import spaces as space_services
from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.crypto.errors import KeyDestroyed
from governance.models import DataKey
from governance.retention import retention_enforce
from memories.models import Memory, MemoryVersion
from retrieval.models import RecallEvent
from tests.factories import SpaceFactory, make_memory


@pytest.fixture
def dana(user, on_commit):
    """A user space with memories, an edit, and a recall that quoted them."""
    space = SpaceFactory(slug="dana", kind="user", members={user: "owner"})
    with on_commit():
        first = make_memory(space, title="Dana likes short answers",
                            content="Dana prefers short answers with one code sample.")
        make_memory(space, title="Dana works in Lisbon",
                    content="Dana is based in Lisbon and works mornings.")
    return space, first


def _recall(api, slug: str):
    return api.post("/api/v1/recall/", {"query": "short answers code sample", "spaces": [slug]},
                    format="json")


def test_forget_removes_everything_derived_and_returns_a_receipt(api, dana, space):
    space_dana, first = dana
    other = make_memory(space, title="Release on Tuesdays", content="We release on Tuesdays only.")
    assert _recall(api, "dana").status_code == 200
    assert RecallEvent.objects.count() == 1
    key_ids = list(DataKey.objects.filter(space=space_dana).values_list("pk", flat=True))

    response = api.post("/api/v1/spaces/dana/forget/")

    assert response.status_code == 200
    receipt = response.json()
    assert receipt["space"] == "dana"
    assert receipt["deleted"]["memories"] == 2
    assert receipt["deleted"]["versions"] == 2
    assert receipt["deleted"]["memory_stats"] == 2
    assert receipt["deleted"]["recall_events"] == 1
    assert receipt["deleted"]["data_keys_destroyed"] == len(key_ids) == 1
    assert len(receipt["digest"]) == 64
    assert not Memory.objects.filter(space=space_dana).exists()
    assert not MemoryVersion.objects.filter(memory__space=space_dana).exists()
    assert RecallEvent.objects.count() == 0
    assert Memory.objects.filter(pk=other.pk).exists()
    # The audit keeps that it happened, not what was deleted: the create events' sealed
    # payloads can no longer be opened.
    forget = AuditEvent.objects.filter(action="forget").get()
    assert forget.space_slug == "dana"
    created = AuditEvent.objects.filter(action="create", target_id=first.id).get()
    with pytest.raises(KeyDestroyed):
        created.payload_data  # noqa: B018 - opening it is the test
    # The space goes on, with a new key, and the audit chain is intact.
    assert api.post("/api/v1/memories/", {"space": "dana", "title": "New start",
                                          "content": "A memory written after forgetting."},
                    format="json").status_code == 201
    call_command("sam_audit_verify")


def test_only_an_owner_may_forget_and_only_a_user_space(api, user, dana, space):
    from tests.factories import UserFactory

    viewer = UserFactory(username="viewer")
    space_dana, _ = dana
    from governance.services import api_token_issue, membership_grant

    membership_grant(actor=SYSTEM, space=space_dana, user=viewer, role="viewer")
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_issue(user=viewer, name='v')[1]}")
    assert client.post("/api/v1/spaces/dana/forget/").status_code == 403
    assert client.post("/api/v1/spaces/webshop/forget/").status_code == 404
    project = api.post("/api/v1/spaces/webshop/forget/")
    assert project.status_code == 400
    assert "space" in project.json()["error"]["fields"]


def test_deleting_a_space_shreds_its_key(api, space):
    memory = make_memory(space)
    key_id = DataKey.objects.get(space=space).pk
    with connection.cursor() as cursor:
        cursor.execute("SELECT content FROM memories_memory WHERE id = %s", [memory.id])
        left_behind = bytes(cursor.fetchone()[0])  # as a backup would have kept it

    response = api.delete("/api/v1/spaces/webshop/")

    assert response.status_code == 200
    assert response.json()["deleted"]["memories"] == 1
    assert not DataKey.objects.filter(pk=key_id).exists()
    from governance.crypto import cipher

    with pytest.raises(KeyDestroyed):
        cipher.open_bytes(left_behind, context="memories_memory.content")
    assert api.get("/api/v1/spaces/webshop/").status_code == 404


def test_retention_deletes_what_is_older_than_the_window(space):

    space_services.space_update(actor=SYSTEM, slug=space.slug, changes={"retention_days": 7})
    old = make_memory(space, title="Old note", content="Written long ago, past the window.")
    fresh = make_memory(space, title="Fresh note", content="Written today, inside the window.")
    Memory.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(days=8))

    purged = retention_enforce()

    assert list(purged) == ["webshop"]
    assert purged["webshop"]["memories"] == 1
    assert list(Memory.objects.values_list("pk", flat=True)) == [fresh.pk]
    event = AuditEvent.objects.filter(action="retention_purge").get()
    assert event.payload_data["after"]["deleted"]["memories"] == 1


def test_forever_keeps_everything(space):
    old = make_memory(space)
    Memory.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(days=4000))
    assert retention_enforce() == {}
    assert Memory.objects.filter(pk=old.pk).exists()
