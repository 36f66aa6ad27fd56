"""Memory modes per space and per user: every write and recall path honours them."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from governance import spaces as space_services
from governance.access import SYSTEM
from governance.services import user_mode_set
from memories import services
from memories.models import Memory, MemoryStats
from retrieval.models import RecallEvent
from tests.factories import make_memory

NEW = {"space": "webshop", "title": "Use feature flags",
       "content": "Ship risky changes behind a feature flag and remove the flag after rollout."}


def _set_space_mode(space, mode: str) -> None:
    space_services.space_update(actor=SYSTEM, slug=space.slug, changes={"mode": mode})
    cache.clear()


def _recall(api, **extra):
    body = {"query": "feature flag rollout", "spaces": ["webshop"], **extra}
    return api.post("/api/v1/recall/", body, format="json")


@pytest.fixture
def stored(space, on_commit):
    with on_commit():
        return make_memory(space, title="Use feature flags",
                           content="Ship risky changes behind a feature flag; remove it after rollout.")


def test_assist_stores_and_recalls_with_traces(api, stored):
    answer = _recall(api).json()
    assert [m["id"] for m in answer["data"]["ranked_memory_list"]] == [stored.id]
    assert answer["data"]["tracked"] is True
    assert RecallEvent.objects.count() == 1
    assert MemoryStats.objects.get(memory=stored).access_count == 1


@pytest.mark.parametrize("mode", ["paused", "off"])
def test_paused_and_off_refuse_every_write(api, space, stored, mode):
    _set_space_mode(space, mode)
    before = Memory.objects.count()

    created = api.post("/api/v1/memories/", NEW, format="json")
    edited = api.patch(f"/api/v1/memories/{stored.id}/", {"version": 1, "title": "Flags"}, format="json")
    archived = api.post(f"/api/v1/memories/{stored.id}/archive/", {}, format="json")
    deleted = api.delete(f"/api/v1/memories/{stored.id}/")
    bulk = api.post("/api/v1/memories/bulk/", {"items": [NEW]}, format="json")

    for response in (created, edited, archived, deleted):
        assert response.status_code == 409, response.json()
        assert response.json()["error"]["code"] == "mode_refuses_writes"
    assert bulk.json()["results"][0]["ok"] is False
    assert Memory.objects.count() == before
    assert Memory.objects.get(pk=stored.id).title == "Use feature flags"


def test_paused_still_recalls_but_leaves_no_traces(api, space, stored):
    _set_space_mode(space, "paused")
    answer = _recall(api).json()
    assert [m["id"] for m in answer["data"]["ranked_memory_list"]] == [stored.id]
    assert answer["data"]["tracked"] is False
    assert RecallEvent.objects.count() == 0
    assert MemoryStats.objects.get(memory=stored).access_count == 0


@pytest.mark.parametrize("mode", ["capture_only", "off"])
def test_capture_only_and_off_never_recall(api, space, stored, mode):
    _set_space_mode(space, mode)
    answer = _recall(api).json()
    assert answer["data"]["ranked_memory_list"] == []
    assert answer["data"]["silenced_spaces"] == ["webshop"]
    pack = api.post("/api/v1/context-packs/", {"query": "feature flag", "spaces": ["webshop"]},
                    format="json")
    assert pack.status_code == 200
    assert stored.id not in pack.content.decode()
    assert RecallEvent.objects.count() == 0


def test_capture_only_still_stores(api, space):
    _set_space_mode(space, "capture_only")
    response = api.post("/api/v1/memories/", NEW, format="json")
    assert response.status_code == 201
    assert response.json()["persisted"] is True
    assert Memory.objects.filter(pk=response.json()["memory"]["id"]).exists()


def test_incognito_answers_but_writes_nothing_durable(api, space, stored):
    _set_space_mode(space, "incognito")
    versions_before = stored.versions.count()

    created = api.post("/api/v1/memories/", NEW, format="json")
    edited = api.patch(f"/api/v1/memories/{stored.id}/", {"version": 1, "title": "Flags"}, format="json")
    bulk = api.post("/api/v1/memories/bulk/", {"items": [NEW]}, format="json")
    answer = _recall(api).json()

    assert created.status_code == 200
    assert created.json()["persisted"] is False
    assert created.json()["memory"]["title"] == "Use feature flags"
    assert edited.json()["persisted"] is False
    assert edited.json()["memory"]["title"] == "Flags"
    assert bulk.json()["results"][0]["persisted"] is False
    assert Memory.objects.count() == 1
    assert Memory.objects.get(pk=stored.id).title == "Use feature flags"
    assert stored.versions.count() == versions_before
    assert [m["id"] for m in answer["data"]["ranked_memory_list"]] == [stored.id]
    assert RecallEvent.objects.count() == 0
    assert MemoryStats.objects.get(memory=stored).access_count == 0


def test_a_users_own_mode_applies_in_every_space(api, user, space, stored):
    assert api.put("/api/v1/me/mode/", {"mode": "paused"}, format="json").json() == {"mode": "paused"}
    assert api.get("/api/v1/me/mode/").json() == {"mode": "paused"}
    cache.clear()

    refused = api.post("/api/v1/memories/", NEW, format="json")
    answer = _recall(api).json()

    assert refused.status_code == 409
    assert "Your memory is paused" in refused.json()["error"]["message"]
    assert answer["data"]["tracked"] is False
    # Jobs and commands are not the user: the system still writes.
    assert services.memory_create(actor=SYSTEM, data=NEW).instance.pk


def test_the_stricter_of_space_and_user_mode_wins(api, user, space, stored):
    user_mode_set(actor=SYSTEM, user=user, mode="incognito")
    _set_space_mode(space, "paused")
    assert api.post("/api/v1/memories/", NEW, format="json").status_code == 409
    _set_space_mode(space, "assist")
    response = api.post("/api/v1/memories/", NEW, format="json")
    assert response.json()["persisted"] is False


def test_an_unknown_mode_is_a_field_error(api, space):
    response = api.patch("/api/v1/spaces/webshop/", {"mode": "sleepy"}, format="json")
    assert response.status_code == 400
    assert "mode" in response.json()["error"]["fields"]
